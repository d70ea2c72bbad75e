package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/awsretry"
	"github.com/veredicto/veredicto/internal/labels"
)

// SummaryTask writes the search summary from the candidates' results.
type SummaryTask struct {
	// Execution is the execution's name: its audit record's.
	Execution    string            `json:"execution,omitempty"`
	Tenant       string            `json:"tenant"`
	SearchID     string            `json:"search_id"`
	InputPrefix  string            `json:"input_prefix"`
	InputVersion string            `json:"input_version,omitempty"`
	ReportPrefix string            `json:"report_prefix"`
	Thresholds   Gates             `json:"thresholds"`
	Results      []CandidateResult `json:"results"`
}

// Metrics are the protocol's operational metrics (seed §7).
type Metrics struct {
	Candidates int `json:"candidates"`
	// QAPassRate: of the candidates GEM4 audited, the share whose last QA
	// score is ≥ the QA threshold.
	QAAudited  int     `json:"qa_audited"`
	QAPassRate float64 `json:"qa_pass_rate"`
	// CompleteCitationRate: share of agent outputs in which every claim
	// either cites a source or declares the gap.
	CompleteCitationRate float64 `json:"complete_citation_rate"`
	// SourcedClaimRate: share of all claims that cite at least one source.
	SourcedClaimRate       float64 `json:"sourced_claim_rate"`
	ContradictionsDeclared int     `json:"contradictions_declared"`
	AvgDurationMS          float64 `json:"avg_duration_ms_per_candidate"`
	AvgCostUSD             float64 `json:"avg_cost_usd_per_candidate"`
	// EscalationRate: share of candidates whose case required the senior
	// consultant (escalated, whether or not the consultant has decided).
	EscalationRate float64 `json:"escalation_rate"`
	// SeniorReviews counts the escalated cases by the consultant's answer.
	SeniorReviews SeniorReviews   `json:"senior_reviews"`
	Usage         veredicto.Usage `json:"usage"`
}

// SeniorReviews counts escalated cases: decided by the consultant
// (approved, rejected) and still open (no decision yet).
type SeniorReviews struct {
	Approved int `json:"approved"`
	Rejected int `json:"rejected"`
	Open     int `json:"open"`
}

// Summary is summary.json.
type Summary struct {
	SearchID string              `json:"search_id"`
	Client   string              `json:"client,omitempty"`
	Role     string              `json:"role,omitempty"`
	Mandate  json.RawMessage     `json:"mandate"`
	Ranking  []CandidateResult   `json:"ranking"`
	Metrics  Metrics             `json:"metrics"`
	LLM      veredicto.ModelInfo `json:"llm"`
	Baseline string              `json:"baseline,omitempty"`
}

// decisionRank: the protocol's approval, then the consultant's, then the
// cases still open, then the consultant's discards (they passed every
// gate) and the gate discards, later before earlier.
var decisionRank = map[string]int{
	DecisionApproved: 0, DecisionApprovedByConsultant: 1, DecisionEscalated: 2, DecisionDiscardedByConsultant: 3,
	DecisionDiscarded3: 4, DecisionDiscarded2: 5, DecisionDiscarded1: 6,
}

// Rank orders candidates: decision first (approved, escalated, then later
// discards before earlier ones), then QA score, then the sum of the stage
// scores, then id.
func Rank(rs []CandidateResult) []CandidateResult {
	out := append([]CandidateResult(nil), rs...)
	sum := func(r CandidateResult) int {
		n := 0
		for _, s := range r.Scores {
			n += s
		}
		return n
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if decisionRank[a.Decision] != decisionRank[b.Decision] {
			return decisionRank[a.Decision] < decisionRank[b.Decision]
		}
		qa, qb := -1, -1
		if a.QAScore != nil {
			qa = *a.QAScore
		}
		if b.QAScore != nil {
			qb = *b.QAScore
		}
		if qa != qb {
			return qa > qb
		}
		if sum(a) != sum(b) {
			return sum(a) > sum(b)
		}
		return a.CandidateID < b.CandidateID
	})
	return out
}

// ComputeMetrics derives the seed §7 metrics.
func ComputeMetrics(rs []CandidateResult, qaThreshold int) Metrics {
	m := Metrics{Candidates: len(rs)}
	outputs, cited, claims, sourced, nEscalated := 0, 0, 0, 0, 0
	var dur int64
	for _, r := range rs {
		if r.QAScore != nil {
			m.QAAudited++
			if *r.QAScore >= qaThreshold {
				m.QAPassRate++
			}
		}
		outputs += r.Outputs
		cited += r.CitedOutputs
		claims += r.Claims
		sourced += r.SourcedClaims
		m.ContradictionsDeclared += r.Contradictions
		m.Usage.Add(r.Usage)
		dur += r.DurationMS
		switch r.Decision {
		case DecisionEscalated:
			m.SeniorReviews.Open++
		case DecisionApprovedByConsultant:
			m.SeniorReviews.Approved++
		case DecisionDiscardedByConsultant:
			m.SeniorReviews.Rejected++
		}
		if escalated(r.Decision) {
			nEscalated++
		}
	}
	ratio := func(a, b int) float64 {
		if b == 0 {
			return 0
		}
		return round3(float64(a) / float64(b))
	}
	m.QAPassRate = ratio(int(m.QAPassRate), m.QAAudited)
	m.CompleteCitationRate = ratio(cited, outputs)
	m.SourcedClaimRate = ratio(sourced, claims)
	m.EscalationRate = ratio(nEscalated, len(rs))
	if len(rs) > 0 {
		m.AvgDurationMS = round3(float64(dur) / float64(len(rs)))
		m.AvgCostUSD = m.Usage.CostUSD / float64(len(rs))
	}
	return m
}

func round3(f float64) float64 {
	return float64(int64(f*1000+0.5)) / 1000
}

// Summarize writes summary.json and summary.md.
func (svc *Service) Summarize(ctx context.Context, t SummaryTask) (_ Metrics, err error) {
	defer func() { err = boundary(synced(ctx, err)) }()
	if err := svc.checkPrefixes(t.Tenant, t.SearchID, t.InputPrefix, t.ReportPrefix); err != nil {
		return Metrics{}, err
	}
	if ctx, err = svc.scope(ctx, t.Tenant, t.Execution, ""); err != nil {
		return Metrics{}, err
	}
	s, err := svc.load(ctx, t.Tenant, t.InputPrefix, t.SearchID, t.InputVersion)
	if err != nil {
		return Metrics{}, err
	}
	g5, _, rec, err := svc.gem5(ctx, s, true)
	if err != nil {
		return Metrics{}, fmt.Errorf("summary %s: load gem5: %w", t.SearchID, err)
	}
	results, err := svc.resultsFromReports(ctx, t, s)
	if err != nil {
		return Metrics{}, fmt.Errorf("summary %s: %w", t.SearchID, err)
	}
	ranking := Rank(results)
	for i := range ranking {
		ranking[i].Escalation = nil // in report.json
	}
	sum := Summary{SearchID: t.SearchID, Client: s.Docs.Client, Role: s.Docs.Role, Mandate: rec.Output,
		Ranking: ranking, Metrics: ComputeMetrics(results, t.Thresholds.Gem4), LLM: svc.Analyst.Info()}
	sum.Metrics.Usage.Add(rec.Usage)
	if len(results) > 0 {
		sum.Metrics.AvgCostUSD = sum.Metrics.Usage.CostUSD / float64(len(results))
	}
	if sum.LLM.Provider == "offline" {
		sum.Baseline = OfflineBaselineNotice
	}
	js, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return Metrics{}, fmt.Errorf("encode summary: %w", err)
	}
	md := []byte(RenderSummary(sum, g5.Content))
	js = append(js, '\n')
	// The summary says what every chain records: all are durable before
	// it is written.
	if err := record(ctx, func(sc *audit.Scope) error {
		if err := sc.Sync(ctx); err != nil {
			return err
		}
		return sc.Recorder.SyncAll(ctx)
	}); err != nil {
		return Metrics{}, err
	}
	for _, f := range []struct {
		name, contentType string
		b                 []byte
	}{{"summary.md", "text/markdown; charset=utf-8", md}, {"summary.json", "application/json", js}} {
		key := path.Join(t.ReportPrefix, f.name)
		if err := svc.Reports.Put(ctx, key, f.b, f.contentType); err != nil {
			return Metrics{}, fmt.Errorf("write %s: %w", f.name, err)
		}
		if err := recordFile(ctx, key, f.b); err != nil {
			return Metrics{}, err
		}
	}
	// The record ends with every chain's head: nothing recorded before it
	// can be removed or changed unnoticed.
	if err := record(ctx, func(sc *audit.Scope) error { return sc.End(ctx) }); err != nil {
		return Metrics{}, err
	}
	return sum.Metrics, nil
}

// resultsFromReports completes the Map's rows: a row that names the hash
// of its candidate's report.json (the Map keeps only the decision) gets
// its figures from that report, computed as the Report task computed them.
// A report that cannot be read for good, or is not the one the row names
// (changed since), is set aside and named in the log: its row keeps the
// decision, and the summary the other candidates. A read that failed for
// now (throttled, timed out) fails the task as transient instead: its
// Retry reads it again, where a summary written without the candidate's
// figures would have lost them for good. Rows that carry their figures (an
// execution started before the Map kept only the hash) are used as they
// are.
func (svc *Service) resultsFromReports(ctx context.Context, t SummaryTask, s *Search) ([]CandidateResult, error) {
	reader, _ := svc.Reports.(blobGetter)
	out := make([]CandidateResult, len(t.Results))
	errs := make([]error, len(t.Results))
	// Read summaryReads at a time: on S3 each read is a round trip, and a
	// search has up to MaxCandidates reports.
	sem := make(chan struct{}, summaryReads)
	var wg sync.WaitGroup
	for i, r := range t.Results {
		out[i] = r
		if r.ReportSHA256 == "" {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			out[i], errs[i] = svc.resultFromReport(ctx, reader, t, s, r)
		})
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// blobGetter reads back what the service's Reports wrote.
type blobGetter interface {
	Get(ctx context.Context, key string) ([]byte, error)
}

// summaryReads bounds the reports the summary reads at once.
const summaryReads = 16

// resultFromReport is r's row computed from its candidate's report.json,
// or r with its decision only when that report cannot be used (named in
// the log).
func (svc *Service) resultFromReport(ctx context.Context, reader blobGetter, t SummaryTask, s *Search, r CandidateResult) (CandidateResult, error) {
	key := path.Join(t.ReportPrefix, r.CandidateID, "report.json")
	var failed error // a read to try again
	row, problem := func() (CandidateResult, string) {
		if reader == nil {
			return CandidateResult{}, "the reports cannot be read here"
		}
		b, err := reader.Get(ctx, key)
		if err != nil && (ctx.Err() != nil || veredicto.ErrorName(awsretry.Classify(err)) == veredicto.NameTransient) {
			failed = fmt.Errorf("read %s: %w", key, err)
			return CandidateResult{}, ""
		}
		if err != nil {
			return CandidateResult{}, err.Error()
		}
		if checksum(b) != r.ReportSHA256 {
			return CandidateResult{}, "it is not the report this execution wrote (changed since)"
		}
		if row, ok := svc.rows.take(key, r.ReportSHA256); ok {
			return row, "" // this process computed it from these very bytes
		}
		var rep Report
		if err := json.Unmarshal(b, &rep); err != nil {
			return CandidateResult{}, "it is not valid JSON: " + err.Error()
		}
		if rep.CandidateID != r.CandidateID {
			return CandidateResult{}, fmt.Sprintf("it is the report of %q", rep.CandidateID)
		}
		view, err := decodeView(rep, s.Index)
		if err != nil {
			return CandidateResult{}, err.Error()
		}
		row := summarize(rep, view)
		row.Review, row.ReportKey = rep.Review, key
		return row, ""
	}()
	if failed != nil {
		return r, failed
	}
	if problem != "" {
		svc.logger().ErrorContext(ctx, "a candidate's report could not be read for the summary: it keeps its decision only",
			"search_id", t.SearchID, "candidate_id", r.CandidateID, "key", key, "problem", problem)
		r.ReportSHA256, r.ReportKey, r.Scores = "", key, map[string]int{}
		return r, nil
	}
	return row, nil
}

// rowCache keeps the summary row each Report task of this process
// computed, under its report's key and hash, until the summary takes it:
// a run in one process (the CLI, serve) reads each report back only to
// check it is the one written (its hash), instead of decoding it and
// computing the row again — 200 decodes on the run's critical path. A row
// the summary never takes (a run that failed before it) is dropped oldest
// first past maxCachedRows; the summary then reads the report as a Lambda
// does.
type rowCache struct {
	mu    sync.Mutex
	rows  map[string]CandidateResult
	order []string // keys put, oldest first (taken ones too, until compacted)
}

// maxCachedRows bounds the rows kept: two searches of MaxCandidates.
const maxCachedRows = 2 * MaxCandidates

func (c *rowCache) put(key, sha string, row CandidateResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rows == nil {
		c.rows = map[string]CandidateResult{}
	}
	k := key + "\x00" + sha
	for len(c.rows) >= maxCachedRows && len(c.order) > 0 {
		delete(c.rows, c.order[0])
		c.order = c.order[1:]
	}
	if len(c.order) >= 2*maxCachedRows { // mostly taken keys: keep the live ones
		live := make([]string, 0, len(c.rows))
		for _, o := range c.order {
			if _, ok := c.rows[o]; ok {
				live = append(live, o)
			}
		}
		c.order = live
	}
	c.rows[k] = row
	c.order = append(c.order, k)
}

// take returns and forgets the row kept for the report key with hash sha.
func (c *rowCache) take(key, sha string) (CandidateResult, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := key + "\x00" + sha
	row, ok := c.rows[k]
	delete(c.rows, k)
	return row, ok
}

// RenderSummary writes the search summary in Spanish.
func RenderSummary(sum Summary, mandate Gem5Content) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Resumen de búsqueda `%s`", sum.SearchID)
	if sum.Role != "" {
		fmt.Fprintf(&b, ": %s", sum.Role)
	}
	b.WriteString("\n\n")
	if sum.Client != "" {
		fmt.Fprintf(&b, "Cliente: %s\n\n", sum.Client)
	}
	if sum.Baseline != "" {
		fmt.Fprintf(&b, "> ⚠️ %s\n\n", sum.Baseline)
	}
	b.WriteString("## Ranking de candidatos\n\n| # | Candidato | Decisión | GEM1 | GEM2 | GEM3 | QA | Motivo |\n|---|---|---|---|---|---|---|---|\n")
	score := func(r CandidateResult, k string) string {
		if v, ok := r.Scores[k]; ok {
			return fmt.Sprint(v)
		}
		return "—"
	}
	for i, r := range sum.Ranking {
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %s |\n", i+1, r.CandidateID, labels.Of(labels.Decision, r.Decision),
			score(r, "gem1"), score(r, "gem2"), score(r, "gem3"), score(r, "gem4"), labels.Of(labels.Reason, r.Reason))
	}
	var reviewed []CandidateResult
	for _, r := range sum.Ranking {
		if r.Review != nil {
			reviewed = append(reviewed, r)
		}
	}
	if len(reviewed) > 0 {
		b.WriteString("\n## Revisiones del consultor senior\n\n| Candidato | Decisión | Quién | Cuándo | Comentario |\n|---|---|---|---|---|\n")
		for _, r := range reviewed {
			who, when := "—", "—"
			if r.Review.DecidedBy != "" {
				who = r.Review.DecidedBy
			}
			if r.Review.DecidedAt != nil {
				when = r.Review.DecidedAt.Format("2006-01-02 15:04 MST")
			}
			comment := oneLine(r.Review.Comment)
			if comment == "" {
				comment = r.Review.Note
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.CandidateID, labels.Of(labels.Decision, r.Decision), who, when, strings.ReplaceAll(comment, "|", "\\|"))
		}
	}
	b.WriteString("\n## Mandato (GEM5)\n\n")
	fmt.Fprintf(&b, "- **Problema real:** %s\n", cite(mandate.RealProblem.Text, mandate.RealProblem.Sources))
	fmt.Fprintf(&b, "- **Desafío crítico:** %s\n", cite(mandate.KeyChallenge.Text, mandate.KeyChallenge.Sources))
	for _, k := range mandate.ExpectedSuccesses {
		fmt.Fprintf(&b, "- **Éxito esperado:** %s — KPI: %s (%s)\n", cite(k.Description, k.Sources), oneLine(k.KPI), oneLine(k.Horizon))
	}
	claimList(&b, "Perfiles que no encajan", mandate.NoFits)
	claimList(&b, "Partes interesadas y tensiones", mandate.Stakeholders)
	claimList(&b, "Mapa de mercado", mandate.MarketMap)
	claimList(&b, "Criterios de decisión final", mandate.DecisionCriteria)
	claimList(&b, "Riesgos del mandato", mandate.MandateRisks)

	m := sum.Metrics
	b.WriteString("\n## Métricas del protocolo\n\n")
	fmt.Fprintf(&b, "- Calidad: tasa de aprobación QA ≥ umbral: %.0f%% (%s)\n", m.QAPassRate*100, labels.Count(m.QAAudited, "auditado", "auditados"))
	fmt.Fprintf(&b, "- Confiabilidad: salidas con citas completas: %.0f%%; afirmaciones con fuente: %.0f%%\n", m.CompleteCitationRate*100, m.SourcedClaimRate*100)
	fmt.Fprintf(&b, "- Consistencia: contradicciones declaradas: %d\n", m.ContradictionsDeclared)
	fmt.Fprintf(&b, "- Eficiencia: tiempo medio por candidato %.0f ms; costo medio por candidato US$%.4f; costo total US$%.4f (%s, %d tokens de entrada, %d de salida)\n",
		m.AvgDurationMS, m.AvgCostUSD, m.Usage.CostUSD, labels.Count(m.Usage.Calls, "llamada", "llamadas"), m.Usage.PromptTokens, m.Usage.CompletionTokens)
	fmt.Fprintf(&b, "- Escalamiento: %.0f%% de los candidatos requieren consultor senior", m.EscalationRate*100)
	if sr := m.SeniorReviews; sr.Approved+sr.Rejected+sr.Open > 0 {
		fmt.Fprintf(&b, " (decididos por el consultor: %s, %s; sin decisión: %d)", labels.Count(sr.Approved, "aprobado", "aprobados"), labels.Count(sr.Rejected, "descartado", "descartados"), sr.Open)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "\n---\nModelo: %s/%s\n", sum.LLM.Provider, sum.LLM.Model)
	return b.String()
}
