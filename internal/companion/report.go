package companion

import (
	"fmt"
	"sort"
	"strings"

	"github.com/veredicto/veredicto/internal/labels"
)

// Report renders the context as the Spanish report, in the seed's
// streaming order: culture radar, scores with the SAS table, gaps, killer
// summary, impact bullets, skills matrix, verification + interview intel,
// brand audit. A failed non-negotiable and a drift alert come first.
func Report(c *Context) string {
	var b strings.Builder
	title := "Acompañante de carrera"
	if c.Company != "" {
		title += " — " + c.Company
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	fmt.Fprintf(&b, "Postulación `%s` · modo %s · estado: %s · última fase completada: %d/7\n\n", c.ApplicationID,
		labels.Of(labels.CompanionMode, c.Mode), labels.Of(labels.CompanionStatus, c.Status), c.LastCompletedPhase)
	if c.Analyst.Baseline {
		b.WriteString("> **Línea base offline:** este informe lo produjo el analista determinista sin modelo de lenguaje; las clasificaciones y textos son léxicos, no un juicio de un modelo. Los números los calcula el código igual que siempre.\n\n")
	} else {
		fmt.Fprintf(&b, "Analista: %s (%s).\n\n", c.Analyst.Provider, c.Analyst.Model)
	}
	for _, w := range c.Warnings {
		fmt.Fprintf(&b, "> Aviso: %s\n\n", w)
	}
	if c.ScoringResult != nil {
		if failed := FailedRules(c.ScoringResult.NonNegotiablesCheck); len(failed) > 0 {
			b.WriteString("## ⚠ Innegociables no cumplidos\n\n")
			for _, r := range failed {
				fmt.Fprintf(&b, "- **%s**: la oferta no respeta esta regla tuya", labels.Of(labels.NonNegotiable, r))
				if n := c.ScoringResult.NonNegotiablesNotes[r]; n != "" {
					fmt.Fprintf(&b, " (%s)", n)
				}
				b.WriteString(".\n")
			}
			b.WriteString("\n")
		}
	}
	if d := c.Drift; d != nil && d.Alert {
		fmt.Fprintf(&b, "## ⚠ Alerta de deriva\n\nAl reclasificar, el score final se movió %+.2f puntos (%.2f → %.2f; umbral %g). Revisa la clasificación antes de decidir.\n\n", d.Delta, d.PreviousFinal, d.Final, d.Threshold)
	}
	if c.Pause != nil && c.Status == StatusPaused {
		fmt.Fprintf(&b, "## Pausa anti-impostor\n\n%s\n\n", c.Pause.Preview)
	}

	if r := c.CultureRadar; r != nil {
		b.WriteString("## 1. Radar cultural\n\n")
		list(&b, "Problemas que el rol busca resolver", r.PainPoints)
		fmt.Fprintf(&b, "- **Tecnologías detectadas:** %s (madurez: %s)\n", orDash(strings.Join(r.TechStackDetected, ", ")), labels.Of(labels.TechMaturity, r.TechMaturity))
		fmt.Fprintf(&b, "- **Tamaño de la empresa:** %s\n", labels.Of(labels.CompanySize, r.CompanySizeSignal))
		list(&b, "Señales de cultura", r.CultureSignals)
		list(&b, "Señales de alerta", r.RedFlags)
		b.WriteString("\n")
	}
	if s := c.ScoringResult; s != nil {
		b.WriteString("## 2. Puntajes\n\n")
		fmt.Fprintf(&b, "- **Puntaje de confianza:** %.2f / 100 (obligatorios %.2f · deseables %.2f · base %.2f · MVP +%g)\n", s.Confidence.Final, s.Confidence.ObligatoriosScore, s.Confidence.DeseablesScore, s.Confidence.Base, s.Confidence.MVP.Total)
		if len(s.Confidence.MVP.LinkedStrengths) > 0 {
			fmt.Fprintf(&b, "- **Fortalezas MVP:** %s\n", strings.Join(s.Confidence.MVP.LinkedStrengths, ", "))
		}
		fmt.Fprintf(&b, "- **SAS:** %d / 100\n", s.SAS.Total)
		fmt.Fprintf(&b, "- **Decisión:** %s: %s\n", labels.Of(labels.CompanionDecision, s.DecisionMatrix), decisionReason(s.DecisionReason))
		if c.ClassificationCached {
			b.WriteString("- Clasificación reutilizada de la caché (mismo JD, perfil, prompt y modelo).\n")
		}
		b.WriteString("\n| Dimensión SAS | Puntos | Justificación |\n|---|---|---|\n")
		low := map[string]bool{}
		for _, k := range s.SAS.LowConfidence {
			low[k] = true
		}
		for _, d := range s.SAS.Dimensions.dimensions() {
			name := d.Label
			if low[d.Key] {
				name += " (baja confianza)"
			}
			fmt.Fprintf(&b, "| %s | %d / 20 | %s |\n", name, d.Score.Score, cell(d.Score.Justification))
		}
		fmt.Fprintf(&b, "| **Total** | **%d / 100** | |\n\n", s.SAS.Total)
		for _, n := range s.SAS.Notes {
			fmt.Fprintf(&b, "> %s\n\n", n)
		}
		nonNegotiables(&b, s.NonNegotiablesCheck, s.NonNegotiablesNotes)
		b.WriteString("| Requisito | Tipo | Coincidencia | Puntaje | Justificación |\n|---|---|---|---|---|\n")
		for _, r := range c.ClassifiedRequirements {
			fmt.Fprintf(&b, "| %s | %s (%s) | %s | %.1f | %s |\n", cell(r.Requirement), r.Type, labels.Of(labels.RequirementType, r.Type), labels.Of(labels.RequirementMatch, r.Match), r.Score, cell(r.MatchJustification))
		}
		b.WriteString("\n## 3. Análisis de brechas\n\n")
		if len(s.GapAnalysis) == 0 {
			b.WriteString("Sin brechas: cumples todos los requisitos.\n\n")
		}
		for _, g := range s.GapAnalysis {
			m := "mitigable"
			if !g.IsMitigable {
				m = "no mitigable"
			}
			fmt.Fprintf(&b, "- **%s** (tipo %s, %s, %s): %s\n", g.Requirement, g.Type, labels.Of(labels.GapType, g.GapType), m, g.MitigationStrategy)
		}
		if len(s.GapAnalysis) > 0 {
			b.WriteString("\n")
		}
	}
	if cv := c.CVContent; cv != nil {
		fmt.Fprintf(&b, "## 4. Resumen de presentación\n\n%s\n\n", cv.KillerSummary)
		b.WriteString("## 5. Logros de impacto\n\n")
		for _, id := range experienceOrder(c.Profile, cv.ImpactBullets) {
			fmt.Fprintf(&b, "**%s**\n\n", experienceName(c.Profile, id))
			for _, t := range cv.ImpactBullets[id] {
				fmt.Fprintf(&b, "- %s\n", t)
			}
			b.WriteString("\n")
		}
		b.WriteString("## 6. Matriz de habilidades\n\n| Habilidad | Nivel | Años | Requisitos |\n|---|---|---|---|\n")
		for _, s := range cv.SkillsMatrix {
			fmt.Fprintf(&b, "| %s | %s | %g | %s |\n", cell(s.Skill), labels.Of(labels.SkillLevel, s.Level), s.Years, cell(strings.Join(s.RelevantTo, "; ")))
		}
		b.WriteString("\n")
	}
	if len(c.ApplicationQA) > 0 {
		b.WriteString("## Respuestas del portal (fase 4)\n\n")
		if c.Analyst.Baseline {
			// The answers are text to paste: the baseline's mark goes here,
			// never inside them.
			b.WriteString("_Escritas por la línea base offline, con plantillas fijas: revisa cada una antes de pegarla._\n\n")
		}
		for _, qa := range c.ApplicationQA {
			fmt.Fprintf(&b, "**%s**\n\n%s\n\n", qa.Question, qa.Answer)
		}
	}
	if v := c.VerificationResult; v != nil {
		b.WriteString("## 7. Verificación y preparación de la entrevista\n\n")
		fmt.Fprintf(&b, "- **Integridad factual:** %s\n", passFail(v.Passed))
		nonNegotiables(&b, v.NonNegotiablesCheck, v.NonNegotiablesNotes)
		list(&b, "Afirmaciones sin respaldo", v.Violations)
		list(&b, "Defensa de tu candidatura", v.AdvocacyCheck)
		if ii := v.InterviewIntel; ii != nil {
			list(&b, "Preguntas técnicas probables", ii.TechnicalQuestions)
			list(&b, "Preguntas de cultura probables", ii.CultureQuestions)
		}
		b.WriteString("\n")
	}
	if a := c.BrandAudit; a != nil {
		b.WriteString("## 8. Auditoría de coherencia de marca\n\n")
		for _, it := range []struct {
			l  string
			ok bool
		}{{"Tono", a.ToneMatch}, {"Pilar reforzado", a.PillarReinforced}, {"Ética visible", a.EthosVisible}, {"Balance técnico/negocio", a.TechBusinessBalance}, {"Líneas rojas respetadas", a.RedLinesRespected}, {"Narrativa coherente", a.NarrativeCoherent}} {
			fmt.Fprintf(&b, "- %s: %s\n", it.l, passFail(it.ok))
		}
		fmt.Fprintf(&b, "- **Resultado:** %s\n", passFail(a.OverallPassed))
		list(&b, "Notas", a.Notes)
		b.WriteString("\n")
	}
	if len(c.Learnings) > 0 {
		b.WriteString("## Retrospectiva (fase 7)\n\n")
		for _, l := range c.Learnings {
			g := "personal"
			if l.IsGeneralizable {
				g = "generalizable"
			}
			fmt.Fprintf(&b, "- **[%s]** %s — solución: %s (%s: %s)\n", labels.Of(labels.LearningCategory, l.Category), l.Description, l.Solution, g, l.GeneralizabilityJustification)
		}
		b.WriteString("\n")
	}
	if n := len(c.RefinementHistory); n > 0 {
		fmt.Fprintf(&b, "_Refinamientos aplicados: %d; correcciones del perfil registradas: %d._\n\n", n, len(c.Profile.Corrections))
	}
	if c.Status == StatusStopped {
		b.WriteString("Decidiste detenerte tras la pausa anti-impostor: no se generó contenido del CV.\n")
	}
	return b.String()
}

// decisionReason is the scoring engine's reason in the report's words:
// the engine names its figures and decisions by their codes
// ("confidence", "strategic_only"); the report shows their labels.
func decisionReason(why string) string {
	pairs := []string{"confidence", "confianza"}
	for _, code := range labels.Codes(labels.CompanionDecision) {
		pairs = append(pairs, code, "«"+labels.Of(labels.CompanionDecision, code)+"»")
	}
	return strings.NewReplacer(pairs...).Replace(why)
}

// nonNegotiables lists each rule with its verdict: ✔, ✘, or «sin dato»
// when the JD does not state its fact (never shown as passed), and what
// the JD states or what to ask.
func nonNegotiables(b *strings.Builder, check map[string]*bool, notes map[string]string) {
	if len(check) == 0 {
		return
	}
	rules := make([]string, 0, len(check))
	for r := range check {
		rules = append(rules, r)
	}
	sort.Strings(rules)
	b.WriteString("**Innegociables:**\n\n")
	for _, r := range rules {
		switch p := check[r]; {
		case p == nil:
			fmt.Fprintf(b, "- ○ %s: sin dato", labels.Of(labels.NonNegotiable, r))
			if n := notes[r]; n != "" {
				fmt.Fprintf(b, " — %s", n)
			}
		default:
			mark := "✔"
			if !*p {
				mark = "✘"
			}
			fmt.Fprintf(b, "- %s %s", mark, labels.Of(labels.NonNegotiable, r))
			if n := notes[r]; n != "" {
				fmt.Fprintf(b, ": %s", n)
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

func list(b *strings.Builder, title string, items []string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(b, "- **%s:**\n", title)
	for _, it := range items {
		fmt.Fprintf(b, "  - %s\n", it)
	}
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "—"
	}
	return s
}

func passFail(ok bool) string {
	if ok {
		return "✔ cumple"
	}
	return "✘ no cumple"
}

// cell keeps text inside one Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ").Replace(s)
}

func experienceOrder(p ProfileSnapshot, m map[string][]string) []string {
	var out []string
	for _, w := range p.WorkExperiences {
		if _, ok := m[w.ID]; ok {
			out = append(out, w.ID)
		}
	}
	for _, pr := range p.Projects {
		if _, ok := m[pr.ID]; ok {
			out = append(out, pr.ID)
		}
	}
	return out
}

func experienceName(p ProfileSnapshot, id string) string {
	for _, w := range p.WorkExperiences {
		if w.ID == id {
			return w.Role + " — " + w.Company
		}
	}
	for _, pr := range p.Projects {
		if pr.ID == id {
			return "Proyecto: " + pr.Name
		}
	}
	return id
}
