// Package dynamo is the event log on DynamoDB (an adapter of
// eventlog.Log): one item per event, the id as numeric sort key.
package dynamo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/eventlog"
)

// API is the part of the DynamoDB client the log uses.
type API interface {
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
}

var _ API = (*dynamodb.Client)(nil)

// Log keeps each event as one item of a table keyed by pk (string:
// the tenant, path-escaped, "/" and the stream) and seq (number: the
// event's id). Append reads the last id and writes the next with a
// condition that it is new, retrying when another writer took it, so ids
// stay dense with any number of writers. Items expire (TTL attribute
// expires_at) after Retention.
type Log struct {
	client    API
	table     string
	Retention time.Duration
	now       func() time.Time
}

var _ eventlog.Log = (*Log)(nil)

// New returns a log on table.
func New(client API, table string) *Log {
	return &Log{client: client, table: table, Retention: 90 * 24 * time.Hour, now: time.Now}
}

// TableSchema is the events table: what template.yaml declares and tests
// create.
func TableSchema(name string) *dynamodb.CreateTableInput {
	return &dynamodb.CreateTableInput{
		TableName: aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("seq"), AttributeType: types.ScalarAttributeTypeN},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("seq"), KeyType: types.KeyTypeRange},
		},
		BillingMode: types.BillingModePayPerRequest,
	}
}

func partition(tenant, stream string) string { return url.PathEscape(tenant) + "/" + stream }

// maxAppendRaces bounds the retries of an append that keeps losing its id
// to other writers; each retry waits a random moment, up to 50 ms.
const maxAppendRaces = 32

// Append adds ev to the stream (see File.Append for Key).
func (d *Log) Append(ctx context.Context, tenant, stream string, ev eventlog.Event) (eventlog.Event, error) {
	if err := eventlog.Validate(tenant, stream, ev); err != nil {
		return eventlog.Event{}, err
	}
	pk := partition(tenant, stream)
	for race := range maxAppendRaces {
		if race > 0 {
			backoff := time.Duration(rand.Int64N(int64(min(race*race, 50)) * int64(time.Millisecond)))
			select {
			case <-ctx.Done():
				return eventlog.Event{}, ctx.Err()
			case <-time.After(backoff):
			}
		}
		window := 1
		if ev.Key != "" {
			window = eventlog.DedupeWindow
		}
		last, err := d.query(ctx, pk, 0, window, false)
		if err != nil {
			return eventlog.Event{}, fmt.Errorf("append %s/%s: %w", tenant, stream, err)
		}
		var lastID int64
		if len(last) > 0 {
			lastID = last[0].ID
		}
		if ev.Key != "" {
			for _, old := range last {
				if old.Key == ev.Key {
					return old, nil
				}
			}
		}
		if lastID >= eventlog.MaxEvents {
			return eventlog.Event{}, &veredicto.ConflictError{What: "stream " + stream, Problem: fmt.Sprintf("holds %d events, the limit", eventlog.MaxEvents)}
		}
		next := ev
		next.ID = lastID + 1
		if next.Time.IsZero() {
			next.Time = d.now().UTC()
		}
		item := map[string]types.AttributeValue{
			"pk":         &types.AttributeValueMemberS{Value: pk},
			"seq":        &types.AttributeValueMemberN{Value: strconv.FormatInt(next.ID, 10)},
			"type":       &types.AttributeValueMemberS{Value: next.Type},
			"time":       &types.AttributeValueMemberS{Value: next.Time.Format(time.RFC3339Nano)},
			"data":       &types.AttributeValueMemberS{Value: string(next.Data)},
			"expires_at": &types.AttributeValueMemberN{Value: strconv.FormatInt(next.Time.Add(d.Retention).Unix(), 10)},
		}
		if next.Key != "" {
			item["key"] = &types.AttributeValueMemberS{Value: next.Key}
		}
		_, err = d.client.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: aws.String(d.table), Item: item,
			ConditionExpression: aws.String("attribute_not_exists(seq)"),
		})
		var ccf *types.ConditionalCheckFailedException
		switch {
		case err == nil:
			return next, nil
		case errors.As(err, &ccf):
			continue // another writer took this id: read again
		default:
			return eventlog.Event{}, fmt.Errorf("append %s/%s: %w", tenant, stream, err)
		}
	}
	return eventlog.Event{}, &veredicto.TransientError{Op: "append " + tenant + "/" + stream, Err: errors.New("too many concurrent writers")}
}

// Read returns up to limit events with ids above after, in order.
func (d *Log) Read(ctx context.Context, tenant, stream string, after int64, limit int) ([]eventlog.Event, error) {
	evs, err := d.query(ctx, partition(tenant, stream), after, eventlog.ClampLimit(limit), true)
	if err != nil {
		return nil, fmt.Errorf("read %s/%s: %w", tenant, stream, err)
	}
	return evs, nil
}

// query reads up to limit events of pk: ascending from after, or the last
// ones descending.
func (d *Log) query(ctx context.Context, pk string, after int64, limit int, ascending bool) ([]eventlog.Event, error) {
	in := &dynamodb.QueryInput{
		TableName:              aws.String(d.table),
		KeyConditionExpression: aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: pk},
		},
		ScanIndexForward: aws.Bool(ascending),
		ConsistentRead:   aws.Bool(true),
	}
	if ascending {
		in.KeyConditionExpression = aws.String("pk = :pk AND seq > :after")
		in.ExpressionAttributeValues[":after"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(after, 10)}
	}
	var out []eventlog.Event
	for len(out) < limit {
		in.Limit = aws.Int32(int32(limit - len(out)))
		resp, err := d.client.Query(ctx, in)
		if err != nil {
			return nil, err
		}
		for _, item := range resp.Items {
			ev, err := decodeItem(item)
			if err != nil {
				return nil, err
			}
			out = append(out, ev)
		}
		if resp.LastEvaluatedKey == nil {
			break
		}
		in.ExclusiveStartKey = resp.LastEvaluatedKey
	}
	return out, nil
}

func decodeItem(item map[string]types.AttributeValue) (eventlog.Event, error) {
	str := func(k string) string {
		if v, ok := item[k].(*types.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}
	seq, ok := item["seq"].(*types.AttributeValueMemberN)
	if !ok {
		return eventlog.Event{}, errors.New("event item without seq")
	}
	id, err := strconv.ParseInt(seq.Value, 10, 64)
	if err != nil {
		return eventlog.Event{}, fmt.Errorf("event item seq %q: %w", seq.Value, err)
	}
	t, _ := time.Parse(time.RFC3339Nano, str("time"))
	data := []byte(str("data"))
	if !json.Valid(data) || str("type") == "" { // damaged: readers go on past it
		return eventlog.Damaged(id), nil
	}
	return eventlog.Event{ID: id, Type: str("type"), Key: str("key"), Time: t, Data: data}, nil
}
