// Package sqs is the Amazon SQS client of the Lambda bootstraps: the
// chat's enqueuer sends its turns with it (internal/chat.SQSEnqueuer). It
// speaks the one operation they call, SendMessage, without the SDK's
// service package, whose schemas alone cost a bootstrap about 0.2 MB (see
// internal/awsclient).
package sqs

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go"

	"github.com/veredicto/veredicto/internal/awsclient"
)

// Service is SQS as the SDK names it.
var Service = awsclient.Service{ID: "SQS", SigningName: "sqs", EndpointPrefix: "sqs"}

// protocol is SQS's AWS JSON 1.0, in the query protocol's compatibility
// mode (its errors' codes are the query protocol's), as the SDK's client
// asks for it.
var protocol = awsclient.JSONProtocol{Version: "1.0", Target: "AmazonSQS", Header: http.Header{"X-Amzn-Query-Mode": {"true"}}}

// Client calls SQS. It is safe for concurrent use.
type Client awsclient.Client

// New returns a client configured from ac (see awsclient.New).
func New(ac aws.Config) (*Client, error) {
	c, err := awsclient.New(ac, Service)
	return (*Client)(c), err
}

// SendMessage sends body to the queue and returns the message's id,
// having checked, as the SDK's client does, that the queue received the
// body sent (MD5OfMessageBody). Its errors are the SDK client's: a
// *smithy.OperationError around the service's error, whose code a
// smithy.APIError gives (the query protocol's, as
// AWS.SimpleQueueService.NonExistentQueue, where SQS names one).
func (c *Client) SendMessage(ctx context.Context, queueURL, body string) (string, error) {
	out, err := awsclient.CallJSON[struct {
		MessageID        string `json:"MessageId"`
		MD5OfMessageBody *string
	}](ctx, (*awsclient.Client)(c), protocol, "SendMessage", &struct {
		QueueURL    string `json:"QueueUrl"`
		MessageBody string
	}{queueURL, body})
	if err != nil {
		return "", err
	}
	if out.MD5OfMessageBody == nil {
		return out.MessageID, nil
	}
	sum := md5.Sum([]byte(body))
	if got := hex.EncodeToString(sum[:]); got != *out.MD5OfMessageBody {
		return "", &smithy.OperationError{ServiceID: Service.ID, OperationName: "SendMessage",
			Err: fmt.Errorf("message %s: the queue's MD5 of the body is %s, the body sent has %s", out.MessageID, *out.MD5OfMessageBody, got)}
	}
	return out.MessageID, nil
}
