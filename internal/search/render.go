package search

import (
	"fmt"
	"path"
	"reflect"
	"slices"
	"strings"

	"github.com/veredicto/veredicto/internal/labels"
)

type stats struct{ claims, sourced, gaps int }

// claimStats counts the claims of a content value: those with sources,
// those that declare a gap, and all of them.
func claimStats(v any) stats {
	var st stats
	var walk func(reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Slice:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i))
			}
		case reflect.Struct:
			if c, ok := v.Interface().(Claim); ok {
				st.claims++
				switch {
				case len(c.Sources) > 0:
					st.sourced++
				case declaresGap(c.Text):
					st.gaps++
				}
				return
			}
			for i := 0; i < v.NumField(); i++ {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		}
	}
	walk(reflect.ValueOf(v))
	return st
}

// cite renders a claim with its sources: "texto [cv.md, references.md]".
func cite(text string, sources []string) string {
	text = oneLine(text)
	if len(sources) == 0 {
		return text
	}
	return fmt.Sprintf("%s [%s]", text, strings.Join(sources, ", "))
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func claimList(b *strings.Builder, title string, cs []Claim) {
	if len(cs) == 0 {
		return
	}
	fmt.Fprintf(b, "\n**%s**\n\n", title)
	for _, c := range cs {
		fmt.Fprintf(b, "- %s\n", cite(c.Text, c.Sources))
	}
}

// nonEmpty is c as a one-claim list, or none when c says nothing.
func nonEmpty(c Claim) []Claim {
	if strings.TrimSpace(c.Text) == "" {
		return nil
	}
	return []Claim{c}
}

func issueList(b *strings.Builder, title string, is []Issue) {
	if len(is) == 0 {
		return
	}
	fmt.Fprintf(b, "\n**%s**\n\n", title)
	for _, i := range is {
		fmt.Fprintf(b, "- (%s) %s\n", labels.Of(labels.Severity, i.Severity), cite(i.Description, i.Sources))
	}
}

// claimGroup is a titled list of claims in a report section.
type claimGroup struct {
	title  string
	claims []Claim
}

func countClaims(gs []claimGroup) int {
	n := 0
	for _, g := range gs {
		n += len(g.claims)
	}
	return n
}

// contradictions lists every contradiction the report holds: GEM2's, the
// references GEM3 marks as contradicting, and the last audit's. The
// report's section and the summary's count both come from here, so they
// cannot disagree.
func contradictions(v reportView) []claimGroup {
	var gs []claimGroup
	if v.gem2 != nil {
		gs = append(gs, claimGroup{"Entre CV, test, caso y entrevista (GEM2)", v.gem2.Content.Contradictions})
	}
	if v.gem3 != nil {
		var refs []Claim
		for _, r := range v.gem3.Content.References {
			if r.Status == "contradice" {
				refs = append(refs, Claim{Text: r.Statement, Sources: r.Sources})
			}
		}
		gs = append(gs, claimGroup{"Referencias que contradicen (GEM3)", refs})
	}
	if last := lastAudit(v); last != nil {
		gs = append(gs, claimGroup{"Detectadas por QA (GEM4)", last.Content.Contradictions})
	}
	return gs
}

// RenderReport writes the consultant's report in Spanish: decision first,
// then scores, evidence with citations, risks, contradictions and gaps.
func RenderReport(rep Report, v reportView, docs SearchDocs) string {
	var b strings.Builder
	title := rep.CandidateID
	if docs.Role != "" {
		title += " — " + docs.Role
	}
	fmt.Fprintf(&b, "# Evaluación de candidato: %s\n\n", title)
	fmt.Fprintf(&b, "Búsqueda `%s`", rep.SearchID)
	if docs.Client != "" {
		fmt.Fprintf(&b, " · cliente %s", docs.Client)
	}
	b.WriteString("\n\n")
	if rep.Baseline != "" {
		fmt.Fprintf(&b, "> ⚠️ %s\n\n", rep.Baseline)
	}
	fmt.Fprintf(&b, "## Decisión: %s — %s\n\n", labels.Of(labels.Decision, rep.Decision), labels.Of(labels.DecisionDetail, rep.Decision))
	fmt.Fprintf(&b, "Motivo: %s.\n", labels.Phrase(labels.Reason, rep.Reason))
	if r := rep.Review; r != nil {
		renderReview(&b, *r)
	}
	if v.gem3 != nil {
		fmt.Fprintf(&b, "\nRecomendación de GEM3: **%s**. %s\n", labels.Of(labels.Recommendation, v.gem3.Content.Recommendation), cite(v.gem3.Content.StrategicFit.Text, v.gem3.Content.StrategicFit.Sources))
	}
	if rep.Error != nil {
		fmt.Fprintf(&b, "\nError técnico: %s (código `%s`)\n", oneLine(rep.Error.Cause), rep.Error.Error)
	}
	if n := len(v.corrs); n > 0 {
		fmt.Fprintf(&b, "\nEl contenido de GEM1–GEM3 que sigue es el corregido tras %s de QA; los puntajes son los originales de cada agente.\n", labels.Count(n, "bloqueo", "bloqueos"))
	}

	b.WriteString("\n## Puntajes\n\n| Etapa | Puntaje | Umbral | Confianza | Resultado |\n|---|---|---|---|---|\n")
	row := func(stage string, s Scores, threshold int, extra string) {
		score := scoreOf(s)
		result := "supera"
		if score < threshold {
			result = "no supera"
		}
		if extra != "" {
			result += " · " + extra
		}
		fmt.Fprintf(&b, "| %s | %d/10 | %d | %.2f | %s |\n", stage, score, threshold, s.Confidence, result)
	}
	if v.gem1 != nil {
		row("GEM1 Trayectoria y logros", v.gem1.Scores, rep.Thresholds.Gem1, "")
	}
	if v.gem2 != nil {
		row("GEM2 Evaluación de negocio", v.gem2.Scores, rep.Thresholds.Gem2, "")
	}
	if v.gem3 != nil {
		row("GEM3 Veredicto y referencias", v.gem3.Scores, rep.Thresholds.Gem3, "recomendación: "+labels.Of(labels.Recommendation, v.gem3.Content.Recommendation))
	}
	for _, a := range v.audits {
		d := labels.Of(labels.QADecision, a.c.Content.Decision)
		if a.c.Content.Decision == QAApproved && (a.c.Content.IrresolvableContradiction || a.c.Content.StructuralEvidenceGap) {
			// The QA gate blocks a flagged audit whatever its decision.
			d += " → " + labels.Of(labels.QADecision, QABlocked) + " por la regla de escalamiento"
		}
		row("GEM4 QA ("+labels.Phrase(labels.Audit, a.stage)+")", a.c.Scores, rep.Thresholds.Gem4, d)
	}

	if v.gem1 != nil {
		b.WriteString("\n## Evidencia\n")
		if len(v.gem1.Content.Achievements) > 0 {
			b.WriteString("\n**Logros calibrados** (problema → acción → resultado → métrica)\n\n")
			for _, a := range v.gem1.Content.Achievements {
				fmt.Fprintf(&b, "- %s → %s → %s → %s\n", oneLine(a.Problem), oneLine(a.Action), oneLine(a.Result), cite(a.Metric, a.Sources))
			}
		}
		claimList(&b, "Trayectoria", v.gem1.Content.Trajectory)
	}
	if v.gem2 != nil {
		claimList(&b, "Capacidad de ejecución", v.gem2.Content.Execution)
		claimList(&b, "Desempeño bajo presión", v.gem2.Content.UnderPressure)
		claimList(&b, "Estilo de trabajo y compromisos", v.gem2.Content.WorkStyle)
		claimList(&b, "Encaje con el desafío crítico", nonEmpty(v.gem2.Content.ChallengeFit))
	}
	if v.gem3 != nil {
		claimList(&b, "Encaje cultural", nonEmpty(v.gem3.Content.CulturalFit))
		sw := v.gem3.Content.SWOT
		if len(sw.Strengths)+len(sw.Opportunities)+len(sw.Weaknesses)+len(sw.Threats) > 0 {
			b.WriteString("\n### FODA (GEM3)\n")
			claimList(&b, "Fortalezas", sw.Strengths)
			claimList(&b, "Oportunidades", sw.Opportunities)
			claimList(&b, "Debilidades", sw.Weaknesses)
			claimList(&b, "Amenazas", sw.Threats)
		}
	}
	if v.gem3 != nil && len(v.gem3.Content.References) > 0 {
		b.WriteString("\n**Referencias 360**\n\n| Afirmación | Estado | Fuentes |\n|---|---|---|\n")
		for _, r := range v.gem3.Content.References {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", strings.ReplaceAll(oneLine(r.Statement), "|", "/"), labels.Of(labels.ReferenceStatus, r.Status), strings.Join(r.Sources, ", "))
		}
	}

	b.WriteString("\n## Riesgos\n")
	n := b.Len()
	if v.gem1 != nil {
		claimList(&b, "Continuidad y coherencia (GEM1)", evidenced(v.gem1.Content.ContinuityRisks))
	}
	if v.gem3 != nil {
		claimList(&b, "Riesgos explícitos (GEM3)", evidenced(v.gem3.Content.Risks))
	}
	if b.Len() == n {
		// Issue 32: a report never leaves risks blank; it says what was read.
		fmt.Fprintf(&b, "\nNingún riesgo con evidencia en las fuentes leídas (%s).\n", strings.Join(readSources(rep, docs), ", "))
	}

	b.WriteString("\n## Contradicciones\n")
	groups := contradictions(v)
	for _, g := range groups {
		claimList(&b, g.title, g.claims)
	}
	if countClaims(groups) == 0 {
		b.WriteString("\nNo se declararon contradicciones.\n")
	}

	b.WriteString("\n## Hallazgos críticos\n")
	n = b.Len()
	issueList(&b, "GEM1", v.gem1Issues())
	issueList(&b, "GEM2", v.gem2Issues())
	issueList(&b, "GEM3", v.gem3Issues())
	if last := lastAudit(v); last != nil {
		issueList(&b, "GEM4", last.IssuesFound)
		issueList(&b, "Bloqueos de GEM4", last.Blockers)
	}
	if b.Len() == n {
		b.WriteString("\nNinguno declarado.\n")
	}

	b.WriteString("\n## Vacíos de evidencia\n")
	n = b.Len()
	if len(rep.Missing) > 0 {
		fmt.Fprintf(&b, "\n**Documentos ausentes** (%s): %s\n", NotInSources, strings.Join(rep.Missing, ", "))
	}
	if v.gem1 != nil {
		claimList(&b, "Vacíos (GEM1)", v.gem1.Content.EvidenceGaps)
	}
	if last := lastAudit(v); last != nil {
		claimList(&b, "Vacíos críticos (GEM4)", last.Content.CriticalGaps)
		claimList(&b, "Afirmaciones sin sustento (GEM4)", last.Content.UnsupportedClaims)
		claimList(&b, "Relleno a eliminar (GEM4)", last.Content.Fluff)
	}
	if b.Len() == n {
		b.WriteString("\nSin vacíos declarados.\n")
	}

	if e := rep.Escalation; e != nil {
		b.WriteString("\n## Paquete de escalamiento\n\n")
		fmt.Fprintf(&b, "**Resumen ejecutivo.** %s\n\n**Bloqueos y correcciones intentadas**\n\n", oneLine(e.ExecutiveSummary))
		for _, a := range e.Attempts {
			fmt.Fprintf(&b, "- %s\n", a)
		}
		if len(e.Attempts) == 0 {
			b.WriteString("- Ninguno: la evaluación se detuvo antes de la auditoría QA.\n")
		}
		b.WriteString("\n**Riesgos si se fuerza el cierre sin evidencia adicional**\n\n")
		for _, r := range e.ForcedCloseRisks {
			fmt.Fprintf(&b, "- %s\n", oneLine(r))
		}
	}

	renderTrail(&b, rep, v)

	fmt.Fprintf(&b, "\n---\nModelo: %s/%s · llamadas %d · tokens %d entrada (%d en caché) / %d salida · costo estimado US$%.4f\n",
		rep.LLM.Provider, rep.LLM.Model, rep.Usage.Calls, rep.Usage.PromptTokens, rep.Usage.CachedTokens, rep.Usage.CompletionTokens, rep.Usage.CostUSD)
	return b.String()
}

// renderReview writes the senior consultant's review: who, when and the
// comment of a decision, or why the case is still open.
func renderReview(b *strings.Builder, r Review) {
	b.WriteString("\n**Revisión del consultor senior.** ")
	b.WriteString(r.Note)
	if r.Comment != "" {
		fmt.Fprintf(b, " Comentario: «%s».", oneLine(r.Comment))
	}
	if r.ID != "" {
		fmt.Fprintf(b, " (confirmación `%s`)", r.ID)
	}
	b.WriteString("\n")
}

// evidenced are the findings that cite a source: a declared gap («No
// informado en fuentes») is not a risk found, and goes with the gaps.
func evidenced(cs []Claim) []Claim {
	var out []Claim
	for _, c := range cs {
		if !declaresGap(c.Text) && len(c.Sources) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// readSources lists the documents the candidate's evaluation read: the
// search's and the candidate's present ones.
func readSources(rep Report, docs SearchDocs) []string {
	var out []string
	for _, d := range []Doc{docs.JD, docs.Kickoff, docs.Company, docs.Culture} {
		if !d.Missing && d.ID != "" {
			out = append(out, d.ID)
		}
	}
	for _, f := range []string{FileCV, FileInterview, FileTests, FileCase, FileReferences} {
		id := path.Join(dirCandidates, rep.CandidateID, f)
		if !slices.Contains(rep.Missing, id) {
			out = append(out, id)
		}
	}
	return out
}
