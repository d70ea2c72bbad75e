package confirm

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/veredicto/veredicto/internal/eventlog"
)

// Status of a confirmation.
const (
	StatusPending = "pending"
	// StatusResolving: a decision is recorded and being delivered to the
	// workflow; a later POST (or Redeliver) finishes the delivery.
	StatusResolving = "resolving"
	StatusApproved  = "approved"
	StatusRejected  = "rejected"
	// StatusExpired: the workflow stopped waiting (Task TimeoutSeconds,
	// or the execution ended) before a decision reached it.
	StatusExpired = "expired"
	// StatusDamaged: the stored record no longer decoded; its bytes were
	// moved to quarantine and this stands in their place, so the
	// confirmation stays listed and nobody decides on what cannot be read
	// (Resolve answers a *veredicto.DamagedError). The workflow still
	// waits; asking again (a retried ConfirmFunction, a keyed question)
	// replaces it.
	StatusDamaged = "damaged"
)

// DefaultTimeout is how long a confirmation waits when the request does
// not say: the default TimeoutSeconds of a confirmation Task.
const DefaultTimeout = 7 * 24 * time.Hour

// Bounds.
const (
	MaxPreviewBytes = 32 << 10
	MaxCommentBytes = 2000
	MaxTokenBytes   = 1024 // Step Functions task tokens are at most 1024 characters
	MaxList         = 500
	// deliveryLease bounds one SendTask attempt: no second delivery of the
	// same decision starts before it lapses.
	deliveryLease = 30 * time.Second
	// Retention is how long a resolved confirmation is kept (DynamoDB TTL,
	// pruned locally).
	Retention   = 30 * 24 * time.Hour
	MaxKeyBytes = 512
)

// DeliveryNextRun marks a decision that no waiting task received: it was
// taken on a keyed confirmation no execution was waiting for, and the next
// execution that asks the same question (same key and preview) applies it.
const DeliveryNextRun = "next_run"

// DeliveryPolled marks a decision on a chat turn's confirmation (its
// execution is the conversation's stream, chat/<id>): the waiting turn
// reads it from the store; no task token carries it.
const DeliveryPolled = "polled"

// Appender appends to the event log.
type Appender interface {
	Append(ctx context.Context, tenant, stream string, ev eventlog.Event) (eventlog.Event, error)
}

// TaskSender resumes waiting Tasks: the methods of the aws-sdk-go-v2 sfn
// client, so the real client serves in AWS and against "veredicto serve".
type TaskSender interface {
	SendTaskSuccess(ctx context.Context, in *sfn.SendTaskSuccessInput, optFns ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error)
	SendTaskFailure(ctx context.Context, in *sfn.SendTaskFailureInput, optFns ...func(*sfn.Options)) (*sfn.SendTaskFailureOutput, error)
}

var _ TaskSender = (*sfn.Client)(nil)

// Service creates and resolves confirmations. Its fields are set once;
// it is safe for concurrent use.
type Service struct {
	Store  Store
	Events Appender
	// Tasks is needed to resolve, not to create.
	Tasks  TaskSender
	Now    func() time.Time
	Logger *slog.Logger
	// Resolver, when set, names this process as the one that delivers
	// decisions to the tasks it creates confirmations for (its own
	// engine): Resolve elsewhere records the decision and leaves its
	// delivery to this process's Redeliver (Record.Resolver).
	Resolver string
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Service) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// ExpiredError is a confirmation whose workflow stopped waiting.
type ExpiredError struct{ ID string }

func (e *ExpiredError) Error() string {
	return "confirmation " + e.ID + " expired: its workflow stopped waiting (timeout or end of execution)"
}

// ErrorName names the kind (HTTP 410 Gone on the API).
func (*ExpiredError) ErrorName() string { return "ExpiredError" }
