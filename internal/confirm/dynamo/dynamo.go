// Package dynamo is the confirmations' store on DynamoDB (an adapter of
// confirm.Store), in the context table.
package dynamo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/quarantine"
)

// API is the part of the DynamoDB client the store uses.
type API interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

var _ API = (*dynamodb.Client)(nil)

// Store keeps confirmations as items of the context table (string
// keys pk, sk): pk "confirmation#<tenant>", sk the id, the record as JSON
// in doc, with version and status beside it for conditions and filters. A
// resolved confirmation gets expires_at (the table's TTL attribute) so
// DynamoDB deletes it after confirm.Retention.
type Store struct {
	client API
	table  string
	// pageItems caps the items of one Query page (0: DynamoDB's 1 MB
	// pages); tests set it to read several pages.
	pageItems int32
}

var _ confirm.Store = (*Store)(nil)

// New returns a store on the context table.
func New(client API, table string) *Store {
	return &Store{client: client, table: table}
}

func confirmPK(tenant string) string { return "confirmation#" + tenant }

// maxListPages bounds the pages a List reads (resolved items are filtered
// out after the read).
const maxListPages = 20

// Get returns a confirmation of tenant.
func (d *Store) Get(ctx context.Context, tenant, id string) (confirm.Record, error) {
	if !confirm.ValidID(id) {
		return confirm.Record{}, confirm.NotFound(id)
	}
	out, err := d.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(d.table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: confirmPK(tenant)},
			"sk": &types.AttributeValueMemberS{Value: id},
		},
	})
	if err != nil {
		return confirm.Record{}, fmt.Errorf("get confirmation %s: %w", id, err)
	}
	if out.Item == nil {
		return confirm.Record{}, confirm.NotFound(id)
	}
	return d.decodeRecord(tenant, out.Item)
}

// decodeRecord reads an item's record. An item whose doc does not decode
// as its confirmation is returned as a confirm.DamagedRecord with the
// item's version (DynamoDB keeps it where it is: an operator reads it
// there), so it is listed and refused rather than retried in vain.
func (d *Store) decodeRecord(tenant string, item map[string]types.AttributeValue) (confirm.Record, error) {
	id := ""
	if sk, ok := item["sk"].(*types.AttributeValueMemberS); ok {
		id = sk.Value
	}
	damaged := func(reason string) confirm.Record {
		r := confirm.DamagedRecord(tenant, id, reason, time.Now())
		if v, ok := item["version"].(*types.AttributeValueMemberN); ok {
			r.Version, _ = strconv.Atoi(v.Value)
		}
		return r
	}
	doc, ok := item["doc"].(*types.AttributeValueMemberS)
	if !ok {
		return damaged("the item has no doc"), nil
	}
	var r confirm.Record
	if err := json.Unmarshal([]byte(doc.Value), &r); err != nil {
		return damaged(quarantine.Reason(err)), nil
	}
	if r.ID != id || r.Tenant != tenant {
		return damaged("it holds another confirmation than its key says"), nil
	}
	return r, nil
}

// List returns the tenant's open confirmations, oldest first
// (confirm.Store). Ids do not sort by time, so it reads every unresolved
// item (up to maxListPages pages; more is set when pages were left unread)
// and sorts them here.
func (d *Store) List(ctx context.Context, tenant string, now time.Time, limit int) ([]confirm.Record, bool, error) {
	in := &dynamodb.QueryInput{
		TableName:                aws.String(d.table),
		KeyConditionExpression:   aws.String("pk = :pk"),
		FilterExpression:         aws.String("#st IN (:pending, :resolving)"),
		ExpressionAttributeNames: map[string]string{"#st": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk":        &types.AttributeValueMemberS{Value: confirmPK(tenant)},
			":pending":   &types.AttributeValueMemberS{Value: confirm.StatusPending},
			":resolving": &types.AttributeValueMemberS{Value: confirm.StatusResolving},
		},
		ConsistentRead: aws.Bool(true),
	}
	if d.pageItems > 0 {
		in.Limit = aws.Int32(d.pageItems)
	}
	var out []confirm.Record
	unread := false
	for page := 0; ; page++ {
		if page == maxListPages {
			unread = true
			break
		}
		resp, err := d.client.Query(ctx, in)
		if err != nil {
			return nil, false, fmt.Errorf("list confirmations: %w", err)
		}
		for _, item := range resp.Items {
			r, err := d.decodeRecord(tenant, item)
			if err != nil {
				return nil, false, err
			}
			out = append(out, r)
		}
		if resp.LastEvaluatedKey == nil {
			break
		}
		in.ExclusiveStartKey = resp.LastEvaluatedKey
	}
	recs, more := confirm.FirstOpen(out, now, limit)
	return recs, more || unread, nil
}

// Put writes r if the stored version is expect (0: absent).
func (d *Store) Put(ctx context.Context, r confirm.Record, expect int) error {
	r.Version = expect + 1
	doc, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode confirmation %s: %w", r.ID, err)
	}
	item := map[string]types.AttributeValue{
		"pk":      &types.AttributeValueMemberS{Value: confirmPK(r.Tenant)},
		"sk":      &types.AttributeValueMemberS{Value: r.ID},
		"doc":     &types.AttributeValueMemberS{Value: string(doc)},
		"status":  &types.AttributeValueMemberS{Value: r.Status},
		"version": &types.AttributeValueMemberN{Value: strconv.Itoa(r.Version)},
	}
	// The table's TTL removes a confirmation confirm.Retention after it
	// ended: resolved, or pending past its expiry with nobody deciding.
	if ended := r.EndedAt(); !ended.IsZero() {
		item["expires_at"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(ended.Add(confirm.Retention).Unix(), 10)}
	}
	in := &dynamodb.PutItemInput{TableName: aws.String(d.table), Item: item}
	if expect == 0 {
		in.ConditionExpression = aws.String("attribute_not_exists(pk)")
	} else {
		in.ConditionExpression = aws.String("version = :v")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.Itoa(expect)}}
	}
	_, err = d.client.PutItem(ctx, in)
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return &veredicto.ConflictError{What: "confirmation " + r.ID, Problem: "written concurrently"}
	}
	if err != nil {
		return fmt.Errorf("put confirmation %s: %w", r.ID, err)
	}
	return nil
}
