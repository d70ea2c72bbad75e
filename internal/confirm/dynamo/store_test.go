package dynamo

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/veredicto/veredicto"
	awsddb "github.com/veredicto/veredicto/internal/awsclient/dynamodb"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/confirm/file"
	"github.com/veredicto/veredicto/internal/confirm/memory"
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
	stores := map[string]func(t *testing.T) confirm.Store{
		"file": func(t *testing.T) confirm.Store { return file.New(t.TempDir()) },
		"dynamo": func(t *testing.T) confirm.Store {
			client := dynalite.Client(t)
			name := fmt.Sprintf("context-%d", tables.Add(1))
			dynalite.CreateTable(t, client, contextTable(name))
			return New(client, name)
		},
		"dynamo, the Lambdas' client": func(t *testing.T) confirm.Store {
			client := dynalite.Client(t)
			name := fmt.Sprintf("context-%d", tables.Add(1))
			dynalite.CreateTable(t, client, contextTable(name))
			lambda, err := awsddb.New(dynalite.Config(t))
			if err != nil {
				t.Fatal(err)
			}
			return New(lambda, name)
		},
	}
	for name, mk := range stores {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			s := mk(t)
			base := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
			recs := []confirm.Record{}
			for i, tok := range []string{"t3", "t1", "t2"} {
				r := confirm.Record{ID: confirm.IDFor("acme", tok), Tenant: "acme", Ask: confirm.Ask{Execution: "arn:x", ToolName: "senior_review",
					Category: "decision", Sensitivity: "high", Preview: []byte(`"p"`),
					CreatedAt: base.Add(time.Duration(3-i) * time.Minute), ExpiresAt: base.Add(time.Hour)}, Status: confirm.StatusPending, TaskToken: tok}
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
			if _, err := s.Get(ctx, "acme", confirm.IDFor("acme", "none")); !errors.As(err, &nf) {
				t.Errorf("missing Get: %v, want NotFoundError", err)
			}
			// Optimistic concurrency on the version.
			got.Status = confirm.StatusResolving
			if err := s.Put(ctx, got, 1); err != nil {
				t.Fatalf("update at version 1: %v", err)
			}
			if err := s.Put(ctx, got, 1); !errors.As(err, &ce) {
				t.Errorf("stale update: %v, want ConflictError", err)
			}
			got.Status, got.ResolvedAt = confirm.StatusApproved, base
			if err := s.Put(ctx, got, 2); err != nil {
				t.Fatal(err)
			}
			list, more, err := s.List(ctx, "acme", base, 10)
			if err != nil {
				t.Fatal(err)
			}
			if got := tokens(list); got != "[t2 t1]" || more { // unresolved only, oldest first
				t.Errorf("List = %v more %v, want [t2 t1] and no more", got, more)
			}
			if list, more, _ := s.List(ctx, "acme", base, 1); tokens(list) != "[t2]" || !more {
				t.Errorf("List of 1 = %v more %v, want [t2] and more", tokens(list), more)
			}
			if list, _, _ := s.List(ctx, "acme", base.Add(time.Hour), 10); len(list) != 0 {
				t.Errorf("List after the expiry = %v, want none: expired ones are not open", tokens(list))
			}
			if other, _, _ := s.List(ctx, "globex", base, 10); len(other) != 0 {
				t.Errorf("another tenant lists %d", len(other))
			}
		})
	}
}

func tokens(rs []confirm.Record) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.TaskToken)
	}
	return fmt.Sprint(out)
}

// TestListIsOldestFirstAcrossPages: with more open confirmations than a
// page holds, List returns the oldest, whatever order their ids (hashes)
// sort in, and says more wait.
func TestListIsOldestFirstAcrossPages(t *testing.T) {
	ctx := t.Context()
	client := dynalite.Client(t)
	name := fmt.Sprintf("context-%d", tables.Add(1))
	dynalite.CreateTable(t, client, contextTable(name))
	paged := New(client, name)
	paged.pageItems = 4 // 8 pages: the oldest are not all on the first
	stores := map[string]confirm.Store{"dynamo": paged, "file": file.New(t.TempDir()), "memory": memory.New()}
	base := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	const n = 30
	for sname, s := range stores {
		for i := range n {
			tok := fmt.Sprintf("t%02d", i)
			r := confirm.Record{ID: confirm.IDFor("acme", tok), Tenant: "acme", Ask: confirm.Ask{Execution: "arn:x", ToolName: "senior_review",
				Category: "decision", Sensitivity: "high", Preview: []byte(`"p"`),
				CreatedAt: base.Add(time.Duration(i) * time.Minute), ExpiresAt: base.Add(time.Hour)}, Status: confirm.StatusPending, TaskToken: tok}
			if i == 0 {
				r.ExpiresAt = base // expired: not open, not counted
			}
			if err := s.Put(ctx, r, 0); err != nil {
				t.Fatal(err)
			}
		}
		list, more, err := s.List(ctx, "acme", base, 5)
		if err != nil {
			t.Fatal(err)
		}
		if got := tokens(list); got != "[t01 t02 t03 t04 t05]" || !more {
			t.Errorf("%s: List = %v more %v, want [t01 t02 t03 t04 t05] and more", sname, got, more)
		}
		if list, more, _ := s.List(ctx, "acme", base, 0); len(list) != n-1 || more {
			t.Errorf("%s: List without a limit = %d more %v, want %d and no more", sname, len(list), more, n-1)
		}
	}
}

// TestDamagedRecord runs the contract for a record whose stored bytes no
// longer decode against both adapters: Get and List return it as damaged
// (never an error a workflow would retry), and asking again replaces it.
func TestDamagedRecord(t *testing.T) {
	type corrupter func(t *testing.T, r confirm.Record)
	stores := map[string]func(t *testing.T) (confirm.Store, corrupter){
		"file": func(t *testing.T) (confirm.Store, corrupter) {
			dir := filepath.Join(t.TempDir(), "confirmations")
			return file.New(dir), func(t *testing.T, r confirm.Record) {
				path := filepath.Join(dir, base64.RawURLEncoding.EncodeToString([]byte(r.Tenant)), r.ID+".json")
				if err := os.WriteFile(path, []byte(`{"id":"`+r.ID+`","tenant":"acme","preview":"Ana's salary`), 0o600); err != nil {
					t.Fatal(err)
				}
			}
		},
		"dynamo": func(t *testing.T) (confirm.Store, corrupter) {
			client := dynalite.Client(t)
			name := fmt.Sprintf("context-%d", tables.Add(1))
			dynalite.CreateTable(t, client, contextTable(name))
			return New(client, name), func(t *testing.T, r confirm.Record) {
				_, err := client.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(name), Item: map[string]types.AttributeValue{
					"pk": &types.AttributeValueMemberS{Value: "confirmation#" + r.Tenant}, "sk": &types.AttributeValueMemberS{Value: r.ID},
					"doc": &types.AttributeValueMemberS{Value: `{"id":`}, "status": &types.AttributeValueMemberS{Value: confirm.StatusPending},
					"version": &types.AttributeValueMemberN{Value: "1"},
				}})
				if err != nil {
					t.Fatal(err)
				}
			}
		},
	}
	for name, mk := range stores {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			s, corrupt := mk(t)
			base := time.Now().UTC()
			r := confirm.Record{ID: confirm.IDFor("acme", "tok"), Tenant: "acme", Ask: confirm.Ask{Execution: "arn:x", ToolName: "senior_review",
				Category: "decision", Sensitivity: "high", Preview: []byte(`"p"`), CreatedAt: base, ExpiresAt: base.Add(time.Hour)},
				Status: confirm.StatusPending, TaskToken: "tok"}
			if err := s.Put(ctx, r, 0); err != nil {
				t.Fatal(err)
			}
			corrupt(t, r)
			got, err := s.Get(ctx, "acme", r.ID)
			if err != nil || got.Status != confirm.StatusDamaged || got.Damage == nil || got.Damage.Reason == "" || got.ID != r.ID {
				t.Fatalf("Get of a damaged record = %+v, %v; want it as damaged, no error", got, err)
			}
			if strings.Contains(got.Damage.Reason, "salary") {
				t.Errorf("the reason quotes the record: %q", got.Damage.Reason)
			}
			list, _, err := s.List(ctx, "acme", base, 10)
			if err != nil || len(list) != 1 || list[0].Status != confirm.StatusDamaged {
				t.Fatalf("List = %+v, %v; want the damaged one listed", list, err)
			}
			if err := s.Put(ctx, r, got.Version); err != nil { // the workflow asks again
				t.Fatalf("Put over the damaged record at its version %d: %v", got.Version, err)
			}
			if again, err := s.Get(ctx, "acme", r.ID); err != nil || again.Status != confirm.StatusPending {
				t.Errorf("after asking again: %+v, %v", again, err)
			}
		})
	}
}
