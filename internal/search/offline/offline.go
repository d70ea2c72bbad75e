// Package offline is the deterministic lexical analyst: it produces the
// executive-search agents' contracts without a network or a model, by
// matching the candidate's sentences to the mandate's requirements and
// priorities, detecting quantified achievements, reading tenure from dates,
// flagging generic phrases and cueing contradictions between the CV and the
// references. Every claim quotes a source sentence and cites its file.
//
// It is a baseline, labelled as such in every report: the same input always
// gives the same contracts, which makes it the reference for tests and for
// runs without an API key, never a substitute for a consultant's judgment.
package offline

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/search"
)

// Model is the offline analyst's model name in reports.
const Model = "lexical-baseline-v1"

// Analyst implements search.Analyst without a model.
type Analyst struct {
	// Year is what "actualidad" in a CV date range means. Zero means the
	// current year.
	Year int
}

// New returns the offline analyst.
func New() *Analyst { return &Analyst{} }

var _ search.Analyst = (*Analyst)(nil)

// Info names the analyst in reports.
func (a *Analyst) Info() veredicto.ModelInfo {
	return veredicto.ModelInfo{Provider: "offline", Model: Model}
}

// year is the current year, as tenures ending "to date" count it: the
// analyst's Year when set, else the step's clock (recorded in the audit
// record, so a replay reads the same year).
func (a *Analyst) year(ctx context.Context) (int, error) {
	if a.Year != 0 {
		return a.Year, nil
	}
	now, err := audit.Now(ctx, "gem1 current year")
	return now.Year(), err
}

// --- helpers shared by the agents

func sentences(d search.Doc) []sentence {
	if d.Missing {
		return nil
	}
	return split(d.ID, d.Text)
}

func concat(parts ...[]sentence) []sentence {
	var out []sentence
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func quote(s sentence) search.Claim {
	return search.Claim{Text: s.text, Sources: []string{s.source}}
}

func gap(what string) search.Claim {
	return search.Claim{Text: search.NotInSources + ": " + what, Sources: []string{}}
}

func quotes(ss []sentence, max int) []search.Claim {
	out := []search.Claim{}
	for _, s := range ss {
		if len(out) == max {
			break
		}
		out = append(out, quote(s))
	}
	return out
}

func orGap(cs []search.Claim, what string) []search.Claim {
	if len(cs) == 0 {
		return []search.Claim{gap(what)}
	}
	return cs
}

func issue(sev, desc string, sources ...string) search.Issue {
	if sources == nil {
		sources = []string{}
	}
	return search.Issue{Severity: sev, Description: desc, Sources: sources}
}

func score(v int) *int { return &v }

func round2(f float64) float64 { return math.Round(f*100) / 100 }

// headed returns the sentences under a heading containing any cue.
func headed(ss []sentence, cues ...string) []sentence {
	var out []sentence
	for _, s := range ss {
		h := fold(s.heading)
		for _, c := range cues {
			if strings.Contains(h, c) {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// mentioning returns the sentences whose words include any cue.
func mentioning(ss []sentence, cues ...string) []sentence {
	var out []sentence
	for _, s := range ss {
		if containsAny(s.text, cues) || containsStem(s.stems, cues) {
			out = append(out, s)
		}
	}
	return out
}

// containsStem matches cues given as stems (prefixes of 5 letters or less).
func containsStem(st []string, cues []string) bool {
	for _, c := range cues {
		if len(c) > 5 || strings.Contains(c, " ") {
			continue
		}
		for _, s := range st {
			if s == c {
				return true
			}
		}
	}
	return false
}

func firstOr(ss []sentence, what string) search.Claim {
	if len(ss) == 0 {
		return gap(what)
	}
	return quote(ss[0])
}

func sectionOr(ss []sentence, headCues []string, wordCues []string) []sentence {
	if h := headed(ss, headCues...); len(h) > 0 {
		return h
	}
	return mentioning(ss, wordCues...)
}

// --- GEM5: mandate analysis

// Gem5 reads the mandate from the JD and kickoff sections and the company
// context. Sections it cannot find are declared, never invented.
func (a *Analyst) Gem5(_ context.Context, in search.Gem5Input) (search.Answer[search.Gem5Content], veredicto.Usage, error) {
	jd, kick, comp := sentences(in.Search.JD), sentences(in.Search.Kickoff), sentences(in.Search.Company)
	brief := concat(kick, jd)
	reqs := headed(jd, "requisit", "perfil", "competenc", "requerimient")
	problem := sectionOr(kick, []string{"problema"}, []string{"problema", "caida", "cayo", "necesita"})
	challenge := sectionOr(brief, []string{"desafio", "reto"}, []string{"desafio", "reto", "critico"})
	successes := sectionOr(brief, []string{"exito", "kpi", "resultados esperados", "meses"}, nil)
	var kpis []search.KPI
	for _, s := range successes {
		k := search.KPI{Description: s.text, KPI: search.NotInSources, Horizon: search.NotInSources, Sources: []string{s.source}}
		if m := quantityRE.FindString(s.text); m != "" {
			k.KPI = strings.TrimSpace(m)
		}
		if m := monthsRE.FindString(s.text); m != "" {
			k.Horizon = m
		}
		kpis = append(kpis, k)
	}
	if len(kpis) == 0 {
		kpis = []search.KPI{{Description: search.NotInSources + ": éxitos esperados a 12–18 meses", KPI: search.NotInSources, Horizon: search.NotInSources, Sources: []string{}}}
	}
	c := search.Gem5Content{
		RealProblem:       firstOr(problem, "problema real del rol"),
		ExpectedSuccesses: kpis,
		NoFits:            orGap(quotes(sectionOr(brief, []string{"no-fit", "no fit", "descart"}, []string{"no buscamos", "no encaja"}), 6), "no-fits del mandato"),
		Stakeholders:      orGap(quotes(sectionOr(kick, []string{"stakeholder", "interlocutor"}, []string{"directorio", "ceo", "stakeholder"}), 6), "stakeholders y tensiones"),
		MarketMap:         orGap(quotes(sectionOr(comp, []string{"mercado", "competen"}, []string{"mercado", "competidor", "competidores", "industria"}), 6), "mapa de mercado"),
		MandateRisks:      orGap(quotes(sectionOr(brief, []string{"riesgo"}, []string{"riesgo", "riesgos"}), 6), "riesgos del mandato"),
		DecisionCriteria:  orGap(quotes(headed(brief, "criterio", "decision"), 6), "criterios de decisión final"),
		KeyChallenge:      firstOr(challenge, "desafío crítico del mandato"),
		Requirements:      orGap(quotes(reqs, 10), "requisitos clave explícitos en jd.md"),
	}
	found := 0
	for _, ok := range []bool{len(problem) > 0, len(successes) > 0, !gapOnly(c.NoFits), !gapOnly(c.Stakeholders), !gapOnly(c.MarketMap),
		!gapOnly(c.MandateRisks), !gapOnly(c.DecisionCriteria), len(challenge) > 0, len(reqs) > 0} {
		if ok {
			found++
		}
	}
	ans := search.Answer[search.Gem5Content]{
		Content:     c,
		Scores:      search.Scores{ScoreDimension: nil, Confidence: round2(float64(found) / 9)},
		IssuesFound: []search.Issue{},
		Blockers:    []search.Issue{},
	}
	if len(reqs) == 0 {
		ans.Blockers = append(ans.Blockers, issue("alta", "jd.md no tiene una sección de requisitos reconocible: la evidencia de los candidatos no puede contrastarse con requisitos explícitos", in.Search.JD.ID))
	}
	if len(challenge) == 0 {
		ans.Blockers = append(ans.Blockers, issue("media", "No informado en fuentes: el desafío crítico del mandato no aparece en el kick-off", in.Search.Kickoff.ID))
	}
	return ans, veredicto.Usage{}, nil
}

func gapOnly(cs []search.Claim) bool {
	return len(cs) == 1 && len(cs[0].Sources) == 0
}

// --- GEM1: trajectory and achievements

type gem1Facts struct {
	covered, total int
	achievements   []search.Achievement
	quantified     int
	shortJobs      int
	jobs           []job
	fluff          []sentence
}

// Gem1 scores the three things seed 000 §2 asks GEM1 to validate
// («coherencia de carrera, evidencia de resultados y calidad de logros»)
// with evidence mandatory (§4 rules 1–3):
//
//	score = ⌊6 × met ÷ total⌋           requirements with evidence (requirementPoints)
//	      + min(quantified facts, 4)     achievements with a figure
//	      − 2 for a pattern of short tenures
//	      − 1 when generic phrases outnumber quantified facts
//
// clamped to 0–10, and 0 without a CV. The first term is proportional to
// the requirements met and reaches 6 only when every one of them has
// evidence, so 10/10 needs evidence for every requirement.
func (a *Analyst) Gem1(ctx context.Context, in search.Gem1Input) (search.Answer[search.Gem1Content], veredicto.Usage, error) {
	year, err := a.year(ctx)
	if err != nil {
		return search.Answer[search.Gem1Content]{}, veredicto.Usage{}, err
	}
	cv, iv := sentences(in.Candidate.CV), sentences(in.Candidate.Interview)
	pool := concat(cv, iv)
	reqs := mandateRequirements(in.Mandate)
	f := gem1Facts{total: len(reqs), jobs: jobs(cv, year)}
	c := search.Gem1Content{Trajectory: []search.Claim{}, Achievements: []search.Achievement{}, ContinuityRisks: []search.Claim{}, EvidenceGaps: []search.Claim{}}

	// Requirement coverage and the quantified achievements that evidence it.
	used := map[string]bool{}
	for _, r := range reqs {
		rc := checkRequirement(r, pool, f.jobs)
		if !rc.met {
			c.EvidenceGaps = append(c.EvidenceGaps, rc.gap(in.Search.JD))
			continue
		}
		f.covered++
		for _, s := range rc.evidence {
			if quantified(s.text) && !tenureRE.MatchString(s.text) && !used[s.text] && len(c.Achievements) < 6 {
				used[s.text] = true
				c.Achievements = append(c.Achievements, achievement(s, "Requisito del mandato: "+r))
			}
		}
	}
	for _, s := range pool {
		if quantified(s.text) && !tenureRE.MatchString(s.text) {
			f.quantified++
			if !used[s.text] && len(c.Achievements) < 6 {
				used[s.text] = true
				c.Achievements = append(c.Achievements, achievement(s, search.NotInSources+": problema de negocio asociado"))
			}
		}
		if len(fluffIn(s.text)) > 0 && !quantified(s.text) {
			f.fluff = append(f.fluff, s)
		}
	}

	// Trajectory and continuity from the dated positions.
	for _, j := range f.jobs {
		years := j.to - j.from
		c.Trajectory = append(c.Trajectory, search.Claim{Text: fmt.Sprintf("%s — %s", j.text, yearsText(years)), Sources: []string{j.source}})
		if years <= 1 {
			f.shortJobs++
		}
	}
	if len(f.jobs) == 0 {
		c.Trajectory = append(c.Trajectory, gap("cargos con fechas en el CV"))
	}
	hopping := len(f.jobs) >= 3 && f.shortJobs*2 >= len(f.jobs)
	if hopping {
		var src []string
		for _, j := range f.jobs {
			if j.to-j.from <= 1 {
				src = appendUnique(src, j.source)
			}
		}
		c.ContinuityRisks = append(c.ContinuityRisks, search.Claim{Text: fmt.Sprintf("%d de %d cargos duraron un año o menos: patrón de permanencias cortas", f.shortJobs, len(f.jobs)), Sources: src})
	}
	for _, g := range gapsBetween(f.jobs) {
		c.ContinuityRisks = append(c.ContinuityRisks, g)
	}
	if in.Candidate.CV.Missing {
		c.EvidenceGaps = append(c.EvidenceGaps, gap("CV del candidato ("+in.Candidate.CV.ID+")"))
	}
	if in.Candidate.Interview.Missing {
		c.EvidenceGaps = append(c.EvidenceGaps, gap("notas de entrevista ("+in.Candidate.Interview.ID+")"))
	}

	s := requirementPoints(f.covered, f.total, 6) + min(f.quantified, 4)
	if hopping {
		s -= 2
	}
	if len(f.fluff) > f.quantified {
		s--
	}
	if in.Candidate.CV.Missing {
		s = 0
	}
	s = clamp(s, 0, 10)
	ans := search.Answer[search.Gem1Content]{
		Content:     c,
		Scores:      search.Scores{ScoreDimension: score(s), Confidence: confidence(in.Candidate.CV, in.Candidate.Interview)},
		IssuesFound: []search.Issue{},
		Blockers:    []search.Issue{},
	}
	if in.Candidate.CV.Missing {
		ans.IssuesFound = append(ans.IssuesFound, issue("critica", search.NotInSources+": sin CV ("+in.Candidate.CV.ID+") no hay trayectoria que evaluar"))
	}
	for _, fl := range f.fluff {
		ans.IssuesFound = append(ans.IssuesFound, issue("media", fmt.Sprintf("Frase genérica sin evidencia («%s»): %s", strings.Join(fluffIn(fl.text), "», «"), fl.text), fl.source))
	}
	if hopping {
		ans.IssuesFound = append(ans.IssuesFound, issue("alta", "Permanencias cortas reiteradas en la trayectoria", c.ContinuityRisks[0].Sources...))
	}
	return ans, veredicto.Usage{}, nil
}

var monthsRE = regexp.MustCompile(`(?i)\b\d{1,2}\s*(?:[–-]\s*\d{1,2}\s*)?meses\b`)

func achievement(s sentence, problem string) search.Achievement {
	metric := strings.TrimSpace(quantityRE.FindString(s.text))
	result := "Cifra declarada en la fuente"
	for _, clause := range clauseRE.Split(s.text, -1) {
		if clause = strings.TrimSpace(clause); clause != "" && strings.Contains(clause, metric) && clause != strings.TrimSpace(s.text) {
			result = strings.TrimRight(clause, ".")
			break
		}
	}
	return search.Achievement{Problem: problem, Action: s.text, Result: result, Metric: metric, Sources: []string{s.source}}
}

// clauseRE splits a sentence into clauses for locating its result.
var clauseRE = regexp.MustCompile(`[,;:]\s+|\s+(?:y|con lo que|logrando|bajando|subiendo|reduciendo|aumentando)\s+`)

func yearsText(n int) string {
	switch n {
	case 0:
		return "menos de un año"
	case 1:
		return "1 año"
	default:
		return fmt.Sprintf("%d años", n)
	}
}

// gapsBetween reports breaks of more than one year between consecutive
// positions (in chronological order).
func gapsBetween(js []job) []search.Claim {
	sorted := append([]job(nil), js...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].from < sorted[j].from })
	var out []search.Claim
	for i := 1; i < len(sorted); i++ {
		if d := sorted[i].from - sorted[i-1].to; d > 1 {
			out = append(out, search.Claim{
				Text:    fmt.Sprintf("Brecha de %d años sin cargo informado entre %d y %d", d, sorted[i-1].to, sorted[i].from),
				Sources: []string{sorted[i].source},
			})
		}
	}
	return out
}

func appendUnique(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

// confidence grows with the documents the agent could read.
func confidence(docs ...search.Doc) float64 {
	present := 0
	for _, d := range docs {
		if !d.Missing {
			present++
		}
	}
	return round2(0.3 + 0.6*float64(present)/float64(len(docs)))
}
