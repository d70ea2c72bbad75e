package search

import (
	"context"
	"fmt"

	"github.com/veredicto/veredicto"
)

// StartInput is the execution input of executive_search.asl.json.
type StartInput struct {
	// Tenant owns the search; every stage record, ledger entry and senior
	// review is keyed by it. Empty for a one-machine run.
	Tenant       string         `json:"tenant,omitempty"`
	SearchID     string         `json:"search_id"`
	InputPrefix  string         `json:"input_prefix"`
	ReportPrefix string         `json:"report_prefix"`
	Thresholds   map[string]int `json:"thresholds,omitempty"`
	Concurrency  int            `json:"concurrency,omitempty"`
	// Review says how an escalated candidate's senior review is handled;
	// nil: recorded as pending, not waited for.
	Review *ReviewOptions `json:"review,omitempty"`
	// StrictInputs refuses the search when any candidate lacks a minimum
	// document of an agent (InputGapsError), instead of escalating that
	// candidate when the agent's turn comes.
	StrictInputs bool `json:"strict_inputs,omitempty"`
}

// ValidateTask is Validate's state input: the execution input and the
// execution's name, under which the audit record is kept.
type ValidateTask struct {
	Input     StartInput `json:"input"`
	Execution string     `json:"execution"`
}

// ReviewOptions configure the senior consultant's review of escalated
// candidates.
type ReviewOptions struct {
	// Wait: the execution waits for the consultant's decision (a
	// .waitForTaskToken Task). Otherwise the review is recorded as pending
	// and the candidate stays escalated; a decision taken later applies
	// when the search runs again.
	Wait bool `json:"wait"`
	// TimeoutSeconds bounds the wait (default 7 days): then the candidate
	// stays escalated, with a note that the review expired.
	TimeoutSeconds int64 `json:"timeout_seconds,omitempty"`
}

// DefaultReviewTimeoutSeconds is how long a senior review waits: 7 days.
const DefaultReviewTimeoutSeconds = 7 * 24 * 3600

// MaxReviewTimeoutSeconds: a senior review waits at most a year, the
// longest a Standard execution runs.
const MaxReviewTimeoutSeconds = 365 * 24 * 3600

// Plan is what validation hands to the rest of the workflow.
type Plan struct {
	Tenant       string   `json:"tenant"`
	SearchID     string   `json:"search_id"`
	InputPrefix  string   `json:"input_prefix"`
	ReportPrefix string   `json:"report_prefix"`
	Thresholds   Gates    `json:"thresholds"`
	Concurrency  int      `json:"concurrency"`
	Candidates   []string `json:"candidates"`
	// Review is the input's, with the default timeout filled in.
	Review ReviewOptions `json:"review"`
	// InputVersion fingerprints the documents this run validated (Search's
	// Version); every later task loads that version.
	InputVersion string `json:"input_version"`
}

// DefaultConcurrency is how many candidates are evaluated at once.
const DefaultConcurrency = 4

// CheckInputThreshold checks one threshold of the execution input: a known
// name (gem1–gem4, max_qa_retries) within its range (0–10, 0–2).
func CheckInputThreshold(k string, v int) error {
	_, hi, ok := new(Gates).threshold(k)
	if !ok {
		return &veredicto.InvalidInputError{File: "execution input", Field: "thresholds." + k, Problem: "unknown threshold (want gem1, gem2, gem3, gem4 or max_qa_retries)"}
	}
	if v < 0 || v > hi {
		return &veredicto.InvalidInputError{File: "execution input", Field: "thresholds." + k, Problem: fmt.Sprintf("%d is out of range 0–%d", v, hi)}
	}
	return nil
}

// threshold is the gate named k and the highest value it takes; ok is
// false for a name that is none.
func (g *Gates) threshold(k string) (gate *int, hi int, ok bool) {
	switch k {
	case "gem1":
		return &g.Gem1, 10, true
	case "gem2":
		return &g.Gem2, 10, true
	case "gem3":
		return &g.Gem3, 10, true
	case "gem4":
		return &g.Gem4, 10, true
	case "max_qa_retries":
		return &g.MaxQARetries, 2, true
	}
	return nil, 0, false
}

// ValidateExecution is the first task (Validate with the execution's
// name): it opens the execution's audit record with the input and every
// document, then validates.
func (svc *Service) ValidateExecution(ctx context.Context, t ValidateTask) (_ Plan, err error) {
	defer func() { err = boundary(flushed(ctx, err)) }()
	ctx, err = svc.scope(ctx, t.Input.Tenant, t.Execution, "")
	if err != nil {
		return Plan{}, err
	}
	return svc.validate(ctx, t.Input)
}

// Validate is the first task: it loads the search, blocks it when a
// minimum document of GEM5 is missing — jd.md, kickoff.md, company.md —
// (MissingInputError), and resolves the thresholds: execution input over
// search.yaml over the seed's defaults.
func (svc *Service) Validate(ctx context.Context, in StartInput) (_ Plan, err error) {
	defer func() { err = boundary(flushed(ctx, err)) }()
	return svc.validate(ctx, in)
}

// CheckMandateInputs refuses a search whose GEM5 lacks a minimum
// document: the mandate analysis cannot run, and no candidate can be
// judged without it (seed 000 §2: jd, kickoff, company context).
func CheckMandateInputs(s *Search) error {
	if m := s.MissingInputs(AgentGem5, ""); len(m) > 0 {
		return &veredicto.MissingInputError{Files: m}
	}
	return nil
}

func (svc *Service) validate(ctx context.Context, in StartInput) (Plan, error) {
	if err := svc.checkPrefixes(in.Tenant, in.SearchID, in.InputPrefix, in.ReportPrefix); err != nil {
		return Plan{}, err
	}
	s, err := svc.loadFresh(ctx, in.Tenant, in.InputPrefix, in.SearchID)
	if err != nil {
		return Plan{}, err
	}
	if err := svc.recordStart(ctx, in, s); err != nil {
		return Plan{}, err
	}
	if err := CheckMandateInputs(s); err != nil {
		return Plan{}, err
	}
	if gaps := s.InputGaps(); in.StrictInputs && len(gaps) > 0 {
		return Plan{}, &InputGapsError{Gaps: gaps}
	}
	g := s.Gates
	for k, v := range in.Thresholds {
		if err := CheckInputThreshold(k, v); err != nil {
			return Plan{}, err
		}
		gate, _, _ := g.threshold(k)
		*gate = v
	}
	conc := in.Concurrency
	if conc <= 0 {
		conc = svc.DefaultConcurrency
	}
	if conc <= 0 {
		conc = DefaultConcurrency
	}
	review := ReviewOptions{TimeoutSeconds: DefaultReviewTimeoutSeconds}
	if in.Review != nil {
		review.Wait = in.Review.Wait
		if t := in.Review.TimeoutSeconds; t != 0 {
			if t < 0 || t > MaxReviewTimeoutSeconds {
				return Plan{}, &veredicto.InvalidInputError{File: "execution input", Field: "review.timeout_seconds", Problem: fmt.Sprintf("%d is out of range 1–%d", t, MaxReviewTimeoutSeconds)}
			}
			review.TimeoutSeconds = t
		}
	}
	p := Plan{Tenant: in.Tenant, Review: review, SearchID: s.Docs.SearchID, InputPrefix: in.InputPrefix, ReportPrefix: in.ReportPrefix, Thresholds: g, Concurrency: conc, Candidates: []string{}, InputVersion: s.Version}
	for _, c := range s.Candidates {
		p.Candidates = append(p.Candidates, c.CandidateID)
	}
	if len(p.Candidates) == 0 {
		return Plan{}, &veredicto.InvalidInputError{File: dirCandidates + "/", Problem: "the search has no candidate folders with documents"}
	}
	// Info, not Warn: the CLI prints these to the person itself, and a
	// Lambda logs Info too.
	for _, w := range s.Warnings {
		svc.logger().InfoContext(ctx, "search input warning", "search_id", s.Docs.SearchID, "warning", w)
	}
	return p, nil
}

// SearchTask addresses the search-level tasks.
type SearchTask struct {
	// Execution is the execution's name: its audit record's.
	Execution   string `json:"execution,omitempty"`
	Tenant      string `json:"tenant"`
	SearchID    string `json:"search_id"`
	InputPrefix string `json:"input_prefix"`
	// InputVersion is Plan.InputVersion: the documents Validate loaded.
	InputVersion string `json:"input_version,omitempty"`
}

// MandateResult is GEM5's summary for the workflow's gate.
type MandateResult struct {
	Confidence       float64 `json:"confidence"`
	CriticalBlockers int     `json:"critical_blockers"`
	// Reused: the mandate was read from the store, not computed in this run.
	Reused bool `json:"reused"`
}

// Gem5 runs the mandate analysis once per search.
func (svc *Service) Gem5(ctx context.Context, in SearchTask) (_ MandateResult, err error) {
	defer func() { err = boundary(flushed(ctx, err)) }()
	if ctx, err = svc.scope(ctx, in.Tenant, in.Execution, ""); err != nil {
		return MandateResult{}, err
	}
	s, err := svc.load(ctx, in.Tenant, in.InputPrefix, in.SearchID, in.InputVersion)
	if err != nil {
		return MandateResult{}, err
	}
	c, _, rec, err := svc.gem5(ctx, s, false)
	if err != nil {
		return MandateResult{}, err
	}
	n := 0
	for _, b := range c.Blockers {
		if b.Severity == "critica" {
			n++
		}
	}
	return MandateResult{Confidence: c.Scores.Confidence, CriticalBlockers: n, Reused: rec.Reused}, nil
}

func (svc *Service) gem5(ctx context.Context, s *Search, loadOnly bool) (Contract[Gem5Content], string, StageRecord, error) {
	d := s.Docs
	parts := append([]string{AgentGem5, svc.PromptVersion(AgentGem5), llmID(svc.Analyst.Info())}, docHashes(s, d.JD, d.Kickoff, d.Company, d.Culture)...)
	hash := chainHash(parts...)
	c, rec, err := runStage(ctx, svc, s, "", AgentGem5, 0, hash, live(loadOnly, func() (Answer[Gem5Content], veredicto.Usage, error) {
		return svc.Analyst.Gem5(ctx, Gem5Input{Search: s.Docs})
	}))
	return c, hash, rec, err
}

// CandidateTask addresses one candidate stage. Counters are the workflow's
// loop counters: gem3 is 1 after the GEM3 re-ask, qa is the GEM4 attempt
// (0 first audit, then one per correction).
type CandidateTask struct {
	// Execution is the execution's name: its audit record's.
	Execution   string `json:"execution,omitempty"`
	Tenant      string `json:"tenant"`
	SearchID    string `json:"search_id"`
	CandidateID string `json:"candidate_id"`
	InputPrefix string `json:"input_prefix"`
	// InputVersion is Plan.InputVersion: the documents Validate loaded.
	InputVersion string   `json:"input_version,omitempty"`
	Counters     Counters `json:"counters"`
	// Thresholds are the gates the workflow applies (the search's when
	// absent): the task records its gate's decision with them.
	Thresholds *Gates `json:"thresholds,omitempty"`
}

// Counters are the workflow's loop counters.
type Counters struct {
	Gem3 int `json:"gem3"`
	QA   int `json:"qa"`
}

// StageResult is what a candidate stage hands back to the workflow's
// Choice states: scores and flags only; the content stays in the store.
type StageResult struct {
	Score                     int     `json:"score"`
	Confidence                float64 `json:"confidence"`
	Recommendation            string  `json:"recommendation,omitempty"`
	Decision                  string  `json:"decision,omitempty"`
	IrresolvableContradiction bool    `json:"irresolvable_contradiction"`
	StructuralEvidenceGap     bool    `json:"structural_evidence_gap"`
	// MissingInputs lists the agent's minimum documents the candidate
	// lacks: the agent did not run (the gate escalates the candidate).
	MissingInputs []string `json:"missing_inputs,omitempty"`
	// State is the supervisor's state a QA block puts the candidate in
	// while corrections remain (BLOQUEADO_QA_REINTENTO).
	State string `json:"state,omitempty"`
	// Reused: the stage was read from the store, not computed in this run.
	Reused bool `json:"reused"`
}

func scoreOf(s Scores) int {
	if s.ScoreDimension == nil {
		return 0
	}
	return *s.ScoreDimension
}

// candidateStep opens a candidate task: its audit scope and its chain.
// missing lists the minimum documents of agent the candidate lacks (""
// checks none): then the chain is not built and the agent is not run.
func (svc *Service) candidateStep(ctx context.Context, t CandidateTask, agent string) (context.Context, *candidateChain, []string, error) {
	ctx, err := svc.scope(ctx, t.Tenant, t.Execution, t.CandidateID)
	if err != nil {
		return ctx, nil, nil, err
	}
	ch, err := svc.chain(ctx, t)
	if err != nil {
		return ctx, nil, nil, err
	}
	if agent != "" {
		if m := ch.s.MissingInputs(agent, t.CandidateID); len(m) > 0 {
			return ctx, ch, m, recordGate(ctx, missingGate(agent, m))
		}
	}
	return ctx, ch, nil, nil
}

// thresholds are the gates of t: the workflow's, or the search's.
func (ch *candidateChain) thresholds(t CandidateTask) Gates {
	if t.Thresholds != nil {
		return *t.Thresholds
	}
	return ch.s.Gates
}

// Gem1 runs trajectory and achievements.
func (svc *Service) Gem1(ctx context.Context, t CandidateTask) (_ StageResult, err error) {
	defer func() { err = boundary(flushed(ctx, err)) }()
	ctx, ch, missing, err := svc.candidateStep(ctx, t, AgentGem1)
	if err != nil || missing != nil {
		return StageResult{MissingInputs: missing, StructuralEvidenceGap: true}, err
	}
	if err := ch.runGem1(ctx); err != nil {
		return StageResult{}, err
	}
	r := StageResult{Score: scoreOf(ch.gem1.Scores), Confidence: ch.gem1.Scores.Confidence, Reused: ch.lastReused(),
		StructuralEvidenceGap: ch.evidenceless(ch.gem1.Content)}
	return r, recordGate(ctx, scoreGate(AgentGem1, "gem1", r.Score, ch.thresholds(t).Gem1, ch.gem1.Meta.Sources, r.StructuralEvidenceGap))
}

// Gem2 runs the business assessment.
func (svc *Service) Gem2(ctx context.Context, t CandidateTask) (_ StageResult, err error) {
	defer func() { err = boundary(flushed(ctx, err)) }()
	ctx, ch, missing, err := svc.candidateStep(ctx, t, AgentGem2)
	if err != nil || missing != nil {
		return StageResult{MissingInputs: missing, StructuralEvidenceGap: true}, err
	}
	if err := ch.runGem2(ctx); err != nil {
		return StageResult{}, err
	}
	r := StageResult{Score: scoreOf(ch.gem2.Scores), Confidence: ch.gem2.Scores.Confidence, Reused: ch.lastReused(),
		StructuralEvidenceGap: ch.evidenceless(ch.gem2.Content)}
	return r, recordGate(ctx, scoreGate(AgentGem2, "gem2", r.Score, ch.thresholds(t).Gem2, ch.gem2.Meta.Sources, r.StructuralEvidenceGap))
}

// Gem3 runs the verdict (attempt counters.gem3: 1 is the re-ask).
func (svc *Service) Gem3(ctx context.Context, t CandidateTask) (_ StageResult, err error) {
	defer func() { err = boundary(flushed(ctx, err)) }()
	ctx, ch, missing, err := svc.candidateStep(ctx, t, AgentGem3)
	if err != nil || missing != nil {
		return StageResult{MissingInputs: missing, StructuralEvidenceGap: true}, err
	}
	if err := ch.runGem3(ctx, t.Counters.Gem3); err != nil {
		return StageResult{}, err
	}
	r := StageResult{Score: scoreOf(ch.gem3.Scores), Confidence: ch.gem3.Scores.Confidence, Recommendation: ch.gem3.Content.Recommendation, Reused: ch.lastReused(),
		StructuralEvidenceGap: ch.evidenceless(ch.gem3.Content)}
	return r, recordGate(ctx, gem3Gate(stageName(AgentGem3, t.Counters.Gem3), r.Score, ch.thresholds(t).Gem3, r.Recommendation, ch.gem3.Meta.Sources, r.StructuralEvidenceGap))
}

// Gem4 runs the QA audit attempt counters.qa, with the corrections before it.
func (svc *Service) Gem4(ctx context.Context, t CandidateTask) (_ StageResult, err error) {
	defer func() { err = boundary(flushed(ctx, err)) }()
	ctx, ch, _, err := svc.candidateStep(ctx, t, "")
	if err != nil {
		return StageResult{}, err
	}
	audit, cur, err := ch.runQA(ctx, t.Counters.Gem3, t.Counters.QA, true)
	if err != nil {
		return StageResult{}, err
	}
	r := qaResult(audit, ch.evidenceless(cur.gem1.Content) || ch.evidenceless(cur.gem2.Content) || ch.evidenceless(cur.gem3.Content), ch.lastReused())
	th := ch.thresholds(t)
	g := qaGate(stageName(AgentGem4, t.Counters.QA), r, th.Gem4, t.Counters.QA, th.MaxQARetries, audit.Meta.Sources)
	r.State = g.State
	return r, recordGate(ctx, g)
}

// qaResult is the QA gate's view of an audit. Code, not the model, has the
// last word on two rules: an audit that flags an irresolvable
// contradiction or a structural lack of evidence cannot approve, and a
// structural lack of evidence also stands when GEM1, GEM2 or GEM3, as
// audited, cites no source at all (seed 000 §8: escalate).
func qaResult(audit Contract[Gem4Content], evidenceless, reused bool) StageResult {
	r := StageResult{Score: scoreOf(audit.Scores), Confidence: audit.Scores.Confidence, Decision: audit.Content.Decision,
		IrresolvableContradiction: audit.Content.IrresolvableContradiction,
		StructuralEvidenceGap:     audit.Content.StructuralEvidenceGap || evidenceless, Reused: reused}
	if r.IrresolvableContradiction || r.StructuralEvidenceGap {
		r.Decision = QABlocked
	}
	return r
}

// Correct runs the correction before GEM4 attempt counters.qa.
func (svc *Service) Correct(ctx context.Context, t CandidateTask) (_ StageResult, err error) {
	defer func() { err = boundary(flushed(ctx, err)) }()
	if t.Counters.QA < 1 {
		return StageResult{}, &veredicto.InvalidInputError{File: "state input", Field: "counters.qa", Problem: "a correction needs a GEM4 attempt of 1 or more"}
	}
	ctx, ch, _, err := svc.candidateStep(ctx, t, "")
	if err != nil {
		return StageResult{}, err
	}
	if _, _, err := ch.runQA(ctx, t.Counters.Gem3, t.Counters.QA, false); err != nil {
		return StageResult{}, err
	}
	return StageResult{Reused: ch.lastReused()}, nil
}
