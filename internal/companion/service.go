package companion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/eventlog"
)

// KV is the context store (DynamoDB in AWS, files locally): write-once
// records, so a retried task never overwrites a step another attempt
// completed.
type KV interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	PutIfAbsent(ctx context.Context, key string, value []byte) (bool, error)
}

// Blobs is the blob store (S3 in AWS, a folder locally): the inputs, and
// report.md and context.json of each application.
type Blobs interface {
	Get(ctx context.Context, key string) ([]byte, error)
	Put(ctx context.Context, key string, data []byte, contentType string) error
}

// Service holds the Task handlers of statemachines/career_companion.asl.json:
// one method per Task, each the code the Lambda wraps. Every key is scoped
// by tenant: companion/<tenant>/<application_id>/… . Safe for concurrent
// use.
type Service struct {
	Store   KV
	Blobs   Blobs
	Analyst Analyst
	Engine  Engine
	Logger  *slog.Logger
	// Events, when set, receives each step's progress and drift alerts on
	// the execution's stream.
	Events Appender
	// Audit, when set, keeps each execution's audit record (every task
	// then needs the execution's name, $.execution.name); Replay, when
	// set, is the record a replay answers model calls and clock readings
	// from.
	Audit  Auditor
	Replay *audit.Replay
}

// StartInput is the execution input of CareerCompanionStateMachine (the
// shape other workflows, e.g. the delegation chat, start it with). The
// inputs are already stored (Service.Create): the JD at
// companion/<tenant>/<application_id>/jd.md and the profile at
// companion/<tenant>/<application_id>/profile.yaml.
type StartInput struct {
	Tenant        string `json:"tenant"`
	ApplicationID string `json:"application_id"`
	Mode          string `json:"mode"`
	Company       string `json:"company"`
	Platform      string `json:"platform"`
	Refresh       bool   `json:"refresh"`
}

// TaskInput is every Task's input: the execution input and, from the
// workflow's first state, the execution's id (the event stream's key).
type TaskInput struct {
	StartInput
	Execution *ExecutionRef `json:"execution,omitempty"`
}

// ExecutionRef names the running execution ("id.$": "$$.Execution.Id",
// "name.$": "$$.Execution.Name": its audit record's name).
type ExecutionRef struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
}

// Appender appends to an execution's event stream (internal/eventlog).
type Appender interface {
	Append(ctx context.Context, tenant, stream string, ev eventlog.Event) (eventlog.Event, error)
}

// Event types the companion appends to its execution's stream.
const (
	EventProgress = "companion-progress"
	EventDrift    = "companion-drift"
)

// progress are the stream's lines when a step completes.
var progress = map[string]Event{
	"intent":        {Kind: "progress", Phase: 0, Message: "Intención verificada: es una oferta de empleo."},
	"culture_radar": {Kind: "progress", Phase: 1, Message: "[Fase 1/7] Radar cultural listo."},
	"classify":      {Kind: "progress", Phase: 2, Message: "[Fase 2/7] Requisitos clasificados."},
	"sas":           {Kind: "progress", Phase: 2, Message: "[Fase 2/7] SAS evaluado."},
	"scoring":       {Kind: "progress", Phase: 2, Message: "[Fase 2/7] Scores calculados."},
	"draft":         {Kind: "progress", Phase: 3, Message: "[Fase 3/7] Contenido del CV listo."},
}

// emit appends the step's progress (and a drift alert) to the execution's
// stream; a failure is logged, never fails the step.
func (s *Service) emit(ctx context.Context, in TaskInput, step string, c *Context) {
	if s.Events == nil || in.Execution == nil || in.Execution.ID == "" {
		return
	}
	var evs []eventlog.Event
	if p, ok := progress[step]; ok {
		if ev, err := eventlog.New(EventProgress, "companion:"+step, p); err == nil {
			evs = append(evs, ev)
		}
	}
	if step == "classify" && c.Drift != nil && c.Drift.Alert {
		if ev, err := eventlog.New(EventDrift, "companion:drift", c.Drift); err == nil {
			evs = append(evs, ev)
		}
	}
	for _, ev := range evs {
		if _, err := s.Events.Append(ctx, in.Tenant, in.Execution.ID, ev); err != nil {
			s.logger().WarnContext(ctx, "cannot append companion event", "application_id", in.ApplicationID, "error", err)
		}
	}
}

func (s *Service) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// TaskOutput is every Task's output (ResultPath $.step): small, for the
// Choice states.
type TaskOutput struct {
	ApplicationID      string   `json:"application_id"`
	LastCompletedPhase int      `json:"last_completed_phase"`
	Status             string   `json:"status"`
	Cached             bool     `json:"cached"`
	NeedsPause         bool     `json:"needs_pause"`
	HardGaps           []string `json:"hard_gaps"`
	Preview            string   `json:"preview"`
	Decision           string   `json:"decision"`
	Final              float64  `json:"final"`
	SAS                int      `json:"sas"`
	ReportKey          string   `json:"report_key"`
}

// Keys of an application.
func Prefix(tenant, app string) string { return "companion/" + tenant + "/" + app + "/" }

func checkIDs(in TaskInput) error {
	if !veredicto.ValidID(in.Tenant) {
		return &veredicto.InvalidInputError{Field: "tenant", Problem: "must be 1-64 letters, digits, '_', '.', '-'"}
	}
	if !appIDRE.MatchString(in.ApplicationID) {
		return &veredicto.InvalidInputError{Field: "application_id", Problem: "must be 1-64 lowercase letters, digits or '-'"}
	}
	return nil
}

// Steps in order; each one's context record is write-once.
var steps = []string{"intent", "validate", "culture_radar", "classify", "sas", "scoring", "decision", "draft"}

func stepKey(in TaskInput, step string) string {
	for i, s := range steps {
		if s == step {
			return fmt.Sprintf("%sctx/%02d-%s", Prefix(in.Tenant, in.ApplicationID), i, s)
		}
	}
	panic("unknown step " + step)
}

// Create stores an application's inputs and returns the execution input.
// The id derives from the tenant, the inputs and the mode, so posting the
// same application twice starts one execution (deterministic name).
func (s *Service) Create(ctx context.Context, tenant string, jd, profileYAML []byte, mode, company, platform string) (StartInput, error) {
	p, err := ParseProfile("profile.yaml", profileYAML)
	if err != nil {
		return StartInput{}, err
	}
	c, err := NewContext("profile.yaml", string(jd), p, mode, company, platform, s.Analyst.Info())
	if err != nil {
		return StartInput{}, err
	}
	// The code-side half of the intent check answers at once, so the
	// person hears why (the model's half runs in the workflow).
	if DetectInjection(c.JDText) != "" {
		return StartInput{}, &veredicto.InvalidInputError{Field: "jd", Problem: "contiene instrucciones dirigidas al asistente; solo se aceptan ofertas de empleo"}
	}
	in := StartInput{Tenant: tenant, ApplicationID: c.InputHash[:20] + "-" + c.Mode[:1], Mode: c.Mode, Company: company, Platform: platform}
	if err := checkIDs(TaskInput{StartInput: in}); err != nil {
		return StartInput{}, err
	}
	pre := Prefix(tenant, in.ApplicationID)
	if err := s.Blobs.Put(ctx, pre+"jd.md", jd, "text/markdown; charset=utf-8"); err != nil {
		return StartInput{}, fmt.Errorf("store jd %s: %w", in.ApplicationID, err)
	}
	if err := s.Blobs.Put(ctx, pre+"profile.yaml", profileYAML, "application/yaml"); err != nil {
		return StartInput{}, fmt.Errorf("store profile %s: %w", in.ApplicationID, err)
	}
	return in, nil
}

// Load returns the application's latest context; another tenant's
// application is a *veredicto.NotFoundError like a missing one.
func (s *Service) Load(ctx context.Context, in TaskInput) (*Context, error) {
	if err := checkIDs(in); err != nil {
		return nil, err
	}
	for i := len(steps) - 1; i >= 0; i-- {
		b, ok, err := s.Store.Get(ctx, stepKey(in, steps[i]))
		if err != nil {
			return nil, fmt.Errorf("load context %s/%s: %w", in.ApplicationID, steps[i], err)
		}
		if ok {
			var c Context
			if err := json.Unmarshal(b, &c); err != nil {
				return nil, fmt.Errorf("load context %s/%s: %w", in.ApplicationID, steps[i], err)
			}
			return &c, nil
		}
	}
	return nil, &veredicto.NotFoundError{What: "application " + in.ApplicationID}
}

func (s *Service) runner(in TaskInput) *Runner {
	return &Runner{Analyst: s.Analyst, Engine: s.Engine, Cache: KVCache{KV: s.Store, Tenant: in.Tenant}, Refresh: in.Refresh, Logger: s.Logger, Tenant: in.Tenant}
}

// scope attaches the audit scope of the execution in names to ctx: its
// record's main chain. With no Auditor it returns ctx as is.
func (s *Service) scope(ctx context.Context, in TaskInput) (context.Context, error) {
	if s.Audit == nil {
		return ctx, nil
	}
	name := ""
	if in.Execution != nil {
		name = in.Execution.Name
	}
	if err := checkExecution(name); err != nil {
		return ctx, err
	}
	rec, err := s.Audit.Open(ctx, in.Tenant, name)
	if err != nil {
		return ctx, fmt.Errorf("open the audit record of %s: %w", name, err)
	}
	return audit.WithScope(ctx, NewScope(rec, name, s.Analyst, s.Replay)), nil
}

// terminal reports whether step ends the execution for c (the workflow's
// Choice states): phase 2c outside full mode, a stop at the pause, the
// drafting.
func terminal(step string, c *Context) bool {
	switch step {
	case "scoring":
		return !Drafts(c.Mode)
	case "decision":
		return c.Status == StatusStopped
	case "draft":
		return true
	}
	return false
}

// end closes the execution's record after a terminal step, or a refusal
// the workflow ends on (InvalidInputError, caught into Rejected), once: a
// retried task whose record ended already adds nothing.
func (s *Service) end(ctx context.Context, step string, c *Context, err error) error {
	sc := audit.ScopeFrom(ctx)
	switch {
	case sc == nil:
		return nil
	case err != nil && veredicto.ErrorName(err) != veredicto.NameInvalidInput:
		return nil // retried, or the execution fails: it did not end here
	case err == nil && !terminal(step, c):
		return nil
	}
	lines, lerr := sc.Recorder.Store().Lines(ctx, sc.Chain)
	if lerr != nil {
		return fmt.Errorf("audit: %w", lerr)
	}
	if n := len(lines); n > 0 {
		var last audit.Entry
		if json.Unmarshal(lines[n-1], &last) == nil && last.Kind == audit.KindSummary {
			return nil
		}
	}
	return End(ctx, c, err)
}

// step runs fn over the latest context unless the step's record exists
// (a retried or resumed task returns what was done), then stores the
// record and the report.
func (s *Service) step(ctx context.Context, in TaskInput, name string, fn func(*Context) error) (TaskOutput, error) {
	key := stepKey(in, name)
	if b, ok, err := s.Store.Get(ctx, key); err != nil {
		return TaskOutput{}, fmt.Errorf("%s %s: %w", name, in.ApplicationID, err)
	} else if ok {
		var c Context
		if err := json.Unmarshal(b, &c); err != nil {
			return TaskOutput{}, fmt.Errorf("%s %s: %w", name, in.ApplicationID, err)
		}
		// Stored by an earlier execution (this one's own is in its record
		// already): recorded, so a replay's store holds it too.
		if err := Seed(ctx, name, key, b); err != nil {
			return TaskOutput{}, err
		}
		return s.output(in, &c), s.end(ctx, name, &c, nil)
	}
	c, err := s.Load(ctx, in)
	if err != nil {
		return TaskOutput{}, err
	}
	if err := fn(c); err != nil {
		if eerr := s.end(ctx, name, c, err); eerr != nil {
			return TaskOutput{}, eerr
		}
		return TaskOutput{}, err
	}
	b, err := json.Marshal(c)
	if err != nil {
		return TaskOutput{}, fmt.Errorf("%s %s: %w", name, in.ApplicationID, err)
	}
	if _, err := s.Store.PutIfAbsent(ctx, key, b); err != nil {
		return TaskOutput{}, fmt.Errorf("%s %s: %w", name, in.ApplicationID, err)
	}
	if err := stageEntry(ctx, audit.Stage{Stage: name, Key: key}, b); err != nil {
		return TaskOutput{}, err
	}
	if err := s.publish(ctx, in, c, b); err != nil {
		return TaskOutput{}, err
	}
	s.emit(ctx, in, name, c)
	return s.output(in, c), s.end(ctx, name, c, nil)
}

func (s *Service) publish(ctx context.Context, in TaskInput, c *Context, ctxJSON []byte) error {
	pre := Prefix(in.Tenant, in.ApplicationID)
	for _, f := range []struct {
		name, contentType string
		data              []byte
	}{{ContextFile, "application/json", ctxJSON}, {ReportFile, "text/markdown; charset=utf-8", []byte(Report(c))}} {
		if err := s.Blobs.Put(ctx, pre+f.name, f.data, f.contentType); err != nil {
			return fmt.Errorf("put %s%s: %w", pre, f.name, err)
		}
		if err := RecordFile(ctx, pre+f.name, f.data); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) output(in TaskInput, c *Context) TaskOutput {
	o := TaskOutput{ApplicationID: c.ApplicationID, LastCompletedPhase: c.LastCompletedPhase, Status: c.Status, Cached: c.ClassificationCached,
		HardGaps: []string{}, ReportKey: Prefix(in.Tenant, in.ApplicationID) + ReportFile}
	if r := c.ScoringResult; r != nil {
		o.Decision, o.Final, o.SAS = r.DecisionMatrix, r.Confidence.Final, r.SAS.Total
		if Drafts(c.Mode) && s.Engine.NeedsAntiImpostorPause(c.ClassifiedRequirements) {
			p := AntiImpostorPause(c)
			o.NeedsPause, o.HardGaps, o.Preview = true, p.HardGaps, p.Preview
		}
	}
	return o
}

// keepRejection stores a refused application (status rejected, with the
// reason), so GET /companion/applications/{id} says why instead of 404.
func (s *Service) keepRejection(ctx context.Context, in TaskInput, key string, c *Context, reason string) {
	c.Status, c.Rejection = StatusRejected, reason
	b, err := json.Marshal(c)
	if err == nil {
		_, err = s.Store.PutIfAbsent(ctx, key, b)
	}
	if err == nil {
		err = s.Blobs.Put(ctx, Prefix(in.Tenant, in.ApplicationID)+ContextFile, b, "application/json")
	}
	if err != nil {
		s.logger().WarnContext(ctx, "cannot keep a rejected application", "application_id", in.ApplicationID, "error", err)
	}
}

// Intent reads and checks the inputs (code: an incomplete profile is an
// InvalidInputError before any model call), creates the context, and runs
// the intent check (IntentRejectedError). It opens the execution's audit
// record with the inputs' texts.
func (s *Service) Intent(ctx context.Context, in TaskInput) (TaskOutput, error) {
	if err := checkIDs(in); err != nil {
		return TaskOutput{}, err
	}
	ctx, err := s.scope(ctx, in)
	if err != nil {
		return TaskOutput{}, err
	}
	pre := Prefix(in.Tenant, in.ApplicationID)
	jd, err := s.Blobs.Get(ctx, pre+"jd.md")
	if err != nil {
		return TaskOutput{}, fmt.Errorf("intent %s: %w", in.ApplicationID, err)
	}
	py, err := s.Blobs.Get(ctx, pre+"profile.yaml")
	if err != nil {
		return TaskOutput{}, fmt.Errorf("intent %s: %w", in.ApplicationID, err)
	}
	if err := s.begin(ctx, in, jd, py); err != nil {
		return TaskOutput{}, err
	}
	key := stepKey(in, "intent")
	if b, ok, err := s.Store.Get(ctx, key); err != nil {
		return TaskOutput{}, fmt.Errorf("intent %s: %w", in.ApplicationID, err)
	} else if ok {
		var c Context
		if json.Unmarshal(b, &c) == nil && c.Status == StatusRejected {
			ir := &IntentRejectedError{Reason: c.Rejection} // a retried task: the same refusal
			if err := errors.Join(Seed(ctx, "intent", key, b), s.end(ctx, "intent", &c, ir)); err != nil {
				return TaskOutput{}, err
			}
			return TaskOutput{}, ir
		}
		return s.step(ctx, in, "intent", nil)
	}
	p, err := ParseProfile("profile.yaml", py)
	if err != nil {
		return TaskOutput{}, s.refuse(ctx, nil, err)
	}
	c, err := NewContext("profile.yaml", string(jd), p, in.Mode, in.Company, in.Platform, s.Analyst.Info())
	if err != nil {
		var pe *ProfileIncompleteError
		if errors.As(err, &pe) {
			err = &veredicto.InvalidInputError{File: "profile.yaml", Problem: strings.Join(pe.Messages, " ")}
		}
		return TaskOutput{}, s.refuse(ctx, nil, err)
	}
	c.ApplicationID = in.ApplicationID
	r := s.runner(in)
	if err := r.intent(ctx, c); err != nil {
		var ir *IntentRejectedError
		if errors.As(err, &ir) {
			s.keepRejection(ctx, in, key, c, ir.Reason)
		}
		return TaskOutput{}, s.refuse(ctx, c, err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		return TaskOutput{}, err
	}
	if _, err := s.Store.PutIfAbsent(ctx, key, b); err != nil {
		return TaskOutput{}, fmt.Errorf("intent %s: %w", in.ApplicationID, err)
	}
	if err := stageEntry(ctx, audit.Stage{Stage: "intent", Key: key}, b); err != nil {
		return TaskOutput{}, err
	}
	s.emit(ctx, in, "intent", c)
	return s.output(in, c), s.publish(ctx, in, c, b)
}

// refuse closes the record of an execution the intent step refuses (the
// workflow ends in Rejected) and returns err, the refusal.
func (s *Service) refuse(ctx context.Context, c *Context, err error) error {
	if c == nil {
		c = &Context{Status: StatusRejected}
	}
	if eerr := s.end(ctx, "intent", c, err); eerr != nil {
		return eerr
	}
	return err
}

// begin records the execution's start, once (a retried Intent finds it):
// the input, the analyst, and the JD, the profile and the scoring
// configuration by their texts.
func (s *Service) begin(ctx context.Context, in TaskInput, jd, profile []byte) error {
	sc := audit.ScopeFrom(ctx)
	if sc == nil {
		return nil
	}
	if _, n, err := sc.Recorder.Head(ctx, sc.Chain); err != nil || n > 0 {
		return err
	}
	scoring, err := yaml.Marshal(s.Engine.Config)
	if err != nil {
		return fmt.Errorf("audit start: %w", err)
	}
	if err := Begin(ctx, RecordedInput{Surface: SurfaceWorkflow, StartInput: in.StartInput, Analyst: s.Analyst.Info()},
		map[string][]byte{DocJD: jd, DocProfile: profile, DocScoring: scoring}); err != nil {
		return err
	}
	// The application's files name the record that writes them: the
	// follow-up phases, which rewrite them, record into it too.
	b, err := json.Marshal(auditPointer{Execution: sc.Execution})
	if err != nil {
		return err
	}
	if err := s.Blobs.Put(ctx, Prefix(in.Tenant, in.ApplicationID)+AuditFile, b, "application/json"); err != nil {
		return fmt.Errorf("put %s: %w", AuditFile, err)
	}
	return nil
}

// AuditFile names, beside an application's files, the execution whose
// audit record wrote them last.
const AuditFile = "audit.json"

type auditPointer struct {
	Execution string `json:"execution"`
}

// applicationScope attaches to ctx the scope of the audit record that
// wrote the application's files (AuditFile); ctx as is when there is no
// Auditor or no such record.
func (s *Service) applicationScope(ctx context.Context, in TaskInput) (context.Context, error) {
	if s.Audit == nil {
		return ctx, nil
	}
	b, err := s.Blobs.Get(ctx, Prefix(in.Tenant, in.ApplicationID)+AuditFile)
	var nf *veredicto.NotFoundError
	if errors.As(err, &nf) {
		return ctx, nil // written before records were kept
	}
	if err != nil {
		return ctx, fmt.Errorf("read %s of %s: %w", AuditFile, in.ApplicationID, err)
	}
	var p auditPointer
	if err := json.Unmarshal(b, &p); err != nil {
		return ctx, &veredicto.InvalidInputError{File: Prefix(in.Tenant, in.ApplicationID) + AuditFile, Field: "execution", Problem: "is not JSON: " + err.Error()}
	}
	if err := checkExecution(p.Execution); err != nil {
		return ctx, err
	}
	rec, err := s.Audit.Open(ctx, in.Tenant, p.Execution)
	if err != nil {
		return ctx, fmt.Errorf("open the audit record of %s: %w", p.Execution, err)
	}
	return audit.WithScope(ctx, NewScope(rec, p.Execution, s.Analyst, nil)), nil
}

// Validate checks that the JD states requirements the classifier can work
// on, a list or prose (CheckJD, which Intent ran already before the
// model's call; a retried or resumed workflow checks again here).
func (s *Service) Validate(ctx context.Context, in TaskInput) (TaskOutput, error) {
	ctx, err := s.scope(ctx, in)
	if err != nil {
		return TaskOutput{}, err
	}
	return s.step(ctx, in, "validate", func(c *Context) error { return CheckJD("jd.md", c.JDText) })
}

// CultureRadar is phase 1.
func (s *Service) CultureRadar(ctx context.Context, in TaskInput) (TaskOutput, error) {
	ctx, err := s.scope(ctx, in)
	if err != nil {
		return TaskOutput{}, err
	}
	return s.step(ctx, in, "culture_radar", func(c *Context) error { return s.runner(in).cultureRadar(ctx, c) })
}

// CacheLookup applies a cached classification (by input hash) unless the
// input asks to refresh; Cached says whether Classify can be skipped.
func (s *Service) CacheLookup(ctx context.Context, in TaskInput) (TaskOutput, error) {
	ctx, err := s.scope(ctx, in)
	if err != nil {
		return TaskOutput{}, err
	}
	c, err := s.Load(ctx, in)
	if err != nil {
		return TaskOutput{}, err
	}
	if in.Refresh || len(c.ClassifiedRequirements) > 0 {
		o := s.output(in, c)
		o.Cached = len(c.ClassifiedRequirements) > 0 && !in.Refresh
		return o, nil
	}
	if _, ok, err := (KVCache{KV: s.Store, Tenant: in.Tenant}).GetClassification(ctx, c.InputHash); err != nil || !ok {
		o := s.output(in, c)
		o.Cached = false
		return o, err
	}
	return s.Classify(ctx, in) // served from the cache: no model call
}

// Classify is phase 2a.
func (s *Service) Classify(ctx context.Context, in TaskInput) (TaskOutput, error) {
	ctx, err := s.scope(ctx, in)
	if err != nil {
		return TaskOutput{}, err
	}
	return s.step(ctx, in, "classify", func(c *Context) error { return s.runner(in).Classify(ctx, c) })
}

// SAS is phase 2b.
func (s *Service) SAS(ctx context.Context, in TaskInput) (TaskOutput, error) {
	ctx, err := s.scope(ctx, in)
	if err != nil {
		return TaskOutput{}, err
	}
	return s.step(ctx, in, "sas", func(c *Context) error { return s.runner(in).EvaluateSAS(ctx, c) })
}

// Scoring is phase 2c: the ScoringEngine, code only. NeedsPause drives the
// anti-impostor Choice.
func (s *Service) Scoring(ctx context.Context, in TaskInput) (TaskOutput, error) {
	ctx, err := s.scope(ctx, in)
	if err != nil {
		return TaskOutput{}, err
	}
	return s.step(ctx, in, "scoring", func(c *Context) error {
		if err := s.runner(in).Score(ctx, c); err != nil {
			return err
		}
		if !Drafts(c.Mode) {
			c.Status = StatusCompleted
		} else if s.Engine.NeedsAntiImpostorPause(c.ClassifiedRequirements) {
			c.Pause = AntiImpostorPause(c)
			c.Status = StatusPaused
			// The question the workflow puts to the person next.
			return recordPause(ctx, in.Tenant, c)
		}
		return nil
	})
}

// DecisionInput is RecordDecision's input: the task input, whether the
// user proceeds after the anti-impostor pause, and the confirmation's
// outcome as the workflow holds it: the answer on approval
// (SendTaskSuccess's output), or the Catch's {Error, Cause} on a
// rejection (ConfirmationRejected, whose Cause is the decision as JSON)
// or a timeout (States.Timeout).
type DecisionInput struct {
	TaskInput
	Proceed     bool                `json:"proceed"`
	Answer      *ConfirmationAnswer `json:"answer,omitempty"`
	AnswerError *StateError         `json:"answer_error,omitempty"`
}

// ConfirmationAnswer is the person's decision as ConfirmFunction delivers
// it.
type ConfirmationAnswer struct {
	ID            string    `json:"id,omitempty"`
	Approved      bool      `json:"approved"`
	DecidedBy     string    `json:"decided_by"`
	DecidedAt     time.Time `json:"decided_at"`
	Comment       string    `json:"comment,omitempty"`
	PreviewSHA256 string    `json:"preview_sha256,omitempty"`
}

// StateError is the {Error, Cause} object a Catch places in the state.
type StateError struct {
	Error string `json:"Error"`
	Cause string `json:"Cause"`
}

// pauseAnswer is what the workflow learned of the person's answer.
func (in DecisionInput) pauseAnswer() PauseAnswer {
	from := func(a ConfirmationAnswer, status string) PauseAnswer {
		return PauseAnswer{Confirmation: a.ID, Status: status, Principal: a.DecidedBy, DecidedAt: a.DecidedAt, Comment: a.Comment, Preview: a.PreviewSHA256}
	}
	switch e := in.AnswerError; {
	case in.Answer != nil && in.Answer.Approved:
		return from(*in.Answer, confirm.StatusApproved)
	case e != nil && e.Error == veredicto.NameConfirmationRejected:
		var a ConfirmationAnswer
		if json.Unmarshal([]byte(e.Cause), &a) == nil {
			return from(a, confirm.StatusRejected)
		}
		return PauseAnswer{Status: confirm.StatusRejected, Error: e.Error, Cause: e.Cause}
	case e != nil && e.Error == "States.Timeout":
		return PauseAnswer{Status: confirm.StatusExpired, Error: e.Error, Cause: e.Cause}
	case e != nil:
		return PauseAnswer{Status: "unavailable", Error: e.Error, Cause: e.Cause}
	case in.Proceed:
		return PauseAnswer{Status: confirm.StatusApproved}
	}
	return PauseAnswer{Status: confirm.StatusRejected}
}

// RecordDecision records the user's answer to the anti-impostor
// confirmation: in the audit record who answered, when and on which
// preview, then in the context.
func (s *Service) RecordDecision(ctx context.Context, in DecisionInput) (TaskOutput, error) {
	ctx, err := s.scope(ctx, in.TaskInput)
	if err != nil {
		return TaskOutput{}, err
	}
	return s.step(ctx, in.TaskInput, "decision", func(c *Context) error {
		if err := CheckPaused(c); err != nil {
			return err
		}
		if err := RecordAnswer(ctx, in.Tenant, c, in.pauseAnswer()); err != nil {
			return err
		}
		return Resolve(c, in.Proceed)
	})
}

// Draft is phase 3; it completes the run.
func (s *Service) Draft(ctx context.Context, in TaskInput) (TaskOutput, error) {
	ctx, err := s.scope(ctx, in)
	if err != nil {
		return TaskOutput{}, err
	}
	return s.step(ctx, in, "draft", func(c *Context) error {
		if c.Pause != nil && c.Pause.Resolution != "proceed" {
			return &veredicto.ConflictError{What: "application " + c.ApplicationID, Problem: "waits for the anti_impostor confirmation"}
		}
		c.Status = StatusRunning
		if err := s.runner(in).phase3(ctx, c); err != nil {
			return err
		}
		c.LastCompletedPhase = 3
		c.Status = StatusCompleted
		return nil
	})
}

// KVCache is the classification cache on the context store:
// companion/<tenant>/classifications/<input_hash> holds the first
// classification, <input_hash>/v2, /v3… each refresh's. The store is
// write-once, so a classification is never overwritten; the newest one is
// the reference of the next drift check, as the seed's scoring_history
// ("compara con la anterior") and FileCache have it.
type KVCache struct {
	KV     KV
	Tenant string
}

var _ Cache = KVCache{}

// MaxClassificationVersions bounds the classifications kept per input
// hash (the first and the refreshes).
const MaxClassificationVersions = 64

func (k KVCache) key(hash string, version int) (string, error) {
	if !veredicto.ValidID(k.Tenant) || !hashRE.MatchString(hash) {
		return "", fmt.Errorf("classification cache: invalid tenant or hash")
	}
	key := "companion/" + k.Tenant + "/classifications/" + hash
	if version > 1 {
		key += "/v" + strconv.Itoa(version)
	}
	return key, nil
}

// latest returns the newest version stored for hash and its bytes (0 when
// none is).
func (k KVCache) latest(ctx context.Context, hash string) (int, []byte, error) {
	var last []byte
	for v := 1; v <= MaxClassificationVersions; v++ {
		key, err := k.key(hash, v)
		if err != nil {
			return 0, nil, err
		}
		b, ok, err := k.KV.Get(ctx, key)
		if err != nil {
			return 0, nil, err
		}
		if !ok {
			return v - 1, last, nil
		}
		last = b
	}
	return MaxClassificationVersions, last, nil
}

// GetClassification reads the newest classification stored for hash.
func (k KVCache) GetClassification(ctx context.Context, hash string) (Classification, bool, error) {
	var c Classification
	n, b, err := k.latest(ctx, hash)
	if err != nil || n == 0 {
		return c, false, err
	}
	if json.Unmarshal(b, &c) != nil {
		return c, false, nil
	}
	return c, true, nil
}

// PutClassification stores c as hash's newest classification.
func (k KVCache) PutClassification(ctx context.Context, hash string, c Classification) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	n, _, err := k.latest(ctx, hash)
	if err != nil {
		return err
	}
	for v := n + 1; v <= MaxClassificationVersions; v++ {
		key, err := k.key(hash, v)
		if err != nil {
			return err
		}
		stored, err := k.KV.PutIfAbsent(ctx, key, b)
		if err != nil || stored {
			return err
		}
		// another run stored this version first: take the next one
	}
	return fmt.Errorf("classification cache: %d classifications of this job description and profile are stored already (input hash %s); no refresh is kept beyond that", MaxClassificationVersions, hash)
}
