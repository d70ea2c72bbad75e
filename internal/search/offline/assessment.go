package offline

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/search"
)

// Evaluator cues in case notes (folded words and phrases).
var (
	positiveCues = []string{"solido", "solida", "claro", "clara", "estructurado", "estructurada", "cuantifico", "cuantifica",
		"priorizo", "prioriza", "destacado", "destacada", "excelente", "riguroso", "rigurosa", "acertado", "acertada",
		"bien fundamentado", "bien fundamentada", "concreto", "concreta", "consistente"}
	negativeCues = []string{"no logro", "no alcanzo", "no llego", "insuficiente", "debil", "errores", "error", "incompleto",
		"incompleta", "superficial", "confuso", "confusa", "no abordo", "no presento", "no considero", "no cuantifico",
		"sin conclusion", "imprecis", "vago", "vaga"}
	pressureCues = []string{"presion", "crisis", "urgencia", "urgente", "estres", "contingencia", "contra el tiempo", "apremio", "tension"}
	styleCues    = []string{"prioriza", "priorizo", "priorizar", "tradeoff", "trade", "equilibrio", "decide", "decidio", "delega",
		"delego", "estilo", "consenso", "directo", "directa", "colaborativo", "colaborativa"}
	// contradictionCues mark a referee or evaluator correcting a claim.
	contradictionCues = []string{"en realidad", "no es cierto", "no lidero", "no fue", "exagera", "exagero", "contradice",
		"no coincide", "no participo", "no tenia", "no tuvo", "desmiente", "falso", "no corresponde"}
	confirmCues = []string{"confirma", "confirmo", "efectivamente", "lidero", "recomiendo", "recomendaria", "destaco",
		"sin duda", "coincide", "correcto", "cumplio", "logro"}
)

func cueCount(ss []sentence, cues []string) (n int, hits []sentence) {
	for _, s := range ss {
		if containsAny(s.text, cues) {
			n++
			hits = append(hits, s)
		}
	}
	return n, hits
}

// Gem2 weighs the available assessment evidence: test results (40%), the
// evaluator's case notes (40%) and how much of it addresses the mandate's
// critical challenge (20%). Components without a document are left out and
// the weights renormalised. With neither tests nor case the assessment
// cannot be scored: it scores 0 with no confidence and declares the gap
// (the supervisor does not send such a candidate to GEM2: tests and case
// are its minimum documents). No agent's score is ever carried into
// another's.
func (a *Analyst) Gem2(_ context.Context, in search.Gem2Input) (search.Answer[search.Gem2Content], veredicto.Usage, error) {
	cv, iv := sentences(in.Candidate.CV), sentences(in.Candidate.Interview)
	tests, cs := sentences(in.Candidate.Tests), sentences(in.Candidate.Case)
	assess := concat(tests, cs)
	all := concat(assess, iv)

	results := testScores(tests)
	pos, posHits := cueCount(cs, positiveCues)
	neg, negHits := cueCount(cs, negativeCues)
	challenge := stems(in.Mandate.KeyChallenge)
	fit := bestMatches(challenge, all, minOverlap(challenge), 3)

	var sum, weight float64
	if len(results) > 0 {
		t := 0
		for _, r := range results {
			t += r.score
		}
		sum += 0.4 * float64(t) / float64(len(results)) / 10
		weight += 0.4
	}
	if len(cs) > 0 {
		sum += 0.4 * float64(clamp(6+pos-2*neg, 0, 10))
		weight += 0.4
	}
	noAssessment := weight == 0
	if !noAssessment {
		fitScore := 3
		switch {
		case len(fit) >= 2:
			fitScore = 8
		case len(fit) == 1:
			fitScore = 6
		}
		sum += 0.2 * float64(fitScore)
		weight += 0.2
	}
	s := 0
	if !noAssessment {
		s = clamp(int(math.Round(sum/weight)), 0, 10)
	}

	exec := quotes(posHits, 4)
	for _, r := range results {
		if len(exec) < 6 {
			exec = append(exec, quote(r.sentence))
		}
	}
	c := search.Gem2Content{
		Execution:      orGap(exec, "evidencia de capacidad de ejecución (tests o caso)"),
		UnderPressure:  orGap(quotes(mentioning(all, pressureCues...), 3), "desempeño bajo presión"),
		WorkStyle:      orGap(quotes(mentioning(all, styleCues...), 3), "estilo de trabajo y compromisos"),
		ChallengeFit:   gap("evidencia frente al desafío crítico del mandato"),
		Contradictions: contradictions(cv, iv, assess, "El CV"),
	}
	if len(fit) > 0 {
		c.ChallengeFit = quote(fit[0].sentence)
	}
	ans := search.Answer[search.Gem2Content]{
		Content:     c,
		Scores:      search.Scores{ScoreDimension: score(s), Confidence: confidence(in.Candidate.Tests, in.Candidate.Case, in.Candidate.Interview)},
		IssuesFound: []search.Issue{},
		Blockers:    []search.Issue{},
	}
	for _, n := range negHits {
		ans.IssuesFound = append(ans.IssuesFound, issue("alta", "Observación negativa del evaluador del caso: "+n.text, n.source))
	}
	if noAssessment {
		ans.IssuesFound = append(ans.IssuesFound, issue("critica",
			fmt.Sprintf("No informado en fuentes: sin tests (%s) ni caso (%s) no hay evaluación de negocio que puntuar", in.Candidate.Tests.ID, in.Candidate.Case.ID)))
	} else {
		for _, d := range []search.Doc{in.Candidate.Tests, in.Candidate.Case} {
			if d.Missing {
				ans.IssuesFound = append(ans.IssuesFound, issue("media", "No informado en fuentes: "+d.ID))
			}
		}
	}
	return ans, veredicto.Usage{}, nil
}

// contradictions cues conflicts between the CV and what else the candidate
// or the evaluators said: an interview sentence about the same fact (at
// least three shared stems) with different figures, or any sentence that
// corrects a CV fact with a cue ("en realidad", "no es cierto"…). Tests and
// case notes are not compared by figures: they measure other things.
func contradictions(cv, interview, assess []sentence, cvName string) []search.Claim {
	out := []search.Claim{}
	check := func(o sentence, numeric bool) {
		for _, c := range cv {
			k := overlap(c.stems, o.stems)
			if k < 2 {
				continue
			}
			cn, on := numbersIn(c.text), numbersIn(o.text)
			byNumbers := numeric && k >= 3 && quantified(c.text) && len(on) > 0 && len(cn) > 0 && !sharesAny(cn, on)
			if !byNumbers && !containsAny(o.text, contradictionCues) {
				continue
			}
			out = append(out, search.Claim{
				Text:    fmt.Sprintf("%s afirma «%s»; %s dice «%s»", cvName, c.text, o.source, o.text),
				Sources: []string{c.source, o.source},
			})
			return
		}
	}
	for _, o := range interview {
		check(o, true)
	}
	for _, o := range assess {
		check(o, false)
	}
	return out
}

func sharesAny(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// --- GEM3: verdict and 360 references

// Gem3 builds the reference matrix (a reference sentence contradicts the CV
// when it uses a correction cue or gives a different figure for the same
// fact, confirms it when it restates a CV fact or uses a confirming cue)
// and scores GEM3's own findings (seed 000 §2 GEM3: «encaje
// estratégico/cultural», «matriz de referencias»), never the upstream
// scores, which have their own gates:
//
//	score = ⌊5 × met ÷ total⌋                      strategic fit: requirements GEM1 found evidence for (requirementPoints)
//	      + round(4 × clamp(6 + confirmations − 3 × contradictions, 0, 10) ÷ 10)   references
//	      + 1 when the interview or references echo the client's culture
//
// clamped to 0–10. The first term is proportional to the requirements met
// and reaches 5 only when every one of them has evidence, so 10/10 needs
// evidence for every requirement. Without references nothing is verified:
// only the culture point remains. The recommendation is SI exactly when the
// score reaches the gate.
func (a *Analyst) Gem3(_ context.Context, in search.Gem3Input) (search.Answer[search.Gem3Content], veredicto.Usage, error) {
	cv, iv := sentences(in.Candidate.CV), sentences(in.Candidate.Interview)
	refs := sentences(in.Candidate.References)

	var matrix []search.ReferenceCheck
	confirms, contradicts := 0, 0
	var contraClaims, confirmClaims []search.Claim
	for _, r := range refs {
		status, cvSource := referenceStatus(r, cv)
		if status == "" {
			continue
		}
		src := append([]string{r.source}, cvSource...)
		matrix = append(matrix, search.ReferenceCheck{Statement: r.text, Status: status, Sources: src})
		if status == "contradice" {
			contradicts++
			contraClaims = append(contraClaims, search.Claim{Text: "Referencia contradice el CV: " + r.text, Sources: src})
		} else {
			confirms++
			confirmClaims = append(confirmClaims, search.Claim{Text: "Referencia confirma: " + r.text, Sources: src})
		}
	}
	if matrix == nil {
		matrix = []search.ReferenceCheck{}
	}

	reqs := mandateRequirements(in.Mandate)
	met := len(reqs) - unmetRequirements(in.Gem1.Content, reqs)
	cultureStems := stems(in.Search.Culture.Text)
	cultureHits := bestMatches(cultureStems, concat(iv, refs), 2, 2)
	var s float64
	if len(refs) > 0 {
		s = float64(requirementPoints(met, len(reqs), 5)) + math.Round(0.4*float64(clamp(6+confirms-3*contradicts, 0, 10)))
	} else {
		// No references: nothing to verify (the supervisor does not send
		// such a candidate: references are GEM3's minimum document).
		s = 0
	}
	if len(cultureHits) > 0 {
		s++
	}
	sc := clamp(int(math.Round(s)), 0, 10)
	gate := in.Gate
	if gate == 0 {
		gate = search.DefaultGates.Gem3
	}
	rec := search.RecommendationNo
	if sc >= gate {
		rec = search.RecommendationYes
	}

	strengths := []search.Claim{}
	for _, ach := range in.Gem1.Content.Achievements {
		if len(strengths) == 3 {
			break
		}
		if len(ach.Sources) > 0 {
			strengths = append(strengths, search.Claim{Text: ach.Action, Sources: ach.Sources})
		}
	}
	strengths = append(strengths, confirmClaims[:min(2, len(confirmClaims))]...)
	weaknesses := append([]search.Claim{}, sourced(in.Gem1.Content.ContinuityRisks)...)
	weaknesses = append(weaknesses, sourced(in.Gem2.Content.Contradictions)...)
	risks := append([]search.Claim{}, contraClaims...)
	risks = append(risks, sourced(in.Gem1.Content.ContinuityRisks)...)
	opps := []search.Claim{}
	for _, succ := range in.Mandate.Successes {
		st := stems(succ)
		for _, m := range bestMatches(st, concat(cv, iv), minOverlap(st), len(cv)+len(iv)) {
			if supports(succ, m.text) {
				opps = append(opps, search.Claim{Text: "Éxito esperado del mandato: " + succ + ". Evidencia relacionada: " + m.text, Sources: []string{m.source}})
				break
			}
		}
	}

	strategic := strategicFit(met, reqs, in.Search.JD, in.Gem1.Content, in.Candidate.CV, in.Candidate.Interview)
	cultural := gap("evidencia sobre encaje con la cultura del cliente")
	if len(cultureHits) > 0 {
		cultural = search.Claim{Text: "Coincide con la cultura del cliente: " + cultureHits[0].text, Sources: []string{cultureHits[0].source, in.Search.Culture.ID}}
	}

	c := search.Gem3Content{
		StrategicFit: strategic,
		CulturalFit:  cultural,
		SWOT: search.SWOT{
			Strengths:     orGap(strengths, "fortalezas con evidencia"),
			Opportunities: orGap(opps, "oportunidades ligadas a los éxitos esperados del mandato"),
			Weaknesses:    orGap(weaknesses, "debilidades con evidencia"),
			Threats:       orGap(contraClaims, "amenazas con evidencia"),
		},
		Risks:          orGap(risks, "riesgos con evidencia"),
		References:     matrix,
		Recommendation: rec,
	}
	ans := search.Answer[search.Gem3Content]{
		Content:     c,
		Scores:      search.Scores{ScoreDimension: score(sc), Confidence: confidence(in.Candidate.References, in.Search.Culture, in.Candidate.Interview)},
		IssuesFound: []search.Issue{},
		Blockers:    []search.Issue{},
	}
	if in.Candidate.References.Missing {
		ans.IssuesFound = append(ans.IssuesFound, issue("alta", "No informado en fuentes: sin referencias ("+in.Candidate.References.ID+") no hay validación 360"))
	}
	if contradicts > 0 {
		ans.IssuesFound = append(ans.IssuesFound, issue("critica", fmt.Sprintf("%d afirmaciones de referencias contradicen el CV", contradicts), presentIDs(in.Candidate.References, in.Candidate.CV)...))
	}
	return ans, veredicto.Usage{}, nil
}

// strategicFit states how many of the mandate's requirements GEM1 found
// evidence for, «4 de 6 requisitos clave con evidencia», and names those
// without; it counts requirements, not the achievements that evidence
// them (several may evidence one).
func strategicFit(met int, reqs []string, jd search.Doc, g1 search.Gem1Content, docs ...search.Doc) search.Claim {
	if len(reqs) == 0 {
		return gap("requisitos clave del mandato con los que contrastar la evidencia")
	}
	noun := "requisitos clave"
	if len(reqs) == 1 {
		noun = "requisito clave"
	}
	if met == 0 {
		return gap(fmt.Sprintf("evidencia para los requisitos clave del mandato (0 de %d %s)", len(reqs), noun))
	}
	c := search.Claim{Text: fmt.Sprintf("%d de %d %s con evidencia", met, len(reqs), noun), Sources: presentIDs(docs...)}
	var missing []string
	quotable := !jd.Missing
	for _, r := range reqs {
		if unmetRequirements(g1, []string{r}) == 1 {
			missing = append(missing, "«"+r+"»")
			quotable = quotable && containsWords(jd.Text, r)
		}
	}
	if len(missing) > 0 && quotable {
		c.Text += "; sin evidencia: " + strings.Join(missing, ", ")
		c.Sources = append([]string{jd.ID}, c.Sources...)
	}
	return c
}

// sourced keeps the claims that cite a source (declared gaps are not
// evidence of a weakness).
func sourced(cs []search.Claim) []search.Claim {
	var out []search.Claim
	for _, c := range cs {
		if len(c.Sources) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// referenceStatus classifies one reference statement against the CV: a
// correction cue contradicts; restating a CV fact (two or more shared stems)
// with a figure of the CV confirms; the same fact (three or more shared
// stems) with only different figures contradicts; a confirming cue
// confirms. It returns "" for statements that are not comparable, and the
// CV source the statement is about.
func referenceStatus(r sentence, cv []sentence) (string, []string) {
	ms := bestMatches(r.stems, cv, 2, len(cv))
	var cvSource []string
	if len(ms) > 0 {
		cvSource = []string{ms[0].source}
	}
	if containsAny(r.text, contradictionCues) {
		return "contradice", cvSource
	}
	rn := numbersIn(r.text)
	for _, m := range ms {
		if sharesAny(rn, numbersIn(m.text)) {
			return "confirma", []string{m.source}
		}
	}
	if len(ms) > 0 && ms[0].score >= 3 && len(rn) > 0 && len(numbersIn(ms[0].text)) > 0 {
		return "contradice", cvSource
	}
	if len(ms) > 0 || containsAny(r.text, confirmCues) {
		return "confirma", cvSource
	}
	return "", nil
}
