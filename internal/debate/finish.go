package debate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/confirm"
)

// FinishInput is the last step's input: the flow and, after the human
// step, the confirmation's answer or error.
type FinishInput struct {
	Flow   Flow            `json:"flow"`
	Answer json.RawMessage `json:"answer,omitempty"`
	Error  *struct {
		Error string `json:"Error"`
		Cause string `json:"Cause"`
	} `json:"error,omitempty"`
}

// FinishOutput names where the debate was recorded.
type FinishOutput struct {
	DebateID  string `json:"debate_id"`
	Target    string `json:"escalado_para"`
	Decision  string `json:"decision"`
	Pending   bool   `json:"pending"`
	LogKey    string `json:"log_key"`
	ReportKey string `json:"report_key"`
}

// Finish records the person's answer (approved, rejected, or pending when
// the confirmation timed out) and writes the debate: debate_log.yaml,
// debate.md and debate.json under debates/<tenant>/<id>/, and the log in
// the log store under debate/<tenant>/<id> (written once: a retried Finish
// finds it and succeeds).
func (s *Steps) Finish(ctx context.Context, in FinishInput) (FinishOutput, error) {
	f := in.Flow
	r := &f.Result
	if err := f.checkKeys(); err != nil {
		return FinishOutput{}, err
	}
	ctx, err := s.scope(ctx, &f, audit.MainChain, "")
	if err != nil {
		return FinishOutput{}, err
	}
	var human *audit.HumanDecision
	if r.Target == TargetHuman && r.Final == "" {
		// The person's answer (who, when, on which preview), as the
		// confirmation delivered it: the audit record keeps it.
		var a struct {
			Approved  bool      `json:"approved"`
			Comment   string    `json:"comment"`
			Decision  string    `json:"decision"`
			DecidedBy string    `json:"decided_by"`
			DecidedAt time.Time `json:"decided_at"`
			Preview   string    `json:"preview_sha256"`
		}
		human = &audit.HumanDecision{Confirmation: f.confirmationID()}
		switch {
		case len(in.Answer) > 0:
			if err := json.Unmarshal(in.Answer, &a); err != nil {
				return FinishOutput{}, &veredicto.InvalidInputError{File: "state input", Field: "answer", Problem: "is not a confirmation answer"}
			}
			r.Human = &HumanDecision{Approved: a.Approved, Decision: a.Decision, Comment: a.Comment}
			human.Status = statusRejected
			if a.Approved {
				human.Status = statusApproved
				r.Final = f.Preview.Proposed
				if a.Decision != "" && contains(r.Question.Options, a.Decision) {
					r.Final = a.Decision
				}
			}
		case in.Error != nil && in.Error.Error == veredicto.NameConfirmationRejected:
			// The Cause is the person's answer as JSON (comment, who, when).
			_ = json.Unmarshal([]byte(in.Error.Cause), &a)
			r.Human = &HumanDecision{Approved: false, Comment: a.Comment}
			human.Status = statusRejected
		default:
			r.Pending = true
			human.Status = statusExpired
			if in.Error != nil {
				human.Error, human.Cause = in.Error.Error, in.Error.Cause
			}
		}
		human.Principal, human.Comment, human.Preview = a.DecidedBy, a.Comment, a.Preview
		if !a.DecidedAt.IsZero() {
			human.DecidedAt = a.DecidedAt.UTC()
		}
	}
	if err := recordOutcome(ctx, r, human); err != nil {
		return FinishOutput{}, err
	}
	if err := s.restore(ctx, &f); err != nil {
		return FinishOutput{}, err
	}
	if err := s.openLibrary(ctx, &f); err != nil {
		return FinishOutput{}, err
	}
	if r.End, err = s.clock(ctx, "debate end"); err != nil {
		return FinishOutput{}, err
	}
	r.Cited = citedAll(r)
	r.Evidence = map[string]Chunk{}
	for _, id := range r.Cited {
		if c, ok := f.Library[id]; ok {
			r.Evidence[id] = c
		}
	}
	r.Checklists = Checklists(r, knowledgeSize(&f))
	var logYAML bytes.Buffer
	enc := yaml.NewEncoder(&logYAML)
	enc.SetIndent(2)
	if err := enc.Encode(r.DebateLog()); err != nil {
		return FinishOutput{}, fmt.Errorf("encode debate log: %w", err)
	}
	enc.Close()
	full, err := json.Marshal(r)
	if err != nil {
		return FinishOutput{}, fmt.Errorf("encode debate: %w", err)
	}
	prefix := ReportPrefix(f.Tenant, r.SessionID)
	files := []File{
		{Name: "debate_log.yaml", ContentType: "application/yaml", Data: logYAML.Bytes()},
		{Name: "debate.md", ContentType: "text/markdown; charset=utf-8", Data: []byte(r.Markdown())},
		{Name: "debate.json", ContentType: "application/json", Data: full},
	}
	for _, w := range files {
		if err := s.Reports.Put(ctx, prefix+w.Name, w.Data, w.ContentType); err != nil {
			return FinishOutput{}, &veredicto.TransientError{Op: "put " + prefix + w.Name, Err: err}
		}
	}
	if err := recordFiles(ctx, prefix, files); err != nil {
		return FinishOutput{}, err
	}
	logJSON, err := json.Marshal(r.DebateLog())
	if err != nil {
		return FinishOutput{}, fmt.Errorf("encode debate log: %w", err)
	}
	if _, err := s.Logs.PutIfAbsent(ctx, LogKey(f.Tenant, r.SessionID), logJSON); err != nil {
		return FinishOutput{}, &veredicto.TransientError{Op: "put debate log " + r.SessionID, Err: err}
	}
	if err := End(ctx); err != nil {
		return FinishOutput{}, err
	}
	s.logger().InfoContext(ctx, "debate finished", "tenant", f.Tenant, "debate_id", r.SessionID, "target", r.Target, "pending", r.Pending)
	return FinishOutput{DebateID: r.SessionID, Target: r.Target, Decision: r.Final, Pending: r.Pending,
		LogKey: prefix + "debate_log.yaml", ReportKey: prefix + "debate.md"}, nil
}

func knowledgeSize(f *Flow) int { return f.KnowledgeChunks }

// HumanKey is the key of a debate's debate_decision confirmation (the
// state machine's AskHuman).
func HumanKey(id string) string { return "debate_decision/" + id }

// confirmationID is the id ConfirmFunction gives the flow's
// debate_decision confirmation: keyed by the debate and the preview.
func (f *Flow) confirmationID() string {
	if f.Preview == nil {
		return ""
	}
	preview, err := json.Marshal(f.Preview)
	if err != nil {
		return ""
	}
	return confirm.KeyID(f.Tenant, HumanKey(f.Result.SessionID), preview)
}

func citedAll(r *Result) []string {
	s := &state{r: r}
	return s.cited(nil, r.Council)
}

// ReadLog returns a debate's log for tenant: another tenant's debate
// answers exactly like a missing one (NotFoundError).
func ReadLog(ctx context.Context, logs LogStore, tenant, id string) (Log, error) {
	if !validID(tenant) || !validID(id) {
		return Log{}, &veredicto.NotFoundError{What: "debate " + id}
	}
	b, ok, err := logs.Get(ctx, LogKey(tenant, id))
	if err != nil {
		return Log{}, &veredicto.TransientError{Op: "get debate log " + id, Err: err}
	}
	if !ok {
		return Log{}, &veredicto.NotFoundError{What: "debate " + id}
	}
	var l Log
	if err := json.Unmarshal(b, &l); err != nil {
		return Log{}, fmt.Errorf("decode debate log %s: %w", id, err)
	}
	return l, nil
}
