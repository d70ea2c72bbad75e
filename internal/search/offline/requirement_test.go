package offline

import (
	"context"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/search"
)

// The requirements of examples/search-demo's JD, as the seed's GEM5 quotes
// them.
const (
	reqYears     = "Al menos 10 años de experiencia liderando finanzas en empresas de distribución o consumo masivo."
	reqSAP       = "Experiencia comprobable en la implementación o estabilización de un ERP SAP."
	reqRefinance = "Haber liderado al menos un proceso de refinanciamiento de deuda bancaria superior a 20 MM USD."
	reqTeam      = "Liderazgo de equipos de más de 20 personas, con al menos tres jefaturas directas."
	reqBoard     = "Relación directa y habitual con directorio, bancos y auditores externos."
)

func TestCheckRequirement(t *testing.T) {
	positions := "### Gerente de Finanzas — Distribuidora Norte S.A. (2015–actualidad)\n### Jefe de Tesorería — Alimentos Sur S.A. (2012–2015)\n"
	shortPositions := "### Gerente de Finanzas — Distribuidora Norte S.A. (2022–actualidad)\n### Analista Financiero — Alimentos Sur S.A. (2012–2022)\n"
	tests := []struct {
		name    string
		req     string
		cv      string // one sentence a line; "###" lines are dated positions
		met     bool
		reasons []string // each must appear in the gap's reasons
	}{
		// The bug report's example, word for word: supporting is not
		// leading, and 18 is not over 20.
		{"bug report: apoyé 18 MM USD", reqRefinance, "Apoyé al CFO en la renegociación de 18 MM USD de deuda bancaria.", false,
			[]string{"«apoyé» es apoyo, no liderazgo", "18 MM USD no cumple «superior a 20 MM USD»"}},
		{"led, but 18 < 20", reqRefinance, "Lideré la renegociación de 18 MM USD de deuda bancaria.", false,
			[]string{"18 MM USD no cumple «superior a 20 MM USD»"}},
		{"over 20, but supported", reqRefinance, "Apoyé al CFO en la renegociación de 25 MM USD de deuda bancaria.", false,
			[]string{"«apoyé» es apoyo, no liderazgo"}},
		{"collaborated", reqRefinance, "Colaboré en la refinanciación de 30 MM USD de deuda bancaria.", false,
			[]string{"«colaboré» es apoyo, no liderazgo"}},
		{"participated", reqRefinance, "Participé en la refinanciación de 30 MM USD de deuda bancaria.", false,
			[]string{"«participé» es apoyo, no liderazgo"}},
		{"assisted", reqRefinance, "Asistí al gerente en la refinanciación de 30 MM USD de deuda bancaria.", false,
			[]string{"«asistí» es apoyo, no liderazgo"}},
		{"denied", reqRefinance, "No lideré la refinanciación de 40 MM USD de deuda bancaria.", false,
			[]string{"«no lideré» niega haberlo liderado"}},
		{"denied in the interview", reqRefinance, `Sobre la deuda bancaria: "Apoyé al CFO en la renegociación; no la lideré, pero conozco bien el proceso".`, false,
			[]string{"«no la lideré» niega haberlo liderado", "no informa «superior a 20 MM USD»"}},
		{"someone else led", reqRefinance, "La refinanciación de 40 MM USD de deuda bancaria la lideró el CFO.", false,
			[]string{"no dice haberlo liderado"}},
		{"exactly 20 is not over 20", reqRefinance, "Lideré la refinanciación de 20 MMUSD de deuda bancaria.", false,
			[]string{"20 MMUSD no cumple «superior a 20 MM USD»"}},
		{"another currency", reqRefinance, "Lideré la refinanciación de 1.500 millones de pesos de deuda bancaria.", false,
			[]string{"1.500 millones de pesos no se compara con «superior a 20 MM USD»: está en otra moneda o no la indica"}},
		{"a bound that may fall short", reqRefinance, "Lideré la refinanciación de más de 15 MM USD de deuda bancaria.", false,
			[]string{"«más de 15 MM USD» no basta para acreditar «superior a 20 MM USD»"}},
		{"led 40 MM USD", reqRefinance, "Lideré la refinanciación de 40 MM USD de deuda bancaria de corto plazo.", true, nil},
		{"led US$ 25 millones", reqRefinance, "Lideré la refinanciación de US$ 25 millones de deuda bancaria.", true, nil},
		{"in charge", reqRefinance, "Estuve a cargo de la refinanciación de 30 MM USD de deuda bancaria.", true, nil},
		{"led then supported: the led one counts", reqRefinance,
			"Lideré la refinanciación de 5 MM USD de deuda bancaria.\nApoyé la refinanciación de 30 MM USD de deuda bancaria.", false,
			[]string{"5 MM USD no cumple «superior a 20 MM USD»"}},

		// Every threshold of the requirement, each from a sentence that says
		// the candidate led.
		{"team without direct reports", reqTeam, "Lidero un equipo de 22 personas en control de gestión y planificación.", false,
			[]string{"no informa «al menos tres jefaturas»"}},
		{"team with direct reports", reqTeam, "Lidero un equipo de 35 personas en contabilidad y tesorería.\nSobre su equipo: \"Tengo 35 personas y cuatro jefaturas\".", true, nil},
		{"team too small", reqTeam, "Lidero un equipo de 12 personas con tres jefaturas.", false,
			[]string{"12 personas no cumple «más de 20 personas»"}},

		// Years leading: a figure in the sentence, or the dated positions
		// with a leadership title.
		{"years from leadership positions", reqYears, "15 años de experiencia en finanzas de distribución y consumo masivo.\n" + positions, true, nil},
		{"too few years leading", reqYears, "15 años de experiencia en finanzas de distribución y consumo masivo.\n" + shortPositions, false,
			[]string{"no dice haberlo liderado", "sus cargos de jefatura con fechas suman 4 años"}},

		// No threshold, no leadership asked: lexical evidence.
		{"SAP", reqSAP, "Participé en la implementación de SAP como líder del módulo de finanzas.", true, nil},
		// A note of what is still to be asked is not evidence.
		{"pending", reqBoard, "Pendiente: profundizar en liderazgo, relación con directorio y agendar pruebas.", false, nil},
		{"board", reqBoard, "Reporto mensualmente al directorio y conduzco la relación con cuatro bancos.", true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cv := split("cv.md", tt.cv)
			rc := checkRequirement(tt.req, cv, jobs(cv, 2026))
			if rc.met != tt.met {
				t.Fatalf("met = %v, want %v (reasons %q)", rc.met, tt.met, rc.reasons)
			}
			got := strings.Join(rc.reasons, "; ")
			for _, want := range tt.reasons {
				if !strings.Contains(got, want) {
					t.Errorf("reasons %q, want one saying %q", got, want)
				}
			}
			if tt.met && len(rc.evidence) == 0 {
				t.Errorf("met without evidence")
			}
		})
	}
}

func TestRequirementPoints(t *testing.T) {
	for _, tt := range []struct{ met, total, max, want int }{
		{6, 6, 6, 6}, {5, 6, 6, 5}, {4, 6, 6, 4}, {11, 12, 6, 5}, {0, 6, 6, 0}, {0, 0, 6, 3}, {4, 5, 5, 4}, {5, 5, 5, 5},
	} {
		if got := requirementPoints(tt.met, tt.total, tt.max); got != tt.want {
			t.Errorf("requirementPoints(%d, %d, %d) = %d, want %d", tt.met, tt.total, tt.max, got, tt.want)
		}
	}
}

// gem3Fixture is a candidate with every achievement quantified, strong
// references and the client's culture echoed: only the requirements can
// keep GEM1 and GEM3 from 10.
func gem3Fixture(refinance string) search.Gem3Input {
	jd := "# CFO\n## Requisitos\n- " + reqRefinance + "\n- " + reqSAP + "\n"
	cv := "# CV\n## Experiencia\n### Gerente de Finanzas — Andina S.A. (2015–actualidad)\n" +
		"- " + refinance + "\n" +
		"- Lideré la implementación de SAP en 14 meses, dentro del presupuesto de 3,2 MM USD.\n" +
		"- Reduje el costo logístico en 12% en dos años.\n" +
		"- Reduje el cierre mensual de 12 a 6 días hábiles.\n"
	refs := "# Referencias\n- Confirma la implementación de SAP en 14 meses.\n- Confirma la reducción del costo logístico en 12%.\n- Confirma el cierre mensual en 6 días hábiles.\n- La recomiendo sin duda.\n"
	culture := "# Cultura\n- Cercanía con la operación: visitas a bodega y centros de distribución.\n"
	interview := "# Entrevista\n- Sobre operaciones: \"Visito la bodega y los centros de distribución cada semana\".\n"
	in := search.Gem3Input{}
	in.Search = search.SearchDocs{JD: search.Doc{ID: "jd.md", Text: jd}, Culture: search.Doc{ID: "culture.md", Text: culture}}
	in.Mandate = search.MandateSummary{Requirements: []string{reqRefinance, reqSAP}, Sources: []string{"jd.md"}}
	in.Candidate = search.CandidateDocs{CandidateID: "c-1",
		CV:         search.Doc{ID: "cv.md", Text: cv},
		Interview:  search.Doc{ID: "interview.md", Text: interview},
		Tests:      search.Doc{ID: "tests.md", Missing: true},
		Case:       search.Doc{ID: "case.md", Missing: true},
		References: search.Doc{ID: "references.md", Text: refs},
	}
	return in
}

func TestGem1AndGem3NeverTenWithoutEvidenceForEveryRequirement(t *testing.T) {
	ctx := context.Background()
	a := &Analyst{Year: 2026}
	tests := []struct {
		name      string
		refinance string
		want10    bool
		strategic string
	}{
		{"bug report", "Apoyé al CFO en la renegociación de 18 MM USD de deuda bancaria.", false,
			"1 de 2 requisitos clave con evidencia; sin evidencia: «" + reqRefinance + "»"},
		{"every requirement evidenced", "Lideré la refinanciación de 25 MM USD de deuda bancaria.", true,
			"2 de 2 requisitos clave con evidencia"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := gem3Fixture(tt.refinance)
			g1, _, err := a.Gem1(ctx, in.Gem1Input)
			if err != nil {
				t.Fatal(err)
			}
			in.Gem1 = g1
			g3, _, err := a.Gem3(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			s1, s3 := *g1.Scores.ScoreDimension, *g3.Scores.ScoreDimension
			if (s1 == 10) != tt.want10 || (s3 == 10) != tt.want10 {
				t.Errorf("GEM1 %d/10, GEM3 %d/10; want 10/10 only with evidence for every requirement (%v)", s1, s3, tt.want10)
			}
			if got := g3.Content.StrategicFit.Text; got != tt.strategic {
				t.Errorf("strategic fit %q, want %q", got, tt.strategic)
			}
			if !tt.want10 {
				var gapText string
				for _, g := range g1.Content.EvidenceGaps {
					gapText += g.Text + "\n"
				}
				for _, want := range []string{"«apoyé» es apoyo, no liderazgo", "18 MM USD no cumple «superior a 20 MM USD»"} {
					if !strings.Contains(gapText, want) {
						t.Errorf("GEM1 gaps %q do not say %q", gapText, want)
					}
				}
				for _, ach := range g1.Content.Achievements {
					if strings.HasPrefix(ach.Problem, "Requisito del mandato: "+reqRefinance) {
						t.Errorf("achievement %q credited against the refinancing requirement", ach.Action)
					}
				}
			}
			// Citations and quotations hold: the gap quotes the JD and the CV.
			index := map[string]bool{"jd.md": true, "culture.md": true, "cv.md": true, "interview.md": true, "references.md": true}
			texts := map[string]string{"jd.md": in.Search.JD.Text, "cv.md": in.Candidate.CV.Text, "interview.md": in.Candidate.Interview.Text,
				"references.md": in.Candidate.References.Text, "culture.md": in.Search.Culture.Text}
			for name, ans := range map[string]any{"gem1": g1, "gem3": g3} {
				if _, err := search.CheckCitations(name, ans, index); err != nil {
					t.Error(err)
				}
				if err := search.CheckQuotes(name, ans, texts); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// The bug report: «6 logros vinculan con requisitos clave» when they
// evidenced 4. The line counts requirements, whatever the achievements.
func TestStrategicFitCountsRequirementsNotAchievements(t *testing.T) {
	reqs := []string{reqYears, reqSAP, reqRefinance, "Experiencia en control de gestión con resultados medibles en reducción de costos logísticos.", reqTeam, reqBoard}
	jd := search.Doc{ID: "jd.md", Text: "## Requisitos\n- " + strings.Join(reqs, "\n- ") + "\n"}
	var g1 search.Gem1Content
	for i := 0; i < 6; i++ { // six achievements, all on the first four requirements
		g1.Achievements = append(g1.Achievements, search.Achievement{Problem: "Requisito del mandato: " + reqs[i%4], Action: "Logro", Sources: []string{"cv.md"}})
	}
	for _, r := range []string{reqTeam, reqBoard} {
		g1.EvidenceGaps = append(g1.EvidenceGaps, checkRequirement(r, nil, nil).gap(jd))
	}
	cv := search.Doc{ID: "cv.md", Text: "CV"}
	met := len(reqs) - unmetRequirements(g1, reqs)
	got := strategicFit(met, reqs, jd, g1, cv)
	want := "4 de 6 requisitos clave con evidencia; sin evidencia: «" + reqTeam + "», «" + reqBoard + "»"
	if got.Text != want {
		t.Errorf("strategic fit %q, want %q", got.Text, want)
	}
	if len(got.Sources) != 2 || got.Sources[0] != "jd.md" || got.Sources[1] != "cv.md" {
		t.Errorf("sources %v, want the JD it quotes and the CV", got.Sources)
	}
	if one := strategicFit(1, reqs[:1], jd, search.Gem1Content{}, cv); one.Text != "1 de 1 requisito clave con evidencia" {
		t.Errorf("one requirement: %q", one.Text)
	}
	if none := strategicFit(0, reqs, jd, g1, cv); !strings.HasPrefix(none.Text, search.NotInSources) || len(none.Sources) != 0 {
		t.Errorf("no requirement met: %+v, want a declared gap", none)
	}
}
