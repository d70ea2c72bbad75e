package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/eventlog"
	"github.com/veredicto/veredicto/prompts"
)

// TurnResult is what Turn answers.
type TurnResult struct {
	ChatID    string `json:"chat_id"`
	Turn      int    `json:"turn"`
	Text      string `json:"text"`
	Delegated string `json:"delegated,omitempty"`
	Missed    bool   `json:"missed"`
}

// Turn runs one turn of the chat for tenant: the supervisor answers
// message, delegating at most once (seed §11), and everything it says or
// does goes to the conversation's stream, ending with finish. The turn is
// stored once it ends. n is the turn number from Claim.
func (s *Service) Turn(ctx context.Context, tenant, chatID string, n int, message string) (TurnResult, error) {
	if err := Check(chatID, message); err != nil {
		return TurnResult{}, err
	}
	t := &turn{s: s, tenant: tenant, chatID: chatID, n: n}
	// The message is kept before the turn runs, so a turn a killed server
	// leaves unfinished is closed with what was asked (CloseInterrupted).
	if _, err := s.Store.PutIfAbsent(ctx, askedKey(tenant, chatID, n), []byte(message)); err != nil {
		return TurnResult{}, fmt.Errorf("keep turn %d of chat %s: %w", n, chatID, err)
	}
	rec := TurnRecord{ChatID: chatID, Turn: n, At: s.now(), User: message, Tools: []string{},
		PromptVersion: prompts.PromptVersion("chat_supervisor"), Model: "offline"}
	if m, ok := s.Model.(interface{ Name() string }); ok {
		rec.Model = m.Name()
	} else if s.Model != nil {
		rec.Model = "custom"
	}
	// The turn's audit record opens with the message, before anything
	// is done with it.
	ctx, err := s.openTurn(ctx, t, rec.Model, message)
	if err != nil {
		return TurnResult{}, err
	}
	if s.Links != nil {
		// On AWS, the ends of the workflows this conversation follows
		// that nobody said yet, before the answer.
		rctx, cancel := context.WithTimeout(ctx, recheckTimeout)
		s.Links.Recheck(rctx, tenant, chatID)
		cancel()
	}
	scorer := s.scorer(ctx, tenant)
	intent := scorer.ScoreDelegationIntent(message)
	rec.Intent = intent
	res, err := s.run(ctx, t, &rec, intent, scorer)
	rec.Assistant = t.text.String()
	finish := map[string]any{"finishReason": "stop"}
	if err == nil {
		// The question the person may answer about this turn (Feedback).
		finish["feedback"], finish["delegated"] = Question(rec.Delegated), rec.Delegated
	}
	if err != nil {
		rec.Error = veredicto.ErrorName(err)
		finish["finishReason"] = "error"
		msg := "No pude completar este turno por un error interno; inténtalo de nuevo."
		var te *veredicto.TransientError
		if errors.As(err, &te) {
			msg = "El modelo no está disponible ahora mismo; inténtalo de nuevo en unos minutos."
		}
		end, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		_ = t.say(end, msg)
		cancel()
		rec.Assistant = t.text.String()
		s.logger().ErrorContext(ctx, "chat turn failed", "tenant", tenant, "chat_id", chatID, "turn", n, "error", err)
	}
	// The turn is stored and finished even when ctx ended (a shutdown, a
	// deadline): bounded, on a context of its own.
	end, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	b, _ := json.Marshal(rec)
	if _, perr := s.Store.PutIfAbsent(end, turnKey(tenant, chatID, n), b); perr != nil && err == nil {
		err = fmt.Errorf("store turn %d of chat %s: %w", n, chatID, perr)
	}
	if aerr := t.close(end, rec, finish["finishReason"].(string)); aerr != nil && err == nil {
		err = aerr
	}
	if ferr := t.emit(end, eventlog.TypeFinish, "finish", finish); ferr != nil && err == nil {
		err = ferr
	}
	res.ChatID, res.Turn, res.Text = chatID, n, rec.Assistant
	s.logger().InfoContext(ctx, "chat turn", "tenant", tenant, "chat_id", chatID, "turn", n, "target", intent.Target,
		"score", intent.Score, "delegated", rec.Delegated, "missed", rec.Missed, "tools", len(rec.Tools))
	return res, err
}

// recheckTimeout bounds what a turn spends on Links.Recheck.
const recheckTimeout = 10 * time.Second

func (s *Service) run(ctx context.Context, t *turn, rec *TurnRecord, intent Intent, scorer Scorer) (TurnResult, error) {
	if err := t.recordIntent(ctx, intent, scorer); err != nil {
		return TurnResult{}, err
	}
	if s.Options.DebugIntent {
		if err := t.emit(ctx, TypeDelegationIntent, "intent", map[string]any{"target": intent.Target, "score": intent.Score,
			"scores": intent.Scores, "reasons": intent.Reasons}); err != nil {
			return TurnResult{}, err
		}
	}
	histN := s.Options.HistoryTurns
	if histN <= 0 {
		histN = DefaultHistoryTurns
	}
	hist, err := s.History(ctx, t.tenant, t.chatID, histN)
	if err != nil {
		return TurnResult{}, err
	}
	prompt := Prompt{System: s.SystemPrompt(intent), Tools: s.ToolSpecs()}
	for _, h := range hist {
		prompt.Messages = append(prompt.Messages, Message{Role: "user", Content: h.User}, Message{Role: "assistant", Content: h.Assistant})
	}
	prompt.Messages = append(prompt.Messages, Message{Role: "user", Content: rec.User})

	maxSteps := s.Options.MaxSteps
	if maxSteps <= 0 {
		maxSteps = DefaultMaxSteps
	}
	var (
		delegated   *Agent
		failed      bool // the turn's delegation failed
		retried     bool
		delegations int
	)
	model := s.model()
	for step := 1; ; step++ {
		if err := ctx.Err(); err != nil {
			return TurnResult{}, fmt.Errorf("turn %d of chat %s: %w", t.n, t.chatID, err)
		}
		if step > maxSteps {
			// Bounded: the model keeps calling tools; close the turn.
			if err := t.say(ctx, "He alcanzado el máximo de pasos de este turno."); err != nil {
				return TurnResult{}, err
			}
			break
		}
		var (
			reply    Reply
			err      error
			streamed bool
		)
		start := time.Now()
		if sm, ok := model.(StreamingModel); ok {
			sw := &streamWriter{t: t, ctx: ctx, last: time.Now()}
			reply, err = sm.Stream(ctx, prompt, sw.write)
			if ferr := sw.flush(); err == nil {
				err = ferr
			}
			streamed = true
		} else {
			reply, err = model.Next(ctx, prompt)
		}
		// Recorded before the reply's tool calls run.
		if rerr := t.recordCall(ctx, step, prompt, reply, err, time.Since(start)); rerr != nil {
			return TurnResult{}, rerr
		}
		if err != nil {
			return TurnResult{}, err
		}
		if len(reply.ToolCalls) == 0 {
			if !streamed {
				if err := t.say(ctx, reply.Content); err != nil {
					return TurnResult{}, err
				}
			}
			break
		}
		if reply.Content != "" {
			text := reply.Content + "\n"
			if streamed {
				text = "\n"
			}
			if err := t.say(ctx, text); err != nil {
				return TurnResult{}, err
			}
		}
		prompt.Messages = append(prompt.Messages, Message{Role: "assistant", Content: reply.Content, ToolCalls: reply.ToolCalls})
		for _, call := range reply.ToolCalls {
			rec.Tools = append(rec.Tools, call.Name)
			var out string
			agent, isDelegation := s.Registry.ByTool(call.Name)
			switch {
			case !isDelegation:
				out = s.direct(ctx, t, call)
			case delegated != nil && !failed:
				out = s.refuse(ctx, t, call, "Ya se delegó en este turno: como máximo una delegación por turno.")
			case delegated != nil && (retried || !delegated.Critical || agent.ID != delegated.ID):
				out = s.refuse(ctx, t, call, "La delegación de este turno falló; solo se reintenta una vez una delegación crítica al mismo agente.")
			default:
				args, problem := s.arguments(agent, call)
				if problem != "" {
					// Never ran: not a delegation; the model may correct
					// its arguments (bounded by MaxSteps).
					out = s.refuse(ctx, t, call, "Argumentos inválidos: "+problem)
					break
				}
				if delegated != nil {
					retried = true
				}
				delegations++
				delegated = agent
				var ok bool
				out, ok = s.delegate(ctx, t, agent, call, args)
				failed = !ok
			}
			agentID := ""
			if isDelegation {
				agentID = agent.ID
			}
			if err := t.recordTool(ctx, call, agentID, out); err != nil {
				return TurnResult{}, err
			}
			prompt.Messages = append(prompt.Messages, Message{Role: "tool", ToolCallID: call.ID, Content: out})
		}
	}
	if delegated != nil {
		rec.Delegated, rec.DelegationOK = delegated.ID, !failed
	}
	if missedDelegation(intent.Score, delegated != nil) {
		rec.Missed = true
		if err := t.emit(ctx, TypeDelegationMissed, "missed", map[string]any{"target": intent.Target, "score": intent.Score,
			"scores": intent.Scores, "reason": strings.Join(intent.Reasons, "; ")}); err != nil {
			return TurnResult{}, err
		}
	}
	return TurnResult{Delegated: rec.Delegated, Missed: rec.Missed}, nil
}

// missedDelegation is seed §5.2's missed delegation: a turn whose intent
// scored at least MissedThreshold and that delegated nothing.
func missedDelegation(score float64, delegated bool) bool {
	return !delegated && score >= MissedThreshold
}
