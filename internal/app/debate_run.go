package app

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/app/debateapp"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/debate"
	"github.com/veredicto/veredicto/internal/llm"
)

// FolderDebate is a debate run in this process into a folder, as
// "veredicto debate run" and "search debate" do: debate.md and
// debate_log.yaml in Out, and its audit record in Out/audit (an earlier
// run's moved aside by ArchiveRecord). A replay runs the same with the
// record's documents, its Replay answering the model calls and the
// clock.
type FolderDebate struct {
	// ID is the debate's id (its session id); "" draws a new one. The
	// execution the record is of is "debate-<id>".
	ID string
	// Question is QUESTION.yaml's text, QuestionName its file (for
	// errors).
	Question     []byte
	QuestionName string
	// Documents are the knowledge base, in order.
	Documents       []debate.Document
	Out             string
	OptionalCouncil bool
	// Client is the agents' model (nil: the offline baseline); Model names
	// it in the record.
	Client llm.Client
	Model  veredicto.ModelInfo
	Now    func() time.Time
	Logger *slog.Logger
	Replay *audit.Replay
	// Human decides an escalated debate (nil: pending).
	Human debate.Human
}

// DebateExecution is the execution name of a debate run in one process.
func DebateExecution(id string) string { return "debate-" + id }

// RunFolderDebate runs d, records it and writes its files.
func RunFolderDebate(ctx context.Context, d FolderDebate) (*debate.Result, error) {
	q, err := debate.ParseQuestion(d.QuestionName, d.Question)
	if err != nil {
		return nil, err
	}
	if d.ID == "" {
		d.ID = debate.NewSessionID()
	}
	var agents debate.Agents = debate.Offline{}
	model := debateapp.OfflineModel
	if d.Client != nil {
		agents, model = debate.LLMAgents{Client: d.Client}, d.Model
	}
	chunks := debate.Chunks(d.Documents)
	e := &debate.Engine{Agents: agents, Chunks: len(chunks), OptionalCouncil: d.OptionalCouncil, Now: d.Now, Logger: d.Logger,
		Human: d.Human, NewID: func() string { return d.ID }}
	if len(chunks) > 0 {
		e.Retriever = debate.IndexRetriever{Index: debate.NewIndex(chunks)}
	}
	ctx, err = openFolderRecord(ctx, d.Out, DebateExecution(d.ID), model, d.Replay)
	if err != nil {
		return nil, err
	}
	if err := debate.RecordStart(ctx, debate.RunInput{DebateID: d.ID, Question: debate.QuestionDocument, OptionalCouncil: d.OptionalCouncil},
		d.Question, d.Documents); err != nil {
		return nil, err
	}
	r, err := e.Run(ctx, q)
	if err != nil {
		// The record ends with the failure: what ran is in it.
		return nil, errors.Join(err, debate.RecordFailure(ctx, err))
	}
	if err := r.Save(ctx, d.Out, ""); err != nil {
		return nil, err
	}
	return r, nil
}
