package chat

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/eventlog"
	"github.com/veredicto/veredicto/internal/stream"
)

// room is nil when the conversation may follow one more workflow
// (Links.Room).
func (s *Service) room(ctx context.Context, t *turn) error {
	if s.Links == nil {
		return nil
	}
	return s.Links.Room(ctx, t.tenant, t.chatID)
}

// follow links a workflow a tool of t started to the conversation: the
// execution, resolved for the conversation's tenant, gets the
// conversation as its origin (its confirmations come here as they are
// asked), the turn's audit record says so, and Links follows it. A
// failure is logged: the workflow runs, and its own stream has it all.
func (s *Service) follow(ctx context.Context, t *turn, agent string, w Workflow) (followed bool) {
	arn := w.Execution
	if s.Links != nil && s.Links.Executions != nil {
		a, err := s.Links.Executions.ResolveExecution(ctx, t.tenant, w.Execution)
		if err != nil {
			s.logger().WarnContext(ctx, "cannot find a started execution to link it to its chat", "tenant", t.tenant, "chat_id", t.chatID, "execution", w.Execution, "error", err)
			return false
		}
		arn = a
	}
	if !strings.HasPrefix(arn, "arn:") {
		if s.Links != nil { // links kept, but no execution ARN to follow
			s.logger().WarnContext(ctx, "cannot link a started workflow to its chat: no execution ARN", "tenant", t.tenant, "chat_id", t.chatID, "execution", w.Execution)
			return false
		}
		return true // an in-process run: nothing to link
	}
	followed = s.Links != nil // without links nothing says its end here
	// The link first: on AWS an execution that ends at once may say so
	// (EventBridge) before the rest is written.
	if s.Links != nil {
		lk := Link{ID: LinkID(t.tenant, t.chatID, arn), Tenant: t.tenant, ChatID: t.chatID, Turn: t.n, Agent: agent, Kind: w.Kind,
			Subject: w.Subject, Execution: arn, From: t.last, At: s.now()}
		if err := s.Links.Add(ctx, lk); err != nil {
			s.logger().WarnContext(ctx, "cannot keep a workflow's link to its chat", "tenant", t.tenant, "chat_id", t.chatID, "execution", arn, "error", err)
			followed = false
		}
	}
	s.link(ctx, t, arn)
	if err := t.decide(ctx, audit.Decision{Name: DecisionLinked, Outcome: w.Kind, Evidence: []string{arn}, Detail: w.Subject}); err != nil {
		s.logger().WarnContext(ctx, "cannot record a linked workflow", "chat_id", t.chatID, "turn", t.n, "error", err)
	}
	return followed
}

// link records that the conversation started the execution arn, so the
// confirmations it asks for reach the conversation's stream too
// (confirm.Service reads the origin). A failure is logged: the execution's
// own stream still carries them.
func (s *Service) link(ctx context.Context, t *turn, arn string) {
	ev, err := eventlog.New(eventlog.TypeOrigin, "origin", map[string]any{"stream": StreamName(t.chatID), "chat_id": t.chatID, "turn": t.n})
	if err == nil {
		_, err = s.Events.Append(ctx, t.tenant, eventlog.OriginStream(arn), ev)
	}
	if err != nil {
		s.logger().WarnContext(ctx, "cannot link a started execution to its chat", "chat_id", t.chatID, "execution", arn, "error", err)
	}
}

// turn is one turn in progress.
type turn struct {
	s              *Service
	tenant, chatID string
	n              int
	deltas         int
	steps          int
	confirmations  int
	text           strings.Builder
	// audit is the turn's chain in its chat's audit record (nil: none).
	audit *audit.Scope
	// last is the id of the last event the turn appended.
	last int64
}

func (t *turn) emit(ctx context.Context, typ, key string, v map[string]any) error {
	v["chat_id"], v["turn"] = t.chatID, t.n
	ev, err := eventlog.New(typ, fmt.Sprintf("t%d:%s", t.n, key), v)
	if err != nil {
		return err
	}
	stored, err := t.s.Events.Append(ctx, t.tenant, StreamName(t.chatID), ev)
	if err != nil {
		return fmt.Errorf("append %s to chat %s: %w", typ, t.chatID, err)
	}
	t.last = max(t.last, stored.ID)
	return nil
}

// say streams text to the person as text-delta events.
func (t *turn) say(ctx context.Context, text string) error {
	t.text.WriteString(text)
	for len(text) > 0 {
		cut, runes := len(text), 0
		for i := range text {
			if runes == deltaRunes {
				cut = i
				if sp := strings.LastIndexByte(text[:i], ' '); sp > 0 {
					cut = sp + 1
				}
				break
			}
			runes++
		}
		t.deltas++
		if err := t.emit(ctx, TypeTextDelta, fmt.Sprintf("d%d", t.deltas), map[string]any{"delta": text[:cut]}); err != nil {
			return err
		}
		text = text[cut:]
	}
	return nil
}

// streamWriter turns a streamed reply's fragments into text-delta events,
// coalesced so that an event carries at least deltaRunes runes or waited
// flushEvery (a token per event would be one durable write per token).
type streamWriter struct {
	t    *turn
	ctx  context.Context
	buf  strings.Builder
	last time.Time
}

const flushEvery = 200 * time.Millisecond

func (w *streamWriter) write(s string) error {
	w.buf.WriteString(s)
	if utf8.RuneCountInString(w.buf.String()) >= deltaRunes || time.Since(w.last) >= flushEvery {
		return w.flush()
	}
	return nil
}

func (w *streamWriter) flush() error {
	if w.buf.Len() == 0 {
		return nil
	}
	text := w.buf.String()
	w.buf.Reset()
	w.last = time.Now()
	w.t.text.WriteString(text)
	w.t.deltas++
	return w.t.emit(w.ctx, TypeTextDelta, fmt.Sprintf("d%d", w.t.deltas), map[string]any{"delta": text})
}

func (t *turn) step(ctx context.Context, agent, action, content string, md map[string]any) {
	t.steps++
	if md == nil {
		md = map[string]any{}
	}
	st := stream.Step{ID: fmt.Sprintf("chat-t%d-s%d", t.n, t.steps), Agent: agent, Action: action, Content: content, Metadata: md}
	if err := t.emit(ctx, eventlog.TypeExecutionStep, fmt.Sprintf("s%d", t.steps), map[string]any{"step": st}); err != nil {
		t.s.logger().WarnContext(ctx, "cannot append execution-step", "chat_id", t.chatID, "turn", t.n, "error", err)
	}
}
