package labels

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// previewOrder is the order a preview's fields are read in: who and what
// first, then what is at stake, then the details. Fields it does not name
// follow, sorted.
var previewOrder = []string{
	"search_id", "candidate_id", "application_id", "debate_id", "question", "options",
	"decision", "proposed_decision", "confidence", "to", "subject", "candidate_ids",
	"summary", "message", "hard_gaps", "divergences", "reasons", "report",
	"escalation", "motivo", "resumen_ejecutivo", "bloqueos_y_correcciones", "riesgos_si_se_fuerza_cierre",
}

// PreviewOrder is the order a preview's fields are shown in (the console
// reads it with the table).
func PreviewOrder() []string { return append([]string(nil), previewOrder...) }

// previewValue is the domain a preview field's value is a code of.
var previewValue = map[string]Domain{"decision": Decision, "motivo": Reason}

// PreviewValue is a preview field's value in words: a code through its
// domain (a decision, a reason), any other text as it is.
func PreviewValue(field, value string) string {
	if d, ok := previewValue[field]; ok {
		if l, ok := Lookup(d, value); ok {
			return l
		}
	}
	return value
}

// PreviewJSON is the console's copy of which domain each preview field's
// value belongs to, and the order the fields are read in.
func PreviewJSON() []byte {
	b, _ := json.Marshal(struct {
		Order  []string          `json:"order"`
		Values map[string]Domain `json:"values"`
	}{previewOrder, previewValue})
	return b
}

// PreviewText renders a confirmation's preview (a JSON object) as
// labelled Spanish lines for a terminal, each nested object a section
// indented under its label and each list one line per item. A preview
// that is not an object is shown as its text.
func PreviewText(raw []byte, indent string) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return indent + strings.TrimSpace(string(raw)) + "\n"
	}
	var b strings.Builder
	writePreview(&b, "", v, indent)
	return b.String()
}

func writePreview(b *strings.Builder, field string, v any, indent string) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range orderedKeys(x) {
			label := Of(PreviewField, k)
			switch val := x[k].(type) {
			case map[string]any, []any:
				if empty(val) {
					fmt.Fprintf(b, "%s%s: —\n", indent, label)
					continue
				}
				fmt.Fprintf(b, "%s%s:\n", indent, label)
				writePreview(b, k, val, indent+"  ")
			default:
				fmt.Fprintf(b, "%s%s: %s\n", indent, label, scalar(k, val))
			}
		}
	case []any:
		for _, it := range x {
			if m, ok := it.(map[string]any); ok {
				writePreview(b, field, m, indent+"  ")
				continue
			}
			fmt.Fprintf(b, "%s- %s\n", indent, scalar(field, it))
		}
	default:
		fmt.Fprintf(b, "%s%s\n", indent, scalar(field, x))
	}
}

func empty(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

func scalar(field string, v any) string {
	switch x := v.(type) {
	case nil:
		return "—"
	case string:
		return PreviewValue(field, strings.Join(strings.Fields(x), " "))
	case bool:
		if x {
			return "sí"
		}
		return "no"
	case float64:
		return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.2f", x), "0"), ".0")
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func orderedKeys(m map[string]any) []string {
	rank := map[string]int{}
	for i, k := range previewOrder {
		rank[k] = i + 1
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, rj := rank[keys[i]], rank[keys[j]]
		switch {
		case ri != 0 && rj != 0:
			return ri < rj
		case ri != 0 || rj != 0:
			return ri != 0
		}
		return keys[i] < keys[j]
	})
	return keys
}
