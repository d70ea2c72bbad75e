package debate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/prompts"
)

// A debate's audit record (issue 30): the start (the question, every
// knowledge document by its text, the model and the prompts' versions),
// every model call (through the scope ctx carries, llm.Generate records
// each attempt before its answer is used), each code decision (the
// route, every round's convergence against the threshold, the circuit
// breaker, the synthesis' confidence, the escalation and the council),
// the person's decision, each file written, and the summary. A
// participant's calls go to its own chain (participant/<id>), a council
// member's to council/<id>: the rounds run them in parallel. Clock
// readings come from the record in a replay (clock).

// WorkflowName names the debate in audit records.
const WorkflowName = "debate"

// EngineInProcess marks a record of a debate run by Engine in one
// process (RunInput.Engine), not by the state machine.
const EngineInProcess = "in-process"

// Auditor opens an execution's audit record (audit.Folders locally).
type Auditor interface {
	Open(ctx context.Context, tenant, execution string) (*audit.Recorder, error)
}

var _ Auditor = (*audit.Folders)(nil)

// RunInput is the input a record of Engine.Run holds (veredicto debate
// run, search debate): the debate's id, the document holding the
// question, the knowledge documents in order and the optional council.
type RunInput struct {
	Engine          string   `json:"engine"`
	DebateID        string   `json:"debate_id"`
	Question        string   `json:"question"`
	Knowledge       []string `json:"knowledge"`
	OptionalCouncil bool     `json:"optional_council"`
}

// Document ids in a record's start: the question and each knowledge
// document, by its source.
const (
	QuestionDocument = "question/QUESTION.yaml"
	knowledgeDoc     = "knowledge/"
)

// KnowledgeDocument is the id of a knowledge document in a record.
func KnowledgeDocument(source string) string { return knowledgeDoc + source }

// Schemas are the debate's model calls, each with a prompt.
var Schemas = []string{SchemaPosition, SchemaRebuttal, SchemaSynthesis, SchemaVote, SchemaRAGQuery}

// RecordStart opens the record of a debate run in one process: in as
// the input, the question's text and every knowledge document stored by
// its text. Without a scope in ctx it records nothing.
func RecordStart(ctx context.Context, in RunInput, question []byte, docs []Document) error {
	return record(ctx, func(sc *audit.Scope) error {
		texts := map[string]string{QuestionDocument: string(question)}
		in.Engine, in.Knowledge = EngineInProcess, nil
		for _, d := range docs {
			texts[KnowledgeDocument(d.Source)] = d.Text
			in.Knowledge = append(in.Knowledge, d.Source)
		}
		input, err := json.Marshal(in)
		if err != nil {
			return err
		}
		return recordStart(ctx, sc, "", input, texts)
	})
}

// recordMachineStart opens the record of a debate of the state machine:
// the execution input, and every knowledge document by its key.
func recordMachineStart(ctx context.Context, in StartInput, docs []Document) error {
	return record(ctx, func(sc *audit.Scope) error {
		input, err := json.Marshal(in)
		if err != nil {
			return err
		}
		texts := map[string]string{}
		for _, d := range docs {
			texts[d.Key] = d.Text
		}
		return recordStart(ctx, sc, in.Tenant, input, texts)
	})
}

func recordStart(ctx context.Context, sc *audit.Scope, tenant string, input []byte, texts map[string]string) error {
	st := audit.Start{Workflow: WorkflowName, Execution: sc.Execution, Tenant: tenant, Input: input, Model: sc.Model,
		Prompts: map[string]string{}, Documents: map[string]string{}}
	for _, s := range Schemas {
		st.Prompts[s] = prompts.PromptVersion(s)
	}
	for id, text := range texts {
		h, err := sc.Recorder.Text(ctx, text)
		if err != nil {
			return err
		}
		st.Documents[id] = h
	}
	_, err := sc.Recorder.Append(ctx, sc.Chain, audit.KindStart, st)
	return err
}

// record runs f on ctx's audit scope, when there is one.
func record(ctx context.Context, f func(*audit.Scope) error) error {
	if s := audit.ScopeFrom(ctx); s != nil {
		if err := f(s); err != nil {
			return fmt.Errorf("audit: %w", err)
		}
	}
	return nil
}

// Chains of a debate's record.
func participantChain(id string) string { return "participant/" + id }
func councilChain(id string) string     { return "council/" + id }

// agentScope is ctx with its scope's calls going to chain, named as
// agent's; ctx as is when it has no scope.
func agentScope(ctx context.Context, chain, agent string) context.Context {
	sc := audit.ScopeFrom(ctx)
	if sc == nil {
		return ctx
	}
	c := *sc
	c.Chain, c.Agent = chain, agent
	return audit.WithScope(ctx, &c)
}

// clock is the time for use: recorded when ctx has an audit scope (read
// back in a replay), else now's.
func clock(ctx context.Context, use string, now func() time.Time) (time.Time, error) {
	t, err := audit.NowOf(ctx, use, now)
	if err != nil {
		return time.Time{}, fmt.Errorf("audit: clock for %s: %w", use, err)
	}
	return t, nil
}

// timedOut reports whether an agent call ended by its deadline: its
// context's, or in a replay the one the run recorded.
func timedOut(actx context.Context, err error) bool {
	if actx.Err() != nil {
		return true
	}
	sc := audit.ScopeFrom(actx)
	return err != nil && sc != nil && sc.Replay != nil && errors.Is(err, context.DeadlineExceeded)
}

func decide(ctx context.Context, d audit.Decision) error {
	return record(ctx, func(sc *audit.Scope) error { return sc.Decide(ctx, d) })
}

func ptr(f float64) *float64 { return &f }

// recordRoute records the routing checkpoint.
func recordRoute(ctx context.Context, r *Result) error {
	return decide(ctx, audit.Decision{Name: "route", Outcome: r.Mode, Detail: r.ModeReason})
}

// recordRound records a round's convergence against the threshold, who
// answered, and the circuit breaker when it fired.
func recordRound(ctx context.Context, rd Round, c Config, loopCounter int, trip *Trip) error {
	outcome := "diverged"
	if rd.Convergence >= c.Convergence.Threshold {
		outcome = "converged"
	}
	detail := fmt.Sprintf("%s; responded: %s; timed out: %s; invalid: %s; position changes: %d; positions hash %s; loop counter %d",
		rd.Kind, list(rd.Responded()), list(rd.TimedOut()), list(rd.Invalid), rd.Changes, rd.Hash, loopCounter)
	if len(rd.Focus) > 0 {
		detail += "; focus: " + strings.Join(rd.Focus, " | ")
	}
	if err := decide(ctx, audit.Decision{Name: fmt.Sprintf("round_%d", rd.Number), Score: ptr(rd.Convergence),
		Threshold: ptr(c.Convergence.Threshold), Outcome: outcome, Detail: detail}); err != nil {
		return err
	}
	if trip == nil {
		return nil
	}
	return decide(ctx, audit.Decision{Name: "circuit_breaker", Outcome: trip.Trigger,
		Detail: fmt.Sprintf("round %d: %s → %s", rd.Number, trip.Condition, trip.Action)})
}

func list(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

// recordEscalation records the synthesis' decision and confidence
// against the synthesis threshold, and where the escalation table sent
// it.
func recordEscalation(ctx context.Context, r *Result) error {
	c := r.Question.Config
	decision := r.Decision
	if decision == "" {
		decision = "none"
	}
	if err := decide(ctx, audit.Decision{Name: "synthesis", Score: ptr(r.Confidence), Threshold: ptr(c.Escalation.SynthesisThreshold),
		Outcome: decision, Detail: fmt.Sprintf("final convergence %.1f%%; reduced by timeout: %t; critical divergence: %t; out of scope: %t",
			r.Convergence, r.ReducedByTimeout, r.Synthesis.CriticalDivergence, r.Synthesis.OutOfScope)}); err != nil {
		return err
	}
	return decide(ctx, audit.Decision{Name: "escalation", Outcome: r.Escalation.Target, Detail: strings.Join(r.Escalation.Reasons, "; ")})
}

// recordCouncil records the council's result against its threshold, its
// votes and where it sent the decision.
func recordCouncil(ctx context.Context, r *Result, target, why string) error {
	out := r.Council
	var votes []string
	for i, v := range out.Votes {
		id := out.Members[i].ID
		switch {
		case v != nil:
			votes = append(votes, fmt.Sprintf("%s: %s (%d)", id, v.Vote, v.Confidence))
		case contains(out.Invalid, id):
			votes = append(votes, id+": invalid")
		default:
			votes = append(votes, id+": timeout")
		}
	}
	decision := out.Decision
	if decision == "" {
		decision = "none"
	}
	return decide(ctx, audit.Decision{Name: "council", Score: ptr(out.Result), Threshold: ptr(r.Question.Config.Escalation.CouncilThreshold),
		Outcome: decision, Detail: fmt.Sprintf("votes: %s; timed out: %t; → %s: %s", strings.Join(votes, ", "), out.TimedOut, target, why)})
}

// recordOutcome records what became of the person's question (when the
// debate went to one) and the decision the debate emits, tied to the
// confirmation it relies on.
func recordOutcome(ctx context.Context, r *Result, human *audit.HumanDecision) error {
	return record(ctx, func(sc *audit.Scope) error {
		final := r.Final
		if final == "" {
			final = "pending"
		}
		d := audit.Decision{Name: "decision", Outcome: final, Detail: fmt.Sprintf("target %s: %s", r.Target, r.FinalReason)}
		if human != nil {
			if err := sc.Human(ctx, *human); err != nil {
				return err
			}
			if human.Status == statusApproved || human.Status == statusRejected {
				d.Confirmation, d.Applies = human.Confirmation, human.Status
			}
		}
		return sc.Decide(ctx, d)
	})
}

// Statuses of the person's question, as the audit record names them.
const (
	statusApproved = "approved"
	statusRejected = "rejected"
	statusExpired  = "expired"
	statusPending  = "pending"
)

// File is one file a debate writes: its name and content.
type File struct {
	Name        string
	ContentType string
	Data        []byte
}

// recordFiles records the files written under prefix, by their hashes.
func recordFiles(ctx context.Context, prefix string, files []File) error {
	return record(ctx, func(sc *audit.Scope) error {
		for _, f := range files {
			if err := sc.Report(ctx, prefix+f.Name, f.Data); err != nil {
				return err
			}
		}
		return nil
	})
}

// RecordFailure ends the record of a debate that failed: a decision
// naming the failure (its ASL name and message), then the summary.
func RecordFailure(ctx context.Context, failure error) error {
	if err := decide(ctx, audit.Decision{Name: "failed", Outcome: veredicto.ErrorName(failure), Detail: failure.Error()}); err != nil {
		return err
	}
	return End(ctx)
}

// End closes the debate's record: the summary entry naming every chain's
// head. Without a scope in ctx it does nothing.
func End(ctx context.Context) error {
	return record(ctx, func(sc *audit.Scope) error { return sc.End(ctx) })
}

// sortedEvents returns the events of parallel turns in roster order.
func sortedEvents(byTurn map[int][]string) []string {
	idx := make([]int, 0, len(byTurn))
	for i := range byTurn {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var out []string
	for _, i := range idx {
		out = append(out, byTurn[i]...)
	}
	return out
}

// validExecution checks an execution's name when the debate is
// recorded: the record is kept per execution.
func validExecution(field, execution string) error {
	if audit.ValidExecution(execution) {
		return nil
	}
	return &veredicto.InvalidInputError{File: "state input", Field: field,
		Problem: fmt.Sprintf("%q must be the execution's name (\"execution.$\": \"$$.Execution.Name\"): 1-%d characters, no slash, space or control character; the audit record is kept per execution", execution, audit.MaxExecutionName)}
}
