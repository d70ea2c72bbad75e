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
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go"

	"github.com/veredicto/veredicto/internal/awsclient"
)

// Service is SQS as the SDK names it.
var Service = awsclient.Service{ID: "SQS", SigningName: "sqs", EndpointPrefix: "sqs"}

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

// SendMessage sends body to the queue and returns the message's id,
// having checked, as the SDK's client does, that the queue received the
// body sent (MD5OfMessageBody). Its errors are the SDK client's: a
// *smithy.OperationError around the service's error, whose code a
// smithy.APIError gives (the query protocol's, as
// AWS.SimpleQueueService.NonExistentQueue, where SQS names one).
func (c *Client) SendMessage(ctx context.Context, queueURL, body string) (string, error) {
	const op = "SendMessage"
	in, _ := json.Marshal(struct {
		QueueURL    string `json:"QueueUrl"`
		MessageBody string
	}{queueURL, body})
	r := &awsclient.Request{Method: http.MethodPost, URL: c.c.Endpoint(), Body: in, Header: http.Header{
		"Content-Type": {"application/x-amz-json-1.0"}, "X-Amz-Target": {"AmazonSQS." + op}, "X-Amzn-Query-Mode": {"true"}}}
	resp, err := c.c.Do(ctx, op, r, awsclient.JSONError)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct{ MessageID, MD5OfMessageBody *string }
	b, err := io.ReadAll(resp.Body)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		return "", &smithy.OperationError{ServiceID: Service.ID, OperationName: op, Err: &smithy.DeserializationError{Err: err}}
	}
	id := aws.ToString(out.MessageID)
	if out.MD5OfMessageBody == nil {
		return id, nil
	}
	sum := md5.Sum([]byte(body))
	if got := hex.EncodeToString(sum[:]); got != *out.MD5OfMessageBody {
		return "", &smithy.OperationError{ServiceID: Service.ID, OperationName: op,
			Err: fmt.Errorf("message %s: the queue's MD5 of the body is %s, the body sent has %s", id, *out.MD5OfMessageBody, got)}
	}
	return id, nil
}
