package confirm

import (
	"context"
	"encoding/json"
	"time"

	"github.com/veredicto/veredicto/internal/eventlog"
)

type pending struct {
	ID string `json:"id"`
	Ask
}

func pendingEvent(r Record) pending { return pending{ID: r.ID, Ask: r.Ask} }

type resolved struct {
	ID        string     `json:"id"`
	Approved  bool       `json:"approved"`
	Status    string     `json:"status"`
	DecidedBy string     `json:"decided_by,omitempty"`
	DecidedAt *time.Time `json:"decided_at,omitempty"`
	Comment   string     `json:"comment,omitempty"`
}

func (s *Service) emit(ctx context.Context, r Record, typ, key string, v any) error {
	if s.Events == nil {
		return nil
	}
	ev, err := eventlog.New(typ, key, v)
	if err != nil {
		return err
	}
	if _, err = s.Events.Append(ctx, r.Tenant, r.Execution, ev); err != nil {
		return err
	}
	// An execution a conversation started reports its confirmations on
	// the conversation's stream too (seed 004: one stream); the same key
	// keeps a retried emit single there as well.
	if origin := s.originOf(ctx, r); origin != "" {
		_, err = s.Events.Append(ctx, r.Tenant, origin, ev)
	}
	return err
}

// originOf is the stream that started r's execution ("" for none).
func (s *Service) originOf(ctx context.Context, r Record) string {
	rd, ok := s.Events.(eventlog.Reader) // both adapters read
	if !ok || r.Execution == "" {
		return ""
	}
	evs, err := rd.Read(ctx, r.Tenant, eventlog.OriginStream(r.Execution), 0, 1)
	if err != nil || len(evs) == 0 || evs[0].Type != eventlog.TypeOrigin {
		return ""
	}
	var o struct {
		Stream string `json:"stream"`
	}
	if json.Unmarshal(evs[0].Data, &o) != nil || o.Stream == r.Execution {
		return ""
	}
	return o.Stream
}

// emitResolved appends confirmation-resolved: the decision (status
// approved or rejected, keyed "resolved:<id>") as soon as it is recorded,
// or that the confirmation expired (keyed "expired:<id>"), so each is on
// the stream once. The record is the source of truth: a failed append is
// logged, not returned.
func (s *Service) emitResolved(ctx context.Context, rec Record) {
	ev := resolved{ID: rec.ID, Status: StatusExpired}
	key := "expired:" + rec.ID
	if d := rec.Decision; d != nil && rec.Status != StatusExpired {
		ev.Status, key = StatusRejected, "resolved:"+rec.ID
		if d.Approved {
			ev.Status = StatusApproved
		}
		ev.Approved, ev.DecidedBy, ev.DecidedAt, ev.Comment = d.Approved, d.DecidedBy, &d.DecidedAt, d.Comment
	}
	if err := s.emit(ctx, rec, eventlog.TypeConfirmationResolved, key, ev); err != nil {
		s.logger().ErrorContext(ctx, "cannot append confirmation-resolved", "confirmation_id", rec.ID, "error", err)
	}
}
