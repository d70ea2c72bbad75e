package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-lambda-go/events"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/auth"
)

// TurnJob is one claimed turn handed to a worker: on AWS the HTTP API's
// chat function answers 202 at once (the API stops waiting after 30 s,
// a turn may wait minutes for a confirmation) and the turn runs from the
// chat turns queue.
type TurnJob struct {
	Tenant  string `json:"tenant"`
	ChatID  string `json:"chat_id"`
	Turn    int    `json:"turn"`
	Message string `json:"message"`
	// Recalibrate, alone, asks the worker to recalibrate every tenant due
	// (RecalibrateDue): the weekly schedule's message on AWS.
	Recalibrate bool `json:"recalibrate,omitempty"`
	// Principal and Via: who sent the message, as the HTTP API
	// authenticated them (the turn's audit record names them).
	Principal string `json:"principal,omitempty"`
	Via       string `json:"via,omitempty"`
}

// Enqueuer hands a claimed turn to a worker.
type Enqueuer interface {
	Enqueue(ctx context.Context, job TurnJob) error
}

// MessageSender sends a message to a queue and returns its id: the chat
// turns queue's client, internal/awsclient/sqs on AWS (not the SDK's,
// whose service package would cost the chat's bootstrap 0.2 MB).
type MessageSender interface {
	SendMessage(ctx context.Context, queueURL, body string) (messageID string, err error)
}

// SQSEnqueuer sends turns to an SQS queue.
type SQSEnqueuer struct {
	Client   MessageSender
	QueueURL string
}

// Enqueue sends one job.
func (q SQSEnqueuer) Enqueue(ctx context.Context, job TurnJob) error {
	b, err := json.Marshal(job)
	if err != nil {
		return err
	}
	if _, err := q.Client.SendMessage(ctx, q.QueueURL, string(b)); err != nil {
		return &veredicto.TransientError{Op: fmt.Sprintf("enqueue turn %d of chat %s", job.Turn, job.ChatID), Err: err}
	}
	return nil
}

// HandleSQS runs the queued turns (the chat turn function). A turn
// already stored (a redelivered message) is not run again; a bad message
// is dropped with a log line (retrying cannot fix it); a failed turn is
// reported as a batch item failure, so SQS retries that message only.
func (s *Service) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	for _, m := range ev.Records {
		var job TurnJob
		if err := json.Unmarshal([]byte(m.Body), &job); err == nil && job.Recalibrate {
			// Weekly: not retried (the next week's run does it again).
			recs, err := s.RecalibrateDue(ctx, RecalibrateEvery)
			if err != nil {
				s.logger().ErrorContext(ctx, "scheduled recalibration", "error", err)
			}
			s.logger().InfoContext(ctx, "scheduled recalibration", "tenants", len(recs))
			continue
		}
		if err := json.Unmarshal([]byte(m.Body), &job); err != nil || job.Turn < 1 || !veredicto.ValidID(job.Tenant) || Check(job.ChatID, job.Message) != nil {
			s.logger().ErrorContext(ctx, "dropping a malformed chat turn message", "message_id", m.MessageId)
			continue
		}
		if _, done, err := s.Store.Get(ctx, turnKey(job.Tenant, job.ChatID, job.Turn)); err == nil && done {
			continue
		}
		tctx := ctx
		if job.Principal != "" {
			tctx = auth.WithPrincipal(ctx, auth.Principal{Name: job.Principal, Tenant: job.Tenant, Via: job.Via})
		}
		if _, err := s.Turn(tctx, job.Tenant, job.ChatID, job.Turn, job.Message); err != nil {
			var te *veredicto.TransientError
			if errors.As(err, &te) || ctx.Err() != nil {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
			}
		}
	}
	return resp, nil
}
