package dynamo

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	awsddb "github.com/veredicto/veredicto/internal/awsclient/dynamodb"
	"github.com/veredicto/veredicto/internal/dynalite"
	"github.com/veredicto/veredicto/internal/eventlog"
	"github.com/veredicto/veredicto/internal/eventlog/eventlogtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	dynalite.Stop()
	os.Exit(code)
}

var tables atomic.Int64

// newDynamo creates a table and returns a log on it, on the Lambdas'
// client (internal/awsclient/dynamodb).
func newDynamo(t *testing.T) *Log {
	t.Helper()
	client := dynalite.Client(t)
	name := fmt.Sprintf("events-%d", tables.Add(1))
	dynalite.CreateTable(t, client, TableSchema(name))
	lambda, err := awsddb.New(dynalite.Config(t))
	if err != nil {
		t.Fatal(err)
	}
	return New(lambda, name)
}

func TestDynamoAppendReadDedupe(t *testing.T) {
	ctx := t.Context()
	d := newDynamo(t)
	for i := range 5 {
		key := ""
		if i == 1 {
			key = "pending:c1"
		}
		ev, err := d.Append(ctx, "acme", "arn:x", eventlogtest.Event(t, eventlog.TypeExecutionStep, key, map[string]int{"n": i}))
		if err != nil {
			t.Fatal(err)
		}
		if ev.ID != int64(i+1) {
			t.Fatalf("id %d, want %d", ev.ID, i+1)
		}
	}
	again, err := d.Append(ctx, "acme", "arn:x", eventlogtest.Event(t, eventlog.TypePendingConfirmation, "pending:c1", map[string]int{}))
	if err != nil || again.ID != 2 {
		t.Errorf("repeated key: id %d (%v), want the stored 2", again.ID, err)
	}
	tests := []struct {
		name   string
		tenant string
		after  int64
		limit  int
		want   string
	}{
		{"all", "acme", 0, 0, "[1 2 3 4 5]"},
		{"after", "acme", 3, 0, "[4 5]"},
		{"limit", "acme", 0, 2, "[1 2]"},
		{"other tenant", "globex", 0, 0, "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := d.Read(ctx, tt.tenant, "arn:x", tt.after, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(eventlogtest.IDs(got)) != tt.want {
				t.Errorf("ids = %v, want %s", eventlogtest.IDs(got), tt.want)
			}
		})
	}
	got, _ := d.Read(ctx, "acme", "arn:x", 0, 1)
	if got[0].Type != eventlog.TypeExecutionStep || string(got[0].Data) != `{"n":0,"type":"execution-step"}` || got[0].Time.IsZero() {
		t.Errorf("round trip = %+v", got[0])
	}
}

func TestDynamoConcurrentAppendsAreDense(t *testing.T) {
	ctx := t.Context()
	d := newDynamo(t)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for range 10 {
				if _, err := d.Append(ctx, "acme", "s", eventlogtest.Event(t, "x", "", map[string]int{"w": w})); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	got, err := d.Read(ctx, "acme", "s", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 40 {
		t.Fatalf("read %d, want 40", len(got))
	}
	for i, ev := range got {
		if ev.ID != int64(i+1) {
			t.Fatalf("event %d has id %d", i, ev.ID)
		}
	}
}

// TestDynamoDamagedItem: an item whose data is not JSON is read as the
// error message for its id, and the events after it follow; no error a
// reader would retry.
func TestDynamoDamagedItem(t *testing.T) {
	ctx := t.Context()
	d := newDynamo(t)
	for i := range 3 {
		if _, err := d.Append(ctx, "acme", "arn:x", eventlogtest.Event(t, eventlog.TypeExecutionStep, "", map[string]int{"n": i})); err != nil {
			t.Fatal(err)
		}
	}
	_, err := d.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(d.table), Item: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: partition("acme", "arn:x")}, "seq": &types.AttributeValueMemberN{Value: "2"},
		"type": &types.AttributeValueMemberS{Value: eventlog.TypeExecutionStep}, "data": &types.AttributeValueMemberS{Value: `{"n":1,"cv":"Ana`}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.Read(ctx, "acme", "arn:x", 0, 0)
	if err != nil || fmt.Sprint(eventlogtest.IDs(got)) != "[1 2 3]" {
		t.Fatalf("Read = %v, %v", eventlogtest.IDs(got), err)
	}
	if got[1].Type != eventlog.TypeError || !strings.Contains(string(got[1].Data), `"id":2`) || strings.Contains(string(got[1].Data), "Ana") {
		t.Errorf("damaged item read as %+v (%s)", got[1], got[1].Data)
	}
}
