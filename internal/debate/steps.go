package debate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/prompts"
)

// The AWS shape of a debate: statemachines/debate.asl.json runs one Lambda
// per step (Prepare, Position, Checkpoint, Rebuttal, Synthesize, Vote,
// Council, Finish) and passes a Flow between them. Each step is the same
// rule code Engine.Run uses; the state machine holds the loop.

// BlobReader reads the knowledge base (the inputs bucket in AWS, a folder
// locally).
type BlobReader interface {
	List(ctx context.Context, prefix string) ([]string, error)
	Get(ctx context.Context, key string) ([]byte, error)
}

// BlobWriter stores the debate's files (the reports bucket in AWS).
type BlobWriter interface {
	Put(ctx context.Context, key string, data []byte, contentType string) error
}

// LogStore keeps each debate's log (DynamoDB in AWS).
type LogStore interface {
	PutIfAbsent(ctx context.Context, key string, value []byte) (bool, error)
	Get(ctx context.Context, key string) ([]byte, bool, error)
}

// Steps are the debate's Lambda handlers. Safe for concurrent use.
type Steps struct {
	Agents    Agents
	Knowledge BlobReader
	Reports   BlobWriter
	Logs      LogStore
	Now       func() time.Time
	Logger    *slog.Logger
	// Audit keeps each execution's audit record (nil: none); Model names
	// the agents' model in it. With an Auditor every step needs the
	// execution's name (Prepare's "execution.$": "$$.Execution.Name",
	// carried in the flow). Replay, in a replay, answers the model calls
	// and the clock from the record being replayed.
	Audit  Auditor
	Model  veredicto.ModelInfo
	Replay *audit.Replay
}

// clock is the time for use: recorded in the audit record ctx carries (a
// replay's reading), else the steps' clock.
func (s *Steps) clock(ctx context.Context, use string) (time.Time, error) {
	return clock(ctx, use, s.Now)
}

// scope is ctx recording into chain of f's execution's audit record, the
// model calls named as agent's ("" for their schema); ctx as is without
// an Auditor.
func (s *Steps) scope(ctx context.Context, f *Flow, chain, agent string) (context.Context, error) {
	if s.Audit == nil {
		return ctx, nil
	}
	if err := validExecution("flow.execution", f.Execution); err != nil {
		return ctx, err
	}
	rec, err := s.Audit.Open(ctx, f.Tenant, f.Execution)
	if err != nil {
		return ctx, fmt.Errorf("open the audit record of %s: %w", f.Execution, err)
	}
	return audit.WithScope(ctx, &audit.Scope{Recorder: rec, Execution: f.Execution, Chain: chain, Agent: agent, Model: s.Model,
		PromptVersion: prompts.PromptVersion, Replay: s.Replay}), nil
}

func (s *Steps) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// Keys of a debate: every one scoped by tenant.
func LogKey(tenant, id string) string       { return "debate/" + tenant + "/" + id }
func ReportPrefix(tenant, id string) string { return "debates/" + tenant + "/" + id + "/" }

// agentCtx bounds one agent call by the per-agent timeout and what is left
// of the round's and of the debate's total time (the state machine's Map
// has no timeout of its own: the round's bound is enforced here). A Flow
// without a start time (a step run by hand on a sample event, which
// Prepare did not start) has only the per-agent bound.
func (s *Steps) agentCtx(ctx context.Context, f *Flow) (context.Context, context.CancelFunc, error) {
	c := f.Result.Question.Config
	now, err := s.clock(ctx, "agent deadline")
	if err != nil {
		return nil, nil, err
	}
	d := Dur(c.Timeout.PerAgent)
	if left := f.Result.Start.Add(Dur(c.Timeout.Total)).Sub(now); !f.Result.Start.IsZero() && left < d {
		d = left
	}
	if left := f.RoundStart.Add(Dur(c.Timeout.PerRound)).Sub(now); !f.RoundStart.IsZero() && left < d {
		d = left
	}
	if d < 0 {
		d = 0
	}
	actx, cancel := context.WithTimeout(ctx, d)
	return actx, cancel, nil
}

func prevOf(f *Flow, id string) *Position {
	if n := len(f.Result.Rounds); n > 0 {
		for _, a := range f.Result.Rounds[n-1].Answers {
			if a.Participant == id {
				return a.Position
			}
		}
	}
	return nil
}

// turn classifies an agent call's outcome like Engine's rounds.
func turn(p Participant, round int, prev *Position, pos *Position, err error, actx context.Context, u veredicto.Usage) (TurnOutput, error) {
	out := TurnOutput{Usage: u}
	switch {
	case err == nil:
		out.Answer = Answer{Participant: p.ID, Position: pos}
	case timedOut(actx, err):
		out.Answer = Answer{Participant: p.ID, Position: prev, TimedOut: true}
		out.Event = timeoutEvent(p.ID, fase(round))
	case isInvalid(err):
		out.Answer = Answer{Participant: p.ID, Position: prev}
		out.Invalid = true
		out.Event = invalidEvent(p.ID, fase(round))
	default:
		return out, boundary(fmt.Errorf("participant %s round %d: %w", p.ID, round, err))
	}
	return out, nil
}

// boundary makes a retryable failure anywhere in the chain a
// *veredicto.TransientError, so the workflow's Retry matches it.
func boundary(err error) error {
	if err == nil {
		return nil
	}
	var te *veredicto.TransientError
	if errors.As(err, &te) {
		return &veredicto.TransientError{Op: "debate step", Err: err}
	}
	return err
}

func lastAnswers(f *Flow) []Answer {
	if n := len(f.Result.Rounds); n > 0 {
		return f.Result.Rounds[n-1].Answers
	}
	return nil
}

// citedIn returns the flow's chunks a position cites.
func citedIn(f *Flow, p *Position) []Chunk {
	if p == nil {
		return nil
	}
	var out []Chunk
	for _, id := range CitedIDs(append(append([]string{}, p.Premises...), p.Reasoning, p.Position)...) {
		if c, ok := f.Library[id]; ok {
			out = append(out, c)
		}
	}
	return out
}
