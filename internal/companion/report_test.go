package companion

import (
	"strings"
	"testing"
)

// TestReportNonNegotiables: the report shows each rule as the JD states
// its fact. «no requiere reubicación» passes no_relocation (it was shown
// first as «✘ Sin reubicación»); a rule whose fact the JD does not state
// reads «sin dato» with what to ask, never ✔, and is not listed as failed.
func TestReportNonNegotiables(t *testing.T) {
	p := exampleProfile(t)
	tests := []struct {
		name    string
		extra   string
		want    []string
		notWant []string
	}{
		{"negated relocation, unknown travel", "Trabajo híbrido en Santiago. No requiere reubicación.\nSueldo: $3.000.000 CLP líquidos mensuales.\n",
			[]string{"- ✔ Sin reubicación: la oferta dice que no requiere reubicación", "- ✘ Solo remoto: la oferta es híbrida",
				"- ○ Viajes máximos: sin dato — la oferta no habla de viajes", "- ○ Salario mínimo: sin dato — la oferta indica la renta en CLP y tu piso está en USD",
				"## ⚠ Innegociables no cumplidos\n\n- **Solo remoto**: la oferta no respeta esta regla tuya (la oferta es híbrida).\n\n"},
			[]string{"✘ Sin reubicación", "✔ Viajes máximos", "✔ Salario mínimo", "**Sin reubicación**", "remote_only", "no_relocation"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			jd := "# Backend\n## Requisitos\n- Experiencia sólida con Go en producción.\n- Diseño de APIs REST.\n" + tt.extra
			c, err, _, _ := runOffline(t, ModeScreening, jd, p)
			if err != nil {
				t.Fatal(err)
			}
			r := Report(c)
			for _, w := range tt.want {
				if !strings.Contains(r, w) {
					t.Errorf("report lacks %q", w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(r, w) {
					t.Errorf("report holds %q", w)
				}
			}
			if t.Failed() {
				t.Log(r)
			}
		})
	}
}
