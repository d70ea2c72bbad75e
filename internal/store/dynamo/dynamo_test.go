package dynamo

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/dynalite"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	awsddb "github.com/veredicto/veredicto/internal/awsclient/dynamodb"
	s3blob "github.com/veredicto/veredicto/internal/blob/s3"
	"github.com/veredicto/veredicto/internal/search"
)

var (
	_ Large                = (*s3blob.Store)(nil)
	_ search.UsageLedger   = (*Store)(nil)
	_ search.UsageReader   = (*Store)(nil)
	_ search.ProgressStore = (*Store)(nil)
)

func TestMain(m *testing.M) {
	code := m.Run()
	dynalite.Stop()
	os.Exit(code)
}

// dynamoClient returns a client for the test binary's dynalite (started on
// first use; skipped without npm tools, failing under CI).
func dynamoClient(t *testing.T) *dynamodb.Client { return dynalite.Client(t) }

var tableSeq atomic.Int64

// newStore creates a fresh table and returns a store on it, on the
// Lambdas' client (internal/awsclient/dynamodb), and the SDK's client that
// created the table, to look at it.
func newStore(t *testing.T, large Large) (*Store, *dynamodb.Client, string) {
	t.Helper()
	client := dynamoClient(t)
	table := fmt.Sprintf("context-%d", tableSeq.Add(1))
	if err := EnsureTable(t.Context(), client, table); err != nil {
		t.Fatalf("EnsureTable %s: %v", table, err)
	}
	lambda, err := awsddb.New(dynalite.Config(t))
	if err != nil {
		t.Fatal(err)
	}
	return New(lambda, table, large), client, table
}

// newLarge returns an s3blob store on an in-process gofakes3 server.
func newLarge(t *testing.T) *s3blob.Store {
	t.Helper()
	srv := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	t.Cleanup(srv.Close)
	client := s3.New(s3.Options{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		BaseEndpoint: aws.String(srv.URL),
		UsePathStyle: true,
	})
	if _, err := client.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String("large")}); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	return s3blob.New(client, "large", "ctx/")
}

func TestDynamoEnsureTable(t *testing.T) {
	ctx := t.Context()
	client := dynamoClient(t)
	for i := range 2 {
		if err := EnsureTable(ctx, client, "ensure-twice"); err != nil {
			t.Fatalf("EnsureTable call %d: %v", i+1, err)
		}
	}
	out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("ensure-twice")})
	if err != nil {
		t.Fatalf("DescribeTable: %v", err)
	}
	if out.Table.TableStatus != types.TableStatusActive {
		t.Errorf("table status: got %s, want ACTIVE", out.Table.TableStatus)
	}

	// A table of the same name with another key schema is reported.
	wrong := TableSchema("wrong-keys")
	wrong.KeySchema = wrong.KeySchema[:1]
	wrong.AttributeDefinitions = wrong.AttributeDefinitions[:1]
	dynalite.CreateTable(t, client, wrong)
	if err := EnsureTable(ctx, client, "wrong-keys"); err == nil || !strings.Contains(err.Error(), "key schema") {
		t.Errorf("EnsureTable on a table with another key schema: got %v, want a key schema error", err)
	}
}

func TestDynamoGetPutIfAbsent(t *testing.T) {
	ctx := t.Context()
	st, client, table := newStore(t, nil)
	const key = "stage/s-1/c-001/gem1/0/abc"

	if v, ok, err := st.Get(ctx, key); err != nil || ok || v != nil {
		t.Fatalf("Get missing: got %q, %v, %v; want nil, false, nil", v, ok, err)
	}
	if wrote, err := st.PutIfAbsent(ctx, key, []byte(`{"n":1}`)); err != nil || !wrote {
		t.Fatalf("first PutIfAbsent: got %v, %v; want true, nil", wrote, err)
	}
	if wrote, err := st.PutIfAbsent(ctx, key, []byte(`{"n":2}`)); err != nil || wrote {
		t.Fatalf("second PutIfAbsent: got %v, %v; want false, nil", wrote, err)
	}
	if v, ok, err := st.Get(ctx, key); err != nil || !ok || string(v) != `{"n":1}` {
		t.Fatalf("Get: got %q, %v, %v; want the first value", v, ok, err)
	}

	// The item layout: pk is the first two segments, sk the rest or "#".
	for _, tt := range []struct{ key, pk, sk string }{
		{key, "stage/s-1", "c-001/gem1/0/abc"},
		{"stage/s-1", "stage/s-1", "#"},
		{"single", "single", "#"},
	} {
		if tt.key != key {
			if _, err := st.PutIfAbsent(ctx, tt.key, []byte("x")); err != nil {
				t.Fatalf("PutIfAbsent %s: %v", tt.key, err)
			}
		}
		out, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: itemKey(tt.pk, tt.sk)})
		if err != nil || out.Item == nil {
			t.Errorf("item for %s at pk %q sk %q: got %v, %v; want it there", tt.key, tt.pk, tt.sk, out, err)
			continue
		}
		if _, ok := out.Item["v"].(*types.AttributeValueMemberB); !ok {
			t.Errorf("item for %s: v is %T, want B", tt.key, out.Item["v"])
		}
	}

	// An empty value is a value.
	if wrote, err := st.PutIfAbsent(ctx, "stage/s-1/empty", nil); err != nil || !wrote {
		t.Fatalf("PutIfAbsent empty: got %v, %v", wrote, err)
	}
	if v, ok, err := st.Get(ctx, "stage/s-1/empty"); err != nil || !ok || v == nil || len(v) != 0 {
		t.Errorf("Get empty: got %q (nil %v), %v, %v; want empty, true", v, v == nil, ok, err)
	}

	for _, bad := range []string{"", "/stage/s-1", "stage//x", "stage/s-1/", "stage/s-1/#", "usage/s-1", "usage/s-1/x"} {
		if _, err := st.PutIfAbsent(ctx, bad, []byte("x")); err == nil || !strings.Contains(err.Error(), "dynamo put "+bad+":") {
			t.Errorf("PutIfAbsent(%q): got %v, want an error naming the key", bad, err)
		}
		if _, _, err := st.Get(ctx, bad); err == nil {
			t.Errorf("Get(%q): got nil error, want one", bad)
		}
	}
}

func TestDynamoConcurrentPutIfAbsent(t *testing.T) {
	ctx := t.Context()
	st, _, _ := newStore(t, nil)
	const key = "stage/s-race/c-001/gem2/0/h"

	var wins atomic.Int64
	var winner atomic.Value
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			v := fmt.Appendf(nil, "writer %d", i)
			wrote, err := st.PutIfAbsent(ctx, key, v)
			if err != nil {
				t.Errorf("writer %d: %v", i, err)
				return
			}
			if wrote {
				wins.Add(1)
				winner.Store(string(v))
			}
		})
	}
	wg.Wait()
	if n := wins.Load(); n != 1 {
		t.Fatalf("writers that won: got %d, want 1", n)
	}
	if v, ok, err := st.Get(ctx, key); err != nil || !ok || string(v) != winner.Load() {
		t.Errorf("stored value: got %q, %v, %v; want the winner's %q", v, ok, err, winner.Load())
	}
}

func TestDynamoList(t *testing.T) {
	ctx := t.Context()
	st, client, table := newStore(t, nil)
	queries := &countingQueries{API: client}
	st = New(queries, table, nil)
	st.pageSize = 2
	keys := []string{
		"stage/s-1/c-002/gem1/0/h",
		"stage/s-1/c-001/gem2/0/h",
		"stage/s-1/c-001/gem1/1/h",
		"stage/s-1/c-001/gem1/0/h",
		"stage/s-1/-/gem5/0/h",
		"stage/s-1",
		"stage/s-10/c-001/gem1/0/h",
		"stage/s-2/c-001/gem1/0/h",
		"report/s-1/summary",
	}
	for _, k := range keys {
		if _, err := st.PutIfAbsent(ctx, k, []byte(k)); err != nil {
			t.Fatalf("PutIfAbsent %s: %v", k, err)
		}
	}
	tests := []struct {
		prefix string
		want   []string
	}{
		{"stage/s-1/", []string{
			"stage/s-1/-/gem5/0/h",
			"stage/s-1/c-001/gem1/0/h",
			"stage/s-1/c-001/gem1/1/h",
			"stage/s-1/c-001/gem2/0/h",
			"stage/s-1/c-002/gem1/0/h",
		}},
		{"stage/s-1/c-001/", []string{"stage/s-1/c-001/gem1/0/h", "stage/s-1/c-001/gem1/1/h", "stage/s-1/c-001/gem2/0/h"}},
		{"stage/s-1/c-001/gem1", []string{"stage/s-1/c-001/gem1/0/h", "stage/s-1/c-001/gem1/1/h"}},
		{"stage/s-10/", []string{"stage/s-10/c-001/gem1/0/h"}},
		{"stage/s-3/", nil},
		{"report/s-1/", []string{"report/s-1/summary"}},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			got, err := st.List(ctx, tt.prefix)
			if err != nil {
				t.Fatalf("List(%q): %v", tt.prefix, err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("List(%q):\n got %q\nwant %q", tt.prefix, got, tt.want)
			}
		})
	}
	if n := queries.calls.Load(); n < int64(len(tests)+4) {
		t.Errorf("Query calls: got %d for %d lists with page size 2, want pagination", n, len(tests))
	}
	for _, bad := range []string{"", "stage", "stage/", "stage/s-1", "/s-1/"} {
		if _, err := st.List(ctx, bad); err == nil {
			t.Errorf("List(%q): got nil error, want one (prefix must name a partition)", bad)
		}
	}
}

// countingQueries counts Query calls.
type countingQueries struct {
	API
	calls atomic.Int64
}

func (c *countingQueries) Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.calls.Add(1)
	return c.API.Query(ctx, in, optFns...)
}

func TestDynamoLargeValue(t *testing.T) {
	ctx := t.Context()
	large := newLarge(t)
	st, client, table := newStore(t, large)

	big := make([]byte, 500<<10)
	rand.Read(big)
	// The peer enforces DynamoDB's item size limit, so the pointer matters.
	_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "raw/x"}, "sk": &types.AttributeValueMemberS{Value: "#"},
		"v": &types.AttributeValueMemberB{Value: big},
	}})
	if err == nil {
		t.Fatalf("raw PutItem of 500 KB: got nil error, want the item size limit")
	}
	const key = "stage/s-1/c-001/gem1/0/big"
	if wrote, err := st.PutIfAbsent(ctx, key, big); err != nil || !wrote {
		t.Fatalf("PutIfAbsent 500 KB: got %v, %v; want true, nil", wrote, err)
	}
	got, ok, err := st.Get(ctx, key)
	if err != nil || !ok || !bytes.Equal(got, big) {
		t.Fatalf("Get 500 KB: got %d bytes, %v, %v; want the same 500 KB", len(got), ok, err)
	}
	// The item holds a pointer, the bytes are in Large.
	out, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: itemKey("stage/s-1", "c-001/gem1/0/big")})
	if err != nil {
		t.Fatalf("GetItem: %v", err)
	}
	ref, ok := out.Item["ref"].(*types.AttributeValueMemberS)
	if _, hasV := out.Item["v"]; !ok || hasV {
		t.Fatalf("item: got %v, want ref and no v", out.Item)
	}
	if ref.Value != largeKey(big) {
		t.Errorf("ref: got %q, want %q", ref.Value, largeKey(big))
	}
	if objs, err := large.List(ctx, "context/"); err != nil || !slices.Equal(objs, []string{ref.Value}) {
		t.Errorf("Large objects: got %q, %v; want [%s]", objs, err, ref.Value)
	}
	// A second writer of the key loses and changes nothing.
	other := bytes.Repeat([]byte("z"), 400<<10)
	if wrote, err := st.PutIfAbsent(ctx, key, other); err != nil || wrote {
		t.Fatalf("second PutIfAbsent: got %v, %v; want false, nil", wrote, err)
	}
	if got, _, _ := st.Get(ctx, key); !bytes.Equal(got, big) {
		t.Errorf("value changed after losing PutIfAbsent")
	}

	// MaxInline bytes still fit in the item.
	edge := bytes.Repeat([]byte("e"), MaxInline)
	if _, err := st.PutIfAbsent(ctx, "stage/s-1/edge", edge); err != nil {
		t.Fatalf("PutIfAbsent MaxInline bytes: %v", err)
	}
	out, err = client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: itemKey("stage/s-1", "edge")})
	if err != nil || out.Item["v"] == nil {
		t.Errorf("MaxInline value: got %v, %v; want it inline in v", out, err)
	}

	// A corrupted large object is detected, not returned.
	if err := large.Put(ctx, ref.Value, []byte("tampered"), ""); err != nil {
		t.Fatalf("overwrite large object: %v", err)
	}
	if _, _, err := st.Get(ctx, key); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("Get with corrupted large object: got %v, want a hash mismatch error", err)
	}

	// Without a Large store, a big value is a clear error.
	small := New(client, table, nil)
	if _, err := small.PutIfAbsent(ctx, "stage/s-1/too-big", big); err == nil || !strings.Contains(err.Error(), "no large-value store") {
		t.Errorf("PutIfAbsent 500 KB without Large: got %v, want a no large-value store error", err)
	}
}

func TestDynamoUsage(t *testing.T) {
	ctx := t.Context()
	st, _, _ := newStore(t, nil)

	if u, err := st.Usage(ctx, "acme", "unknown"); err != nil || u != (veredicto.Usage{}) {
		t.Fatalf("Usage of unknown search: got %+v, %v; want zero", u, err)
	}
	adds := []veredicto.Usage{
		{Calls: 1, PromptTokens: 1200, CachedTokens: 1000, CompletionTokens: 300, CostUSD: 0.1},
		{Calls: 2, PromptTokens: 800, CachedTokens: 0, CompletionTokens: 150, CostUSD: 0.2},
	}
	for _, u := range adds {
		if err := st.AddUsage(ctx, "acme", "s-1", u); err != nil {
			t.Fatalf("AddUsage: %v", err)
		}
	}
	want := veredicto.Usage{Calls: 3, PromptTokens: 2000, CachedTokens: 1000, CompletionTokens: 450, CostUSD: 0.3}
	if got, err := st.Usage(ctx, "acme", "s-1"); err != nil || got != want {
		t.Fatalf("Usage: got %+v, %v; want %+v (exact)", got, err, want)
	}
	// Another tenant's search of the same id has its own ledger.
	if got, err := st.Usage(ctx, "globex", "s-1"); err != nil || got != (veredicto.Usage{}) {
		t.Errorf("Usage of globex/s-1: got %+v, %v; want zero", got, err)
	}

	// Concurrent adds accumulate exactly.
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if err := st.AddUsage(ctx, "acme", "s-2", veredicto.Usage{Calls: 1, PromptTokens: 7, CostUSD: 0.000123}); err != nil {
				t.Errorf("AddUsage: %v", err)
			}
		})
	}
	wg.Wait()
	want = veredicto.Usage{Calls: 10, PromptTokens: 70, CostUSD: 0.00123}
	if got, err := st.Usage(ctx, "acme", "s-2"); err != nil || got != want {
		t.Errorf("Usage after concurrent adds: got %+v, %v; want %+v", got, err, want)
	}
	// The ledger is not a context-store key.
	if keys, err := st.List(ctx, "usage/acme/"); err == nil || len(keys) != 0 {
		t.Errorf("List usage/acme/: got %q, %v; want an error", keys, err)
	}
	for _, bad := range [][2]string{{"acme", ""}, {"acme", "a/b"}, {"a/b", "s-1"}} {
		if err := st.AddUsage(ctx, bad[0], bad[1], veredicto.Usage{Calls: 1}); err == nil {
			t.Errorf("AddUsage(%q, %q): got nil error, want one", bad[0], bad[1])
		}
	}
}

// TestDynamoProgressIsScopedByTenant reads a search's progress from
// DynamoDB: one Query of the tenant's partition, never another tenant's
// records or a search whose id merely starts the same, usage from the
// tenant's ledger.
func TestDynamoProgressIsScopedByTenant(t *testing.T) {
	ctx := t.Context()
	st, _, _ := newStore(t, nil)
	for _, k := range []string{
		"stage/acme/s-1/c-1/gem1/0/h", "stage/acme/s-1/c-1/gem4/0/h", "stage/acme/s-1/c-1/correction/1/h",
		"stage/acme/s-1/c-1/gem4/1/h", "stage/acme/s-1/-/gem5/0/h",
		"stage/acme/s-10/c-2/gem1/0/h", "stage/globex/s-1/c-3/gem1/0/h",
	} {
		if _, err := st.PutIfAbsent(ctx, k, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.AddUsage(ctx, "acme", "s-1", veredicto.Usage{Calls: 4}); err != nil {
		t.Fatal(err)
	}
	if err := st.AddUsage(ctx, "globex", "s-1", veredicto.Usage{Calls: 9}); err != nil {
		t.Fatal(err)
	}
	p, err := search.Progress(ctx, st, "acme", "s-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Candidates) != 1 || p.Candidates[0].CandidateID != "c-1" ||
		strings.Join(p.Candidates[0].Stages, " ") != "gem1 gem4 correction_1 gem4_retry_1" {
		t.Errorf("candidates %+v, want only acme/s-1's c-1 in protocol order", p.Candidates)
	}
	if p.Usage.Calls != 4 {
		t.Errorf("usage %+v, want acme/s-1's ledger (4 calls)", p.Usage)
	}
}
