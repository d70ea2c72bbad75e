package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/veredicto/veredicto/internal/app/debateapp"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/debate"
	"github.com/veredicto/veredicto/internal/llm"
)

// replayDebate re-runs a recorded debate: one run in this process
// (debate run, search debate) through the engine, or one of the state
// machine (serve) through its steps.
func replayDebate(ctx context.Context, r *audit.Replay, rec Record, out string) (*ReplayResult, error) {
	var probe struct {
		Engine string `json:"engine"`
	}
	if err := json.Unmarshal(r.Start.Input, &probe); err != nil {
		return nil, fmt.Errorf("the recorded input: %w", err)
	}
	if probe.Engine != debate.EngineInProcess {
		return replayDebateMachine(ctx, r, rec, out)
	}
	var in debate.RunInput
	if err := json.Unmarshal(r.Start.Input, &in); err != nil {
		return nil, fmt.Errorf("the recorded input: %w", err)
	}
	question, err := r.Document(ctx, debate.QuestionDocument)
	if err != nil {
		return nil, err
	}
	docs := make([]debate.Document, 0, len(in.Knowledge))
	for _, src := range in.Knowledge {
		text, err := r.Document(ctx, debate.KnowledgeDocument(src))
		if err != nil {
			return nil, err
		}
		docs = append(docs, debate.Document{Source: src, Text: string(text)})
	}
	run := FolderDebate{ID: in.DebateID, Question: question, QuestionName: debate.QuestionDocument, Documents: docs, Out: out,
		OptionalCouncil: in.OptionalCouncil, Replay: r}
	if r.Start.Model.Provider != debateapp.OfflineModel.Provider {
		run.Client, run.Model = r, r.Start.Model
	}
	if h, ok := r.HumanFor(""); ok && (h.Status == "approved" || h.Status == "rejected") {
		run.Human = recordedHuman{h}
	}
	_, err = RunFolderDebate(ctx, run)
	return replayed(ctx, r, rec, out, err)
}

// replayed ends a replay that ran: its divergence (the run's error when
// it names one, with where it happened), the model calls it did not
// make, or the comparison of the files.
func replayed(ctx context.Context, r *audit.Replay, rec Record, out string, err error) (*ReplayResult, error) {
	if errors.As(err, new(*audit.DivergedError)) {
		return nil, err
	}
	if d := r.Diverged(); d != nil {
		return nil, d
	}
	if err != nil {
		return nil, err
	}
	if err := r.UnansweredError(); err != nil {
		return nil, err
	}
	return compareReports(ctx, rec, out)
}

// recordedHuman answers an escalated debate as the person did in the
// run.
type recordedHuman struct{ h audit.HumanDecision }

func (p recordedHuman) Decide(context.Context, debate.HumanRequest) (debate.HumanDecision, error) {
	return debate.HumanDecision{Approved: p.h.Status == "approved", Comment: p.h.Comment}, nil
}

var (
	_ debate.Human = recordedHuman{}
	_ llm.Client   = (*audit.Replay)(nil)
)
