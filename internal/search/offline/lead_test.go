package offline

import "testing"

func TestLeadershipIn(t *testing.T) {
	tests := []struct {
		text    string
		leads   bool
		denied  string
		support string
	}{
		// The bug report's sentence: supporting the CFO is not leading.
		{"Apoyé al CFO en la renegociación de 18 MM USD de deuda bancaria.", false, "", "apoyé"},
		{"Sobre la deuda: \"Apoyé al CFO en la renegociación; no la lideré, pero conozco bien el proceso\".", false, "no la lideré", "apoyé"},
		{"Lideré la refinanciación de 40 MM USD de deuda bancaria de corto plazo.", true, "", ""},
		{"Lidero un equipo de 35 personas en contabilidad, tesorería, control de gestión y crédito.", true, "", ""},
		{"Dirigí la emisión de un bono de 30 MM USD.", true, "", ""},
		{"Encabecé la negociación con cinco bancos.", true, "", ""},
		{"Estuve a cargo de la refinanciación.", true, "", ""},
		{"A cargo de la tesorería y de la relación con cinco bancos.", true, "", ""},
		{"Tengo 40 personas a cargo entre tesorería, contabilidad y planificación.", true, "", ""},
		{"Tengo 35 personas y cuatro jefaturas; dos de ellas las promoví yo.", true, "", ""},
		{"He liderado dos refinanciamientos.", true, "", ""},
		{"Líder nato de un equipo de 25 personas.", true, "", ""},
		{"Colaboré en la refinanciación de 25 MM USD.", false, "", "colaboré"},
		{"Participé en la implementación de SAP en el módulo de tesorería.", false, "", "participé"},
		{"Asistí al gerente en la negociación con los bancos.", false, "", "asistí"},
		{"Apoyo a la gerencia general en la toma de decisiones.", false, "", "apoyo"},
		{"No lideré la refinanciación.", false, "no lideré", ""},
		{"Nunca he liderado un equipo.", false, "nunca he liderado", ""},
		{"No estuve a cargo del proyecto.", false, "no estuve a cargo", ""},
		// Someone else led: third person, or the candidate supported the leader.
		{"En realidad la refinanciación la lideró el CFO anterior.", false, "", ""},
		{"Apoyé al líder del proyecto de SAP.", false, "", "apoyé"},
		{"El proyecto estuvo a cargo del CFO.", false, "", ""},
		{"Reduje el costo logístico en 12% en dos años.", false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got := leadershipIn(tt.text)
			if got.leads != tt.leads || got.denied != tt.denied || got.support != tt.support {
				t.Errorf("leadershipIn = %+v, want leads %v denied %q support %q", got, tt.leads, tt.denied, tt.support)
			}
		})
	}
}

func TestAsksLeadership(t *testing.T) {
	for req, want := range map[string]bool{
		"Haber liderado al menos un proceso de refinanciamiento de deuda bancaria superior a 20 MM USD.":   true,
		"Al menos 10 años de experiencia liderando finanzas en empresas de distribución o consumo masivo.": true,
		"Liderazgo de equipos de más de 20 personas, con al menos tres jefaturas directas.":                true,
		"Haber dirigido una emisión de bonos.":                                                             true,
		"Haber encabezado una fusión.":                                                                     true,
		"Experiencia a cargo de un área de tesorería.":                                                     true,
		"Experiencia comprobable en la implementación o estabilización de un ERP SAP.":                     false,
		"Relación directa y habitual con directorio, bancos y auditores externos.":                         false,
		"Programa dirigido a ejecutivos de finanzas.":                                                      false,
	} {
		if got := asksLeadership(req); got != want {
			t.Errorf("asksLeadership(%q) = %v, want %v", req, got, want)
		}
	}
}

func TestLeadsByTitle(t *testing.T) {
	for line, want := range map[string]bool{
		"Gerente de Administración y Finanzas — Comercial Valle Central S.A. (2020–actualidad)": true,
		"Subgerente de Control de Gestión — Alimentos del Maule S.A. (2015–2020)":               true,
		"Jefe de Planificación Financiera — Bebidas Cordillera Ltda. (2011–2015)":               true,
		"Analista Financiero Senior — Logística Mirador SpA (2019–2020)":                        false,
		"Analista Senior de Finanzas — Gerencia de Finanzas S.A. (2013–2015)":                   false, // the employer's name is not the title
	} {
		if got := leadsByTitle(line); got != want {
			t.Errorf("leadsByTitle(%q) = %v, want %v", line, got, want)
		}
	}
}
