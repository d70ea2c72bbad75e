package offline

import (
	"reflect"
	"testing"
)

func TestSplitKeepsHeadingsAndJobLines(t *testing.T) {
	doc := "# CV\n## Experiencia\n### CFO — Andina (2015–2020)\n- Reduje costos 12%.\n\n## Educación\n* Ingeniería comercial\n"
	ss := split("cv.md", doc)
	var got [][2]string
	for _, s := range ss {
		got = append(got, [2]string{s.heading, s.text})
	}
	want := [][2]string{{"Experiencia", "CFO — Andina (2015–2020)"}, {"Experiencia", "Reduje costos 12%."}, {"Educación", "Ingeniería comercial"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("split = %v, want %v", got, want)
	}
}

func TestStemsMatchAcrossInflections(t *testing.T) {
	a, b := stems("Liderazgo de la refinanciación"), stems("Lideró refinanciar la deuda")
	if overlap(a, b) != 2 {
		t.Errorf("overlap(%v, %v) = %d, want 2", a, b, overlap(a, b))
	}
	if got := stems("el de la y en 2021"); !reflect.DeepEqual(got, []string{"2021"}) {
		t.Errorf("stopwords kept: %v", got)
	}
}

func TestQuantified(t *testing.T) {
	for text, want := range map[string]bool{
		"Reduje el costo logístico en 12% en dos años": true,
		"Refinancié 40 MM USD de deuda":                true,
		"Cierre mensual en 5 días hábiles":             true,
		"Equipo de 35 personas":                        true,
		"Trabajé en la empresa entre 2015 y 2020":      false,
		"Orientado a resultados":                       false,
	} {
		if got := quantified(text); got != want {
			t.Errorf("quantified(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestNumbersInSkipsYears(t *testing.T) {
	if got := numbersIn("En 2021 refinancié 40 MM USD a 5,5 años"); !reflect.DeepEqual(got, []string{"40", "5.5"}) {
		t.Errorf("numbersIn = %v", got)
	}
}

func TestFluff(t *testing.T) {
	if got := fluffIn("Soy un Líder nato, PROACTIVO y orientado a resultados"); !reflect.DeepEqual(got, []string{"orientado a resultados", "lider nato", "proactivo"}) {
		t.Errorf("fluffIn = %v", got)
	}
	tests := map[string]string{
		"Como líder proactivo y orientado a resultados, reduje el costo logístico en 8% en 2021.": "Reduje el costo logístico en 8% en 2021.",
		"Orientado a resultados, lideré la implementación de SAP en 12 meses.":                    "Lideré la implementación de SAP en 12 meses.",
		"Proactivo y apasionado.": "",
		`Sobre la deuda: "Con mi pensamiento estratégico, refinanciamos 30 MM USD a 5 años"`:                            `Sobre la deuda: "[…] refinanciamos 30 MM USD a 5 años"`, // a quotation keeps its words: the cut is an elision
		"Con excelentes habilidades de comunicación, lideré la refinanciación de 30 MM USD.":                            "Lideré la refinanciación de 30 MM USD.",
		`Sobre SAP: "Soy muy proactivo, así que lideré la implementación de SAP en 12 meses".`:                          `Sobre SAP: "[…] así que lideré la implementación de SAP en 12 meses".`,
		`Operaciones: «voy dos veces al mes; con mis excelentes habilidades de comunicación me entiendo con los jefes»`: `Operaciones: «voy dos veces al mes; con mis […] me entiendo con los jefes»`,
	}
	for in, want := range tests {
		if got := removeFluff(in); got != want {
			t.Errorf("removeFluff(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestJobsAndGaps(t *testing.T) {
	cv := split("cv.md", "### A — X (2010–2011)\n### B — Y (2014–2015)\n### C — Z (2016–actualidad)\n")
	js := jobs(cv, 2026)
	if len(js) != 3 || js[2].to != 2026 || js[0].to-js[0].from != 1 {
		t.Fatalf("jobs = %+v", js)
	}
	gaps := gapsBetween(js)
	if len(gaps) != 1 || gaps[0].Text != "Brecha de 3 años sin cargo informado entre 2011 y 2014" {
		t.Errorf("gaps = %+v", gaps)
	}
}

func TestTestScores(t *testing.T) {
	ms := testScores(split("tests.md", "- Razonamiento: 84/100\n- Inglés: avanzado\n- Numérico: 101/100\n"))
	if len(ms) != 1 || ms[0].score != 84 {
		t.Errorf("testScores = %+v", ms)
	}
}

func TestReferenceStatus(t *testing.T) {
	cv := split("cv.md", "- Lideré la refinanciación de 60 MM USD de deuda bancaria.\n- Equipo de 40 personas en tesorería y contabilidad.\n")
	tests := []struct{ ref, want string }{
		{"En realidad la refinanciación la lideró el CFO anterior.", "contradice"},
		{"Confirma la refinanciación de 60 MM USD de deuda.", "confirma"},
		{"Su equipo de tesorería y contabilidad eran 12 personas.", "contradice"},
		{"Le gusta el fútbol.", ""},
	}
	for _, tt := range tests {
		got, _ := referenceStatus(split("references.md", tt.ref)[0], cv)
		if got != tt.want {
			t.Errorf("referenceStatus(%q) = %q, want %q", tt.ref, got, tt.want)
		}
	}
}
