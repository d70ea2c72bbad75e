package awsclient

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Protocol is a service whose SDK module serialises with schemas
// (DynamoDB, SQS, Secrets Manager): its protocol (awsjson.New10(schema))
// and its type registry of modelled errors (dynamodb.TypeRegistry).
type Protocol struct {
	smithyhttp.ClientProtocol
	Types *smithy.TypeRegistry
}

// Call sends operation op with input in and decodes the answer into out,
// both serialised by the SDK's own codec of the service's schemas, so the
// request and the modelled errors are those of the SDK's client.
func (c *Client) Call(ctx context.Context, p Protocol, op *smithy.OperationSchema, in smithy.Serializable, out smithy.Deserializable) error {
	name := op.ID().Name
	sreq := smithyhttp.NewStackRequest().(*smithyhttp.Request)
	sreq.URL = c.Endpoint()
	if err := p.SerializeRequest(ctx, op, in, sreq); err != nil {
		return &smithy.OperationError{ServiceID: c.service.ID, OperationName: name, Err: &smithy.SerializationError{Err: err}}
	}
	var body []byte
	if s := sreq.GetStream(); s != nil {
		b, err := io.ReadAll(s)
		if err != nil {
			return &smithy.OperationError{ServiceID: c.service.ID, OperationName: name, Err: &smithy.SerializationError{Err: err}}
		}
		body = b
	}
	r := &Request{Method: sreq.Method, URL: sreq.URL, Header: sreq.Header, Body: body}
	resp, err := c.Do(ctx, name, r, func(resp *http.Response, _ []byte) error {
		return p.DeserializeResponse(ctx, op, p.Types, &smithyhttp.Response{Response: resp}, nil)
	})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := p.DeserializeResponse(ctx, op, p.Types, &smithyhttp.Response{Response: resp}, out); err != nil {
		return &smithy.OperationError{ServiceID: c.service.ID, OperationName: name, Err: fmt.Errorf("decode response: %w", err)}
	}
	return nil
}

// Invoke is Call as the SDK's clients return it: a new output, nil with
// the error; a nil input sends the empty one.
func Invoke[O, I any, PO interface {
	*O
	smithy.Deserializable
}, PI interface {
	*I
	smithy.Serializable
}](ctx context.Context, c *Client, p Protocol, op *smithy.OperationSchema, in PI) (PO, error) {
	if in == nil {
		in = new(I)
	}
	out := PO(new(O))
	if err := c.Call(ctx, p, op, in, out); err != nil {
		return nil, err
	}
	return out, nil
}
