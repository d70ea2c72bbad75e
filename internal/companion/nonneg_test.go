package companion

import (
	"reflect"
	"testing"
)

func pct(v float64) *float64 { return &v }

func TestExtractFacts(t *testing.T) {
	tests := []struct {
		name string
		jd   string
		want JDFacts
	}{
		{"remote", "Trabajo 100% remoto desde cualquier lugar de LATAM.", JDFacts{WorkMode: "remoto"}},
		{"hybrid", "Modalidad híbrida: 3 días en oficina.", JDFacts{WorkMode: "hibrido"}},
		{"onsite", "Trabajo presencial en Santiago.", JDFacts{WorkMode: "presencial"}},
		{"unknown", "Buscamos una persona curiosa.", JDFacts{}},
		{"salary range", "Rango salarial: 45.000 - 55.000 EUR brutos anuales", JDFacts{SalaryMax: 55000, SalaryCurrency: "EUR"}},
		{"salary k", "Salario: 50k-60k USD", JDFacts{SalaryMax: 60000, SalaryCurrency: "USD"}},
		{"travel", "Disponibilidad para viajar un 30% del tiempo.", JDFacts{TravelPct: pct(30)}},
		{"relocation", "Se ofrece paquete de reubicación a Madrid.", JDFacts{RelocationRequired: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExtractFacts(tt.jd, nil); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	if got := ExtractFacts("Empresa líder en Apuestas online", []string{"apuestas", "tabaco"}); !reflect.DeepEqual(got.Industries, []string{"apuestas"}) {
		t.Errorf("industries = %v", got.Industries)
	}
}

func TestCheckNonNegotiables(t *testing.T) {
	all := NonNegotiables{RemoteOnly: true, MinSalary: 50000, Currency: "EUR", NoRelocation: true, ExcludedIndustries: []string{"apuestas"}, MaxTravelPct: pct(10)}
	tests := []struct {
		name  string
		nn    NonNegotiables
		facts JDFacts
		want  map[string]bool
	}{
		{"none set", NonNegotiables{}, JDFacts{WorkMode: "presencial"}, map[string]bool{}},
		{"unknown facts pass", all, JDFacts{}, map[string]bool{"remote_only": true, "min_salary": true, "no_relocation": true, "excluded_industries": true, "max_travel_pct": true}},
		{"all fail", all, JDFacts{WorkMode: "hibrido", SalaryMax: 40000, SalaryCurrency: "EUR", RelocationRequired: true, Industries: []string{"apuestas"}, TravelPct: pct(30)},
			map[string]bool{"remote_only": false, "min_salary": false, "no_relocation": false, "excluded_industries": false, "max_travel_pct": false}},
		{"boundaries pass", all, JDFacts{WorkMode: "remoto", SalaryMax: 50000, SalaryCurrency: "EUR", TravelPct: pct(10)},
			map[string]bool{"remote_only": true, "min_salary": true, "no_relocation": true, "excluded_industries": true, "max_travel_pct": true}},
		{"other currency is not compared", NonNegotiables{MinSalary: 50000, Currency: "eur"}, JDFacts{SalaryMax: 1000, SalaryCurrency: "USD"}, map[string]bool{"min_salary": true}},
		{"zero travel accepted", NonNegotiables{MaxTravelPct: pct(0)}, JDFacts{TravelPct: pct(5)}, map[string]bool{"max_travel_pct": false}},
		{"onsite fails remote only", NonNegotiables{RemoteOnly: true}, JDFacts{WorkMode: "presencial"}, map[string]bool{"remote_only": false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CheckNonNegotiables(tt.nn, tt.facts); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	if got := FailedRules(map[string]bool{"b": false, "a": false, "c": true}); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("FailedRules = %v", got)
	}
}
