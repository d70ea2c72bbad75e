// Package dynamodb is the Amazon DynamoDB client of the Lambda bootstraps:
// the item operations the stores call (internal/store/dynamo,
// internal/confirm/dynamo, internal/eventlog/dynamo), with the SDK's
// input, output and error types mapped to the AWS JSON 1.0 protocol by
// reflection (see internal/awsclient), DynamoDB's attribute values
// (types.AttributeValue) by the type switch of attribute.go. It does not
// go through the SDK's schema codec, whose serialisers would cost each
// bootstrap a further 0.1 MB.
package dynamodb

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsddb "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/veredicto/veredicto/internal/awsclient"
)

// Service is DynamoDB as the SDK names it.
var Service = awsclient.Service{ID: awsddb.ServiceID, SigningName: "dynamodb", EndpointPrefix: "dynamodb"}

// protocol is DynamoDB's AWS JSON 1.0: members named as the SDK's fields.
var protocol = awsclient.JSONProtocol{Version: "1.0", Target: "DynamoDB_20120810",
	Shapes: awsclient.JSONShapes{EncodeUnion: encodeUnion, DecodeUnion: decodeUnion}, Modelled: modelledError}

// Client calls DynamoDB. It is safe for concurrent use.
type Client awsclient.Client

// New returns a client configured from ac (see awsclient.New).
func New(ac aws.Config) (*Client, error) {
	c, err := awsclient.New(ac, Service)
	return (*Client)(c), err
}

// GetItem reads an item.
func (c *Client) GetItem(ctx context.Context, in *awsddb.GetItemInput, _ ...func(*awsddb.Options)) (*awsddb.GetItemOutput, error) {
	return awsclient.CallJSON[awsddb.GetItemOutput](ctx, (*awsclient.Client)(c), protocol, "GetItem", in)
}

// PutItem writes an item.
func (c *Client) PutItem(ctx context.Context, in *awsddb.PutItemInput, _ ...func(*awsddb.Options)) (*awsddb.PutItemOutput, error) {
	return awsclient.CallJSON[awsddb.PutItemOutput](ctx, (*awsclient.Client)(c), protocol, "PutItem", in)
}

// Query reads a page of items of one partition.
func (c *Client) Query(ctx context.Context, in *awsddb.QueryInput, _ ...func(*awsddb.Options)) (*awsddb.QueryOutput, error) {
	return awsclient.CallJSON[awsddb.QueryOutput](ctx, (*awsclient.Client)(c), protocol, "Query", in)
}

// UpdateItem updates an item.
func (c *Client) UpdateItem(ctx context.Context, in *awsddb.UpdateItemInput, _ ...func(*awsddb.Options)) (*awsddb.UpdateItemOutput, error) {
	return awsclient.CallJSON[awsddb.UpdateItemOutput](ctx, (*awsclient.Client)(c), protocol, "UpdateItem", in)
}

// DeleteItem deletes an item.
func (c *Client) DeleteItem(ctx context.Context, in *awsddb.DeleteItemInput, _ ...func(*awsddb.Options)) (*awsddb.DeleteItemOutput, error) {
	return awsclient.CallJSON[awsddb.DeleteItemOutput](ctx, (*awsclient.Client)(c), protocol, "DeleteItem", in)
}

// modelledError is a new value of the item operations' modelled error with
// the code, nil for another.
func modelledError(code string) error {
	switch {
	case strings.EqualFold(code, "ConditionalCheckFailedException"):
		return &types.ConditionalCheckFailedException{}
	case strings.EqualFold(code, "ProvisionedThroughputExceededException"):
		return &types.ProvisionedThroughputExceededException{}
	case strings.EqualFold(code, "RequestLimitExceeded"):
		return &types.RequestLimitExceeded{}
	case strings.EqualFold(code, "ResourceNotFoundException"):
		return &types.ResourceNotFoundException{}
	case strings.EqualFold(code, "ItemCollectionSizeLimitExceededException"):
		return &types.ItemCollectionSizeLimitExceededException{}
	case strings.EqualFold(code, "TransactionConflictException"):
		return &types.TransactionConflictException{}
	case strings.EqualFold(code, "ReplicatedWriteConflictException"):
		return &types.ReplicatedWriteConflictException{}
	case strings.EqualFold(code, "InternalServerError"):
		return &types.InternalServerError{}
	case strings.EqualFold(code, "InvalidEndpointException"):
		return &types.InvalidEndpointException{}
	}
	return nil
}
