package search

import (
	"fmt"
	"reflect"
	"strings"
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

var decisionText = map[string]string{
	DecisionApproved:   "APROBADO — el candidato supera todos los gates y la auditoría QA",
	DecisionDiscarded1: "DESCARTADO en GEM1 — trayectoria y logros por debajo del umbral",
	DecisionDiscarded2: "DESCARTADO en GEM2 — capacidad de ejecución por debajo del umbral",
	DecisionDiscarded3: "DESCARTADO en GEM3 — veredicto y referencias por debajo del umbral",
	DecisionEscalated:  "ESCALADO A CONSULTOR SENIOR — la evidencia no permite una decisión defendible",
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
	fmt.Fprintf(&b, "## Decisión: %s\n\n", decisionText[rep.Decision])
	fmt.Fprintf(&b, "Motivo: %s.\n", reasonText(rep.Reason))
	if v.gem3 != nil {
		fmt.Fprintf(&b, "\nRecomendación GEM3: **%s**. %s\n", v.gem3.Content.Recommendation, cite(v.gem3.Content.StrategicFit.Text, v.gem3.Content.StrategicFit.Sources))
	}
	if rep.Error != nil {
		fmt.Fprintf(&b, "\nError técnico: `%s` — %s\n", rep.Error.Error, oneLine(rep.Error.Cause))
	}
	if n := len(v.corrs); n > 0 {
		fmt.Fprintf(&b, "\nEl contenido de GEM1–GEM3 que sigue es el corregido tras %d bloqueo(s) de QA; los puntajes son los originales de cada agente.\n", n)
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
		row("GEM2 Assessment a negocio", v.gem2.Scores, rep.Thresholds.Gem2, "")
	}
	if v.gem3 != nil {
		row("GEM3 Veredicto y referencias", v.gem3.Scores, rep.Thresholds.Gem3, "recomienda "+v.gem3.Content.Recommendation)
	}
	for _, a := range v.audits {
		row("GEM4 QA ("+a.stage+")", a.c.Scores, rep.Thresholds.Gem4, a.c.Content.Decision)
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
		claimList(&b, "Encaje con el desafío crítico", []Claim{v.gem2.Content.ChallengeFit})
	}
	if v.gem3 != nil && len(v.gem3.Content.References) > 0 {
		b.WriteString("\n**Referencias 360**\n\n| Afirmación | Estado | Fuentes |\n|---|---|---|\n")
		for _, r := range v.gem3.Content.References {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", strings.ReplaceAll(oneLine(r.Statement), "|", "/"), r.Status, strings.Join(r.Sources, ", "))
		}
	}

	b.WriteString("\n## Riesgos\n")
	n := b.Len()
	if v.gem1 != nil {
		claimList(&b, "Continuidad y coherencia (GEM1)", v.gem1.Content.ContinuityRisks)
	}
	if v.gem3 != nil {
		claimList(&b, "Riesgos explícitos (GEM3)", v.gem3.Content.Risks)
	}
	if b.Len() == n {
		b.WriteString("\nNo se declararon riesgos.\n")
	}

	b.WriteString("\n## Contradicciones\n")
	n = b.Len()
	if v.gem2 != nil {
		claimList(&b, "Entre CV, test, caso y entrevista (GEM2)", v.gem2.Content.Contradictions)
	}
	if last := lastAudit(v); last != nil {
		claimList(&b, "Detectadas por QA (GEM4)", last.Content.Contradictions)
	}
	if b.Len() == n {
		b.WriteString("\nNo se declararon contradicciones.\n")
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
		claimList(&b, "Claims sin sustento (GEM4)", last.Content.UnsupportedClaims)
		claimList(&b, "Fluff a eliminar (GEM4)", last.Content.Fluff)
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
		b.WriteString("\n**Riesgos si se fuerza el cierre sin evidencia adicional**\n\n")
		for _, r := range e.ForcedCloseRisks {
			fmt.Fprintf(&b, "- %s\n", oneLine(r))
		}
	}

	fmt.Fprintf(&b, "\n---\nModelo: %s/%s · llamadas %d · tokens %d entrada (%d en caché) / %d salida · costo estimado US$%.4f\n",
		rep.LLM.Provider, rep.LLM.Model, rep.Usage.Calls, rep.Usage.PromptTokens, rep.Usage.CachedTokens, rep.Usage.CompletionTokens, rep.Usage.CostUSD)
	return b.String()
}
