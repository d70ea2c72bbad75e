package confirm

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/dynalite"
)

func TestMain(m *testing.M) {
	code := m.Run()
	dynalite.Stop()
	os.Exit(code)
}

var tables atomic.Int64

// contextTable is the shape of template.yaml's ContextTable.
func contextTable(name string) *dynamodb.CreateTableInput {
	return &dynamodb.CreateTableInput{
		TableName: aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange},
		},
		BillingMode: types.BillingModePayPerRequest,
	}
}

// TestStores runs the same contract against both adapters.
func TestStores(t *testing.T) {
	stores := map[string]func(t *testing.T) Store{
		"file": func(t *testing.T) Store { return NewFileStore(t.TempDir()) },
		"dynamo": func(t *testing.T) Store {
			client := dynalite.Client(t)
			name := fmt.Sprintf("context-%d", tables.Add(1))
			dynalite.CreateTable(t, client, contextTable(name))
			return NewDynamoStore(client, name)
		},
	}
	for name, mk := range stores {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			s := mk(t)
			base := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
			recs := []Record{}
			for i, tok := range []string{"t3", "t1", "t2"} {
				r := Record{ID: IDFor("acme", tok), Tenant: "acme", Execution: "arn:x", ToolName: "senior_review",
					Category: "decision", Sensitivity: "high", Preview: []byte(`"p"`), Status: StatusPending,
					CreatedAt: base.Add(time.Duration(3-i) * time.Minute), TaskToken: tok}
				if err := s.Put(ctx, r, 0); err != nil {
					t.Fatal(err)
				}
				recs = append(recs, r)
			}
			var ce *veredicto.ConflictError
			if err := s.Put(ctx, recs[0], 0); !errors.As(err, &ce) {
				t.Errorf("second create: %v, want ConflictError", err)
			}
			got, err := s.Get(ctx, "acme", recs[0].ID)
			if err != nil || got.TaskToken != "t3" || got.Version != 1 || string(got.Preview) != `"p"` {
				t.Fatalf("Get = %+v, %v", got, err)
			}
			var nf *veredicto.NotFoundError
			if _, err := s.Get(ctx, "globex", recs[0].ID); !errors.As(err, &nf) {
				t.Errorf("another tenant's Get: %v, want NotFoundError", err)
			}
			if _, err := s.Get(ctx, "acme", IDFor("acme", "none")); !errors.As(err, &nf) {
				t.Errorf("missing Get: %v, want NotFoundError", err)
			}
			// Optimistic concurrency on the version.
			got.Status = StatusResolving
			if err := s.Put(ctx, got, 1); err != nil {
				t.Fatalf("update at version 1: %v", err)
			}
			if err := s.Put(ctx, got, 1); !errors.As(err, &ce) {
				t.Errorf("stale update: %v, want ConflictError", err)
			}
			got.Status, got.ResolvedAt = StatusApproved, base
			if err := s.Put(ctx, got, 2); err != nil {
				t.Fatal(err)
			}
			list, err := s.List(ctx, "acme", 10)
			if err != nil {
				t.Fatal(err)
			}
			var listed []string
			for _, r := range list {
				listed = append(listed, r.TaskToken)
			}
			if fmt.Sprint(listed) != "[t2 t1]" { // unresolved only, oldest first
				t.Errorf("List = %v, want [t2 t1]", listed)
			}
			if other, _ := s.List(ctx, "globex", 10); len(other) != 0 {
				t.Errorf("another tenant lists %d", len(other))
			}
		})
	}
}
