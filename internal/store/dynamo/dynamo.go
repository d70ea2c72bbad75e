// Package dynamo is the context store on DynamoDB (an adapter of package
// store): stage outputs and other small records written once per key with
// single-item conditional writes, values too big for an item kept in a blob
// store behind a pointer, and the per-search usage ledger.
//
// One table holds everything. Partition key pk (S) is a key's first two path
// segments, sort key sk (S) the rest ("#" when there is no rest), so
// "stage/acme/s-1/c-001/gem1/0/abc" is pk "stage/acme", sk
// "s-1/c-001/gem1/0/abc": a tenant's records share a partition and never
// another tenant's, and all records of one search are one Query (sk
// begins_with "s-1/"). The value is
// attribute v (B), or ref (S), the blob key of a value stored in Large. The
// usage ledger of tenant T's search S is the item pk "usage/T", sk "S".
package dynamo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/awsretry"
	"github.com/veredicto/veredicto/internal/store"
)

// API is the part of the DynamoDB client the store uses.
type API interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
}

var _ API = (*dynamodb.Client)(nil)

// CreateAPI is the part of the DynamoDB client EnsureTable uses.
type CreateAPI interface {
	CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}

var _ CreateAPI = (*dynamodb.Client)(nil)

// Large holds values too big for a DynamoDB item; *s3.Store
// (internal/blob/s3) is one.
type Large interface {
	Get(ctx context.Context, key string) ([]byte, error)
	PutIfAbsent(ctx context.Context, key string, data []byte, contentType string) (bool, error)
}

// MaxInline is the largest value kept inside the item (350 KiB). Bigger
// values go to Large, which keeps every item well under DynamoDB's 400 KB
// limit even with the longest keys (pk ≤ 2 KB, sk ≤ 1 KB).
const MaxInline = 350 << 10

// largePrefix starts the Large key of an out-of-item value:
// "context/<sha256 hex of the value>".
const largePrefix = "context/"

// usageNamespace is the first key segment reserved for the usage ledger.
const usageNamespace = "usage"

// emptySK is the sort key of a key with only pk segments.
const emptySK = "#"

// Store is the DynamoDB context store. It implements search.KV. It is
// immutable after New and safe for concurrent use.
type Store struct {
	client API
	table  string
	large  Large
	// pageSize is the Query Limit for List; 0 lets DynamoDB page by size
	// (1 MB). Tests set it small to exercise pagination.
	pageSize int32
}

// New returns a store on table. large keeps values over MaxInline; it may be
// nil if no value ever exceeds it (a bigger one is then an error).
func New(client API, table string, large Large) *Store {
	return &Store{client: client, table: table, large: large}
}

var (
	_ store.Store  = (*Store)(nil)
	_ store.Ledger = (*Store)(nil)
)

// TableSchema is the table the store needs: pk (S) hash key, sk (S) range
// key, on-demand billing.
func TableSchema(name string) *dynamodb.CreateTableInput {
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

// tableWait bounds how long EnsureTable waits for a new table to be ACTIVE.
const tableWait = 5 * time.Minute

// EnsureTable creates table name with TableSchema unless it exists, waits
// until it is ACTIVE and checks that its key schema is the store's.
func EnsureTable(ctx context.Context, client CreateAPI, name string) error {
	_, err := client.CreateTable(ctx, TableSchema(name))
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("dynamo create table %s: %w", name, err)
	}
	w := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = 500 * time.Millisecond
		o.MaxDelay = 5 * time.Second
	})
	out, err := w.WaitForOutput(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, tableWait)
	if err != nil {
		return fmt.Errorf("dynamo wait for table %s: %w", name, err)
	}
	if !keySchemaOK(out.Table.KeySchema) {
		return fmt.Errorf("dynamo table %s: key schema %s, want pk (HASH) and sk (RANGE)", name, describeKeys(out.Table.KeySchema))
	}
	return nil
}

func keySchemaOK(ks []types.KeySchemaElement) bool {
	var hash, rng string
	for _, k := range ks {
		switch k.KeyType {
		case types.KeyTypeHash:
			hash = aws.ToString(k.AttributeName)
		case types.KeyTypeRange:
			rng = aws.ToString(k.AttributeName)
		}
	}
	return len(ks) == 2 && hash == "pk" && rng == "sk"
}

func describeKeys(ks []types.KeySchemaElement) string {
	parts := make([]string, 0, len(ks))
	for _, k := range ks {
		parts = append(parts, fmt.Sprintf("%s (%s)", aws.ToString(k.AttributeName), k.KeyType))
	}
	return strings.Join(parts, ", ")
}

// splitKey maps a key to its item key. Keys are "/"-separated with no empty
// segment; a key whose rest would be "#" is rejected (it would share an
// item with the key made of its first two segments), and so are keys in
// the usage ledger's namespace.
func splitKey(key string) (pk, sk string, err error) {
	if key == "" {
		return "", "", errors.New("empty key")
	}
	if slices.Contains(strings.Split(key, "/"), "") {
		return "", "", errors.New("key has an empty path segment")
	}
	parts := strings.SplitN(key, "/", 3)
	if parts[0] == usageNamespace {
		return "", "", fmt.Errorf("the %s/ namespace is reserved for the usage ledger", usageNamespace)
	}
	pk = strings.Join(parts[:min(2, len(parts))], "/")
	if len(parts) < 3 {
		return pk, emptySK, nil
	}
	if parts[2] == emptySK {
		return "", "", fmt.Errorf("key rest %q is reserved", emptySK)
	}
	return pk, parts[2], nil
}

func itemKey(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: pk},
		"sk": &types.AttributeValueMemberS{Value: sk},
	}
}

// Get returns the value stored under key (read consistently), following
// the pointer to Large for a big value.
func (s *Store) Get(ctx context.Context, key string) ([]byte, bool, error) {
	pk, sk, err := splitKey(key)
	if err != nil {
		return nil, false, fmt.Errorf("dynamo get %s: %w", key, awsretry.Classify(err))
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            itemKey(pk, sk),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, false, fmt.Errorf("dynamo get %s: %w", key, awsretry.Classify(err))
	}
	if out.Item == nil {
		return nil, false, nil
	}
	if v, ok := out.Item["v"].(*types.AttributeValueMemberB); ok {
		if v.Value == nil {
			return []byte{}, true, nil
		}
		return v.Value, true, nil
	}
	ref, ok := out.Item["ref"].(*types.AttributeValueMemberS)
	if !ok {
		return nil, false, fmt.Errorf("dynamo get %s: item has neither v (B) nor ref (S)", key)
	}
	if s.large == nil {
		return nil, false, fmt.Errorf("dynamo get %s: value is in the large-value store at %s, but none is configured", key, ref.Value)
	}
	b, err := s.large.Get(ctx, ref.Value)
	if err != nil {
		return nil, false, fmt.Errorf("dynamo get %s: large value %s: %w", key, ref.Value, err)
	}
	if largeKey(b) != ref.Value {
		return nil, false, fmt.Errorf("dynamo get %s: large value %s does not match its hash", key, ref.Value)
	}
	return b, true, nil
}

func largeKey(value []byte) string {
	sum := sha256.Sum256(value)
	return largePrefix + hex.EncodeToString(sum[:])
}

// PutIfAbsent stores value under key unless the key exists, with one
// conditional PutItem; it reports whether it wrote. A value over MaxInline
// is first written to Large under its content hash; if another writer wins
// the key, that object stays behind unreferenced (content-addressed, so
// harmless and shared with any later identical value).
func (s *Store) PutIfAbsent(ctx context.Context, key string, value []byte) (bool, error) {
	pk, sk, err := splitKey(key)
	if err != nil {
		return false, fmt.Errorf("dynamo put %s: %w", key, awsretry.Classify(err))
	}
	item := itemKey(pk, sk)
	if len(value) <= MaxInline {
		if value == nil {
			value = []byte{}
		}
		item["v"] = &types.AttributeValueMemberB{Value: value}
	} else {
		if s.large == nil {
			return false, fmt.Errorf("dynamo put %s: value is %d bytes, over the %d-byte item limit, and no large-value store is configured",
				key, len(value), MaxInline)
		}
		ref := largeKey(value)
		// false means the same content is already there: fine.
		if _, err := s.large.PutIfAbsent(ctx, ref, value, "application/octet-stream"); err != nil {
			return false, fmt.Errorf("dynamo put %s: large value %s: %w", key, ref, err)
		}
		item["ref"] = &types.AttributeValueMemberS{Value: ref}
	}
	_, err = s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           aws.String(s.table),
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("dynamo put %s: %w", key, awsretry.Classify(err))
	}
	return true, nil
}

// List returns the keys that start with prefix, sorted. The prefix must
// name a whole partition: at least two complete segments, as in
// "stage/s-1/" or "stage/s-1/c-001/gem"; a prefix like "stage/s-1" could
// match "stage/s-10" and is rejected.
func (s *Store) List(ctx context.Context, prefix string) ([]string, error) {
	parts := strings.SplitN(prefix, "/", 3)
	if len(parts) < 3 || parts[0] == "" || parts[1] == "" {
		return nil, fmt.Errorf("dynamo list %s: prefix must start with two complete segments, like \"stage/<search>/\"", prefix)
	}
	if parts[0] == usageNamespace {
		return nil, fmt.Errorf("dynamo list %s: the %s/ namespace is the usage ledger, read with Usage", prefix, usageNamespace)
	}
	pk, rest := parts[0]+"/"+parts[1], parts[2]
	in := &dynamodb.QueryInput{
		TableName:                aws.String(s.table),
		KeyConditionExpression:   aws.String("pk = :pk"),
		ExpressionAttributeNames: map[string]string{"#sk": "sk"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: pk},
		},
		ProjectionExpression: aws.String("#sk"),
		ConsistentRead:       aws.Bool(true),
	}
	if rest != "" {
		in.KeyConditionExpression = aws.String("pk = :pk AND begins_with(#sk, :rest)")
		in.ExpressionAttributeValues[":rest"] = &types.AttributeValueMemberS{Value: rest}
	}
	if s.pageSize > 0 {
		in.Limit = aws.Int32(s.pageSize)
	}
	var keys []string
	p := dynamodb.NewQueryPaginator(s.client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("dynamo list %s: %w", prefix, awsretry.Classify(err))
		}
		for _, it := range page.Items {
			sk, ok := it["sk"].(*types.AttributeValueMemberS)
			// sk "#" is the key pk itself, which does not start with pk+"/".
			if !ok || sk.Value == emptySK {
				continue
			}
			keys = append(keys, pk+"/"+sk.Value)
		}
	}
	sort.Strings(keys)
	return keys, nil
}

// microUSD is one US dollar in the ledger's unit.
const microUSD = 1_000_000

func usageKey(tenant, searchID string) (map[string]types.AttributeValue, error) {
	if tenant == "" {
		tenant = "-" // a one-machine run, as in the stage keys
	}
	if strings.Contains(tenant, "/") {
		return nil, fmt.Errorf("tenant %q must contain no \"/\"", tenant)
	}
	if searchID == "" || strings.Contains(searchID, "/") || searchID == emptySK {
		return nil, fmt.Errorf("search id %q must be non-empty and contain no \"/\"", searchID)
	}
	return itemKey(usageNamespace+"/"+tenant, searchID), nil
}

// AddUsage adds u to the ledger of the tenant's searchID with one atomic UpdateItem
// (ADD), so concurrent tasks accumulate exactly. The cost is kept as
// integer micro-dollars, so sums do not drift; each call's cost is rounded
// to the nearest micro-dollar. ADD is not idempotent: call it once per
// persisted stage record (for example only when PutIfAbsent wrote).
func (s *Store) AddUsage(ctx context.Context, tenant, searchID string, u veredicto.Usage) error {
	key, err := usageKey(tenant, searchID)
	if err != nil {
		return fmt.Errorf("dynamo add usage %s: %w", searchID, awsretry.Classify(err))
	}
	n := func(v int64) types.AttributeValue {
		return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
	}
	_, err = s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:        aws.String(s.table),
		Key:              key,
		UpdateExpression: aws.String("ADD #calls :c, #prompt :p, #cached :k, #completion :o, #cost :m"),
		ExpressionAttributeNames: map[string]string{
			"#calls": "calls", "#prompt": "prompt_tokens", "#cached": "cached_prompt_tokens",
			"#completion": "completion_tokens", "#cost": "cost_micro_usd",
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":c": n(int64(u.Calls)),
			":p": n(int64(u.PromptTokens)),
			":k": n(int64(u.CachedTokens)),
			":o": n(int64(u.CompletionTokens)),
			":m": n(int64(math.Round(u.CostUSD * microUSD))),
		},
	})
	if err != nil {
		return fmt.Errorf("dynamo add usage %s: %w", searchID, awsretry.Classify(err))
	}
	return nil
}

// Usage returns the ledger of the tenant's searchID (read consistently); zero when the
// search has none.
func (s *Store) Usage(ctx context.Context, tenant, searchID string) (veredicto.Usage, error) {
	key, err := usageKey(tenant, searchID)
	if err != nil {
		return veredicto.Usage{}, fmt.Errorf("dynamo usage %s: %w", searchID, awsretry.Classify(err))
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            key,
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return veredicto.Usage{}, fmt.Errorf("dynamo usage %s: %w", searchID, awsretry.Classify(err))
	}
	var perr error
	num := func(name string) int64 {
		av, ok := out.Item[name]
		if !ok {
			return 0
		}
		nv, ok := av.(*types.AttributeValueMemberN)
		if !ok {
			perr = errors.Join(perr, fmt.Errorf("attribute %s is not a number", name))
			return 0
		}
		v, err := strconv.ParseInt(nv.Value, 10, 64)
		if err != nil {
			perr = errors.Join(perr, fmt.Errorf("attribute %s: %w", name, err))
		}
		return v
	}
	u := veredicto.Usage{
		Calls:            int(num("calls")),
		PromptTokens:     int(num("prompt_tokens")),
		CachedTokens:     int(num("cached_prompt_tokens")),
		CompletionTokens: int(num("completion_tokens")),
		CostUSD:          float64(num("cost_micro_usd")) / microUSD,
	}
	if perr != nil {
		return veredicto.Usage{}, fmt.Errorf("dynamo usage %s: %w", searchID, perr)
	}
	return u, nil
}
