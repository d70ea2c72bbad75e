// Package dynamodb is the Amazon DynamoDB client of the Lambda bootstraps:
// the item operations the stores call (internal/store/dynamo,
// internal/confirm/dynamo, internal/eventlog/dynamo), with the SDK's input,
// output and error types serialised by the SDK's own codec (see
// internal/awsclient).
package dynamodb

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/schemas"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/transport/http/protocol/awsjson"

	"github.com/veredicto/veredicto/internal/awsclient"
)

// Service is DynamoDB as the SDK names it.
var Service = awsclient.Service{ID: awsddb.ServiceID, SigningName: "dynamodb", EndpointPrefix: "dynamodb"}

var protocol = awsclient.Protocol{ClientProtocol: awsjson.New10(schemas.DynamoDB_20120810), Types: awsddb.TypeRegistry}

var (
	getItem    = smithy.NewOperationSchema(schemas.GetItem, schemas.GetItemInput, schemas.GetItemOutput)
	putItem    = smithy.NewOperationSchema(schemas.PutItem, schemas.PutItemInput, schemas.PutItemOutput)
	query      = smithy.NewOperationSchema(schemas.Query, schemas.QueryInput, schemas.QueryOutput)
	updateItem = smithy.NewOperationSchema(schemas.UpdateItem, schemas.UpdateItemInput, schemas.UpdateItemOutput)
	deleteItem = smithy.NewOperationSchema(schemas.DeleteItem, schemas.DeleteItemInput, schemas.DeleteItemOutput)
)

// Client calls DynamoDB. It is safe for concurrent use.
type Client struct{ c *awsclient.Client }

// New returns a client configured from ac (see awsclient.New).
func New(ac aws.Config) (*Client, error) {
	c, err := awsclient.New(ac, Service)
	if err != nil {
		return nil, err
	}
	return &Client{c}, nil
}

// GetItem reads an item.
func (c *Client) GetItem(ctx context.Context, in *awsddb.GetItemInput, _ ...func(*awsddb.Options)) (*awsddb.GetItemOutput, error) {
	return awsclient.Invoke[awsddb.GetItemOutput](ctx, c.c, protocol, getItem, in)
}

// PutItem writes an item.
func (c *Client) PutItem(ctx context.Context, in *awsddb.PutItemInput, _ ...func(*awsddb.Options)) (*awsddb.PutItemOutput, error) {
	return awsclient.Invoke[awsddb.PutItemOutput](ctx, c.c, protocol, putItem, in)
}

// Query reads a page of items of one partition.
func (c *Client) Query(ctx context.Context, in *awsddb.QueryInput, _ ...func(*awsddb.Options)) (*awsddb.QueryOutput, error) {
	return awsclient.Invoke[awsddb.QueryOutput](ctx, c.c, protocol, query, in)
}

// UpdateItem updates an item.
func (c *Client) UpdateItem(ctx context.Context, in *awsddb.UpdateItemInput, _ ...func(*awsddb.Options)) (*awsddb.UpdateItemOutput, error) {
	return awsclient.Invoke[awsddb.UpdateItemOutput](ctx, c.c, protocol, updateItem, in)
}

// DeleteItem deletes an item.
func (c *Client) DeleteItem(ctx context.Context, in *awsddb.DeleteItemInput, _ ...func(*awsddb.Options)) (*awsddb.DeleteItemOutput, error) {
	return awsclient.Invoke[awsddb.DeleteItemOutput](ctx, c.c, protocol, deleteItem, in)
}
