// Package sqs is the Amazon SQS client of the Lambda bootstraps: the
// chat's enqueuer sends its turns with it (internal/chat.SQSEnqueuer), the
// SDK's types serialised by the SDK's own codec (see internal/awsclient).
package sqs

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/schemas"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/transport/http/protocol/awsjson"

	"github.com/veredicto/veredicto/internal/awsclient"
)

// Service is SQS as the SDK names it.
var Service = awsclient.Service{ID: awssqs.ServiceID, SigningName: "sqs", EndpointPrefix: "sqs"}

var protocol = awsclient.Protocol{ClientProtocol: awsjson.New10(schemas.AmazonSQS), Types: awssqs.TypeRegistry}

var sendMessage = smithy.NewOperationSchema(schemas.SendMessage, schemas.SendMessageRequest, schemas.SendMessageResult)

// Client calls SQS. It is safe for concurrent use.
type Client struct{ c *awsclient.Client }

// New returns a client configured from ac (see awsclient.New).
func New(ac aws.Config) (*Client, error) {
	c, err := awsclient.New(ac, Service)
	if err != nil {
		return nil, err
	}
	return &Client{c}, nil
}

// SendMessage sends one message and checks, as the SDK's client does, that
// the queue received the body sent (MD5OfMessageBody).
func (c *Client) SendMessage(ctx context.Context, in *awssqs.SendMessageInput, _ ...func(*awssqs.Options)) (*awssqs.SendMessageOutput, error) {
	out, err := awsclient.Invoke[awssqs.SendMessageOutput](ctx, c.c, protocol, sendMessage, in)
	if err != nil || in == nil || in.MessageBody == nil || out.MD5OfMessageBody == nil {
		return out, err
	}
	sum := md5.Sum([]byte(*in.MessageBody))
	if got := hex.EncodeToString(sum[:]); got != *out.MD5OfMessageBody {
		return nil, &smithy.OperationError{ServiceID: Service.ID, OperationName: "SendMessage",
			Err: fmt.Errorf("message %s: the queue's MD5 of the body is %s, the body sent has %s", aws.ToString(out.MessageId), *out.MD5OfMessageBody, got)}
	}
	return out, nil
}
