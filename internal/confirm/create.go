package confirm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/asl/taskinfo"
	"github.com/veredicto/veredicto/internal/eventlog"
)

// Request is ConfirmFunction's input: the Payload of a
// "arn:aws:states:::lambda:invoke.waitForTaskToken" Task.
type Request struct {
	TaskToken   string          `json:"task_token"`
	ToolName    string          `json:"toolName"`
	Category    string          `json:"category"`
	Sensitivity string          `json:"sensitivity"`
	Undoable    *bool           `json:"undoable"`
	Preview     json.RawMessage `json:"preview"`
	// Tenant defaults to "default".
	Tenant string `json:"tenant,omitempty"`
	// Execution is the execution ARN ("execution.$": "$$.Execution.Id");
	// the local engine supplies it when absent.
	Execution string `json:"execution,omitempty"`
	// TimeoutSeconds should repeat the Task's TimeoutSeconds, so the
	// confirmation shows as expired when the workflow stops waiting.
	TimeoutSeconds int64 `json:"timeout_seconds,omitempty"`
	// Key names the question rather than one wait for its answer (e.g.
	// "senior_review/<search>/<candidate>"). With a key the id derives
	// from the tenant, the key and the preview, so every execution asking
	// the same question about the same preview finds one record, and a
	// decision taken once applies to all of them. The task token is then
	// optional: without one (a plain lambda:invoke) the request records the
	// question and its Response carries any decision already taken; with
	// one, the waiting task is attached to that record.
	Key string `json:"key,omitempty"`
}

// Response is ConfirmFunction's output. Step Functions ignores it (the
// Task waits for the token), but it names the confirmation in logs and in
// "lambda invoke".
type Response struct {
	ID      string `json:"id"`
	Created bool   `json:"created"`
	// Status and Decision: the record's state after the request (pending,
	// or for a keyed question already answered, approved or rejected with
	// the decision; null otherwise).
	Status   string    `json:"status"`
	Decision *Decision `json:"decision"`
}

var (
	namePattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)
	idPattern   = regexp.MustCompile(`^cf_[0-9a-f]{32}$`)
)

// ValidID reports whether id has the shape of a confirmation id.
func ValidID(id string) bool { return idPattern.MatchString(id) }

// IDFor derives a confirmation's id from its tenant and task token, so a
// retried ConfirmFunction invoke lands on the same record.
func IDFor(tenant, token string) string {
	sum := sha256.Sum256([]byte(tenant + "\x00" + token))
	return "cf_" + hex.EncodeToString(sum[:16])
}

func bad(field, problem string) error {
	return &veredicto.InvalidInputError{File: "ConfirmFunction payload", Field: field, Problem: problem}
}

// KeyID derives a keyed confirmation's id from its tenant, key and
// preview (compared as JSON values, so key order and spacing do not
// matter).
func KeyID(tenant, key string, preview json.RawMessage) string {
	sum := sha256.Sum256(append([]byte(tenant+"\x00key\x00"+key+"\x00"), canonical(preview)...))
	return "cf_" + hex.EncodeToString(sum[:16])
}

// PreviewHash is the SHA-256 (hex) of a preview compared as a JSON value
// (key order and spacing do not matter): what a decision records as the
// preview the person decided on.
func PreviewHash(preview json.RawMessage) string {
	sum := sha256.Sum256(canonical(preview))
	return hex.EncodeToString(sum[:])
}

// canonical is preview re-encoded (sorted keys, no spacing), or as is
// when it is not JSON.
func canonical(preview json.RawMessage) []byte {
	var v any
	if json.Unmarshal(preview, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			return b
		}
	}
	return preview
}

func validKey(k string) bool {
	return len(k) <= MaxKeyBytes && utf8.ValidString(k) && strings.IndexFunc(k, unicode.IsControl) < 0
}

// validate checks every field of the request and fills defaults.
func (s *Service) validate(ctx context.Context, in *Request) error {
	switch {
	case in.Key != "" && !validKey(in.Key):
		return bad("key", fmt.Sprintf("must be at most %d bytes of UTF-8 text without control characters", MaxKeyBytes))
	case in.TaskToken == "" && in.Key == "":
		return bad("task_token", `is required ("task_token.$": "$$.Task.Token") unless a key is given`)
	case len(in.TaskToken) > MaxTokenBytes:
		return bad("task_token", fmt.Sprintf("is longer than %d characters", MaxTokenBytes))
	case !namePattern.MatchString(in.ToolName):
		return bad("toolName", "is required: 1-64 letters, digits or _.:-")
	case !namePattern.MatchString(in.Category):
		return bad("category", "is required: 1-64 letters, digits or _.:- (e.g. data_write, email_send, decision)")
	case in.Sensitivity != "low" && in.Sensitivity != "medium" && in.Sensitivity != "high":
		return bad("sensitivity", "must be low, medium or high")
	case in.Undoable == nil:
		return bad("undoable", "is required (true or false)")
	case len(in.Preview) == 0 || string(in.Preview) == "null":
		return bad("preview", "is required: what the person is asked to confirm")
	case len(in.Preview) > MaxPreviewBytes:
		return bad("preview", fmt.Sprintf("is %d bytes, over %d", len(in.Preview), MaxPreviewBytes))
	case in.Tenant != "" && !veredicto.ValidID(in.Tenant):
		return bad("tenant", "must be 1-64 letters, digits or _.-")
	case len(in.Execution) > 2048:
		return bad("execution", "is longer than 2048 characters")
	case in.TimeoutSeconds < 0 || in.TimeoutSeconds > 366*24*3600:
		return bad("timeout_seconds", "must be between 0 (default: 7 days) and one year")
	}
	if in.Tenant == "" {
		in.Tenant = "default"
	}
	if in.Execution == "" {
		if ti, ok := taskinfo.From(ctx); ok {
			in.Execution = ti.ExecutionID
		}
	}
	if in.Execution == "" {
		return bad("execution", `is required on AWS ("execution.$": "$$.Execution.Id")`)
	}
	return nil
}

// Confirm is ConfirmFunction: it stores a pending confirmation (once per
// task token, however often Step Functions invokes it) and announces it on
// the execution's event stream.
func (s *Service) Confirm(ctx context.Context, in Request) (Response, error) {
	if err := s.validate(ctx, &in); err != nil {
		return Response{}, err
	}
	now := s.now()
	timeout := DefaultTimeout
	if in.TimeoutSeconds > 0 {
		timeout = time.Duration(in.TimeoutSeconds) * time.Second
	}
	rec := Record{
		ID: IDFor(in.Tenant, in.TaskToken), Tenant: in.Tenant,
		Ask: Ask{Execution: in.Execution, ToolName: in.ToolName, Category: in.Category, Sensitivity: in.Sensitivity,
			Undoable: *in.Undoable, Preview: in.Preview, CreatedAt: now, ExpiresAt: now.Add(timeout)},
		Status: StatusPending, TaskToken: in.TaskToken, Key: in.Key,
	}
	if in.Key != "" {
		rec.ID = KeyID(in.Tenant, in.Key, in.Preview)
	}
	if in.TaskToken != "" {
		rec.Resolver = s.Resolver
	}
	created := true
	if err := s.Store.Put(ctx, rec, 0); err != nil {
		var ce *veredicto.ConflictError
		if !errors.As(err, &ce) {
			return Response{}, storeErr("store confirmation "+rec.ID, err)
		}
		// A retried invoke (the first one stored it), or a keyed question
		// asked before.
		prev, err := s.Store.Get(ctx, in.Tenant, rec.ID)
		if err != nil {
			return Response{}, storeErr("read confirmation "+rec.ID, err)
		}
		switch {
		case prev.Status == StatusDamaged:
			// What it held cannot be read: the question asked now takes
			// its place (its bytes stay in quarantine).
			if err := s.Store.Put(ctx, rec, prev.Version); err != nil {
				return Response{}, storeErr("replace damaged confirmation "+rec.ID, err)
			}
			s.logger().WarnContext(ctx, "a damaged confirmation is asked again", "confirmation_id", rec.ID, "tenant", rec.Tenant, "execution", rec.Execution)
		case in.Key != "":
			created = false
			if rec, err = s.rejoin(ctx, prev, in, now, timeout); err != nil {
				return Response{}, err
			}
		default:
			rec, created = prev, false
		}
	}
	if rec.Status != StatusPending {
		// A keyed question already answered: nothing waits, nothing to announce.
		s.logger().InfoContext(ctx, "confirmation already decided", "confirmation_id", rec.ID, "tenant", rec.Tenant,
			"execution", in.Execution, "status", rec.Status)
		return Response{ID: rec.ID, Status: rec.Status, Decision: rec.Decision}, nil
	}
	// Appended even when the record existed: a crash between the two
	// writes must not lose the event; its key makes it appear once.
	if err := s.emit(ctx, rec, eventlog.TypePendingConfirmation, "pending:"+rec.ID, pendingEvent(rec)); err != nil {
		return Response{}, storeErr("announce confirmation "+rec.ID, err)
	}
	s.logger().InfoContext(ctx, "confirmation pending", "confirmation_id", rec.ID, "tenant", rec.Tenant,
		"execution", rec.Execution, "tool", rec.ToolName, "sensitivity", rec.Sensitivity, "created", created)
	return Response{ID: rec.ID, Created: created, Status: rec.Status}, nil
}

// rejoin is a keyed request meeting the record of its question:
//   - answered (approved or rejected): returned as is, for the caller to
//     apply; a task token cannot wait for it (ConflictError: look it up);
//   - decided but never delivered (resolving) and asked by another
//     execution: the execution that was to receive it is gone, so the
//     decision is final here (DeliveryNextRun) and the asker applies it;
//   - pending or expired: taken over by the asking execution, with its
//     task token if it waits (replacing a token whose task no longer
//     waits), a new expiry, and any earlier token dropped.
//
// Every write is conditional on the version read, so two executions
// cannot both take a record over unnoticed.
func (s *Service) rejoin(ctx context.Context, rec Record, in Request, now time.Time, timeout time.Duration) (Record, error) {
	decided := func() error {
		if in.TaskToken == "" {
			return nil
		}
		return &veredicto.ConflictError{What: "confirmation " + rec.ID, Problem: "already " + rec.Status + "; look it up without a task token to apply the decision"}
	}
	switch rec.Status {
	case StatusApproved, StatusRejected:
		return rec, decided()
	case StatusResolving:
		if rec.Execution == in.Execution {
			return rec, nil // a retried invoke of the execution that waits
		}
		rec.Status, rec.Delivery, rec.ResolvedAt, rec.LeaseUntil = StatusRejected, DeliveryNextRun, now, time.Time{}
		if rec.Decision.Approved {
			rec.Status = StatusApproved
		}
		if err := s.put(ctx, &rec); err != nil {
			return rec, err
		}
		return rec, decided()
	}
	if rec.Status == StatusPending && rec.Execution == in.Execution && rec.TaskToken == in.TaskToken {
		return rec, nil // a retried invoke
	}
	rec.Status, rec.Decision, rec.Delivery, rec.Attempts = StatusPending, nil, "", 0
	rec.Execution, rec.TaskToken, rec.Resolver = in.Execution, in.TaskToken, ""
	if in.TaskToken != "" {
		rec.Resolver = s.Resolver
	}
	rec.ExpiresAt, rec.ResolvedAt, rec.LeaseUntil = now.Add(timeout), time.Time{}, time.Time{}
	if err := s.put(ctx, &rec); err != nil {
		return rec, err
	}
	return rec, nil
}
