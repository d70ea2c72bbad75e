package companion

import (
	"reflect"
	"strings"
	"testing"
)

func pct(v float64) *float64 { return &v }

// TestExtractFacts reads the facts as a JD writes them, negation included:
// «no requiere reubicación», «sin viajes», «no es necesario» state the
// opposite fact, and what the JD does not say stays unknown.
func TestExtractFacts(t *testing.T) {
	yes, no := ptr(true), ptr(false)
	tests := []struct {
		name string
		jd   string
		want JDFacts
	}{
		{"remote", "Trabajo 100% remoto desde cualquier lugar de LATAM.", JDFacts{WorkMode: ModeRemote, RelocationRequired: no}},
		{"remote, not on-site", "Trabajo remoto, no presencial.", JDFacts{WorkMode: ModeRemote, RelocationRequired: no}},
		{"hybrid", "Modalidad híbrida: 3 días en oficina.", JDFacts{WorkMode: ModeHybrid}},
		{"onsite", "Trabajo presencial en Santiago.", JDFacts{WorkMode: ModeOnsite}},
		{"onsite after a «sin» of another segment", "Sin horario fijo, trabajo presencial.", JDFacts{WorkMode: ModeOnsite}},
		{"not remote only", "Este cargo no es remoto.", JDFacts{WorkMode: ModeNotRemote}},
		{"unknown", "Buscamos una persona curiosa.", JDFacts{}},
		{"relocation asked", "Se ofrece paquete de reubicación a Madrid.", JDFacts{RelocationRequired: yes}},
		{"«no requiere reubicación»", "El cargo no requiere reubicación.", JDFacts{RelocationRequired: no}},
		{"«no es necesario mudarse»", "No es necesario mudarse: el equipo está repartido.", JDFacts{RelocationRequired: no}},
		{"«Reubicación: no»", "Reubicación: no.", JDFacts{RelocationRequired: no}},
		{"travel percentage", "Disponibilidad para viajar un 30% del tiempo.", JDFacts{TravelPct: pct(30)}},
		{"travel in parentheses", "Viajes ocasionales a Santiago (10% del tiempo).", JDFacts{TravelPct: pct(10)}},
		{"«sin viajes»", "Rol sin viajes.", JDFacts{TravelPct: pct(0)}},
		{"«no requiere viajar»", "El puesto no requiere viajar.", JDFacts{TravelPct: pct(0)}},
		{"travel without a number", "Viajes frecuentes a regiones.", JDFacts{TravelMentioned: true}},
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
	if got := ExtractFacts("No trabajamos con apuestas ni tabaco.", []string{"apuestas"}); len(got.Industries) != 0 {
		t.Errorf("a negated industry is named: %v", got.Industries)
	}
}

// TestExtractSalary: the Spanish salary words (renta, sueldo,
// remuneración, líquido/bruto), the currencies (CLP, UF, USD, EUR, MXN,
// COP, PEN, ARS, BRL; «$» resolved by the JD's country or left to ask),
// ranges and periods.
func TestExtractSalary(t *testing.T) {
	tests := []struct {
		name string
		jd   string
		want *SalaryFact
	}{
		{"Chile's renta in CLP", "Renta: $3.000.000 CLP líquidos mensuales", &SalaryFact{Min: 3e6, Max: 3e6, Currency: "CLP", Period: PeriodMonthly, Basis: BasisNet}},
		{"«$» from the country", "Oficina en Valparaíso, Chile.\nRenta líquida: $2.500.000 a $3.000.000", &SalaryFact{Min: 2.5e6, Max: 3e6, Currency: "CLP", Basis: BasisNet}},
		{"sueldo in MXN", "Sueldo: $40.000 - $55.000 MXN brutos al mes", &SalaryFact{Min: 40000, Max: 55000, Currency: "MXN", Period: PeriodMonthly, Basis: BasisGross}},
		{"remuneración in UF", "Remuneración: entre 80 y 100 UF mensuales", &SalaryFact{Min: 80, Max: 100, Currency: "UF", Period: PeriodMonthly}},
		{"EUR annual gross", "Rango salarial: 45.000 - 55.000 EUR brutos anuales", &SalaryFact{Min: 45000, Max: 55000, Currency: "EUR", Period: PeriodAnnual, Basis: BasisGross}},
		{"k", "Salario: 50k-60k USD", &SalaryFact{Min: 50000, Max: 60000, Currency: "USD"}},
		{"COP in millions", "Salario: 8 millones COP mensuales", &SalaryFact{Min: 8e6, Max: 8e6, Currency: "COP", Period: PeriodMonthly}},
		{"PEN with S/", "Sueldo: S/ 8.000 mensuales", &SalaryFact{Min: 8000, Max: 8000, Currency: "PEN", Period: PeriodMonthly}},
		{"ARS", "Sueldo: ARS 2.000.000 brutos", &SalaryFact{Min: 2e6, Max: 2e6, Currency: "ARS", Basis: BasisGross}},
		{"BRL with R$", "Salario: R$ 12.000 mensuales", &SalaryFact{Min: 12000, Max: 12000, Currency: "BRL", Period: PeriodMonthly}},
		{"US$", "Compensación: US$ 4.500 al mes", &SalaryFact{Min: 4500, Max: 4500, Currency: "USD", Period: PeriodMonthly}},
		{"open range «desde»", "Bogotá.\nSueldo desde $9.000.000", &SalaryFact{Min: 9e6, Max: 0, Currency: "COP"}},
		{"«$» with several countries is asked", "Operamos en Chile, Perú y Colombia.\nSueldo: $4.000.000 mensuales",
			&SalaryFact{Min: 4e6, Max: 4e6, Period: PeriodMonthly, Ask: "la oferta usa «$» y nombra Chile, Colombia: pregunta si la renta es en CLP o COP"}},
		{"«$» with no country is asked", "Renta: $3.000.000", &SalaryFact{Min: 3e6, Max: 3e6, Ask: "la oferta usa «$» sin decir la moneda ni el país: pregunta en qué moneda es la renta"}},
		{"years are not amounts", "Renta acorde a 5 años de experiencia: USD 3.000", &SalaryFact{Min: 3000, Max: 3000, Currency: "USD"}},
		{"no currency: not a salary", "Bono anual del 10% sobre el sueldo.", nil},
		{"no salary", "Buscamos backend engineer.", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExtractSalary(tt.jd); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestCheckNonNegotiables: a rule passes or fails only on what the JD
// says; a rule whose fact the JD does not state is null («sin dato»),
// never passed, with a note saying what to ask.
func TestCheckNonNegotiables(t *testing.T) {
	yes, no := ptr(true), ptr(false)
	all := NonNegotiables{RemoteOnly: true, MinSalary: 50000, Currency: "EUR", SalaryPeriod: PeriodAnnual, NoRelocation: true, ExcludedIndustries: []string{"apuestas"}, MaxTravelPct: pct(10)}
	eur := func(min, max float64, period, basis string) *SalaryFact {
		return &SalaryFact{Min: min, Max: max, Currency: "EUR", Period: period, Basis: basis}
	}
	tests := []struct {
		name  string
		nn    NonNegotiables
		facts JDFacts
		want  map[string]*bool
		note  string // in some rule's note
	}{
		{"none set", NonNegotiables{}, JDFacts{WorkMode: ModeOnsite}, map[string]*bool{}, ""},
		{"unknown facts are null, not passed", all, JDFacts{},
			map[string]*bool{RuleRemoteOnly: nil, RuleMinSalary: nil, RuleNoRelocation: nil, RuleExcludedIndustries: yes, RuleMaxTravelPct: nil}, "no indica la renta"},
		{"all fail", all, JDFacts{WorkMode: ModeHybrid, Salary: eur(30000, 40000, PeriodAnnual, ""), RelocationRequired: yes, Industries: []string{"apuestas"}, TravelPct: pct(30)},
			map[string]*bool{RuleRemoteOnly: no, RuleMinSalary: no, RuleNoRelocation: no, RuleExcludedIndustries: no, RuleMaxTravelPct: no}, "la oferta nombra apuestas"},
		{"boundaries pass", all, JDFacts{WorkMode: ModeRemote, Salary: eur(45000, 50000, PeriodAnnual, ""), RelocationRequired: no, TravelPct: pct(10)},
			map[string]*bool{RuleRemoteOnly: yes, RuleMinSalary: yes, RuleNoRelocation: yes, RuleExcludedIndustries: yes, RuleMaxTravelPct: yes}, ""},
		{"«no requiere reubicación» passes", NonNegotiables{NoRelocation: true}, ExtractFacts("No requiere reubicación.", nil), map[string]*bool{RuleNoRelocation: yes}, "no requiere reubicación"},
		{"no_remoto fails remote only", NonNegotiables{RemoteOnly: true}, JDFacts{WorkMode: ModeNotRemote}, map[string]*bool{RuleRemoteOnly: no}, "no es remota"},
		{"another currency is null", NonNegotiables{MinSalary: 50000, Currency: "eur"}, JDFacts{Salary: &SalaryFact{Min: 1000, Max: 1000, Currency: "USD"}}, map[string]*bool{RuleMinSalary: nil}, "no se comparan monedas distintas"},
		{"UF against CLP is null", NonNegotiables{MinSalary: 2.5e6, Currency: "CLP"}, JDFacts{Salary: &SalaryFact{Min: 80, Max: 100, Currency: "UF"}}, map[string]*bool{RuleMinSalary: nil}, "en UF y tu piso está en CLP"},
		{"unresolved «$» is asked", NonNegotiables{MinSalary: 3e6, Currency: "CLP"}, JDFacts{Salary: &SalaryFact{Min: 4e6, Max: 4e6, Ask: "pregunta si la renta es en CLP o COP"}}, map[string]*bool{RuleMinSalary: nil}, "CLP o COP"},
		{"annual JD, monthly floor", NonNegotiables{MinSalary: 4000, Currency: "EUR"}, JDFacts{Salary: eur(45000, 60000, PeriodAnnual, "")}, map[string]*bool{RuleMinSalary: yes}, "doceava parte"},
		{"monthly JD, annual floor", NonNegotiables{MinSalary: 60000, Currency: "EUR", SalaryPeriod: PeriodAnnual}, JDFacts{Salary: eur(4000, 4500, PeriodMonthly, "")}, map[string]*bool{RuleMinSalary: no}, "por doce"},
		{"a JD without a period is read in the floor's", NonNegotiables{MinSalary: 3800, Currency: "USD"}, JDFacts{Salary: &SalaryFact{Min: 4000, Max: 5200, Currency: "USD"}}, map[string]*bool{RuleMinSalary: yes}, "se lee mensual"},
		{"gross under a net floor fails", NonNegotiables{MinSalary: 3e6, Currency: "CLP", SalaryBasis: BasisNet}, JDFacts{Salary: &SalaryFact{Min: 2e6, Max: 2.5e6, Currency: "CLP", Period: PeriodMonthly, Basis: BasisGross}}, map[string]*bool{RuleMinSalary: no}, "ni en bruto"},
		{"gross over a net floor is null", NonNegotiables{MinSalary: 3e6, Currency: "CLP", SalaryBasis: BasisNet}, JDFacts{Salary: &SalaryFact{Min: 3.2e6, Max: 3.4e6, Currency: "CLP", Period: PeriodMonthly, Basis: BasisGross}}, map[string]*bool{RuleMinSalary: nil}, "pregunta el líquido"},
		{"net over a gross floor passes", NonNegotiables{MinSalary: 3e6, Currency: "CLP", SalaryBasis: BasisGross}, JDFacts{Salary: &SalaryFact{Min: 3e6, Max: 3.1e6, Currency: "CLP", Period: PeriodMonthly, Basis: BasisNet}}, map[string]*bool{RuleMinSalary: yes}, ""},
		{"«desde» under the floor is null", NonNegotiables{MinSalary: 5e6, Currency: "COP"}, JDFacts{Salary: &SalaryFact{Min: 4e6, Currency: "COP", Period: PeriodMonthly}}, map[string]*bool{RuleMinSalary: nil}, "no tiene tope"},
		{"«desde» over the floor passes", NonNegotiables{MinSalary: 3e6, Currency: "COP"}, JDFacts{Salary: &SalaryFact{Min: 4e6, Currency: "COP", Period: PeriodMonthly}}, map[string]*bool{RuleMinSalary: yes}, "desde 4.000.000 COP"},
		{"travel named without a number is null", NonNegotiables{MaxTravelPct: pct(10)}, JDFacts{TravelMentioned: true}, map[string]*bool{RuleMaxTravelPct: nil}, "sin decir cuántos"},
		{"«sin viajes» meets a zero maximum", NonNegotiables{MaxTravelPct: pct(0)}, ExtractFacts("Rol sin viajes.", nil), map[string]*bool{RuleMaxTravelPct: yes}, ""},
		{"zero travel accepted", NonNegotiables{MaxTravelPct: pct(0)}, JDFacts{TravelPct: pct(5)}, map[string]*bool{RuleMaxTravelPct: no}, ""},
		{"onsite fails remote only", NonNegotiables{RemoteOnly: true}, JDFacts{WorkMode: ModeOnsite}, map[string]*bool{RuleRemoteOnly: no}, "presencial"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, notes := Checks(CheckNonNegotiables(tt.nn, tt.facts))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v (notes %v)", show(got), show(tt.want), notes)
			}
			if tt.note != "" && !strings.Contains(strings.Join(values(notes), " | "), tt.note) {
				t.Errorf("notes %v lack %q", notes, tt.note)
			}
			for r := range got {
				if notes[r] == "" {
					t.Errorf("rule %s has no note", r)
				}
			}
		})
	}
	check := map[string]*bool{"b": no, "a": no, "c": yes, "d": nil}
	if got := FailedRules(check); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("FailedRules = %v", got)
	}
	if got := UnknownRules(check); !reflect.DeepEqual(got, []string{"d"}) {
		t.Errorf("UnknownRules = %v", got)
	}
}

func show(m map[string]*bool) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = "null"
		if v != nil {
			out[k] = map[bool]string{true: "true", false: "false"}[*v]
		}
	}
	return out
}

func values(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
