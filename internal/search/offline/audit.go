package offline

import (
	"context"
	"fmt"
	"strings"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/search"
)

// claimRef points at one claim-like text of GEM1–GEM3 and its sources.
type claimRef struct {
	text    *string
	sources []string
}

// claimsOf lists every claim text of the audited outputs, in a fixed order.
func claimsOf(g1 *search.Gem1Content, g2 *search.Gem2Content, g3 *search.Gem3Content) []claimRef {
	var out []claimRef
	add := func(cs []search.Claim) {
		for i := range cs {
			out = append(out, claimRef{&cs[i].Text, cs[i].Sources})
		}
	}
	add(g1.Trajectory)
	for i := range g1.Achievements {
		a := &g1.Achievements[i]
		out = append(out, claimRef{&a.Action, a.Sources}, claimRef{&a.Result, a.Sources})
	}
	add(g1.ContinuityRisks)
	add(g1.EvidenceGaps)
	add(g2.Execution)
	add(g2.UnderPressure)
	add(g2.WorkStyle)
	out = append(out, claimRef{&g2.ChallengeFit.Text, g2.ChallengeFit.Sources})
	add(g2.Contradictions)
	out = append(out, claimRef{&g3.StrategicFit.Text, g3.StrategicFit.Sources}, claimRef{&g3.CulturalFit.Text, g3.CulturalFit.Sources})
	add(g3.SWOT.Strengths)
	add(g3.SWOT.Opportunities)
	add(g3.SWOT.Weaknesses)
	add(g3.SWOT.Threats)
	add(g3.Risks)
	return out
}

// Gem4 audits GEM1–GEM3: generic phrases kept in claims (2 points each, up
// to 4), claims without support (1 each, up to 3), missing candidate
// documents (1 each, up to 3) and a structural lack of evidence (2) come
// off 10. It blocks below the gate, on a structural gap and on an
// irresolvable contradiction (two or more reference statements against the
// CV), and flags the last two for escalation.
func (a *Analyst) Gem4(_ context.Context, in search.Gem4Input) (search.Answer[search.Gem4Content], veredicto.Usage, error) {
	g1, g2, g3 := in.Gem1.Content, in.Gem2.Content, in.Gem3.Content
	c := search.Gem4Content{UnsupportedClaims: []search.Claim{}, Fluff: []search.Claim{}, CriticalGaps: []search.Claim{}, Contradictions: []search.Claim{}}

	for _, cr := range claimsOf(&g1, &g2, &g3) {
		text := *cr.text
		if f := fluffIn(text); len(f) > 0 {
			c.Fluff = append(c.Fluff, search.Claim{Text: fmt.Sprintf("«%s» en: %s", strings.Join(f, "», «"), text), Sources: cr.sources})
		}
		if len(cr.sources) == 0 && strings.HasPrefix(strings.TrimSpace(text), search.UnvalidatedGuess) {
			c.UnsupportedClaims = append(c.UnsupportedClaims, search.Claim{Text: text, Sources: []string{}})
		}
	}
	c.Fluff = dedupe(c.Fluff)

	docs := in.Candidate.All()
	missing := 0
	for _, d := range docs {
		if d.Missing {
			missing++
			c.CriticalGaps = append(c.CriticalGaps, gap(d.ID))
		}
	}
	contra := 0
	c.Contradictions = append(c.Contradictions, sourced(g2.Contradictions)...)
	for _, r := range g3.References {
		if r.Status == "contradice" {
			contra++
			c.Contradictions = append(c.Contradictions, search.Claim{Text: "Referencia contradice el CV: " + r.Statement, Sources: r.Sources})
		}
	}
	noAssessment := in.Candidate.Tests.Missing && in.Candidate.Case.Missing
	c.StructuralEvidenceGap = in.Candidate.CV.Missing || (in.Candidate.References.Missing && noAssessment)
	c.IrresolvableContradiction = contra >= 2

	s := 10 - min(2*len(c.Fluff), 4) - min(len(c.UnsupportedClaims), 3) - min(missing, 3)
	if c.StructuralEvidenceGap {
		s -= 2
	}
	s = clamp(s, 0, 10)
	gate := in.Gate
	if gate == 0 {
		gate = search.DefaultGates.Gem4
	}
	c.Decision = search.QAApproved
	if s < gate || c.StructuralEvidenceGap || c.IrresolvableContradiction {
		c.Decision = search.QABlocked
	}
	ans := search.Answer[search.Gem4Content]{
		Content:     c,
		Scores:      search.Scores{ScoreDimension: score(s), Confidence: confidence(docs...)},
		IssuesFound: []search.Issue{},
		Blockers:    []search.Issue{},
	}
	if c.StructuralEvidenceGap {
		ans.IssuesFound = append(ans.IssuesFound, issue("critica", search.NotInSources+": falta estructural de evidencia; las fuentes disponibles no sostienen una recomendación final", presentIDs(docs...)...))
	}
	if c.IrresolvableContradiction {
		ans.IssuesFound = append(ans.IssuesFound, issue("critica", fmt.Sprintf("Contradicción crítica entre fuentes: %d afirmaciones de referencias contradicen el CV", contra), presentIDs(in.Candidate.References, in.Candidate.CV)...))
	}
	if len(c.Fluff) > 0 {
		ans.IssuesFound = append(ans.IssuesFound, issue("alta", fmt.Sprintf("%d afirmaciones conservan lenguaje genérico sin evidencia", len(c.Fluff)), fluffSources(c.Fluff)...))
	}
	return ans, veredicto.Usage{}, nil
}

func dedupe(cs []search.Claim) []search.Claim {
	out := cs[:0]
	seen := map[string]bool{}
	for _, c := range cs {
		if !seen[c.Text] {
			seen[c.Text] = true
			out = append(out, c)
		}
	}
	return out
}

// Correct applies the audit: generic phrases are cut from every claim
// (a claim left with no facts is removed), unsupported claims are declared
// as unvalidated hypotheses, and each change is listed. Scores are not
// touched: the gates stay where the agents put them.
func (a *Analyst) Correct(_ context.Context, in search.CorrectionInput) (search.Answer[search.CorrectionContent], veredicto.Usage, error) {
	g1 := cloneGem1(in.Gem1.Content)
	g2 := cloneGem2(in.Gem2.Content)
	g3 := cloneGem3(in.Gem3.Content)
	changes := []search.Claim{}
	for _, cr := range claimsOf(&g1, &g2, &g3) {
		text := *cr.text
		if len(fluffIn(text)) > 0 {
			fixed := removeFluff(text)
			if fixed == "" {
				fixed = search.NotInSources + ": la afirmación original era solo lenguaje genérico"
			}
			*cr.text = fixed
			changes = append(changes, search.Claim{Text: fmt.Sprintf("Se eliminó lenguaje genérico: «%s» → «%s»", text, fixed), Sources: cr.sources})
		}
	}
	for _, u := range in.Audit.Content.UnsupportedClaims {
		changes = append(changes, search.Claim{Text: search.UnvalidatedGuess + ": se mantiene declarada como no validada: " + u.Text, Sources: []string{}})
	}
	if len(changes) == 0 {
		changes = append(changes, search.Claim{Text: search.NotInSources + ": el análisis léxico no encontró nada corregible; los bloqueos restantes requieren evidencia adicional", Sources: []string{}})
	}
	return search.Answer[search.CorrectionContent]{
		Content:     search.CorrectionContent{Gem1: g1, Gem2: g2, Gem3: g3, Changes: changes},
		Scores:      search.Scores{ScoreDimension: in.Audit.Scores.ScoreDimension, Confidence: in.Audit.Scores.Confidence},
		IssuesFound: []search.Issue{},
		Blockers:    []search.Issue{},
	}, veredicto.Usage{}, nil
}

func cloneClaims(cs []search.Claim) []search.Claim {
	out := make([]search.Claim, len(cs))
	copy(out, cs)
	return out
}

func cloneGem1(c search.Gem1Content) search.Gem1Content {
	c.Trajectory = cloneClaims(c.Trajectory)
	c.Achievements = append([]search.Achievement{}, c.Achievements...)
	c.ContinuityRisks = cloneClaims(c.ContinuityRisks)
	c.EvidenceGaps = cloneClaims(c.EvidenceGaps)
	return c
}

func cloneGem2(c search.Gem2Content) search.Gem2Content {
	c.Execution = cloneClaims(c.Execution)
	c.UnderPressure = cloneClaims(c.UnderPressure)
	c.WorkStyle = cloneClaims(c.WorkStyle)
	c.Contradictions = cloneClaims(c.Contradictions)
	return c
}

func cloneGem3(c search.Gem3Content) search.Gem3Content {
	c.SWOT.Strengths = cloneClaims(c.SWOT.Strengths)
	c.SWOT.Opportunities = cloneClaims(c.SWOT.Opportunities)
	c.SWOT.Weaknesses = cloneClaims(c.SWOT.Weaknesses)
	c.SWOT.Threats = cloneClaims(c.SWOT.Threats)
	c.Risks = cloneClaims(c.Risks)
	c.References = append([]search.ReferenceCheck{}, c.References...)
	return c
}

// presentIDs lists the ids of the documents that exist.
func presentIDs(docs ...search.Doc) []string {
	out := []string{}
	for _, d := range docs {
		if !d.Missing {
			out = appendUnique(out, d.ID)
		}
	}
	return out
}

func fluffSources(cs []search.Claim) []string {
	out := []string{}
	for _, c := range cs {
		for _, s := range c.Sources {
			out = appendUnique(out, s)
		}
	}
	return out
}
