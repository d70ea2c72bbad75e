package search

import (
	"strings"
	"testing"
)

func TestReportShowsWhatTheSummaryCounts(t *testing.T) {
	src := []string{"candidates/c/cv.md"}
	c := func(text string) Claim { return Claim{Text: text, Sources: src} }
	tests := []struct {
		name      string
		view      reportView
		wantCount int
		want      []string
		notWant   []string
	}{
		{"contradiction only in the references", reportView{
			gem2: &Contract[Gem2Content]{Content: Gem2Content{WorkStyle: []Claim{c("Decide con datos")}}},
			gem3: &Contract[Gem3Content]{Content: Gem3Content{CulturalFit: c("Austero"),
				SWOT:       SWOT{Strengths: []Claim{c("Deuda refinanciada")}, Threats: []Claim{c("Rotación")}},
				References: []ReferenceCheck{{Statement: "No lideró el proyecto", Status: "contradice", Sources: src}, {Statement: "Puntual", Status: "confirma", Sources: src}}}},
		}, 1, []string{"**Estilo de trabajo y compromisos**", "Decide con datos", "**Encaje cultural**", "Austero", "### FODA (GEM3)", "**Fortalezas**", "**Amenazas**", "Rotación",
			"**Referencias que contradicen (GEM3)**\n\n- No lideró el proyecto"}, []string{"No se declararon contradicciones", "- Puntual"}},
		{"contradictions from GEM2 and QA", reportView{
			gem2:   &Contract[Gem2Content]{Content: Gem2Content{Contradictions: []Claim{c("CV y caso difieren")}}},
			audits: []namedAudit{{stage: "gem4", c: Contract[Gem4Content]{Content: Gem4Content{Contradictions: []Claim{c("GEM1 y GEM2 difieren")}}, Blockers: []Issue{{Severity: "alta", Description: "Cifra sin fuente"}}}}},
		}, 2, []string{"CV y caso difieren", "GEM1 y GEM2 difieren", "**Bloqueos de GEM4**", "(alta) Cifra sin fuente"}, []string{"No se declararon contradicciones"}},
		{"none anywhere", reportView{gem2: &Contract[Gem2Content]{}}, 0, []string{"No se declararon contradicciones", "Ninguno declarado."}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := Report{CandidateID: "c", Decision: DecisionApproved, Reason: ReasonQAPassed}
			md := RenderReport(rep, tt.view, SearchDocs{})
			if got := summarize(rep, tt.view).Contradictions; got != tt.wantCount {
				t.Errorf("summary counts %d contradictions, want %d", got, tt.wantCount)
			}
			for _, w := range tt.want {
				if !strings.Contains(md, w) {
					t.Errorf("report.md lacks %q:\n%s", w, md)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(md, w) {
					t.Errorf("report.md shows %q:\n%s", w, md)
				}
			}
		})
	}
}
