package chat

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/prompts"
)

// A chat's audit record (issue 30) is one record per chat, tenant-scoped
// (DATA/reports/audit/<tenant>/chat-<chat id>/ locally): each turn keeps
// a chain of its own, turn/<n>, that starts with the person's message (a
// document, by its text) and who sent it, then the delegation-intent
// decision, every call of the supervisor model (the prompt's messages
// and the tools offered by their texts, the raw reply), every tool call
// and what became of it, each confirmation asked and its outcome with
// the principal who decided, and the turn's end. A chat has no end of its
// own: each turn ends with a summary in the main chain naming every
// turn's head, so the record verifies after every turn, like an
// execution's. A turn still running is not in the last summary yet.

// Auditor opens a chat's audit record (audit.Folders locally, the
// reports bucket on AWS).
type Auditor interface {
	Open(ctx context.Context, tenant, execution string) (*audit.Recorder, error)
}

var _ Auditor = (*audit.Folders)(nil)

// WorkflowName names the chat in audit records.
const WorkflowName = "chat"

// RecordName is the name of a chat's audit record: one per chat.
func RecordName(chatID string) string { return "chat-" + chatID }

// turnChain is a turn's chain in its chat's record.
func turnChain(n int) string { return fmt.Sprintf("turn/%04d", n) }

// Decision names in a chat's record.
const (
	DecisionIntent       = "delegation_intent"
	DecisionTool         = "tool_call"
	DecisionConfirmation = "confirmation_applied"
	DecisionMissed       = "delegation_missed"
	DecisionTurnEnd      = "turn_end"
	// DecisionLinked: a workflow a tool started is linked to the chat
	// (outcome its kind, evidence its execution).
	DecisionLinked = "workflow_linked"
)

// supervisorPrompt names the supervisor's prompt (prompts.PromptVersion).
const supervisorPrompt = "chat_supervisor"

// modelInfo splits a stored turn's model name ("openai:<model>",
// "offline", "custom") into provider and model.
func modelInfo(name string) veredicto.ModelInfo {
	p, m, _ := strings.Cut(name, ":")
	return veredicto.ModelInfo{Provider: p, Model: m}
}

// openTurn opens the audit record of t (t.audit) and records the turn's
// start: the message by its text, who sent it, the supervisor's model and
// prompt. The returned ctx records the model calls made through
// llm.Generate during the turn (a tool's) in the turn's chain; the scope
// itself stays with the turn, so the workflows a tool starts keep records
// of their own. With no Auditor it returns ctx as is.
func (s *Service) openTurn(ctx context.Context, t *turn, model, message string) (context.Context, error) {
	if s.Audit == nil {
		return ctx, nil
	}
	name := RecordName(t.chatID)
	rec, err := s.Audit.Open(ctx, t.tenant, name)
	if err != nil {
		return ctx, fmt.Errorf("open the audit record of chat %s: %w", t.chatID, err)
	}
	version := prompts.PromptVersion(supervisorPrompt)
	sc := &audit.Scope{Recorder: rec, Execution: name, Chain: turnChain(t.n), Model: modelInfo(model), PromptVersion: prompts.PromptVersion}
	in := map[string]any{"chat_id": t.chatID, "turn": t.n}
	if p, ok := auth.PrincipalFrom(ctx); ok {
		in["from"], in["via"] = p.Name, p.Via
	}
	input, err := json.Marshal(in)
	if err != nil {
		return ctx, err
	}
	h, err := rec.Text(ctx, message)
	if err != nil {
		return ctx, err
	}
	st := audit.Start{Workflow: WorkflowName, Execution: name, Tenant: t.tenant, Input: input, Model: sc.Model,
		Prompts: map[string]string{supervisorPrompt: version}, Documents: map[string]string{"message": h}}
	if _, err := rec.Append(ctx, sc.Chain, audit.KindStart, st); err != nil {
		return ctx, fmt.Errorf("audit turn %d of chat %s: %w", t.n, t.chatID, err)
	}
	t.audit = sc
	return llm.WithObserver(ctx, sc), nil
}

// decide records decisions in the turn's chain (nothing without a
// record).
func (t *turn) decide(ctx context.Context, ds ...audit.Decision) error {
	sc := t.audit
	if sc == nil {
		return nil
	}
	for _, d := range ds {
		if err := sc.Decide(ctx, d); err != nil {
			return fmt.Errorf("audit %s: %w", d.Name, err)
		}
	}
	return nil
}

func score(v float64) *float64 { return &v }

// recordIntent records the delegation-intent decision: the agent the
// scorer chose, its score against the hint's threshold, every agent's
// score and the scorer's reasons.
func (t *turn) recordIntent(ctx context.Context, in Intent, scorer Scorer) error {
	target := in.Target
	if target == "" {
		target = "none"
	}
	hint := "no"
	if in.Target != "" && in.Score >= HintThreshold {
		hint = "yes"
	}
	by := "keyword heuristic"
	if m, ok := scorer.(*IntentModel); ok {
		by = "learned model " + m.Version
	}
	var scores []string
	for _, a := range slices.Sorted(maps.Keys(in.Scores)) {
		scores = append(scores, fmt.Sprintf("%s=%.2f", a, in.Scores[a]))
	}
	return t.decide(ctx, audit.Decision{Name: DecisionIntent, Outcome: target, Score: score(in.Score), Threshold: score(HintThreshold), Evidence: scores,
		Detail: fmt.Sprintf("hint in the system prompt: %s; scorer: %s; %s", hint, by, strings.Join(in.Reasons, "; "))})
}

// recordCall records one call of the supervisor model, after it answered
// and before its answer is used: the prompt's messages and the tools
// offered by their texts, the reply's text and tool calls as the answer,
// kept in the entry. Unlike an agent's user message, every message of a
// chat prompt is sent again by each later call of the turn and of the
// chat's next turns (the history), so each is stored once by hash.
func (t *turn) recordCall(ctx context.Context, step int, p Prompt, r Reply, callErr error, latency time.Duration) error {
	sc := t.audit
	if sc == nil {
		return nil
	}
	rec := sc.Recorder
	req, err := json.Marshal(p)
	if err != nil {
		return err
	}
	call := audit.ModelCall{Agent: supervisorPrompt, Schema: supervisorPrompt, PromptVersion: sc.PromptVersion(supervisorPrompt), Provider: sc.Model.Provider,
		Model: sc.Model.Model, Request: audit.Hash(req), Attempt: step, Usage: r.Usage, LatencyMS: latency.Milliseconds(), Verdict: "accepted"}
	tools, err := json.Marshal(p.Tools)
	if err != nil {
		return err
	}
	texts := [][2]string{{"system", p.System}, {"tools", string(tools)}}
	for _, m := range p.Messages {
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		texts = append(texts, [2]string{m.Role, string(b)})
	}
	for _, tx := range texts {
		h, err := rec.Text(ctx, tx[1])
		if err != nil {
			return err
		}
		call.Messages = append(call.Messages, audit.Message{Role: tx[0], Hash: h})
	}
	if callErr != nil {
		call.ErrorName, call.Error, call.Verdict = veredicto.ErrorName(callErr), callErr.Error(), "no answer"
	} else {
		b, err := json.Marshal(map[string]any{"content": r.Content, "tool_calls": r.ToolCalls})
		if err != nil {
			return err
		}
		answer := string(b)
		call.Answer = &answer
	}
	if _, err := rec.Append(ctx, sc.Chain, audit.KindModel, call); err != nil {
		return fmt.Errorf("audit model call: %w", err)
	}
	return nil
}

// recordTool records a tool call the supervisor made and what became of
// it (ok, or the error the model was told), by the tool's result message.
func (t *turn) recordTool(ctx context.Context, call ToolCall, agent, out string) error {
	var res struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	_, body, _ := strings.Cut(out, "<<<\n")
	body, _, _ = strings.Cut(body, "\n>>>")
	outcome := "refused"
	if json.Unmarshal([]byte(body), &res) == nil && res.OK {
		outcome = "ok"
	}
	detail := call.Name
	if agent != "" {
		detail += " (delegation to " + agent + ")"
	}
	if res.Error != "" {
		detail += ": " + res.Error
	}
	return t.decide(ctx, audit.Decision{Name: DecisionTool, Outcome: outcome, Evidence: []string{call.ID}, Detail: detail})
}

// recordAsked records a confirmation asked of the person (pending), with
// the hash of the preview shown.
func (t *turn) recordAsked(ctx context.Context, id string, preview []byte) error {
	if sc := t.audit; sc != nil {
		if err := sc.Human(ctx, audit.HumanDecision{Confirmation: id, Status: confirm.StatusPending, Preview: confirm.PreviewHash(preview)}); err != nil {
			return fmt.Errorf("audit confirmation %s: %w", id, err)
		}
	}
	return nil
}

// recordOutcome records what became of a confirmation (the decision with
// the principal who took it, or its expiry) and whether the action runs,
// before it does.
func (t *turn) recordOutcome(ctx context.Context, rec confirm.Record) error {
	sc := t.audit
	if sc == nil {
		return nil
	}
	h := audit.HumanDecision{Confirmation: rec.ID, Status: rec.Status, Preview: confirm.PreviewHash(rec.Preview)}
	d := audit.Decision{Name: DecisionConfirmation, Outcome: "not_run", Detail: rec.ToolName}
	if dd := rec.Decision; dd != nil {
		h.Principal, h.DecidedAt, h.Comment = dd.DecidedBy, dd.DecidedAt, dd.Comment
		if dd.PreviewSHA256 != "" {
			h.Preview = dd.PreviewSHA256
		}
	}
	if rec.Status == confirm.StatusApproved || rec.Status == confirm.StatusRejected {
		d.Confirmation, d.Applies = rec.ID, rec.Status
	}
	if rec.Status == confirm.StatusApproved {
		d.Outcome = "run"
	}
	if err := sc.Human(ctx, h); err != nil {
		return fmt.Errorf("audit confirmation %s: %w", rec.ID, err)
	}
	return t.decide(ctx, d)
}

// closeTurn records how the turn ended (and a missed delegation against
// its threshold), then the chat's summary in the main chain, which names
// every turn's head: the record verifies after each turn.
func (t *turn) close(ctx context.Context, rec TurnRecord, finish string) error {
	sc := t.audit
	if sc == nil {
		return nil
	}
	missed := "not_missed"
	if rec.Missed {
		missed = "missed"
	}
	end := audit.Decision{Name: DecisionTurnEnd, Outcome: finish, Detail: rec.Error}
	if rec.Delegated != "" {
		end.Evidence = []string{rec.Delegated}
	}
	if err := t.decide(ctx, audit.Decision{Name: DecisionMissed, Outcome: missed, Score: score(rec.Intent.Score), Threshold: score(MissedThreshold),
		Detail: "delegated: " + cmp.Or(rec.Delegated, "none")}, end); err != nil {
		return err
	}
	main := &audit.Scope{Recorder: sc.Recorder, Execution: sc.Execution, Chain: audit.MainChain}
	if err := main.End(ctx); err != nil {
		return fmt.Errorf("audit summary of chat turn: %w", err)
	}
	return nil
}

// closeInterrupted ends the record of a turn a killed server left
// unfinished, when the turn had opened it.
func (s *Service) closeInterrupted(ctx context.Context, t *turn) error {
	if s.Audit == nil {
		return nil
	}
	rec, err := s.Audit.Open(ctx, t.tenant, RecordName(t.chatID))
	if err != nil {
		return err
	}
	if _, n, err := rec.Head(ctx, turnChain(t.n)); err != nil || n == 0 {
		return err
	}
	t.audit = &audit.Scope{Recorder: rec, Execution: RecordName(t.chatID), Chain: turnChain(t.n)}
	return t.close(ctx, TurnRecord{Error: "Interrupted"}, "interrupted")
}
