package search

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/veredicto/veredicto/internal/labels"
)

// renderTrail ends a report with how its decision was reached ("Cómo se
// decidió"): each gate with its score, threshold and outcome and the
// sources behind the score, the QA attempts and corrections, what
// triggered an escalation, the person's decision with who and when, and
// the model and prompt versions that answered.
func renderTrail(b *strings.Builder, rep Report, v reportView) {
	b.WriteString("\n## Cómo se decidió\n\n")
	corr := 0
	for i, g := range rep.Trail {
		fmt.Fprintf(b, "%d. **%s**", i+1, labels.Of(labels.Gate, g.Name))
		switch {
		case g.Name == "gate_qa":
			fmt.Fprintf(b, " (%s)", strings.ToLower(labels.Of(labels.Audit, g.Stage)))
		case strings.HasSuffix(g.Stage, "_reask"):
			b.WriteString(" (nueva consulta)")
		}
		b.WriteString(": ")
		var parts []string
		if g.Score != nil && g.Threshold != nil {
			parts = append(parts, fmt.Sprintf("puntaje %d/10, umbral %d", *g.Score, *g.Threshold))
		}
		if g.Recommendation != "" {
			parts = append(parts, "recomienda «"+labels.Of(labels.Recommendation, g.Recommendation)+"»")
		}
		if g.Decision != "" {
			parts = append(parts, "auditoría "+labels.Of(labels.QADecision, g.Decision))
		}
		if len(parts) > 0 {
			b.WriteString(strings.Join(parts, ", ") + " → ")
		}
		b.WriteString(labels.Of(labels.GateOutcome, g.Outcome))
		if g.State != "" {
			fmt.Fprintf(b, " (estado: %s)", labels.Of(labels.Decision, g.State))
		}
		if g.Detail != "" {
			fmt.Fprintf(b, "; %s", g.Detail)
		}
		b.WriteString(".")
		if len(g.Missing) > 0 {
			fmt.Fprintf(b, " Documentos faltantes: %s.", strings.Join(g.Missing, ", "))
		}
		if len(g.Evidence) > 0 {
			fmt.Fprintf(b, " Evidencia: %s.", strings.Join(g.Evidence, ", "))
		} else if g.Score != nil && g.Name != "gate_qa" {
			b.WriteString(" Evidencia: ninguna fuente citada.")
		}
		b.WriteString("\n")
		if g.Name == "gate_qa" && g.State != "" && corr < len(v.corrs) {
			fmt.Fprintf(b, "   - Corrección %d: %d cambio(s) al contenido de GEM1–GEM3; los puntajes siguen siendo los de cada agente.\n", corr+1, len(v.corrs[corr].Content.Changes))
			corr++
		}
	}
	if len(rep.Trail) == 0 {
		b.WriteString("Ninguna etapa llegó a decidir (ver el error técnico).\n")
	}
	fmt.Fprintf(b, "\n- **Desenlace:** %s — %s.\n", labels.Of(labels.Decision, rep.Decision), labels.Of(labels.Reason, rep.Reason))
	if r := rep.Review; r != nil {
		fmt.Fprintf(b, "- **Decisión humana:** %s", labels.Of(labels.ConfirmationStatus, r.Status))
		if r.DecidedBy != "" {
			fmt.Fprintf(b, " por %s", r.DecidedBy)
		}
		if r.DecidedAt != nil {
			fmt.Fprintf(b, " el %s", r.DecidedAt.Format("2006-01-02 15:04 MST"))
		}
		if r.ID != "" {
			fmt.Fprintf(b, " (confirmación `%s`", r.ID)
			if r.PreviewSHA256 != "" {
				fmt.Fprintf(b, "; vista previa decidida sha256 `%s`", r.PreviewSHA256[:min(12, len(r.PreviewSHA256))])
			}
			b.WriteString(")")
		}
		b.WriteString(".\n")
	}
	versions := map[string]string{}
	for _, st := range rep.StageOrder {
		var m struct {
			Meta Meta `json:"meta"`
		}
		if json.Unmarshal(rep.Stages[st], &m) == nil && m.Meta.PromptVersion != "" {
			versions[m.Meta.Gem] = m.Meta.PromptVersion
		}
	}
	agents := make([]string, 0, len(versions))
	for a := range versions {
		agents = append(agents, a)
	}
	sort.Strings(agents)
	var vs []string
	for _, a := range agents {
		vs = append(vs, fmt.Sprintf("%s %s", strings.ToUpper(a), strings.TrimPrefix(versions[a], a+"@")))
	}
	fmt.Fprintf(b, "- **Modelo:** %s/%s", rep.LLM.Provider, rep.LLM.Model)
	if len(vs) > 0 {
		fmt.Fprintf(b, "; versiones de los prompts: %s", strings.Join(vs, ", "))
	}
	b.WriteString(".\n")
}
