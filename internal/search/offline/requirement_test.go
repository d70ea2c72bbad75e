package offline

import (
	"strings"
	"testing"
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
