package sqs_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"github.com/veredicto/veredicto/internal/awsclient/awsclienttest"
	"github.com/veredicto/veredicto/internal/awsclient/sqs"
	"github.com/veredicto/veredicto/internal/chat"
	"github.com/veredicto/veredicto/internal/moto"
)

// sdk is the SDK's client as a chat.MessageSender.
type sdk struct{ c *awssqs.Client }

func (s sdk) SendMessage(ctx context.Context, queueURL, body string) (string, error) {
	out, err := s.c.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String(body)})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.MessageId), nil
}

var (
	_ chat.MessageSender = (*sqs.Client)(nil)
	_ chat.MessageSender = sdk{}
)

func answer(status int, h http.Header, body string) awsclienttest.Answer {
	if h == nil {
		h = http.Header{}
	}
	h.Set("Content-Type", "application/x-amz-json-1.0")
	h.Set("X-Amzn-Requestid", "R2")
	return awsclienttest.Answer{Status: status, Header: h, Body: body}
}

func TestSameAsTheSDK(t *testing.T) {
	s := awsclienttest.Start(t)
	ac := s.Config("")
	ours, err := sqs.New(ac)
	if err != nil {
		t.Fatal(err)
	}
	send := func(ctx context.Context, c chat.MessageSender) (any, error) {
		return c.SendMessage(ctx, "https://sqs.eu-west-1.amazonaws.com/123/turns", `{"turn":1}`)
	}
	// md5 of {"turn":1}
	const sum = "939371af054489a65f714186d726fb38"
	awsclienttest.Compare(t, s, chat.MessageSender(sdk{awssqs.NewFromConfig(ac)}), chat.MessageSender(ours), []string{"Content-Type", "X-Amz-Target", "X-Amzn-Query-Mode"}, []awsclienttest.Case[chat.MessageSender]{
		{Name: "sent", Answer: answer(200, nil, `{"MessageId":"m1","MD5OfMessageBody":"`+sum+`"}`), Call: func(ctx context.Context, c chat.MessageSender) (any, error) {
			out, err := send(ctx, c)
			if err != nil {
				t.Errorf("%T: %v", c, err)
			}
			return out, err
		}},
		{Name: "body damaged", Answer: answer(200, nil, `{"MessageId":"m1","MD5OfMessageBody":"00000000000000000000000000000000"}`), Call: send},
		{Name: "no such queue", Answer: answer(400, http.Header{"X-Amzn-Query-Error": {"AWS.SimpleQueueService.NonExistentQueue;Sender"}},
			`{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}`), Call: send, Generic: true},
		{Name: "throttled", Answer: answer(400, nil, `{"__type":"com.amazonaws.sqs#RequestThrottled","message":"slow"}`), Call: send, Generic: true},
		{Name: "500", Answer: answer(500, nil, `{"__type":"com.amazonaws.sqs#InternalError","message":"oops"}`), Call: send, Generic: true},
	})
}

// TestOnMoto: a turn sent through this client reaches a queue on moto.
func TestOnMoto(t *testing.T) {
	ac := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""), BaseEndpoint: aws.String(moto.Start(t))}
	c := awssqs.NewFromConfig(ac)
	q, err := c.CreateQueue(t.Context(), &awssqs.CreateQueueInput{QueueName: aws.String("turns")})
	if err != nil {
		t.Fatal(err)
	}
	ours, err := sqs.New(ac)
	if err != nil {
		t.Fatal(err)
	}
	if err := (chat.SQSEnqueuer{Client: ours, QueueURL: aws.ToString(q.QueueUrl)}).Enqueue(t.Context(), chat.TurnJob{ChatID: "c1", Turn: 2}); err != nil {
		t.Fatal(err)
	}
	got, err := c.ReceiveMessage(t.Context(), &awssqs.ReceiveMessageInput{QueueUrl: q.QueueUrl})
	if err != nil || len(got.Messages) != 1 || !strings.Contains(aws.ToString(got.Messages[0].Body), `"c1"`) {
		t.Fatalf("received %+v %v", got, err)
	}
	gone := aws.ToString(q.QueueUrl) + "-gone"
	_, err = ours.SendMessage(t.Context(), gone, "x")
	_, want := sdk{c}.SendMessage(t.Context(), gone, "x")
	var ae, we smithy.APIError
	if !errors.As(err, &ae) || !errors.As(want, &we) || ae.ErrorCode() != we.ErrorCode() {
		t.Errorf("send to a missing queue: %v; the SDK's client: %v", err, want)
	}
}
