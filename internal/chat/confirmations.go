package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/eventlog"
)

// confirm asks the person through the confirmations service, on the
// conversation's stream, and waits (bounded) for the decision. A
// confirmation left unanswered is a no.
func (s *Service) confirm(ctx context.Context, t *turn, sv Sensitive) (bool, error) {
	if s.Confirmations == nil || s.ConfirmationStore == nil {
		return false, toolErr("las confirmaciones no están configuradas: la acción sensible no se ejecuta")
	}
	t.confirmations++
	preview, err := json.Marshal(sv.Preview)
	if err != nil {
		return false, fmt.Errorf("confirmation preview: %w", err)
	}
	wait := s.Options.ConfirmWait
	if wait <= 0 {
		wait = 10 * time.Minute
	}
	undoable := sv.Undoable
	resp, err := s.Confirmations.Confirm(ctx, confirm.Request{ToolName: sv.ToolName, Category: sv.Category, Sensitivity: sv.Sensitivity,
		Undoable: &undoable, Preview: preview, Tenant: t.tenant, Execution: StreamName(t.chatID),
		Key: fmt.Sprintf("chat/%s/%d/%d", t.chatID, t.n, t.confirmations), TimeoutSeconds: int64(wait / time.Second)})
	if err != nil {
		return false, fmt.Errorf("ask confirmation: %w", err)
	}
	if err := t.recordAsked(ctx, resp.ID, preview); err != nil {
		return false, err
	}
	poll := s.Options.ConfirmPoll
	if poll <= 0 {
		poll = 300 * time.Millisecond
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for first := true; ; first = false {
		if !first || resp.Status != confirm.StatusPending {
			rec, err := s.ConfirmationStore.Get(ctx, t.tenant, resp.ID)
			if err != nil {
				return false, fmt.Errorf("read confirmation %s: %w", resp.ID, err)
			}
			switch rec.Status {
			case confirm.StatusApproved, confirm.StatusRejected:
				if err := t.recordOutcome(ctx, rec); err != nil {
					return false, err
				}
				s.announce(ctx, t, rec)
				return rec.Status == confirm.StatusApproved, nil
			case confirm.StatusExpired:
				return false, t.recordOutcome(ctx, rec)
			}
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-deadline.C:
			return s.giveUp(ctx, t, resp.ID, wait)
		case <-tick.C:
		}
	}
}

// resolver is the part of *confirm.Service that closes a confirmation.
type resolver interface {
	Resolve(ctx context.Context, tenant string, res confirm.Resolution) (confirm.View, error)
}

// onBehalf is who rejects, in the record, a confirmation nobody answered.
const onBehalf = "veredicto-chat"

// giveUp ends a wait that ran out: the confirmation is rejected on the
// person's behalf (so it no longer shows as pending, and a late answer
// gets 409 instead of seeming to work); if the person decided at that
// very moment, their decision stands. What became of it is recorded.
func (s *Service) giveUp(ctx context.Context, t *turn, id string, wait time.Duration) (bool, error) {
	if _, ok := s.Confirmations.(resolver); ok {
		_ = s.rejectOnBehalf(ctx, t.tenant, id, fmt.Sprintf("sin respuesta en %s: la acción no se ejecutó", wait))
	}
	rec, err := s.ConfirmationStore.Get(ctx, t.tenant, id)
	if err != nil {
		return false, nil
	}
	if rec.Status == confirm.StatusPending {
		// Nobody could close it: the turn stops waiting, the action does
		// not run.
		rec.Status = confirm.StatusExpired
	}
	if err := t.recordOutcome(ctx, rec); err != nil {
		return false, err
	}
	if d := rec.Decision; d != nil && d.DecidedBy != onBehalf && (rec.Status == confirm.StatusApproved || rec.Status == confirm.StatusRejected) {
		// The person decided at that very moment: their decision stands.
		s.announce(ctx, t, rec)
		return rec.Status == confirm.StatusApproved, nil
	}
	return false, nil
}

// rejectOnBehalf rejects a confirmation in the person's name
// (veredicto-chat) when the turn that asked can no longer act on it; the
// caller checked Confirmations resolves.
func (s *Service) rejectOnBehalf(ctx context.Context, tenant, id, why string) error {
	_, err := s.Confirmations.(resolver).Resolve(ctx, tenant, confirm.Resolution{ID: id, Approved: false, By: onBehalf, Comment: why})
	return err
}

// announce appends the confirmation-resolved the confirmations service
// appends too, with the same key and content: the log keeps whichever
// comes first, so the stream shows the decision once and always before
// what the turn does with it (the service writes the decision, which the
// turn may read, before its event).
func (s *Service) announce(ctx context.Context, t *turn, rec confirm.Record) {
	d := rec.Decision
	if d == nil {
		return
	}
	ev, err := eventlog.New(eventlog.TypeConfirmationResolved, "resolved:"+rec.ID, map[string]any{
		"id": rec.ID, "approved": d.Approved, "status": rec.Status, "decided_by": d.DecidedBy, "decided_at": d.DecidedAt, "comment": d.Comment})
	if err == nil {
		_, err = s.Events.Append(ctx, t.tenant, StreamName(t.chatID), ev)
	}
	if err != nil {
		s.logger().WarnContext(ctx, "cannot append confirmation-resolved", "chat_id", t.chatID, "confirmation_id", rec.ID, "error", err)
	}
}
