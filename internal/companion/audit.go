package companion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/confirm"
)

// An application's audit record (issue 30) is one execution's record with
// one chain, main: the start (the inputs by their texts), every model
// call (recorded by llm.Generate through the scope), the code's decisions
// (the intent check, each score and the rule that decided the decision
// matrix, the non-negotiables, the anti-impostor rule, the drift), the
// classification read from the cache and the context records read from
// an earlier execution (stage entries a replay seeds its stores with),
// the person's answer to the anti-impostor confirmation, every file
// written and, when the execution (or a command of a folder run) ends, a
// summary.
//
// A folder run ("veredicto companion run", then "continue") is one
// application: continue appends to the record run opened, when that
// record's last context.json is the one in the folder, so the pause, the
// person's answer and phase 3 are in the record of the phases before
// them. A run that resumes a context, or a continue whose folder's record
// is another, opens a new record that starts from the saved context
// (recorded as a reused stage, SeedContext).

// Auditor opens an execution's audit record (audit.Folders locally, the
// reports bucket on AWS).
type Auditor interface {
	Open(ctx context.Context, tenant, execution string) (*audit.Recorder, error)
}

var _ Auditor = (*audit.Folders)(nil)

// WorkflowName names the career companion in audit records.
const WorkflowName = "career_companion"

// Where an application ran (RecordedInput.Surface).
const (
	// SurfaceFolder: "veredicto companion run|continue" into --out.
	SurfaceFolder = "folder"
	// SurfaceWorkflow: CareerCompanionStateMachine, under "serve" or on AWS.
	SurfaceWorkflow = "workflow"
)

// The documents a start entry holds by their texts.
const (
	DocJD      = "jd.md"
	DocProfile = "profile.yaml"
	DocScoring = "scoring.yaml"
)

// Keys of the stage entries a replay seeds its stores with.
const (
	// SeedContext is the saved context a folder run started from.
	SeedContext = "context.json"
	// SeedClassification prefixes the input hash of a classification read
	// from the cache.
	SeedClassification = "classification/"
)

// Decision names in the record.
const (
	DecisionIntent        = "intent"
	DecisionRequirement   = "requirement_score"
	DecisionConfidence    = "confidence_score"
	DecisionSAS           = "sas_total"
	DecisionMatrix        = "decision_matrix"
	DecisionHardFilter    = "hard_filter_cap"
	DecisionNonNegotiable = "non_negotiable"
	DecisionAntiImpostor  = "anti_impostor_rule"
	DecisionAnswer        = "anti_impostor_answer"
	DecisionDrift         = "drift"
	DecisionCommand       = "companion_command"
	DecisionStatus        = "application_status"
)

// StatusFailed is the recorded status of a command or an execution that
// ended in an error.
const StatusFailed = "failed"

// Clock readings an application records (a replay reads them back).
const (
	clockOfflineYears      = "offline career years"
	clockAntiImpostorReply = "anti_impostor answer"
)

// RecordedInput is the input a start entry records: where the application
// ran, its execution input and the analyst that read it.
type RecordedInput struct {
	Surface string `json:"surface"`
	StartInput
	Analyst AnalystInfo `json:"analyst"`
}

// promptVersioned is an analyst that names its prompts' versions.
type promptVersioned interface {
	PromptVersions() map[string]string
}

// PromptVersions are a's prompts' versions by schema (the offline rules'
// version for the offline analyst).
func PromptVersions(a Analyst) map[string]string {
	if p, ok := a.(promptVersioned); ok {
		return p.PromptVersions()
	}
	return map[string]string{"offline": a.Info().ClassifierVersion}
}

// NewScope is the audit scope of an application's steps: its execution's
// main chain, the analyst's model and prompts, and (in a replay) the
// record being replayed.
func NewScope(rec *audit.Recorder, execution string, a Analyst, replay *audit.Replay) *audit.Scope {
	info, versions := a.Info(), PromptVersions(a)
	return &audit.Scope{Recorder: rec, Execution: execution, Chain: audit.MainChain,
		Model: veredicto.ModelInfo{Provider: info.Provider, Model: info.Model}, Replay: replay,
		PromptVersion: func(schema string) string {
			if v, ok := versions[schema]; ok {
				return v
			}
			return versions["offline"]
		}}
}

// maxExecutionName bounds an execution's name (Step Functions: 80).
const maxExecutionName = 80

// checkExecution checks an execution's name: it names the audit record's
// folder.
func checkExecution(name string) error {
	if name == "" || utf8.RuneCountInString(name) > maxExecutionName || !utf8.ValidString(name) || name == "." || name == ".." ||
		strings.ContainsFunc(name, func(r rune) bool { return r == '/' || r == '\\' || unicode.IsControl(r) || unicode.IsSpace(r) }) {
		return &veredicto.InvalidInputError{File: "state input", Field: "execution.name",
			Problem: fmt.Sprintf("%q must be the execution's name (\"name.$\": \"$$.Execution.Name\"): 1–%d characters, no slash, space or control character; the audit record is kept per execution", name, maxExecutionName)}
	}
	return nil
}

// Begin appends the start entry to the main chain of the scope ctx
// carries (nothing without one): the input, the model, the prompts'
// versions and every document by its text.
func Begin(ctx context.Context, in RecordedInput, docs map[string][]byte) error {
	sc := audit.ScopeFrom(ctx)
	if sc == nil {
		return nil
	}
	input, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("audit start: %w", err)
	}
	st := audit.Start{Workflow: WorkflowName, Execution: sc.Execution, Tenant: in.Tenant, Input: input, Model: sc.Model,
		Prompts: map[string]string{"classifier_version": in.Analyst.ClassifierVersion}, Documents: map[string]string{}}
	for _, schema := range pipelineSchemas {
		st.Prompts[schema] = sc.PromptVersion(schema)
	}
	for _, name := range slices.Sorted(maps.Keys(docs)) {
		h, err := sc.Recorder.Text(ctx, string(docs[name]))
		if err != nil {
			return fmt.Errorf("audit start: %w", err)
		}
		st.Documents[name] = h
	}
	if _, err := sc.Recorder.Append(ctx, sc.Chain, audit.KindStart, st); err != nil {
		return fmt.Errorf("audit start: %w", err)
	}
	return nil
}

// pipelineSchemas are the model calls of phases 0–3, by schema.
var pipelineSchemas = []string{"intent", "culture_radar", "classify_requirements", "sas_dimensions", "draft_summary", "draft_bullets", "skills_matrix"}

// Seed records a stage output the execution read where an earlier one
// left it (a saved context, a cached classification), once: a replay
// starts with it in its store.
func Seed(ctx context.Context, stage, key string, record []byte) error {
	return stageEntry(ctx, audit.Stage{Stage: stage, Key: key, Reused: true}, record)
}

// stageEntry records a stage entry with its bytes once per key: a task
// retried in the same execution finds its own entry and adds none.
func stageEntry(ctx context.Context, st audit.Stage, record []byte) error {
	sc := audit.ScopeFrom(ctx)
	if sc == nil {
		return nil
	}
	h, err := sc.Recorder.Text(ctx, string(record))
	if err != nil {
		return fmt.Errorf("audit stage %s: %w", st.Stage, err)
	}
	st.Record = h
	if _, err := sc.Recorder.AppendOnce(ctx, sc.Chain, audit.KindStage, st.Key, st); err != nil {
		return fmt.Errorf("audit stage %s: %w", st.Stage, err)
	}
	return nil
}

// decide records the code's decisions in the scope ctx carries.
func decide(ctx context.Context, ds ...audit.Decision) error {
	sc := audit.ScopeFrom(ctx)
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

func num(v float64) *float64 { return &v }

// RecordFile records a file written (its path relative to the folder the
// record's reports are read from), by its content.
func RecordFile(ctx context.Context, path string, content []byte) error {
	if sc := audit.ScopeFrom(ctx); sc != nil {
		if err := sc.Report(ctx, path, content); err != nil {
			return fmt.Errorf("audit report %s: %w", path, err)
		}
	}
	return nil
}

// recordCached records the classification the cache held for hash, which
// the run read (used, or compared for the drift).
func recordCached(ctx context.Context, hash string, cl Classification) error {
	b, err := json.Marshal(cl)
	if err != nil {
		return err
	}
	return Seed(ctx, "classification", SeedClassification+hash, b)
}

// recordScoring records what the ScoringEngine decided: each
// requirement's score from its match, the confidence score, the SAS
// total, the decision matrix's rule with its thresholds, the hard-filter
// cap, each non-negotiable and, in a drafting mode, the anti-impostor
// rule.
func (r *Runner) recordScoring(ctx context.Context, c *Context) error {
	if audit.ScopeFrom(ctx) == nil || c.ScoringResult == nil {
		return nil
	}
	res, cfg := c.ScoringResult, r.Engine.Config
	reqs, err := r.Engine.Normalize(c.ClassifiedRequirements)
	if err != nil {
		return err
	}
	var ds []audit.Decision
	for i, q := range reqs {
		ds = append(ds, audit.Decision{Name: DecisionRequirement, Score: num(q.Score), Outcome: q.Match,
			Evidence: []string{fmt.Sprintf("requirement %d", i+1)}, Detail: fmt.Sprintf("tipo %s: %s", q.Type, q.Requirement)})
	}
	conf := res.Confidence
	ds = append(ds,
		audit.Decision{Name: DecisionConfidence, Score: num(conf.Final), Outcome: fmt.Sprintf("%.2f", conf.Final), Evidence: conf.MVP.LinkedStrengths,
			Detail: fmt.Sprintf("obligatorios %.2f × %g + deseables %.2f × %g = base %.2f; MVP +%g (sin tope %g, tope %g)",
				conf.ObligatoriosScore, cfg.Weights.Obligatorios, conf.DeseablesScore, cfg.Weights.Deseables, conf.Base, conf.MVP.Total, conf.MVP.Uncapped, cfg.MVP.Cap)},
		audit.Decision{Name: DecisionSAS, Score: num(float64(res.SAS.Total)), Outcome: fmt.Sprint(res.SAS.Total),
			Evidence: res.SAS.LowConfidence, Detail: "suma de las 5 dimensiones SAS"})
	ds = append(ds, r.matrixDecisions(c)...)
	for _, rule := range slices.Sorted(maps.Keys(res.NonNegotiablesCheck)) {
		outcome := "sin_dato"
		if p := res.NonNegotiablesCheck[rule]; p != nil && *p {
			outcome = "cumple"
		} else if p != nil {
			outcome = "no_cumple"
		}
		ds = append(ds, audit.Decision{Name: DecisionNonNegotiable, Outcome: outcome, Evidence: []string{rule}, Detail: res.NonNegotiablesNotes[rule]})
	}
	if Drafts(c.Mode) {
		gaps := HardGaps(c.ClassifiedRequirements)
		d := audit.Decision{Name: DecisionAntiImpostor, Score: num(float64(len(gaps))), Threshold: num(float64(cfg.AntiImpostorMinHardGaps)),
			Outcome: "sin_pausa", Evidence: []string{}, Detail: "requisitos A/B con no_cumple frente al mínimo que pausa el modo full"}
		if r.Engine.NeedsAntiImpostorPause(c.ClassifiedRequirements) {
			d.Outcome = "pausa"
		}
		for _, g := range gaps {
			d.Evidence = append(d.Evidence, g.Requirement)
		}
		ds = append(ds, d)
	}
	return decide(ctx, ds...)
}

// matrixDecisions are the decision matrix's rule that decided, with the
// confidence and SAS thresholds it compared, and the hard-filter cap when
// it lowered the outcome.
func (r *Runner) matrixDecisions(c *Context) []audit.Decision {
	res, d := c.ScoringResult, r.Engine.Config.Decision
	uncapped, why := r.Engine.Decide(res.Confidence.Final, res.SAS.Total, nil)
	m := audit.Decision{Name: DecisionMatrix, Score: num(res.Confidence.Final), Outcome: uncapped, Detail: why}
	switch uncapped {
	case DecisionMaxPriority:
		m.Threshold = num(d.MaxPriority.Final)
		m.Detail += fmt.Sprintf(" (umbral SAS %d)", d.MaxPriority.SAS)
	case DecisionConsider:
		m.Threshold = num(d.Consider.Final)
		m.Detail += fmt.Sprintf(" (umbral SAS %d)", d.Consider.SAS)
	case DecisionStrategicOnly:
		m.Score, m.Threshold = num(float64(res.SAS.Total)), num(float64(d.StrategicOnly.SAS))
	default:
		m.Threshold = num(d.Consider.Final)
		m.Detail += fmt.Sprintf(" (umbrales: confidence %g y SAS %d; SAS %d para estratégica)", d.Consider.Final, d.Consider.SAS, d.StrategicOnly.SAS)
	}
	out := []audit.Decision{m}
	if res.DecisionMatrix != uncapped {
		out = append(out, audit.Decision{Name: DecisionHardFilter, Outcome: res.DecisionMatrix, Detail: res.DecisionReason})
	}
	return out
}

// PausePreview is the preview the anti-impostor confirmation shows, as
// statemachines/career_companion.asl.json builds it for ConfirmFunction.
func PausePreview(c *Context) json.RawMessage {
	p := c.Pause
	if p == nil {
		p = AntiImpostorPause(c)
	}
	b, _ := json.Marshal(map[string]any{"application_id": c.ApplicationID, "hard_gaps": p.HardGaps, "message": p.Preview})
	return b
}

// PauseQuestion names the anti-impostor confirmation of tenant's
// application c: its id (the keyed id ConfirmFunction gives it) and the
// hash of its preview.
func PauseQuestion(tenant string, c *Context) (id, previewSHA256 string) {
	if tenant == "" {
		tenant = "default"
	}
	preview := PausePreview(c)
	return confirm.KeyID(tenant, "anti_impostor/"+c.ApplicationID, preview), confirm.PreviewHash(preview)
}

// recordPause records the anti-impostor question put to the person
// (pending), with the hash of what they are shown.
func recordPause(ctx context.Context, tenant string, c *Context) error {
	sc := audit.ScopeFrom(ctx)
	if sc == nil {
		return nil
	}
	id, preview := PauseQuestion(tenant, c)
	if err := sc.Human(ctx, audit.HumanDecision{Confirmation: id, Status: confirm.StatusPending, Preview: preview}); err != nil {
		return fmt.Errorf("audit anti_impostor question: %w", err)
	}
	return nil
}

// PauseAnswer is the person's answer to the anti-impostor confirmation.
type PauseAnswer struct {
	// Confirmation is its id ("" to derive it from the question).
	Confirmation string
	// Status is approved (proceed), rejected (stop) or expired (nobody
	// answered in time: stop).
	Status    string
	Principal string
	DecidedAt time.Time
	Comment   string
	// Preview is the hash of the preview the person decided on ("" when
	// nobody decided).
	Preview string
	// Error and Cause: a failure the workflow met instead of an answer.
	Error, Cause string
}

// Proceed reports whether the answer goes on to phase 3.
func (a PauseAnswer) Proceed() bool { return a.Status == confirm.StatusApproved }

// RecordAnswer records the person's answer (who, when, on which preview)
// and the decision applied from it, before it is applied.
func RecordAnswer(ctx context.Context, tenant string, c *Context, a PauseAnswer) error {
	sc := audit.ScopeFrom(ctx)
	if sc == nil {
		return nil
	}
	id, preview := PauseQuestion(tenant, c)
	if a.Confirmation == "" {
		a.Confirmation = id
	}
	h := audit.HumanDecision{Confirmation: a.Confirmation, Status: a.Status, Principal: a.Principal, DecidedAt: a.DecidedAt,
		Comment: a.Comment, Preview: a.Preview, Error: a.Error, Cause: a.Cause}
	if err := sc.Human(ctx, h); err != nil {
		return fmt.Errorf("audit anti_impostor answer: %w", err)
	}
	d := audit.Decision{Name: DecisionAnswer, Outcome: "stop", Detail: "sin respuesta a tiempo: la postulación se detiene"}
	if a.Status == confirm.StatusApproved || a.Status == confirm.StatusRejected {
		d.Confirmation, d.Applies, d.Detail = a.Confirmation, a.Status, "decidido por "+a.Principal
		if a.Preview != "" && a.Preview != preview {
			d.Detail += "; la vista previa decidida no es la que el código calcula (" + preview + ")"
		}
	}
	if a.Proceed() {
		d.Outcome = "proceed"
	}
	return decide(ctx, d)
}

// RecordStatus records how a command or an execution left the
// application: its status, or failed with the error's name.
func RecordStatus(ctx context.Context, c *Context, err error) error {
	d := audit.Decision{Name: DecisionStatus, Outcome: c.Status}
	switch {
	case err == nil:
	case isPaused(err):
		d.Outcome = StatusPaused
	case isRejected(err):
		d.Outcome, d.Detail = StatusRejected, err.Error()
	default:
		d.Outcome, d.Detail = StatusFailed, veredicto.ErrorName(err)
	}
	return decide(ctx, d)
}

func isPaused(err error) bool {
	var pe *PausedError
	return errors.As(err, &pe)
}

// isRejected: the input was refused (the intent check, an invalid JD or
// profile), not a failure to process it.
func isRejected(err error) bool {
	var ir *IntentRejectedError
	return errors.As(err, &ir) || veredicto.ErrorName(err) == veredicto.NameInvalidInput
}

// End records the status and closes the record of the scope ctx carries
// with its summary.
func End(ctx context.Context, c *Context, err error) error {
	sc := audit.ScopeFrom(ctx)
	if sc == nil {
		return nil
	}
	if err := RecordStatus(ctx, c, err); err != nil {
		return err
	}
	if err := sc.End(ctx); err != nil {
		return fmt.Errorf("audit end: %w", err)
	}
	return nil
}
