package search

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
)

// Auditor opens an execution's audit record (audit.Folders locally, the
// reports bucket on AWS).
type Auditor interface {
	Open(ctx context.Context, tenant, execution string) (*audit.Recorder, error)
}

// WorkflowName names the executive search in audit records.
const WorkflowName = "executive_search"

// chainOf is the audit chain of a candidate's steps (the main chain for
// the search's own).
func chainOf(candidate string) string {
	if candidate == "" {
		return audit.MainChain
	}
	return "candidate/" + candidate
}

// scope attaches the audit scope of a task of execution about candidate
// ("" for the search's own) to ctx. With no Auditor it returns ctx as is.
func (svc *Service) scope(ctx context.Context, tenant, execution, candidate string) (context.Context, error) {
	if svc.Audit == nil {
		return ctx, nil
	}
	if !audit.ValidExecution(execution) {
		return ctx, &veredicto.InvalidInputError{File: "state input", Field: "execution",
			Problem: fmt.Sprintf("%q must be the execution's name (\"execution.$\": \"$$.Execution.Name\"): 1–%d characters, no slash, space or control character; the audit record is kept per execution", execution, audit.MaxExecutionName)}
	}
	rec, err := svc.Audit.Open(ctx, tenant, execution)
	if err != nil {
		return ctx, fmt.Errorf("open the audit record of %s: %w", execution, err)
	}
	return audit.WithScope(ctx, &audit.Scope{Recorder: rec, Execution: execution, Chain: chainOf(candidate), Candidate: candidate,
		Model: svc.Analyst.Info(), PromptVersion: svc.PromptVersion, Replay: svc.Replay, Deferred: true}), nil
}

// flushed writes the entries a task deferred (its audit scope is
// Deferred) before its result goes back to the workflow; a task that
// failed keeps its own error, the one the workflow matches.
func flushed(ctx context.Context, err error) error {
	sc := audit.ScopeFrom(ctx)
	if sc == nil {
		return err
	}
	if ferr := sc.Flush(ctx); ferr != nil && err == nil {
		return fmt.Errorf("audit: %w", ferr)
	}
	return err
}

// synced is flushed for a task that reports what it records (a report, the
// summary): its chain is durable when it returns, however the record
// syncs (audit.Folders.SyncOnReport).
func synced(ctx context.Context, err error) error {
	sc := audit.ScopeFrom(ctx)
	if sc == nil {
		return err
	}
	if serr := sc.Sync(ctx); serr != nil && err == nil {
		return fmt.Errorf("audit: %w", serr)
	}
	return err
}

// syncRecord makes ctx's audit chain durable, its deferred entries
// included, before the task reports what it records.
func syncRecord(ctx context.Context) error {
	return record(ctx, func(sc *audit.Scope) error { return sc.Sync(ctx) })
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

// clock is the time for use: the audit scope's reading (recorded, or a
// replay's), or the service's clock when ctx has no scope.
func (svc *Service) clock(ctx context.Context, use string) (t time.Time, err error) {
	if audit.ScopeFrom(ctx) == nil {
		return svc.now(), nil
	}
	return audit.Now(ctx, use)
}

// recordStart opens the record of execution: the workflow, its input, the
// model, the prompts' versions and every document by its text (stored
// once in the record, so a replay needs nothing else).
func (svc *Service) recordStart(ctx context.Context, in StartInput, s *Search) error {
	return record(ctx, func(sc *audit.Scope) error {
		input, err := json.Marshal(in)
		if err != nil {
			return err
		}
		st := audit.Start{Workflow: WorkflowName, Execution: sc.Execution, Tenant: in.Tenant, Input: input, Model: svc.Analyst.Info(),
			Prompts: map[string]string{}, Documents: map[string]string{}}
		for _, a := range []string{AgentGem5, AgentGem1, AgentGem2, AgentGem3, AgentGem4, AgentCorrection} {
			st.Prompts[a] = svc.PromptVersion(a)
		}
		docs := map[string]string{}
		for id, text := range s.Texts {
			docs[id] = text
		}
		if s.Config != "" {
			docs[FileConfig] = s.Config
		}
		for id, text := range docs {
			h, err := sc.Recorder.Text(ctx, text)
			if err != nil {
				return err
			}
			st.Documents[id] = h
		}
		_, err = sc.Recorder.Append(ctx, sc.Chain, audit.KindStart, st)
		return err
	})
}

// recordGate records a gate's decision: the score against the threshold
// and the outcome, with the sources the score rests on.
func recordGate(ctx context.Context, g Gate) error {
	return record(ctx, func(sc *audit.Scope) error {
		d := audit.Decision{Name: g.Name, Outcome: g.Outcome, Evidence: g.Evidence, Detail: g.Detail}
		if g.Score != nil {
			f := float64(*g.Score)
			d.Score = &f
		}
		if g.Threshold != nil {
			f := float64(*g.Threshold)
			d.Threshold = &f
		}
		return sc.Decide(ctx, d)
	})
}

// recordOutcome records how a candidate's evaluation ended: what became
// of the senior review (who decided, when, on which preview) and the
// decision applied, tied to the review it relies on.
func recordOutcome(ctx context.Context, rep Report, o Outcome) error {
	return record(ctx, func(sc *audit.Scope) error {
		d := audit.Decision{Name: "decision", Outcome: rep.Decision, Detail: rep.Reason}
		if r := rep.Review; r != nil {
			h := audit.HumanDecision{Confirmation: r.ID, Status: r.Status, Principal: r.DecidedBy, Comment: r.Comment, Preview: r.PreviewSHA256}
			if r.DecidedAt != nil {
				h.DecidedAt = *r.DecidedAt
			}
			if e := o.Review.Error; e != nil {
				h.Error, h.Cause = e.Error, e.Cause
			}
			if err := sc.Human(ctx, h); err != nil {
				return err
			}
			if r.Status == ReviewApproved || r.Status == ReviewRejected {
				d.Confirmation, d.Applies = r.ID, r.Status
			}
		}
		return sc.Decide(ctx, d)
	})
}

// recordFile records a report file written, by its content's hash.
func recordFile(ctx context.Context, key string, content []byte) error {
	return record(ctx, func(sc *audit.Scope) error { return sc.Report(ctx, key, content) })
}
