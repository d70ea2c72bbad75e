package search

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/llm"
)

// BlobWriter stores reports (a folder locally, S3 in AWS).
type BlobWriter interface {
	Put(ctx context.Context, key string, data []byte, contentType string) error
}

// Service holds the protocol's task handlers: one method per Task state of
// executive_search.asl.json, each the same code the Lambda wraps. It is
// safe for concurrent use.
type Service struct {
	Inputs  BlobReader
	Reports BlobWriter
	Store   KV
	Analyst Analyst
	// PromptVersions maps an agent id to the version of its prompt
	// (recorded in every contract and hashed into stage keys).
	PromptVersions func(agent string) string
	Logger         *slog.Logger
	Now            func() time.Time
	// DefaultConcurrency is how many candidates run at once when the
	// execution input does not say (DefaultConcurrency when zero).
	DefaultConcurrency int

	mu       sync.Mutex
	searches map[string]*loadedSearch // input prefix → loaded search (at most maxCachedSearches)
	order    []string                 // prefixes, oldest first
}

type loadedSearch struct {
	once sync.Once
	s    *Search
	err  error
}

func (svc *Service) now() time.Time {
	if svc.Now != nil {
		return svc.Now()
	}
	return time.Now()
}

func (svc *Service) logger() *slog.Logger {
	if svc.Logger != nil {
		return svc.Logger
	}
	return slog.Default()
}

// PromptVersion is the prompt version recorded for agent.
func (svc *Service) PromptVersion(agent string) string {
	if svc.PromptVersions == nil {
		return "unversioned"
	}
	return svc.PromptVersions(agent)
}

// boundary is applied to every task handler's error: a storage failure
// worth retrying, however deeply wrapped, goes out as *veredicto.TransientError,
// whose type name the workflow's Retry matches. Other errors keep their own
// type (their name is what Catch and the report see).
func boundary(err error) error {
	var te *veredicto.TransientError
	if errors.As(err, &te) && err != error(te) {
		return &veredicto.TransientError{Err: err}
	}
	return err
}

// maxCachedSearches bounds the searches a long-lived process (a warm
// Lambda) keeps in memory.
const maxCachedSearches = 8

// load reads a search once per process: documents are immutable once a
// search is submitted, and every task of the execution needs them. A failed
// load is not kept, so a retried task reads again.
func (svc *Service) load(ctx context.Context, tenant, prefix, searchID string) (*Search, error) {
	cacheKey := tenant + "\x00" + prefix // tenant: stage keys are scoped by it
	svc.mu.Lock()
	if svc.searches == nil {
		svc.searches = map[string]*loadedSearch{}
	}
	ls := svc.searches[cacheKey]
	if ls == nil {
		ls = &loadedSearch{}
		svc.searches[cacheKey] = ls
		svc.order = append(svc.order, cacheKey)
		if len(svc.order) > maxCachedSearches {
			delete(svc.searches, svc.order[0])
			svc.order = svc.order[1:]
		}
	}
	svc.mu.Unlock()
	ls.once.Do(func() {
		if ls.s, ls.err = Load(ctx, svc.Inputs, prefix, searchID); ls.err == nil {
			ls.s.Tenant = tenant
		}
	})
	if ls.err != nil {
		svc.mu.Lock()
		if svc.searches[cacheKey] == ls {
			delete(svc.searches, cacheKey)
			for i, p := range svc.order {
				if p == cacheKey {
					svc.order = append(svc.order[:i], svc.order[i+1:]...)
					break
				}
			}
		}
		svc.mu.Unlock()
		return nil, ls.err
	}
	if searchID != "" && ls.s.Docs.SearchID != searchID {
		return nil, &InvalidInputError{File: FileConfig, Field: "search_id", Problem: fmt.Sprintf("%q does not match the execution's search_id %q", ls.s.Docs.SearchID, searchID)}
	}
	return ls.s, nil
}

func (s *Search) candidate(id string) (CandidateDocs, error) {
	for _, c := range s.Candidates {
		if c.CandidateID == id {
			return c, nil
		}
	}
	return CandidateDocs{}, &InvalidInputError{File: dirCandidates + "/" + id, Problem: "no such candidate folder"}
}

// StartInput is the execution input of executive_search.asl.json.
type StartInput struct {
	// Tenant owns the search; every stage record and ledger entry is keyed
	// by it. Empty for a one-machine run.
	Tenant       string         `json:"tenant,omitempty"`
	SearchID     string         `json:"search_id"`
	InputPrefix  string         `json:"input_prefix"`
	ReportPrefix string         `json:"report_prefix"`
	Thresholds   map[string]int `json:"thresholds,omitempty"`
	Concurrency  int            `json:"concurrency,omitempty"`
}

// Plan is what validation hands to the rest of the workflow.
type Plan struct {
	Tenant       string   `json:"tenant"`
	SearchID     string   `json:"search_id"`
	InputPrefix  string   `json:"input_prefix"`
	ReportPrefix string   `json:"report_prefix"`
	Thresholds   Gates    `json:"thresholds"`
	Concurrency  int      `json:"concurrency"`
	Candidates   []string `json:"candidates"`
}

// DefaultConcurrency is how many candidates are evaluated at once.
const DefaultConcurrency = 4

// Validate is the first task: it loads the search, blocks it when jd.md or
// kickoff.md is missing (MissingInputError), and resolves the thresholds:
// execution input over search.yaml over the seed's defaults.
func (svc *Service) Validate(ctx context.Context, in StartInput) (_ Plan, err error) {
	defer func() { err = boundary(err) }()
	s, err := svc.load(ctx, in.Tenant, in.InputPrefix, in.SearchID)
	if err != nil {
		return Plan{}, err
	}
	g := s.Gates
	for k, v := range in.Thresholds {
		var dst *int
		hi := 10
		switch k {
		case "gem1":
			dst = &g.Gem1
		case "gem2":
			dst = &g.Gem2
		case "gem3":
			dst = &g.Gem3
		case "gem4":
			dst = &g.Gem4
		case "max_qa_retries":
			dst, hi = &g.MaxQARetries, 2
		default:
			return Plan{}, &InvalidInputError{File: "execution input", Field: "thresholds." + k, Problem: "unknown threshold (want gem1, gem2, gem3, gem4 or max_qa_retries)"}
		}
		if v < 0 || v > hi {
			return Plan{}, &InvalidInputError{File: "execution input", Field: "thresholds." + k, Problem: fmt.Sprintf("%d is out of range 0–%d", v, hi)}
		}
		*dst = v
	}
	conc := in.Concurrency
	if conc <= 0 {
		conc = svc.DefaultConcurrency
	}
	if conc <= 0 {
		conc = DefaultConcurrency
	}
	p := Plan{Tenant: in.Tenant, SearchID: s.Docs.SearchID, InputPrefix: in.InputPrefix, ReportPrefix: in.ReportPrefix, Thresholds: g, Concurrency: conc, Candidates: []string{}}
	for _, c := range s.Candidates {
		p.Candidates = append(p.Candidates, c.CandidateID)
	}
	if len(p.Candidates) == 0 {
		return Plan{}, &InvalidInputError{File: dirCandidates + "/", Problem: "the search has no candidate folders with documents"}
	}
	for _, w := range s.Warnings {
		svc.logger().WarnContext(ctx, "search input", "search_id", s.Docs.SearchID, "warning", w)
	}
	return p, nil
}

// SearchTask addresses the search-level tasks.
type SearchTask struct {
	Tenant      string `json:"tenant"`
	SearchID    string `json:"search_id"`
	InputPrefix string `json:"input_prefix"`
}

// MandateResult is GEM5's summary for the workflow's gate.
type MandateResult struct {
	Confidence       float64 `json:"confidence"`
	CriticalBlockers int     `json:"critical_blockers"`
}

// Gem5 runs the mandate analysis once per search.
func (svc *Service) Gem5(ctx context.Context, in SearchTask) (_ MandateResult, err error) {
	defer func() { err = boundary(err) }()
	s, err := svc.load(ctx, in.Tenant, in.InputPrefix, in.SearchID)
	if err != nil {
		return MandateResult{}, err
	}
	c, _, _, err := svc.gem5(ctx, s, false)
	if err != nil {
		return MandateResult{}, err
	}
	n := 0
	for _, b := range c.Blockers {
		if b.Severity == "critica" {
			n++
		}
	}
	return MandateResult{Confidence: c.Scores.Confidence, CriticalBlockers: n}, nil
}

func (svc *Service) gem5(ctx context.Context, s *Search, loadOnly bool) (Contract[Gem5Content], string, StageRecord, error) {
	d := s.Docs
	parts := append([]string{AgentGem5, svc.PromptVersion(AgentGem5), llmID(svc.Analyst.Info())}, docHashes(s, d.JD, d.Kickoff, d.Company, d.Culture)...)
	hash := chainHash(parts...)
	c, rec, err := runStage(ctx, svc, s, "", AgentGem5, 0, hash, live(loadOnly, func() (Answer[Gem5Content], llm.Usage, error) {
		return svc.Analyst.Gem5(ctx, Gem5Input{Search: s.Docs})
	}))
	return c, hash, rec, err
}

func llmID(i llm.Info) string { return i.Provider + "/" + i.Model }

// Mandate condenses GEM5's content for the candidate agents.
func Mandate(c Gem5Content) MandateSummary {
	texts := func(cs []Claim) []string {
		out := make([]string, 0, len(cs))
		for _, c := range cs {
			out = append(out, c.Text)
		}
		return out
	}
	m := MandateSummary{RealProblem: c.RealProblem.Text, KeyChallenge: c.KeyChallenge.Text,
		Requirements: texts(c.Requirements), NoFits: texts(c.NoFits), DecisionCriteria: texts(c.DecisionCriteria)}
	for _, k := range c.ExpectedSuccesses {
		m.Successes = append(m.Successes, k.Description+" — KPI: "+k.KPI+" ("+k.Horizon+")")
	}
	return m
}

// CandidateTask addresses one candidate stage. Counters are the workflow's
// loop counters: gem3 is 1 after the GEM3 re-ask, qa is the GEM4 attempt
// (0 first audit, then one per correction).
type CandidateTask struct {
	Tenant      string   `json:"tenant"`
	SearchID    string   `json:"search_id"`
	CandidateID string   `json:"candidate_id"`
	InputPrefix string   `json:"input_prefix"`
	Counters    Counters `json:"counters"`
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
}

func scoreOf(s Scores) int {
	if s.ScoreDimension == nil {
		return 0
	}
	return *s.ScoreDimension
}

// candidateChain computes (or loads) a candidate's stages in order.
type candidateChain struct {
	svc      *Service
	s        *Search
	cand     CandidateDocs
	gem5Hash string
	mandate  MandateSummary
	gem1     Contract[Gem1Content]
	gem1Hash string
	gem2     Contract[Gem2Content]
	gem2Hash string
	gem3     Contract[Gem3Content]
	gem3Hash string
	records  []StageRecord
	// loadOnly: only read stored stages (the report task must never pay
	// for an agent call); a stage not stored ends the chain with errNotRun.
	loadOnly bool
}

func (svc *Service) chain(ctx context.Context, t CandidateTask) (*candidateChain, error) {
	return svc.newChain(ctx, t, false)
}

// live returns f, or nil in a load-only chain.
func live[C any](loadOnly bool, f func() (Answer[C], llm.Usage, error)) func() (Answer[C], llm.Usage, error) {
	if loadOnly {
		return nil
	}
	return f
}

func (svc *Service) newChain(ctx context.Context, t CandidateTask, loadOnly bool) (*candidateChain, error) {
	s, err := svc.load(ctx, t.Tenant, t.InputPrefix, t.SearchID)
	if err != nil {
		return nil, err
	}
	cand, err := s.candidate(t.CandidateID)
	if err != nil {
		return nil, err
	}
	g5, h5, rec, err := svc.gem5(ctx, s, loadOnly)
	if err != nil {
		return nil, err
	}
	return &candidateChain{svc: svc, s: s, cand: cand, gem5Hash: h5, mandate: Mandate(g5.Content), records: []StageRecord{rec}, loadOnly: loadOnly}, nil
}

func (ch *candidateChain) hash(agent string, upstream string, attempt int, docs ...Doc) string {
	parts := append([]string{agent, ch.svc.PromptVersion(agent), llmID(ch.svc.Analyst.Info()), upstream, strconv.Itoa(attempt)}, docHashes(ch.s, docs...)...)
	return chainHash(parts...)
}

func (ch *candidateChain) input1() Gem1Input {
	return Gem1Input{Search: ch.s.Docs, Mandate: ch.mandate, Candidate: ch.cand}
}

func (ch *candidateChain) runGem1(ctx context.Context) error {
	h := ch.hash(AgentGem1, ch.gem5Hash, 0, ch.cand.CV, ch.cand.Interview)
	c, rec, err := runStage(ctx, ch.svc, ch.s, ch.cand.CandidateID, AgentGem1, 0, h, live(ch.loadOnly, func() (Answer[Gem1Content], llm.Usage, error) {
		return ch.svc.Analyst.Gem1(ctx, ch.input1())
	}))
	ch.gem1, ch.gem1Hash = c, h
	ch.records = append(ch.records, rec)
	return err
}

func (ch *candidateChain) input2() Gem2Input {
	return Gem2Input{Gem1Input: ch.input1(), Gem1: answerOf(ch.gem1)}
}

func (ch *candidateChain) runGem2(ctx context.Context) error {
	if err := ch.runGem1(ctx); err != nil {
		return err
	}
	h := ch.hash(AgentGem2, ch.gem1Hash, 0, ch.cand.Tests, ch.cand.Case)
	c, rec, err := runStage(ctx, ch.svc, ch.s, ch.cand.CandidateID, AgentGem2, 0, h, live(ch.loadOnly, func() (Answer[Gem2Content], llm.Usage, error) {
		return ch.svc.Analyst.Gem2(ctx, ch.input2())
	}))
	ch.gem2, ch.gem2Hash = c, h
	ch.records = append(ch.records, rec)
	return err
}

// reaskNote explains a GEM3 re-ask (Spanish: it goes into the prompt).
func reaskNote(prev Contract[Gem3Content]) string {
	return fmt.Sprintf("Tu recomendación anterior fue %q con score_dimension %d, y no es coherente con el umbral del gate de GEM3. Revisa la evidencia y emite una recomendación binaria SI/NO coherente con tu puntuación, sin ambigüedad.",
		prev.Content.Recommendation, scoreOf(prev.Scores))
}

func (ch *candidateChain) input3(reask string) Gem3Input {
	return Gem3Input{Gem2Input: ch.input2(), Gem2: answerOf(ch.gem2), Reask: reask, Gate: ch.s.Gates.Gem3}
}

func (ch *candidateChain) runGem3(ctx context.Context, attempt int) error {
	if err := ch.runGem2(ctx); err != nil {
		return err
	}
	upstream, reask := ch.gem2Hash, ""
	for a := 0; a <= attempt; a++ {
		h := ch.hash(AgentGem3, upstream+"|gate="+strconv.Itoa(ch.s.Gates.Gem3), a, ch.cand.References, ch.s.Docs.Culture)
		c, rec, err := runStage(ctx, ch.svc, ch.s, ch.cand.CandidateID, AgentGem3, a, h, live(ch.loadOnly, func() (Answer[Gem3Content], llm.Usage, error) {
			return ch.svc.Analyst.Gem3(ctx, ch.input3(reask))
		}))
		if err != nil {
			return err
		}
		ch.gem3, ch.gem3Hash = c, h
		ch.records = append(ch.records, rec)
		upstream, reask = h, reaskNote(c)
	}
	return nil
}

// audited is what GEM4 audits: GEM1–GEM3 as first written or as corrected.
type audited struct {
	gem1 Answer[Gem1Content]
	gem2 Answer[Gem2Content]
	gem3 Answer[Gem3Content]
}

// runQA runs GEM4 attempt 0 and, for each later attempt a, the correction a
// that precedes audit a. With finalAudit false it stops after correction
// qaAttempt (the Correction task). It returns the last audit run.
func (ch *candidateChain) runQA(ctx context.Context, gem3Attempt, qaAttempt int, finalAudit bool) (Contract[Gem4Content], error) {
	if err := ch.runGem3(ctx, gem3Attempt); err != nil {
		return Contract[Gem4Content]{}, err
	}
	cur := audited{gem1: answerOf(ch.gem1), gem2: answerOf(ch.gem2), gem3: answerOf(ch.gem3)}
	index := sortedIndex(ch.s.Index)
	input := func(a int) Gem4Input {
		in := Gem4Input{Gem3Input: ch.input3(""), Gem3: cur.gem3, SourcesIndex: index, Attempt: a, Gate: ch.s.Gates.Gem4}
		in.Gem1, in.Gem2 = cur.gem1, cur.gem2
		return in
	}
	upstream := ch.gem3Hash
	var audit Contract[Gem4Content]
	for a := 0; a <= qaAttempt; a++ {
		if a > 0 {
			h := ch.hash(AgentCorrection, upstream, a)
			corrIn := CorrectionInput{Gem4Input: input(a - 1), Audit: answerOf(audit)}
			corr, rec, err := runStage(ctx, ch.svc, ch.s, ch.cand.CandidateID, AgentCorrection, a, h, live(ch.loadOnly, func() (Answer[CorrectionContent], llm.Usage, error) {
				return ch.svc.Analyst.Correct(ctx, corrIn)
			}))
			if err != nil {
				return audit, err
			}
			ch.records = append(ch.records, rec)
			// Corrections rewrite content only: scores stay the agents'.
			cur.gem1.Content, cur.gem2.Content, cur.gem3.Content = corr.Content.Gem1, corr.Content.Gem2, corr.Content.Gem3
			upstream = h
		}
		if a == qaAttempt && !finalAudit {
			break
		}
		h := ch.hash(AgentGem4, upstream+"|gate="+strconv.Itoa(ch.s.Gates.Gem4), a)
		in := input(a)
		c, rec, err := runStage(ctx, ch.svc, ch.s, ch.cand.CandidateID, AgentGem4, a, h, live(ch.loadOnly, func() (Answer[Gem4Content], llm.Usage, error) {
			return ch.svc.Analyst.Gem4(ctx, in)
		}))
		if err != nil {
			return audit, err
		}
		ch.records = append(ch.records, rec)
		audit, upstream = c, h
	}
	return audit, nil
}

func sortedIndex(idx map[string]bool) []string {
	out := make([]string, 0, len(idx))
	for id := range idx {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

func answerOf[C any](c Contract[C]) Answer[C] {
	return Answer[C]{Content: c.Content, Scores: c.Scores, IssuesFound: c.IssuesFound, Blockers: c.Blockers}
}

// Gem1 runs trajectory and achievements.
func (svc *Service) Gem1(ctx context.Context, t CandidateTask) (_ StageResult, err error) {
	defer func() { err = boundary(err) }()
	ch, err := svc.chain(ctx, t)
	if err != nil {
		return StageResult{}, err
	}
	if err := ch.runGem1(ctx); err != nil {
		return StageResult{}, err
	}
	return StageResult{Score: scoreOf(ch.gem1.Scores), Confidence: ch.gem1.Scores.Confidence}, nil
}

// Gem2 runs the business assessment.
func (svc *Service) Gem2(ctx context.Context, t CandidateTask) (_ StageResult, err error) {
	defer func() { err = boundary(err) }()
	ch, err := svc.chain(ctx, t)
	if err != nil {
		return StageResult{}, err
	}
	if err := ch.runGem2(ctx); err != nil {
		return StageResult{}, err
	}
	return StageResult{Score: scoreOf(ch.gem2.Scores), Confidence: ch.gem2.Scores.Confidence}, nil
}

// Gem3 runs the verdict (attempt counters.gem3: 1 is the re-ask).
func (svc *Service) Gem3(ctx context.Context, t CandidateTask) (_ StageResult, err error) {
	defer func() { err = boundary(err) }()
	ch, err := svc.chain(ctx, t)
	if err != nil {
		return StageResult{}, err
	}
	if err := ch.runGem3(ctx, t.Counters.Gem3); err != nil {
		return StageResult{}, err
	}
	return StageResult{Score: scoreOf(ch.gem3.Scores), Confidence: ch.gem3.Scores.Confidence, Recommendation: ch.gem3.Content.Recommendation}, nil
}

// Gem4 runs the QA audit attempt counters.qa, with the corrections before it.
func (svc *Service) Gem4(ctx context.Context, t CandidateTask) (_ StageResult, err error) {
	defer func() { err = boundary(err) }()
	ch, err := svc.chain(ctx, t)
	if err != nil {
		return StageResult{}, err
	}
	audit, err := ch.runQA(ctx, t.Counters.Gem3, t.Counters.QA, true)
	if err != nil {
		return StageResult{}, err
	}
	return StageResult{Score: scoreOf(audit.Scores), Confidence: audit.Scores.Confidence, Decision: audit.Content.Decision,
		IrresolvableContradiction: audit.Content.IrresolvableContradiction, StructuralEvidenceGap: audit.Content.StructuralEvidenceGap}, nil
}

// Correct runs the correction before GEM4 attempt counters.qa.
func (svc *Service) Correct(ctx context.Context, t CandidateTask) (_ StageResult, err error) {
	defer func() { err = boundary(err) }()
	if t.Counters.QA < 1 {
		return StageResult{}, &InvalidInputError{File: "state input", Field: "counters.qa", Problem: "a correction needs a GEM4 attempt of 1 or more"}
	}
	ch, err := svc.chain(ctx, t)
	if err != nil {
		return StageResult{}, err
	}
	if _, err := ch.runQA(ctx, t.Counters.Gem3, t.Counters.QA, false); err != nil {
		return StageResult{}, err
	}
	return StageResult{}, nil
}
