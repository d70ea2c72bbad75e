package offline

import (
	"math"
	"testing"
)

func TestQuantities(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		text   string
		lo, hi float64
		unit   string
		cmp    string
		quoted string
	}{
		// The bug report's sentence and the seed's demo requirement.
		{"Apoyé al CFO en la renegociación de 18 MM USD de deuda bancaria.", 18e6, 18e6, "USD", "", "18 MM USD"},
		{"Haber liderado al menos un proceso de refinanciamiento de deuda bancaria superior a 20 MM USD.", 20e6, inf, "USD", "superior a", "superior a 20 MM USD"},
		{"US$ 20 millones", 20e6, 20e6, "USD", "", "US$ 20 millones"},
		{"20 MMUSD", 20e6, 20e6, "USD", "", "20 MMUSD"},
		{"800 MUSD", 800e3, 800e3, "USD", "", "800 MUSD"},
		{"USD 25 MM", 25e6, 25e6, "USD", "", "USD 25 MM"},
		{"25MM USD", 25e6, 25e6, "USD", "", "25MM USD"},
		{"20 millones de dólares", 20e6, 20e6, "USD", "", "20 millones de dólares"},
		{"$3.000.000", 3e6, 3e6, "$", "", "$3.000.000"},
		{"Renta: $3.000.000 CLP", 3e6, 3e6, "CLP", "", "$3.000.000 CLP"},
		{"1.500 millones de pesos", 1.5e9, 1.5e9, "$", "", "1.500 millones de pesos"},
		{"20 MM$", 20e6, 20e6, "$", "", "20 MM$"},
		{"UF 5.000", 5000, 5000, "UF", "", "UF 5.000"},
		{"ventas de 150 MM", 150e6, 150e6, "¤", "", "150 MM"},
		{"más de 20 personas", 20, inf, "personas", "mas de", "más de 20 personas"},
		{"al menos tres jefaturas directas", 3, inf, "jefaturas", "al menos", "al menos tres jefaturas"},
		{"mínimo 15 MM USD", 15e6, inf, "USD", "minimo", "mínimo 15 MM USD"},
		{"Al menos 10 años de experiencia", 120, inf, "meses", "al menos", "Al menos 10 años"},
		{"hasta 18 MM USD", math.Inf(-1), 18e6, "USD", "hasta", "hasta 18 MM USD"},
		{"entre 3% y 4%", 3, 4, "%", "", "entre 3% y 4%"},
		{"Entre cuatro y seis personas", 4, 6, "personas", "", "Entre cuatro y seis personas"},
		{"Tengo 35 personas", 35, 35, "personas", "", "35 personas"},
		{"para 6.000 clientes", 6000, 6000, "clien", "", "6.000 clientes"},
		{"3,2 MM USD", 3.2e6, 3.2e6, "USD", "", "3,2 MM USD"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			qs := quantities(tt.text)
			if len(qs) != 1 {
				t.Fatalf("quantities(%q) = %+v, want one", tt.text, qs)
			}
			q := qs[0]
			if q.lo != tt.lo || q.hi != tt.hi || q.unit != tt.unit || q.cmp != tt.cmp || q.text != tt.quoted {
				t.Errorf("got [%g, %g] %q cmp %q text %q, want [%g, %g] %q cmp %q text %q",
					q.lo, q.hi, q.unit, q.cmp, q.text, tt.lo, tt.hi, tt.unit, tt.cmp, tt.quoted)
			}
		})
	}
}

func TestQuantitiesLeaveOutNumbersWithoutUnits(t *testing.T) {
	for _, text := range []string{
		"Trabajé en la empresa entre 2015 y 2020",
		"al menos un proceso de refinanciamiento",
		"uno de los bancos",
		"desde 2019",
	} {
		if qs := quantities(text); len(qs) != 0 {
			t.Errorf("quantities(%q) = %+v, want none", text, qs)
		}
	}
}

func TestThresholdCompare(t *testing.T) {
	req := "Haber liderado al menos un proceso de refinanciamiento de deuda bancaria superior a 20 MM USD."
	th := thresholds(req)
	if len(th) != 1 || th[0].op != ">" || th[0].lo != 20e6 || th[0].unit != "USD" {
		t.Fatalf("thresholds(%q) = %+v", req, th)
	}
	tests := []struct {
		evidence string
		want     outcome
	}{
		{"Apoyé al CFO en la renegociación de 18 MM USD de deuda bancaria.", notMet}, // 18 < 20
		{"refinancié 20 MM USD", notMet},                                             // «superior a» excludes 20
		{"refinancié US$ 25 millones", met},                                          // same currency, written otherwise
		{"refinancié más de 15 MM USD", undecided},                                   // could be 16 or 30
		{"refinancié más de 20 MM USD", met},                                         // every value it allows is over 20
		{"refinancié hasta 18 MM USD", notMet},                                       // every value it allows is under 20
		{"refinancié cerca de 20 MM USD", undecided},                                 // 18 to 22
		{"refinancié 40 MM USD a 6 años", met},                                       // the years are not compared with dollars
		{"refinancié 1.500 millones de pesos", incomparable},                         // another currency: the baseline does not convert
		{"refinancié $3.000.000", incomparable},                                      // «$» alone names no currency
		{"refinancié 30 MM EUR", incomparable},
		{"refinancié una deuda bancaria", absent},
		{"con un equipo de 30 personas", absent},           // people are not money
		{"refinancié 20 MMUSD y luego 30 MMUSD", met},      // any amount of the sentence may meet it
		{"refinancié 18 MM USD y luego 19 MM USD", notMet}, // none does
	}
	for _, tt := range tests {
		t.Run(tt.evidence, func(t *testing.T) {
			got, _ := th[0].against(quantities(tt.evidence))
			if got != tt.want {
				t.Errorf("against(%q) = %v, want %v", tt.evidence, got, tt.want)
			}
		})
	}
}

func TestParseNumber(t *testing.T) {
	for in, want := range map[string]float64{
		"3,2": 3.2, "3.2": 3.2, "1.200": 1200, "3.000.000": 3e6, "1,500": 1500, "1.234,5": 1234.5, "1,234.5": 1234.5, "0,5": 0.5,
	} {
		if got, ok := parseNumber(in); !ok || got != want {
			t.Errorf("parseNumber(%q) = %v, %v, want %v", in, got, ok, want)
		}
	}
	if _, ok := parseNumber("1.2.3"); ok {
		t.Errorf("parseNumber(1.2.3) accepted")
	}
}
