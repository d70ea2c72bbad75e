package companion

import (
	"context"
	"strings"
	"testing"
)

// TestOfflineSASIsAShare: the offline SAS scores a dimension by the share
// of the profile's items the JD shares, to the nearest quarter of 20: «2
// de 2 metas aparecen en la oferta» is 20, not 10.
func TestOfflineSASIsAShare(t *testing.T) {
	for _, tt := range []struct{ n, total, want int }{
		{2, 2, 20}, {1, 2, 10}, {0, 2, 0}, {1, 3, 5}, {2, 3, 15}, {3, 3, 20},
		{1, 4, 5}, {3, 4, 15}, {5, 5, 20}, {3, 10, 5}, {1, 8, 5}, {0, 0, 0},
	} {
		if got := shareScore(tt.n, tt.total); got != tt.want {
			t.Errorf("%d of %d: %d, want %d", tt.n, tt.total, got, tt.want)
		}
	}
	jd := "Buscamos crecer hacia un rol de staff engineer en sistemas de pagos con arquitecturas orientadas a eventos a escala. Valoramos la transparencia."
	p := exampleProfile(t)
	ev, _, err := Offline{}.SAS(context.Background(), SASInput{JD: jd, Profile: p, Radar: CultureRadar{TechMaturity: "modern"}})
	if err != nil {
		t.Fatal(err)
	}
	if ev.CareerGoals.Score != 20 || !strings.Contains(ev.CareerGoals.Justification, "2 de 2 metas aparecen en la oferta (100 %)") {
		t.Errorf("career goals %+v, want 20 for 2 of 2", ev.CareerGoals)
	}
	if ev.ValuesCulture.Score != 5 || !strings.Contains(ev.ValuesCulture.Justification, "1 de 3 valores") {
		t.Errorf("values %+v, want 5 for 1 of 3", ev.ValuesCulture)
	}
	p.Goals = nil
	ev, _, _ = Offline{}.SAS(context.Background(), SASInput{JD: jd, Profile: p})
	if ev.CareerGoals.Score != 0 || !strings.Contains(ev.CareerGoals.Justification, "el perfil no declara metas") {
		t.Errorf("no goals: %+v", ev.CareerGoals)
	}
}

// TestOfflineAnswersArePasteable: the portal answers carry no baseline
// mark (the report says who wrote them), and the salary answer gives the
// profile's target, never its floor; without a target it asks for the
// range. CheckAnswers refuses a floor in any answer.
func TestOfflineAnswersArePasteable(t *testing.T) {
	p := exampleProfile(t)
	cv := CVContent{KillerSummary: "Backend engineer.", ImpactBullets: map[string][]string{"exp-pagofacil": {"Rediseñé la conciliación."}}}
	qs := []string{"¿Cuál es tu pretensión de renta?", "¿Por qué te interesa el cargo?", "¿Cuántos años de experiencia tienes?"}
	tests := []struct {
		name    string
		target  float64
		salary  string
		notWant string
	}{
		{"target", 4500, "Mi expectativa es de 4.500 USD mensuales, conversable según el paquete completo.", "3800"},
		{"no target: ask the range", 0, "Prefiero conversarlo con el rango previsto para el cargo", "3800"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.Preferences.TargetSalary = tt.target
			a, _, err := Offline{}.PlatformAnswers(context.Background(), AnswerInput{Questions: qs, CV: cv, Profile: p})
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckAnswers(&a, qs, p); err != nil {
				t.Fatalf("the offline answers fail their check: %v", err)
			}
			for _, qa := range a.Answers {
				if strings.Contains(qa.Answer, BaselineLabel) || strings.Contains(qa.Answer, "línea base") {
					t.Errorf("pasteable answer %q carries the baseline mark", qa.Answer)
				}
			}
			if !strings.HasPrefix(a.Answers[0].Answer, tt.salary) || strings.Contains(a.Answers[0].Answer, tt.notWant) || strings.Contains(a.Answers[0].Answer, "3.800") {
				t.Errorf("salary answer %q", a.Answers[0].Answer)
			}
		})
	}
	floor := PlatformAnswers{Answers: []QAPair{{Question: qs[0], Answer: "Mi expectativa parte en 3.800 USD."}}}
	if err := CheckAnswers(&floor, qs[:1], p); err == nil || !strings.Contains(err.Error(), "salary floor") {
		t.Errorf("an answer with the floor: %v", err)
	}
}

// TestProfileSalaryFields: the target, period and basis are checked.
func TestProfileSalaryFields(t *testing.T) {
	base := "name: x\nskills: [{name: Go, level: avanzado, years: 1}]\nprojects: [{id: p1, name: n}]\n"
	for _, tt := range []struct{ yaml, field string }{
		{"non_negotiables: {min_salary: 100, currency: USD, salary_period: semanal}\n", "non_negotiables.salary_period"},
		{"non_negotiables: {min_salary: 100, currency: USD, salary_basis: neto}\n", "non_negotiables.salary_basis"},
		{"preferences: {target_salary: 100}\n", "non_negotiables.currency"},
		{"preferences: {target_salary: 90}\nnon_negotiables: {min_salary: 100, currency: USD}\n", "preferences.target_salary"},
	} {
		_, err := ParseProfile("p.yaml", []byte(base+tt.yaml))
		if err == nil || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("%q: %v, want an error on %s", tt.yaml, err, tt.field)
		}
	}
	if _, err := ParseProfile("p.yaml", []byte(base+"preferences: {target_salary: 120}\nnon_negotiables: {min_salary: 100, currency: USD, salary_period: anual, salary_basis: liquido}\n")); err != nil {
		t.Errorf("a valid target, period and basis: %v", err)
	}
}
