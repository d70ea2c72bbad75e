package confirm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/smithy-go"

	"github.com/veredicto/veredicto"
)

// Resolution is a person's answer to one confirmation.
type Resolution struct {
	ID       string
	Approved bool
	Comment  string
	// By names who decided (the token's subject, the CLI user).
	By string
}

// Resolve records a decision and delivers it to the waiting workflow,
// exactly once:
//
//  1. the decision is written first (pending → resolving, conditional on
//     the version read), so two concurrent POSTs cannot both win and a
//     crash after this point does not lose the decision;
//  2. the attempt counter and a short delivery lease are written
//     (conditional) before each SendTask call, so two deliveries never run
//     at once;
//  3. SendTaskSuccess / SendTaskFailure is called;
//  4. the outcome is written (resolving → approved | rejected | expired).
//
// confirmation-resolved is appended between 2 and 3 (keyed, so once
// however often delivery is retried): the stream shows the decision before
// anything the resumed workflow does.
//
// A damaged confirmation (StatusDamaged) is refused with a
// *veredicto.DamagedError: nobody decides on a record that cannot be read.
//
// If SendTask fails for a transient reason the record stays resolving and
// Resolve returns a TransientError; the same POST again (or Redeliver)
// resumes at step 2 with the recorded decision, not a new one. A task token
// is accepted by Step Functions once, so a redelivery can never resume the
// workflow twice. If a redelivery finds the token already used (TaskTimedOut
// / InvalidToken), an earlier attempt may have reached the workflow just
// before a crash: the decision is kept and marked delivery "unconfirmed".
// On the first attempt the same answer means the workflow stopped waiting:
// the confirmation is expired (ExpiredError, HTTP 410).
func (s *Service) Resolve(ctx context.Context, tenant string, res Resolution) (View, error) {
	if !ValidID(res.ID) {
		return View{}, &veredicto.NotFoundError{What: "confirmation " + res.ID}
	}
	if len(res.Comment) > MaxCommentBytes {
		return View{}, &veredicto.InvalidInputError{Field: "comment", Problem: fmt.Sprintf("is longer than %d bytes", MaxCommentBytes)}
	}
	for attempt := 1; ; attempt++ {
		view, again, err := s.resolveOnce(ctx, tenant, res)
		if !again || attempt == maxResolveAttempts {
			return view, err
		}
	}
}

// maxResolveAttempts bounds how often Resolve reads a pending confirmation
// again after another writer changed it under it.
const maxResolveAttempts = 3

// resolveOnce is one read-decide-write of Resolve. again reports that the
// record changed between the read and the write while it was pending (the
// workflow asking the same keyed question again with its task token, or
// another decision): reading it again shows which.
func (s *Service) resolveOnce(ctx context.Context, tenant string, res Resolution) (view View, again bool, err error) {
	rec, err := s.Store.Get(ctx, tenant, res.ID)
	if err != nil {
		return View{}, false, err
	}
	now := s.now()
	switch rec.Status {
	case StatusPending:
		if !now.Before(rec.ExpiresAt) {
			rec.Status, rec.ResolvedAt = StatusExpired, now
			if err := s.Store.Put(ctx, rec, rec.Version); err != nil {
				var ce *veredicto.ConflictError
				return View{}, errors.As(err, &ce), err
			}
			s.emitResolved(ctx, rec)
			return View{}, false, &ExpiredError{ID: rec.ID}
		}
		rec.Status = StatusResolving
		rec.Decision = &Decision{Approved: res.Approved, DecidedBy: res.By, DecidedAt: now, Comment: res.Comment, PreviewSHA256: PreviewHash(rec.Preview)}
		if err := s.put(ctx, &rec); err != nil {
			var ce *veredicto.ConflictError
			return View{}, errors.As(err, &ce), err // changed under us: read it again
		}
		s.logger().InfoContext(ctx, "confirmation decided", "confirmation_id", rec.ID, "tenant", tenant, "approved", res.Approved)
		view, err := s.handOver(ctx, rec)
		return view, false, err
	case StatusResolving:
		d := rec.Decision
		if d.Approved != res.Approved || d.DecidedBy != res.By {
			return View{}, false, conflict(rec)
		}
		view, err := s.handOver(ctx, rec) // the same decision again: finish delivering it
		return view, false, err
	case StatusExpired:
		return View{}, false, &ExpiredError{ID: rec.ID}
	case StatusDamaged:
		s.logger().WarnContext(ctx, "decision refused: the confirmation is damaged", "confirmation_id", rec.ID, "tenant", tenant)
		return View{}, false, rec.DamagedError()
	default:
		s.emitResolved(ctx, rec) // in case a crash lost it; keyed, so once
		return View{}, false, conflict(rec)
	}
}

func conflict(r Record) error {
	d := r.Decision
	verb := "rejected"
	if d.Approved {
		verb = "approved"
	}
	return &veredicto.ConflictError{What: "confirmation " + r.ID,
		Problem: fmt.Sprintf("already %s by %s at %s", verb, d.DecidedBy, d.DecidedAt.Format(time.RFC3339))}
}

// put writes rec conditionally on its version and bumps it.
func (s *Service) put(ctx context.Context, rec *Record) error {
	if err := s.Store.Put(ctx, *rec, rec.Version); err != nil {
		return err
	}
	rec.Version++
	return nil
}

// handOver takes a recorded decision (status resolving) to its task: no
// task waits for a keyed confirmation without a token, so the decision is
// final and applies when the question is asked again (DeliveryNextRun);
// another process's task is left to that process (Record.Resolver: the
// record stays resolving until its Redeliver); otherwise deliver.
func (s *Service) handOver(ctx context.Context, rec Record) (View, error) {
	switch {
	case rec.TaskToken == "":
		now := s.now()
		rec.Status, rec.Delivery, rec.ResolvedAt = StatusRejected, DeliveryNextRun, now
		if strings.HasPrefix(rec.Execution, "chat/") {
			rec.Delivery = DeliveryPolled
		}
		if rec.Decision.Approved {
			rec.Status = StatusApproved
		}
		if err := s.put(ctx, &rec); err != nil {
			return View{}, err
		}
		s.emitResolved(ctx, rec)
		s.logger().InfoContext(ctx, "confirmation resolved", "confirmation_id", rec.ID, "tenant", rec.Tenant, "status", rec.Status, "delivery", rec.Delivery)
		return rec.View(now), nil
	case rec.Resolver != "" && rec.Resolver != s.Resolver:
		return rec.View(s.now()), nil
	}
	return s.deliver(ctx, rec)
}

func (s *Service) deliver(ctx context.Context, rec Record) (View, error) {
	if s.Tasks == nil {
		return View{}, errors.New("confirm: no TaskSender configured")
	}
	if start := s.now(); start.Before(rec.LeaseUntil) {
		return View{}, &veredicto.ConflictError{What: "confirmation " + rec.ID, Problem: "its decision is being delivered; retry shortly"}
	}
	rec.Attempts++
	rec.LeaseUntil = s.now().Add(deliveryLease)
	if err := s.put(ctx, &rec); err != nil {
		return View{}, err
	}
	// The decision is announced before the workflow resumes, so the stream
	// shows it ahead of what the workflow does next (and before its finish,
	// after which the stream closes). Keyed: a redelivery does not repeat it.
	s.emitResolved(ctx, rec)
	d := rec.Decision
	var err error
	if d.Approved {
		out, _ := json.Marshal(map[string]any{"approved": true, "decided_by": d.DecidedBy, "decided_at": d.DecidedAt, "comment": d.Comment, "preview_sha256": d.PreviewSHA256})
		_, err = s.Tasks.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: &rec.TaskToken, Output: ptr(string(out))})
	} else {
		cause, _ := json.Marshal(map[string]any{"id": rec.ID, "approved": false, "decided_by": d.DecidedBy, "decided_at": d.DecidedAt, "comment": d.Comment, "preview_sha256": d.PreviewSHA256})
		_, err = s.Tasks.SendTaskFailure(ctx, &sfn.SendTaskFailureInput{TaskToken: &rec.TaskToken,
			Error: ptr(veredicto.NameConfirmationRejected), Cause: ptr(string(cause))})
	}
	now := s.now()
	switch {
	case err == nil:
		rec.Status = StatusRejected
		if d.Approved {
			rec.Status = StatusApproved
		}
	case tokenGone(err) && rec.Attempts > 1:
		rec.Status, rec.Delivery = StatusRejected, "unconfirmed"
		if d.Approved {
			rec.Status = StatusApproved
		}
	case tokenGone(err):
		rec.Status = StatusExpired
	default:
		s.logger().WarnContext(ctx, "confirmation delivery failed; the decision is kept", "confirmation_id", rec.ID, "attempt", rec.Attempts, "error", err)
		rec.LeaseUntil = time.Time{}
		_ = s.put(ctx, &rec) // release the lease; if this fails it lapses
		return View{}, &veredicto.TransientError{Op: "deliver confirmation " + rec.ID + " (decision recorded; retry to deliver it)", Err: err}
	}
	rec.ResolvedAt, rec.LeaseUntil = now, time.Time{}
	if err := s.put(ctx, &rec); err != nil {
		return View{}, err
	}
	if rec.Status == StatusExpired {
		s.emitResolved(ctx, rec) // the decision came too late: say so
	}
	s.logger().InfoContext(ctx, "confirmation resolved", "confirmation_id", rec.ID, "tenant", rec.Tenant, "status", rec.Status, "attempt", rec.Attempts)
	if rec.Status == StatusExpired {
		return View{}, &ExpiredError{ID: rec.ID}
	}
	return rec.View(now), nil
}

// tokenGone reports whether Step Functions refused the token because its
// task no longer waits (timed out, execution ended, token used).
func tokenGone(err error) bool {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "TaskTimedOut", "InvalidToken", "TaskDoesNotExist":
			return true
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }
