package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/labels"
)

// Reasons a candidate's evaluation ended, recorded with the decision.
const (
	ReasonGate1          = "gate_gem1"
	ReasonGate2          = "gate_gem2"
	ReasonGate3          = "gate_gem3"
	ReasonQAPassed       = "qa_aprobado"
	ReasonQABlocks       = "bloqueos_qa_consecutivos"
	ReasonContradiction  = "contradiccion_critica_irresoluble"
	ReasonNoEvidence     = "falta_estructural_evidencia"
	ReasonAmbiguousGem3  = "recomendacion_ambigua"
	ReasonTechnicalError = "error_tecnico"
)

// Outcome is set by the workflow's Pass states when a candidate's path ends.
type Outcome struct {
	Decision string      `json:"decision"`
	Reason   string      `json:"reason"`
	Error    *StateError `json:"error,omitempty"`
	// Review is the senior consultant's review of an escalated candidate,
	// as the workflow's review states record it.
	Review *ReviewOutcome `json:"review,omitempty"`
}

// Senior review statuses (Outcome.Review.Status, Review.Status).
const (
	ReviewApproved = "approved"
	ReviewRejected = "rejected"
	// ReviewPending: recorded, not waited for (a batch run); a decision
	// taken later applies when the search runs again.
	ReviewPending = "pending"
	// ReviewExpired: the execution waited and nobody decided in time.
	ReviewExpired = "expired"
	// ReviewUnavailable: the review could not be requested (ConfirmFunction failed).
	ReviewUnavailable = "unavailable"
)

// ReviewOutcome is what the workflow learned of the review: the
// confirmation's id and status, and the consultant's answer, as
// ConfirmFunction's lookup, SendTaskSuccess's output or
// SendTaskFailure's cause carry it ({"approved", "decided_by",
// "decided_at", "comment"}).
type ReviewOutcome struct {
	ID     string        `json:"id,omitempty"`
	Status string        `json:"status"`
	Answer *ReviewAnswer `json:"answer,omitempty"`
	Error  *StateError   `json:"error,omitempty"`
}

// ReviewAnswer is the consultant's decision.
type ReviewAnswer struct {
	Approved  bool      `json:"approved"`
	DecidedBy string    `json:"decided_by"`
	DecidedAt time.Time `json:"decided_at"`
	Comment   string    `json:"comment,omitempty"`
	// PreviewSHA256 is the hash of the preview the consultant decided on.
	PreviewSHA256 string `json:"preview_sha256,omitempty"`
}

// Review is the senior consultant's review as the reports record it.
type Review struct {
	ID        string     `json:"id,omitempty"`
	Status    string     `json:"status"`
	DecidedBy string     `json:"decided_by,omitempty"`
	DecidedAt *time.Time `json:"decided_at,omitempty"`
	Comment   string     `json:"comment,omitempty"`
	// PreviewSHA256 is the hash of the preview the consultant decided on.
	PreviewSHA256 string `json:"preview_sha256,omitempty"`
	// Error names why the review could not be requested (unavailable).
	Error string `json:"error,omitempty"`
	// Note says in Spanish what the status means for the candidate.
	Note string `json:"nota"`
}

// StateError is the {Error, Cause} object a Catch places in the state.
type StateError struct {
	Error string `json:"Error"`
	Cause string `json:"Cause"`
}

// ReportTask writes a candidate's reports.
type ReportTask struct {
	CandidateTask
	ReportPrefix string  `json:"report_prefix"`
	Thresholds   Gates   `json:"thresholds"`
	Outcome      Outcome `json:"outcome"`
}

// CandidateResult is the small summary of a candidate the workflow collects.
type CandidateResult struct {
	CandidateID    string          `json:"candidate_id"`
	Decision       string          `json:"decision"`
	Reason         string          `json:"reason"`
	Scores         map[string]int  `json:"scores"`
	QAScore        *int            `json:"qa_score"`
	Usage          veredicto.Usage `json:"usage"`
	DurationMS     int64           `json:"duration_ms"`
	Claims         int             `json:"claims"`
	SourcedClaims  int             `json:"sourced_claims"`
	DeclaredGaps   int             `json:"declared_gaps"`
	Contradictions int             `json:"contradictions"`
	Outputs        int             `json:"outputs"`
	CitedOutputs   int             `json:"outputs_with_complete_citations"`
	ReportKey      string          `json:"report_key"`
	// ReportSHA256 is the hash of the report.json the Report task wrote:
	// the Map keeps only the decision and it (its output must fit Step
	// Functions' 256 KiB), and the Summary task reads the rest back from
	// that report, checked against it. Empty in the summary.
	ReportSHA256 string `json:"report_sha256,omitempty"`
	// Review: the senior consultant's review of an escalated candidate
	// (null for the others; always present, the workflow selects it).
	Review *Review `json:"review"`
	// Escalation: the package shown to the senior consultant (the
	// review's preview); the summary leaves it to report.json.
	Escalation *Escalation `json:"escalation,omitempty"`
}

// Report is report.json.
type Report struct {
	SearchID    string                     `json:"search_id"`
	CandidateID string                     `json:"candidate_id"`
	Decision    string                     `json:"decision"`
	Reason      string                     `json:"reason"`
	Thresholds  Gates                      `json:"thresholds"`
	Stages      map[string]json.RawMessage `json:"stages"`
	StageOrder  []string                   `json:"stage_order"`
	Escalation  *Escalation                `json:"escalation,omitempty"`
	Review      *Review                    `json:"review,omitempty"`
	Error       *StateError                `json:"error,omitempty"`
	Usage       veredicto.Usage            `json:"usage"`
	LLM         veredicto.ModelInfo        `json:"llm"`
	Baseline    string                     `json:"baseline,omitempty"`
	DurationMS  int64                      `json:"duration_ms"`
	Missing     []string                   `json:"missing_documents"`
	// Trail is how the decision was reached, gate by gate ("Cómo se
	// decidió"): the same decisions the audit record holds.
	Trail []Gate `json:"decision_trail"`
}

// Escalation is the package for the senior consultant (seed §8).
type Escalation struct {
	Reason string `json:"motivo"`
	// MissingInputs are the minimum documents whose absence stopped the
	// evaluation (falta estructural de evidencia), when that is the cause.
	MissingInputs    []string `json:"documentos_faltantes,omitempty"`
	ExecutiveSummary string   `json:"resumen_ejecutivo"`
	Attempts         []string `json:"bloqueos_y_correcciones"`
	ForcedCloseRisks []string `json:"riesgos_si_se_fuerza_cierre"`
}

// OfflineBaselineNotice labels every report made without a model.
const OfflineBaselineNotice = "Línea base offline: análisis léxico determinista, no es un juicio de un modelo de lenguaje. Úsese como referencia, no como decisión."

// Report loads the stages the candidate ran (never calling an agent) and
// writes report.json and report.md under the report prefix.
func (svc *Service) Report(ctx context.Context, t ReportTask) (_ CandidateResult, err error) {
	defer func() { err = boundary(synced(ctx, err)) }()
	if !validDecision(t.Outcome.Decision) {
		return CandidateResult{}, &veredicto.InvalidInputError{File: "state input", Field: "outcome.decision", Problem: fmt.Sprintf("%q is not a protocol decision", t.Outcome.Decision)}
	}
	review, err := reviewOf(t.Outcome)
	if err != nil {
		return CandidateResult{}, err
	}
	if ctx, err = svc.scope(ctx, t.Tenant, t.Execution, t.CandidateID); err != nil {
		return CandidateResult{}, err
	}
	ch, err := svc.newChain(ctx, t.CandidateTask, true)
	if err != nil && !errors.Is(err, errNotRun) {
		return CandidateResult{}, err
	}
	if ch != nil {
		if _, _, err := ch.runQA(ctx, t.Counters.Gem3, t.Counters.QA, true); err != nil && !errors.Is(err, errNotRun) {
			return CandidateResult{}, err
		}
	}
	if err := svc.checkPrefixes(t.Tenant, t.SearchID, t.InputPrefix, t.ReportPrefix); err != nil {
		return CandidateResult{}, err
	}
	s, err := svc.load(ctx, t.Tenant, t.InputPrefix, t.SearchID, t.InputVersion)
	if err != nil {
		return CandidateResult{}, err
	}
	cand, err := s.candidate(t.CandidateID)
	if err != nil {
		return CandidateResult{}, err
	}
	rep := Report{SearchID: t.SearchID, CandidateID: t.CandidateID, Decision: t.Outcome.Decision, Reason: t.Outcome.Reason,
		Thresholds: t.Thresholds, Stages: map[string]json.RawMessage{}, Error: t.Outcome.Error, LLM: svc.Analyst.Info(), Missing: []string{},
		Review: review}
	if rep.LLM.Provider == "offline" {
		rep.Baseline = OfflineBaselineNotice
	}
	for _, d := range cand.All() {
		if d.Missing {
			rep.Missing = append(rep.Missing, d.ID)
		}
	}
	var records []StageRecord
	if ch != nil {
		records = ch.records
	}
	for _, r := range records {
		if r.CandidateID != t.CandidateID { // GEM5: search-level, in the summary
			continue
		}
		if _, dup := rep.Stages[r.Stage]; !dup {
			rep.StageOrder = append(rep.StageOrder, r.Stage)
		}
		rep.Stages[r.Stage] = r.Output
		rep.Usage.Add(r.Usage)
		rep.DurationMS += r.DurationMS
	}
	gapAgent, gapDocs := s.firstGap(t.CandidateID)
	if need := requiredStage(t, gapAgent); need != "" {
		if _, ok := rep.Stages[need]; !ok {
			return CandidateResult{}, &StageMissingError{CandidateID: t.CandidateID, Stage: need, Decision: t.Outcome.Decision}
		}
	}
	view, err := decodeView(rep, s.Index)
	if err != nil {
		return CandidateResult{}, err
	}
	rep.Trail = gates(rep, view, gapAgent, gapDocs)
	if escalated(rep.Decision) {
		rep.Escalation = buildEscalation(rep, view)
	}
	res := summarize(rep, view)
	res.Review, res.Escalation = rep.Review, rep.Escalation
	res.ReportKey = path.Join(t.ReportPrefix, t.CandidateID, "report.json")
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return CandidateResult{}, fmt.Errorf("encode report %s: %w", t.CandidateID, err)
	}
	md := RenderReport(rep, view, s.Docs)
	// Markdown first, JSON last: the JSON is the record that the report is
	// complete, so a crash between the two never leaves a JSON without its
	// Markdown.
	if err := recordOutcome(ctx, rep, t.Outcome); err != nil {
		return CandidateResult{}, err
	}
	// The report says what the candidate's chain records: the chain is
	// durable before the report is written.
	if err := syncRecord(ctx); err != nil {
		return CandidateResult{}, err
	}
	mdKey := path.Join(t.ReportPrefix, t.CandidateID, "report.md")
	if err := svc.Reports.Put(ctx, mdKey, []byte(md), "text/markdown; charset=utf-8"); err != nil {
		return CandidateResult{}, fmt.Errorf("write report.md for %s: %w", t.CandidateID, err)
	}
	if err := recordFile(ctx, mdKey, []byte(md)); err != nil {
		return CandidateResult{}, err
	}
	js = append(js, '\n')
	res.ReportSHA256 = checksum(js)
	if err := svc.Reports.Put(ctx, res.ReportKey, js, "application/json"); err != nil {
		return CandidateResult{}, fmt.Errorf("write report.json for %s: %w", t.CandidateID, err)
	}
	if err := recordFile(ctx, res.ReportKey, js); err != nil {
		return CandidateResult{}, err
	}
	// The summary's row, as resultFromReport computes it from this report.
	row := res
	row.Escalation, row.ReportSHA256 = nil, ""
	svc.rows.put(res.ReportKey, res.ReportSHA256, row)
	return res, nil
}

func validDecision(d string) bool { return slices.Contains(Decisions(), d) }

// Decisions lists every decision a candidate can end with.
func Decisions() []string {
	return []string{DecisionApproved, DecisionDiscarded1, DecisionDiscarded2, DecisionDiscarded3, DecisionEscalated,
		DecisionApprovedByConsultant, DecisionDiscardedByConsultant}
}

// Reasons lists every reason an evaluation ends with.
func Reasons() []string {
	return []string{ReasonGate1, ReasonGate2, ReasonGate3, ReasonQAPassed, ReasonQABlocks, ReasonContradiction,
		ReasonNoEvidence, ReasonAmbiguousGem3, ReasonTechnicalError}
}

// escalated reports whether a decision belongs to a case escalated to the
// senior consultant: still open, or decided by the consultant.
func escalated(d string) bool {
	return d == DecisionEscalated || d == DecisionApprovedByConsultant || d == DecisionDiscardedByConsultant
}

// reviewOf checks that the outcome's decision and review agree (a
// consultant's decision needs the consultant's answer; only an escalated
// candidate has a review) and returns the review as the reports record it.
func reviewOf(o Outcome) (*Review, error) {
	bad := func(problem string) error {
		return &veredicto.InvalidInputError{File: "state input", Field: "outcome.review", Problem: problem}
	}
	r := o.Review
	if r == nil {
		if o.Decision == DecisionApprovedByConsultant || o.Decision == DecisionDiscardedByConsultant {
			return nil, bad(o.Decision + " needs the consultant's review")
		}
		return nil, nil
	}
	out := &Review{ID: r.ID, Status: r.Status}
	if r.Error != nil {
		out.Error = r.Error.Error
	}
	want := map[string]string{ReviewApproved: DecisionApprovedByConsultant, ReviewRejected: DecisionDiscardedByConsultant,
		ReviewPending: DecisionEscalated, ReviewExpired: DecisionEscalated, ReviewUnavailable: DecisionEscalated}[r.Status]
	switch {
	case want == "":
		return nil, bad(fmt.Sprintf("status %q is not a review status", r.Status))
	case want != o.Decision:
		return nil, bad(fmt.Sprintf("a %s review cannot end in %s", r.Status, o.Decision))
	case r.Status == ReviewApproved || r.Status == ReviewRejected:
		a := r.Answer
		if a == nil || a.DecidedBy == "" || a.DecidedAt.IsZero() || a.Approved != (r.Status == ReviewApproved) {
			return nil, bad("a decided review needs the answer: approved, decided_by and decided_at")
		}
		at := a.DecidedAt.UTC()
		out.DecidedBy, out.DecidedAt, out.Comment, out.PreviewSHA256 = a.DecidedBy, &at, a.Comment, a.PreviewSHA256
	}
	out.Note = reviewNote(*out)
	return out, nil
}

// reviewNote says in Spanish what a review's status means.
func reviewNote(r Review) string {
	switch r.Status {
	case ReviewApproved:
		return fmt.Sprintf("Aprobado por el consultor senior %s el %s.", r.DecidedBy, r.DecidedAt.Format("2006-01-02 15:04 MST"))
	case ReviewRejected:
		return fmt.Sprintf("Descartado por el consultor senior %s el %s.", r.DecidedBy, r.DecidedAt.Format("2006-01-02 15:04 MST"))
	case ReviewPending:
		return "Revisión del consultor senior pendiente: el caso sigue escalado; una decisión tomada después se aplica al volver a ejecutar la búsqueda."
	case ReviewExpired:
		return "La revisión del consultor senior expiró sin decisión: el caso sigue escalado."
	}
	return "No se pudo solicitar la revisión del consultor senior: el caso sigue escalado."
}

// reportView is the report's stages decoded for rendering and metrics.
type reportView struct {
	// gem1–gem3 hold the content as last corrected; their issues stay the
	// agents' own.
	gem1   *Contract[Gem1Content]
	gem2   *Contract[Gem2Content]
	gem3   *Contract[Gem3Content]
	audits []namedAudit
	corrs  []Contract[CorrectionContent]
	// gem3s are GEM3's attempts (the re-ask second); gem1Gap and gem2Gap
	// say whether GEM1's and GEM2's findings, as first written, cite no
	// source at all (the gates' structural lack of evidence).
	gem3s            []namedGem3
	gem1Gap, gem2Gap bool
}

type namedAudit struct {
	stage string
	c     Contract[Gem4Content]
	// gap: what this audit judged (GEM1–GEM3 as corrected up to it) cites
	// no source at all somewhere.
	gap bool
}

type namedGem3 struct {
	stage string
	c     Contract[Gem3Content]
	gap   bool
}

// decodeView decodes a report's stages in order; index (the search's
// sources) tells which findings cite none.
func decodeView(rep Report, index map[string]bool) (reportView, error) {
	var v reportView
	noCite := func(content any) bool {
		ids, _ := CheckCitations("", content, index)
		return len(ids) == 0
	}
	for _, st := range rep.StageOrder {
		raw := rep.Stages[st]
		var err error
		switch {
		case st == "gem1":
			v.gem1 = new(Contract[Gem1Content])
			err = json.Unmarshal(raw, v.gem1)
			v.gem1Gap = noCite(v.gem1.Content)
		case st == "gem2":
			v.gem2 = new(Contract[Gem2Content])
			err = json.Unmarshal(raw, v.gem2)
			v.gem2Gap = noCite(v.gem2.Content)
		case st == "gem3" || st == "gem3_reask":
			v.gem3 = new(Contract[Gem3Content])
			err = json.Unmarshal(raw, v.gem3)
			v.gem3s = append(v.gem3s, namedGem3{stage: st, c: *v.gem3, gap: noCite(v.gem3.Content)})
		case st == "gem4" || len(st) > 10 && st[:10] == "gem4_retry":
			var c Contract[Gem4Content]
			err = json.Unmarshal(raw, &c)
			gap := (v.gem1 != nil && noCite(v.gem1.Content)) || (v.gem2 != nil && noCite(v.gem2.Content)) || (v.gem3 != nil && noCite(v.gem3.Content))
			v.audits = append(v.audits, namedAudit{stage: st, c: c, gap: gap})
		default:
			var c Contract[CorrectionContent]
			err = json.Unmarshal(raw, &c)
			v.corrs = append(v.corrs, c)
			// What the next audit judged is the corrected content (scores
			// stay the agents'): the report shows that version.
			if v.gem1 != nil {
				v.gem1.Content = c.Content.Gem1
			}
			if v.gem2 != nil {
				v.gem2.Content = c.Content.Gem2
			}
			if v.gem3 != nil {
				v.gem3.Content = c.Content.Gem3
			}
		}
		if err != nil {
			return v, fmt.Errorf("decode stage %s: %w", st, err)
		}
	}
	return v, nil
}

func buildEscalation(rep Report, v reportView) *Escalation {
	e := &Escalation{Reason: rep.Reason, Attempts: []string{}, ForcedCloseRisks: []string{}}
	summary := fmt.Sprintf("Candidato %s escalado al consultor senior (%s).", rep.CandidateID, labels.Phrase(labels.Reason, rep.Reason))
	for _, g := range rep.Trail {
		if g.Outcome == OutcomeMissingInputs {
			e.MissingInputs = g.Missing
			summary += fmt.Sprintf(" %s no se ejecutó: faltan sus documentos mínimos %s.", agentLabel(strings.TrimPrefix(g.Name, "gate_")), strings.Join(g.Missing, ", "))
			e.ForcedCloseRisks = append(e.ForcedCloseRisks, "Decidir sin "+strings.Join(g.Missing, ", ")+" deja sin evaluar lo que el protocolo exige verificar con esos documentos.")
		}
	}
	if v.gem3 != nil {
		summary += fmt.Sprintf(" Recomendación de GEM3: %s, con puntaje %d/10: %s", labels.Of(labels.Recommendation, v.gem3.Content.Recommendation), scoreOf(v.gem3.Scores), v.gem3.Content.StrategicFit.Text)
	}
	e.ExecutiveSummary = summary
	for i, a := range v.audits {
		c := a.c.Content
		e.Attempts = append(e.Attempts, fmt.Sprintf("%s: QA %d/10, %s; %s, %s, %s, %s",
			labels.Of(labels.Audit, a.stage), scoreOf(a.c.Scores), labels.Of(labels.QADecision, c.Decision),
			labels.Count(len(c.UnsupportedClaims), "afirmación sin sustento", "afirmaciones sin sustento"),
			labels.Count(len(c.Fluff), "frase de relleno", "frases de relleno"),
			labels.Count(len(c.CriticalGaps), "vacío crítico", "vacíos críticos"),
			labels.Count(len(c.Contradictions), "contradicción", "contradicciones")))
		if i < len(v.corrs) {
			e.Attempts = append(e.Attempts, fmt.Sprintf("corrección %d: %s", i+1, labels.Count(len(v.corrs[i].Content.Changes), "cambio", "cambios")))
		}
	}
	if rep.Error != nil {
		e.Attempts = append(e.Attempts, fmt.Sprintf("error técnico (%s)", rep.Error.Error))
	}
	if last := lastAudit(v); last != nil {
		for _, c := range last.Content.Contradictions {
			e.ForcedCloseRisks = append(e.ForcedCloseRisks, "Contradicción sin resolver: "+c.Text)
		}
		for _, c := range last.Content.CriticalGaps {
			e.ForcedCloseRisks = append(e.ForcedCloseRisks, "Vacío crítico: "+c.Text)
		}
	}
	if v.gem3 != nil {
		for _, r := range v.gem3.Content.Risks {
			e.ForcedCloseRisks = append(e.ForcedCloseRisks, "Riesgo: "+r.Text)
		}
	}
	if len(e.ForcedCloseRisks) == 0 {
		e.ForcedCloseRisks = append(e.ForcedCloseRisks, "Cerrar sin evidencia adicional expone la decisión a información no verificada por las fuentes.")
	}
	return e
}

func lastAudit(v reportView) *Contract[Gem4Content] {
	if len(v.audits) == 0 {
		return nil
	}
	return &v.audits[len(v.audits)-1].c
}

// summarize computes the candidate's figures for the summary and the seed
// §7 metrics.
func summarize(rep Report, v reportView) CandidateResult {
	res := CandidateResult{CandidateID: rep.CandidateID, Decision: rep.Decision, Reason: rep.Reason, Scores: map[string]int{},
		Usage: rep.Usage, DurationMS: rep.DurationMS}
	count := func(answer any) {
		st := claimStats(answer)
		res.Claims += st.claims
		res.SourcedClaims += st.sourced
		res.DeclaredGaps += st.gaps
		res.Outputs++
		if st.claims == st.sourced+st.gaps {
			res.CitedOutputs++
		}
	}
	if v.gem1 != nil {
		res.Scores["gem1"] = scoreOf(v.gem1.Scores)
		count(v.gem1.Content)
	}
	if v.gem2 != nil {
		res.Scores["gem2"] = scoreOf(v.gem2.Scores)
		count(v.gem2.Content)
	}
	if v.gem3 != nil {
		res.Scores["gem3"] = scoreOf(v.gem3.Scores)
		count(v.gem3.Content)
	}
	if last := lastAudit(v); last != nil {
		q := scoreOf(last.Scores)
		res.QAScore = &q
		res.Scores["gem4"] = q
		count(last.Content)
	}
	res.Contradictions = countClaims(contradictions(v))
	return res
}

func (v reportView) gem1Issues() []Issue {
	if v.gem1 == nil {
		return nil
	}
	return v.gem1.IssuesFound
}

func (v reportView) gem2Issues() []Issue {
	if v.gem2 == nil {
		return nil
	}
	return v.gem2.IssuesFound
}

func (v reportView) gem3Issues() []Issue {
	if v.gem3 == nil {
		return nil
	}
	return v.gem3.IssuesFound
}

// requiredStage is the stage the outcome's decision rests on: a report is
// never written for a stage that did not run (or whose record cannot be
// read). "" when the outcome needs none (a technical error, or a lack of
// evidence that may have been found at any gate, which needs GEM1).
func requiredStage(t ReportTask, gapAgent string) string {
	switch t.Outcome.Reason {
	case ReasonNoEvidence:
		if gapAgent == AgentGem1 {
			return "" // GEM1 could not run: its minimum documents are missing
		}
		return stageName(AgentGem1, 0)
	case ReasonGate1:
		return stageName(AgentGem1, 0)
	case ReasonGate2:
		return stageName(AgentGem2, 0)
	case ReasonGate3, ReasonAmbiguousGem3:
		return stageName(AgentGem3, t.Counters.Gem3)
	case ReasonQAPassed, ReasonQABlocks, ReasonContradiction:
		return stageName(AgentGem4, t.Counters.QA)
	}
	return ""
}

// StageMissingError is a report that cannot be written because the stage
// its decision rests on is not in the store (never run, or damaged). A
// re-run recomputes the stage.
type StageMissingError struct {
	CandidateID, Stage, Decision string
}

func (e *StageMissingError) Error() string {
	return fmt.Sprintf("report for candidate %q not written: its decision %s rests on stage %s, which is not stored (or is damaged); run the search again to recompute it", e.CandidateID, e.Decision, e.Stage)
}
