package companion

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/platforms"
)

// Analyst is the model side of the phases: it classifies and writes; the
// Runner checks every answer and computes every number. The LLM analyst
// (internal/companion/agents) passes each check to llm.Generate, so a
// violation is re-asked once; the offline analyst (Offline) is the
// deterministic, labelled baseline.
type Analyst interface {
	Info() AnalystInfo
	Intent(ctx context.Context, jd string) (IntentVerdict, veredicto.Usage, error)
	CultureRadar(ctx context.Context, in CultureInput) (CultureRadar, veredicto.Usage, error)
	Classify(ctx context.Context, in ClassifyInput) (Classification, veredicto.Usage, error)
	SAS(ctx context.Context, in SASInput) (SASDimensionEvaluation, veredicto.Usage, error)
	Summary(ctx context.Context, in DraftInput) (Summary, veredicto.Usage, error)
	Bullets(ctx context.Context, in DraftInput) (BulletSet, veredicto.Usage, error)
	SkillsMatrix(ctx context.Context, in DraftInput) (SkillsMatrix, veredicto.Usage, error)
}

// CultureInput is phase 1's input: the JD alone (no web research yet).
type CultureInput struct {
	JD      string
	Company string
	Check   func(*CultureRadar) error
}

// ClassifyInput is one chunk of requirements to classify and match, or,
// with Extract (a JD without a list), the whole JD whose requirements the
// classifier extracts verbatim (CheckExtracted) as it classifies them.
type ClassifyInput struct {
	JD           string
	Profile      ProfileSnapshot
	Requirements []JDRequirement
	Extract      bool
	PainPoints   []string
	Check        func(*Classification) error
}

// SASInput is the SAS evaluation's input.
type SASInput struct {
	JD      string
	Profile ProfileSnapshot
	Radar   CultureRadar
	Check   func(*SASDimensionEvaluation) error
}

// DraftInput is phase 3's input; the checks are the code's integrity rules.
type DraftInput struct {
	Profile      ProfileSnapshot
	Radar        CultureRadar
	Requirements []ClassifiedRequirement
	Scoring      ScoringResult
	CheckSummary func(*Summary) error
	CheckBullets func(*BulletSet) error
	CheckSkills  func(*SkillsMatrix) error
}

// Cache stores classifications by input hash (tenant-scoped by the
// adapter).
type Cache interface {
	GetClassification(ctx context.Context, hash string) (Classification, bool, error)
	PutClassification(ctx context.Context, hash string, c Classification) error
}

// Event is one progress line of a run: stderr in the CLI, the event stream
// under serve.
type Event struct {
	Kind    string `json:"kind"` // progress | warning | drift | pause | done
	Phase   int    `json:"phase"`
	Message string `json:"message"`
}

// Runner runs the phases over a Context, saving it after each one.
type Runner struct {
	Analyst Analyst
	Engine  Engine
	Cache   Cache                                       // nil: no classification cache
	Save    func(ctx context.Context, c *Context) error // persists the context after each phase
	Emit    func(Event)                                 // nil: no progress
	Refresh bool                                        // re-classify even when cached, and check the drift
	Logger  *slog.Logger
	// Tenant is whose application it is: it names the anti-impostor
	// confirmation in the audit record ("default" when empty).
	Tenant string
}

// PausedError is a full run waiting for the user's answer to the
// anti-impostor confirmation.
type PausedError struct {
	Preview string
}

func (e *PausedError) Error() string { return "paused for the anti_impostor confirmation" }

// ErrorName is the ASL error name.
func (*PausedError) ErrorName() string { return "PausedError" }

// NewContext validates the inputs (the seed's pre-pipeline check: no
// model call) and returns a fresh context. An incomplete profile is a
// *ProfileIncompleteError with the seed's friendly messages.
func NewContext(profileFile string, jd string, p ProfileSnapshot, mode, company, platform string, info AnalystInfo) (*Context, error) {
	switch mode {
	case "":
		mode = ModeFull
	case ModeScreening, ModeFull, ModeOnboarding:
	default:
		return nil, &veredicto.InvalidInputError{Field: "mode", Problem: "must be screening, full or onboarding"}
	}
	if strings.TrimSpace(jd) == "" {
		return nil, &veredicto.InvalidInputError{Field: "jd", Problem: "is empty"}
	}
	if err := errors.Join(veredicto.CheckLabel("", "company", company), veredicto.CheckLabel("", "platform", platform)); err != nil {
		return nil, err
	}
	if platform != "" {
		if _, err := platforms.Load(platform); err != nil {
			return nil, &veredicto.InvalidInputError{Field: "platform", Problem: fmt.Sprintf("is not a known platform (known: %s)", strings.Join(platforms.Names(), ", "))}
		}
	}
	errs, warnings := ValidateCompleteness(p)
	if len(errs) > 0 {
		return nil, &ProfileIncompleteError{File: profileFile, Messages: errs}
	}
	// Requirements come from any JD, a list or prose; a JD with neither
	// is refused here, before any paid phase.
	if err := CheckJD("jd", jd); err != nil {
		return nil, err
	}
	hash := InputHash(jd, p, info.ClassifierVersion, info)
	return &Context{
		ApplicationID: hash[:16], InputHash: hash, Mode: mode, Company: company, PlatformName: platform,
		JDText: jd, Profile: p, Status: StatusRunning, Analyst: info, Warnings: append([]string{}, warnings...),
		ClassifiedRequirements: []ClassifiedRequirement{}, StrengthLinks: []StrengthLink{},
		ApplicationQA: []QAPair{}, Learnings: []Learning{},
	}, nil
}

func (r *Runner) emit(kind string, phase int, format string, args ...any) {
	if r.Emit != nil {
		r.Emit(Event{Kind: kind, Phase: phase, Message: fmt.Sprintf(format, args...)})
	}
}

func (r *Runner) save(ctx context.Context, c *Context) error {
	if r.Save == nil {
		return nil
	}
	if err := r.Save(ctx, c); err != nil {
		return fmt.Errorf("save context after phase %d: %w", c.LastCompletedPhase, err)
	}
	return nil
}

func (r *Runner) logger() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// Run runs the phases after c.LastCompletedPhase: the intent check (before
// any other call), 1 culture radar, 2 classification (cache, drift) + SAS +
// scoring, and in full/onboarding mode the anti-impostor pause and 3
// drafting. It returns *IntentRejectedError, *PausedError, or nil when the
// run is complete (or stopped by the user at the pause).
func (r *Runner) Run(ctx context.Context, c *Context) error {
	log := r.logger().With("application_id", c.ApplicationID)
	if c.Intent == nil {
		if err := r.intent(ctx, c); err != nil {
			return err
		}
		if err := r.save(ctx, c); err != nil {
			return err
		}
	}
	if c.LastCompletedPhase < 1 {
		if err := r.cultureRadar(ctx, c); err != nil {
			return err
		}
		if err := r.save(ctx, c); err != nil {
			return err
		}
		log.Info("phase done", "phase", 1)
	}
	if c.LastCompletedPhase < 2 {
		if c.ScoringResult == nil && c.SASEvaluation == nil && len(c.ClassifiedRequirements) == 0 {
			r.emit("progress", 2, "[Fase 2/7] Clasificando requisitos y calculando scores...")
		}
		for _, step := range []func(context.Context, *Context) error{r.Classify, r.EvaluateSAS, r.Score} {
			if err := step(ctx, c); err != nil {
				return err
			}
			if err := r.save(ctx, c); err != nil {
				return err
			}
		}
		log.Info("phase done", "phase", 2, "decision", c.ScoringResult.DecisionMatrix)
	}
	if !Drafts(c.Mode) {
		c.Status = StatusCompleted
		if c.Mode == ModeScreening {
			r.emit("done", 2, "Screening listo: fases 1-2 completas.")
		} else {
			r.emit("done", 2, "Fases 1-2 completas. La redacción del CV (fase 3) y la auditoría de marca son del modo full.")
		}
		return r.save(ctx, c)
	}
	if c.LastCompletedPhase < 3 {
		if r.Engine.NeedsAntiImpostorPause(c.ClassifiedRequirements) {
			if c.Pause == nil {
				c.Pause = AntiImpostorPause(c)
			}
			switch c.Pause.Resolution {
			case "":
				c.Status = StatusPaused
				if err := r.save(ctx, c); err != nil {
					return err
				}
				if err := recordPause(ctx, r.Tenant, c); err != nil {
					return err
				}
				r.emit("pause", 2, "%s", c.Pause.Preview)
				return &PausedError{Preview: c.Pause.Preview}
			case "stop":
				c.Status = StatusStopped
				r.emit("done", 2, "Postulación detenida por decisión tuya tras la pausa anti-impostor.")
				return r.save(ctx, c)
			}
		}
		c.Status = StatusRunning
		r.emit("progress", 3, "[Fase 3/7] Generando contenido del CV...")
		if err := r.phase3(ctx, c); err != nil {
			return err
		}
		c.LastCompletedPhase = 3
		if err := r.save(ctx, c); err != nil {
			return err
		}
		log.Info("phase done", "phase", 3)
	}
	if c.Status != StatusStopped {
		c.Status = StatusCompleted
	}
	r.emit("done", 3, "[Fases 4-6] Listo para soporte de postulación, verificación y auditoría de marca.")
	r.emit("done", 3, "[Fase 7] Cuando termines la postulación, activa la retrospectiva para capturar learnings.")
	return r.save(ctx, c)
}

// Resolve records the user's answer to the anti-impostor pause.
func Resolve(c *Context, proceed bool) error {
	if err := CheckPaused(c); err != nil {
		return err
	}
	if proceed {
		c.Pause.Resolution = "proceed"
		c.Status = StatusRunning
	} else {
		c.Pause.Resolution = "stop"
		c.Status = StatusStopped
	}
	return nil
}

// Classify is phase 2a: the classification, from the cache by input hash
// unless Refresh (then compared with the cached one for drift), chunked
// when the JD lists more than ChunkSize requirements. Done once: a context
// that has its classification keeps it.
func (r *Runner) Classify(ctx context.Context, c *Context) error {
	if len(c.ClassifiedRequirements) > 0 || c.LastCompletedPhase >= 2 {
		return nil
	}
	if c.CultureRadar == nil {
		return fmt.Errorf("phase 2 classify: phase 1 has not run")
	}
	reqs, err := ExtractRequirements("jd", c.JDText)
	if err != nil {
		return err
	}
	// No list: the classifier extracts the requirements from the text.
	extract := len(reqs) == 0
	pain := c.CultureRadar.PainPoints
	check := func(chunk []JDRequirement) func(*Classification) error {
		if extract {
			return func(cl *Classification) error { return CheckExtracted(cl, c.JDText, c.Profile, pain, r.Engine) }
		}
		return func(cl *Classification) error { return CheckClassification(cl, chunk, c.Profile, pain, r.Engine) }
	}
	var prev Classification
	var cached bool
	if r.Cache != nil {
		if prev, cached, err = r.Cache.GetClassification(ctx, c.InputHash); err != nil {
			return fmt.Errorf("phase 2 cache lookup: %w", err)
		}
		if cached {
			// Read from where an earlier run left it: recorded, so a
			// replay's cache holds it too.
			if err := recordCached(ctx, c.InputHash, prev); err != nil {
				return err
			}
			// A cached entry is checked like a fresh answer: a stale or
			// tampered one is classified again.
			if err := check(reqs)(&prev); err != nil {
				// The problem quotes requirement text: not logged (personal data).
				r.logger().Warn("cached classification rejected, classifying again", "application_id", c.ApplicationID)
				cached = false
			}
		}
	}
	var cl Classification
	if cached && !r.Refresh {
		cl = prev
		c.ClassificationCached = true
	} else {
		chunks := Chunks(reqs, ChunkSize)
		for _, chunk := range chunks {
			part, u, err := r.Analyst.Classify(ctx, ClassifyInput{JD: c.JDText, Profile: c.Profile, Requirements: chunk, Extract: extract, PainPoints: pain, Check: check(chunk)})
			c.Usage.Add(u)
			if err != nil {
				return fmt.Errorf("phase 2 classify: %w", err)
			}
			if err := check(chunk)(&part); err != nil {
				return fmt.Errorf("phase 2 classify: %w", err)
			}
			cl.Requirements = append(cl.Requirements, part.Requirements...)
			cl.StrengthLinks = append(cl.StrengthLinks, part.StrengthLinks...)
		}
		if cl.StrengthLinks == nil {
			cl.StrengthLinks = []StrengthLink{}
		}
		c.ClassificationCached = false
		if r.Cache != nil {
			if err := r.Cache.PutClassification(ctx, c.InputHash, cl); err != nil {
				return fmt.Errorf("phase 2 cache store: %w", err)
			}
		}
	}
	c.ClassifiedRequirements = cl.Requirements
	c.StrengthLinks = cl.StrengthLinks
	if r.Refresh && cached {
		before, err := r.Engine.Confidence(prev.Requirements, prev.StrengthLinks)
		if err != nil {
			return err
		}
		after, err := r.Engine.Confidence(cl.Requirements, cl.StrengthLinks)
		if err != nil {
			return err
		}
		d := round2(after.Final - before.Final)
		c.Drift = &Drift{PreviousFinal: before.Final, Final: after.Final, Delta: d, Threshold: r.Engine.Config.DriftThreshold, Alert: math.Abs(d) > r.Engine.Config.DriftThreshold}
		outcome := "sin_alerta"
		if c.Drift.Alert {
			outcome = "alerta"
		}
		if err := decide(ctx, audit.Decision{Name: DecisionDrift, Score: num(math.Abs(d)), Threshold: num(c.Drift.Threshold), Outcome: outcome,
			Detail: fmt.Sprintf("confidence final %.2f → %.2f (%+.2f) respecto de la clasificación en caché", before.Final, after.Final, d)}); err != nil {
			return err
		}
		if c.Drift.Alert {
			r.emit("drift", 2, "[Drift] El score final se movió %+.2f puntos respecto de la clasificación anterior (%.2f → %.2f).", d, before.Final, after.Final)
		}
	}
	return nil
}

// EvaluateSAS is phase 2b: the model's 5 SAS dimensions. Done once.
func (r *Runner) EvaluateSAS(ctx context.Context, c *Context) error {
	if c.SASEvaluation != nil || c.LastCompletedPhase >= 2 {
		return nil
	}
	if c.CultureRadar == nil {
		return fmt.Errorf("phase 2 sas: phase 1 has not run")
	}
	sas, u, err := r.Analyst.SAS(ctx, SASInput{JD: c.JDText, Profile: c.Profile, Radar: *c.CultureRadar, Check: CheckSAS})
	c.Usage.Add(u)
	if err == nil {
		err = CheckSAS(&sas)
	}
	if err != nil {
		return fmt.Errorf("phase 2 sas: %w", err)
	}
	c.SASEvaluation = &sas
	return nil
}

// Score is phase 2c, code only: the ScoringEngine over the classification
// and the SAS evaluation, and the non-negotiables over the JD's facts. It
// completes phase 2.
func (r *Runner) Score(ctx context.Context, c *Context) error {
	if c.LastCompletedPhase >= 2 {
		return nil
	}
	if len(c.ClassifiedRequirements) == 0 || c.SASEvaluation == nil || c.JDFacts == nil {
		return fmt.Errorf("phase 2 scoring: the classification or the SAS evaluation is missing")
	}
	nonneg := CheckNonNegotiables(c.Profile.NonNegotiables, *c.JDFacts)
	// Sprint 1: no web research, the culture dimension rests on the JD.
	res, err := r.Engine.Score(c.ClassifiedRequirements, c.StrengthLinks, *c.SASEvaluation, true, nonneg)
	if err != nil {
		return fmt.Errorf("phase 2 scoring: %w", err)
	}
	c.ScoringResult = &res
	c.LastCompletedPhase = 2
	// Recorded before the result is used (saved, shown, paused on).
	return r.recordScoring(ctx, c)
}

func (r *Runner) phase3(ctx context.Context, c *Context) error {
	in := DraftInput{
		Profile: c.Profile, Radar: *c.CultureRadar, Requirements: c.ClassifiedRequirements, Scoring: *c.ScoringResult,
		CheckSummary: func(s *Summary) error { return CheckSummary(s, c.Profile) },
		CheckBullets: func(b *BulletSet) error { return CheckBullets(b, c.Profile) },
		CheckSkills:  func(m *SkillsMatrix) error { return CheckSkillsMatrix(m, c.Profile, c.ClassifiedRequirements) },
	}
	s, u, err := r.Analyst.Summary(ctx, in)
	c.Usage.Add(u)
	if err == nil {
		err = in.CheckSummary(&s)
	}
	if err != nil {
		return fmt.Errorf("phase 3 killer summary: %w", err)
	}
	b, u, err := r.Analyst.Bullets(ctx, in)
	c.Usage.Add(u)
	if err == nil {
		err = in.CheckBullets(&b)
	}
	if err != nil {
		return fmt.Errorf("phase 3 impact bullets: %w", err)
	}
	m, u, err := r.Analyst.SkillsMatrix(ctx, in)
	c.Usage.Add(u)
	if err == nil {
		err = in.CheckSkills(&m)
	}
	if err != nil {
		return fmt.Errorf("phase 3 skills matrix: %w", err)
	}
	cv := &CVContent{KillerSummary: strings.TrimSpace(s.KillerSummary), ImpactBullets: map[string][]string{}, BulletSources: map[string][][]string{}, SkillsMatrix: m.Skills}
	if cv.SkillsMatrix == nil {
		cv.SkillsMatrix = []SkillMatrixEntry{}
	}
	for _, bl := range b.Bullets {
		cv.ImpactBullets[bl.ExperienceID] = append(cv.ImpactBullets[bl.ExperienceID], strings.TrimSpace(bl.Text))
		cv.BulletSources[bl.ExperienceID] = append(cv.BulletSources[bl.ExperienceID], bl.AchievementIDs)
	}
	c.CVContent = cv
	return nil
}

// AntiImpostorPause builds the confirmation shown when hard gaps pause a
// full run, in the seed's anti-impostor tone: the gaps named as they are
// (the gap analysis says "no lo maquilles" of a hard filter, and the pause
// does not argue them away), what they do not say about the person, the
// strengths the scoring linked, and the choice.
func AntiImpostorPause(c *Context) *Pause {
	gaps := HardGaps(c.ClassifiedRequirements)
	p := &Pause{ToolName: ToolAntiImpostor, HardGaps: []string{}}
	var b strings.Builder
	fmt.Fprintf(&b, "Antes de seguir, una pausa honesta: encontré %d requisitos obligatorios que hoy no cumples:\n", len(gaps))
	hard := false
	for _, g := range gaps {
		p.HardGaps = append(p.HardGaps, g.Requirement)
		what := "obligatorio"
		if g.Type == TypeA {
			what, hard = "filtro duro", true
		}
		fmt.Fprintf(&b, "- %s (tipo %s, %s)\n", g.Requirement, g.Type, what)
	}
	b.WriteString("Son brechas reales y conviene nombrarlas tal cual, sin maquillarlas. Eso no te define ni borra lo que sí traes")
	if c.ScoringResult != nil && len(c.ScoringResult.Confidence.MVP.LinkedStrengths) > 0 {
		fmt.Fprintf(&b, ": tu perfil tiene fortalezas que esta oferta busca (%s)", strings.Join(c.ScoringResult.Confidence.MVP.LinkedStrengths, ", "))
	}
	b.WriteString(".\n")
	if hard {
		b.WriteString("Un filtro duro sin cumplir suele descartar la postulación: si sigues, que sea una apuesta estratégica y consciente.\n")
	}
	b.WriteString("¿Sigo y preparo tu CV poniendo en valor lo que sí traes, o prefieres detenerte aquí?")
	p.Preview = b.String()
	return p
}

// intent is the security layer: the code's injection check, then the
// analyst's (the small model's) verdict.
func (r *Runner) intent(ctx context.Context, c *Context) error {
	if m := DetectInjection(c.JDText); m != "" {
		ir := &IntentRejectedError{Reason: "el texto contiene instrucciones dirigidas al asistente (\"" + m + "\"); solo se aceptan ofertas de empleo"}
		if err := decide(ctx, audit.Decision{Name: DecisionIntent, Outcome: "rejected", Detail: "regla del código: " + ir.Reason}); err != nil {
			return err
		}
		return ir
	}
	v, u, err := r.Analyst.Intent(ctx, c.JDText)
	c.Usage.Add(u)
	if err != nil {
		return fmt.Errorf("intent: %w", err)
	}
	if !v.IsCareerTask || v.InjectionDetected {
		reason := strings.TrimSpace(v.Reason)
		if reason == "" {
			reason = "no es una tarea de carrera"
		}
		r.logger().Info("intent rejected", "application_id", c.ApplicationID)
		ir := &IntentRejectedError{Reason: reason}
		if err := decide(ctx, audit.Decision{Name: DecisionIntent, Outcome: "rejected", Detail: "el modelo: " + reason}); err != nil {
			return err
		}
		return ir
	}
	c.Intent = &v
	return decide(ctx, audit.Decision{Name: DecisionIntent, Outcome: "accepted", Detail: strings.TrimSpace(v.Reason)})
}

// cultureRadar is phase 1, with the JD's facts for the non-negotiables.
func (r *Runner) cultureRadar(ctx context.Context, c *Context) error {
	if c.LastCompletedPhase >= 1 {
		return nil
	}
	r.emit("progress", 1, "[Fase 1/7] Analizando empresa y cultura...")
	radar, u, err := r.Analyst.CultureRadar(ctx, CultureInput{JD: c.JDText, Company: c.Company, Check: CheckCultureRadar})
	c.Usage.Add(u)
	if err == nil {
		err = CheckCultureRadar(&radar)
	}
	if err != nil {
		return fmt.Errorf("phase 1 culture radar: %w", err)
	}
	c.CultureRadar = &radar
	f := ExtractFacts(c.JDText, c.Profile.NonNegotiables.ExcludedIndustries)
	c.JDFacts = &f
	c.LastCompletedPhase = 1
	return nil
}
