package companion

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/veredicto/veredicto"
)

func exampleProfile(t *testing.T) ProfileSnapshot {
	t.Helper()
	data, err := os.ReadFile("../../examples/companion/profile.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseProfile("profile.yaml", data)
	if err != nil {
		t.Fatalf("example profile: %v", err)
	}
	return p
}

func TestParseExampleProfile(t *testing.T) {
	p := exampleProfile(t)
	if len(p.Skills) != 6 || len(p.WorkExperiences) != 2 || p.NonNegotiables.MaxTravelPct == nil || *p.NonNegotiables.MaxTravelPct != 15 {
		t.Errorf("profile = %+v", p)
	}
	if errs, warns := ValidateCompleteness(p); len(errs) != 0 || len(warns) != 0 {
		t.Errorf("complete example: errs %v warnings %v", errs, warns)
	}
}

func TestParseProfileErrors(t *testing.T) {
	tests := []struct {
		name, yaml, field, problem string
	}{
		{"unknown field", "name: x\nskils: []\n", "skils", "not a known field"},
		{"wrong type", "skills:\n  - name: Go\n    years: muchos\n", "skills[0].years", "line 3"},
		{"bad level", "skills:\n  - {name: Go, level: gurú, years: 1}\n", "skills[0].level", "must be one of"},
		{"missing skill name", "skills:\n  - {level: experto, years: 1}\n", "skills[0].name", "is required"},
		{"duplicate id", "work_experiences:\n  - {id: a, company: X, role: R}\nprojects:\n  - {id: a, name: P}\n", "projects[0].id", "repeats the id"},
		{"bad month", "work_experiences:\n  - {id: a, company: X, role: R, start: marzo}\n", "work_experiences[0].start", "YYYY-MM"},
		{"end before start", "work_experiences:\n  - {id: a, company: X, role: R, start: 2020-05, end: 2019-01}\n", "work_experiences[0].end", "before start"},
		{"achievement without id", "work_experiences:\n  - id: a\n    company: X\n    role: R\n    achievements:\n      - {description: d}\n", "work_experiences[0].achievements[0].id", "is required"},
		{"salary without currency", "non_negotiables: {min_salary: 100}\n", "non_negotiables.currency", "is required"},
		{"travel over 100", "non_negotiables: {max_travel_pct: 120}\n", "non_negotiables.max_travel_pct", "between 0 and 100"},
		{"bad work mode", "preferences: {work_mode: playa}\n", "preferences.work_mode", "remoto"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseProfile("p.yaml", []byte(tt.yaml))
			var ie *veredicto.InvalidInputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want *InvalidInputError", err)
			}
			if ie.File != "p.yaml" || ie.Field != tt.field || !strings.Contains(ie.Problem, tt.problem) {
				t.Errorf("got file=%q field=%q problem=%q, want field %q with %q", ie.File, ie.Field, ie.Problem, tt.field, tt.problem)
			}
		})
	}
	if _, err := ParseProfile("p.yaml", []byte("  \n")); err == nil {
		t.Error("empty profile accepted")
	}
}

func TestValidateCompleteness(t *testing.T) {
	tests := []struct {
		name       string
		p          ProfileSnapshot
		errs, warn []string
	}{
		{"empty", ProfileSnapshot{}, []string{MsgNoSkills, MsgNoExperience}, []string{NoticeNoStrengths}},
		{"project is enough", ProfileSnapshot{Skills: []Skill{{Name: "Go"}}, Projects: []Project{{ID: "p"}}, ProfessionalStrengths: []Strength{{Name: "s"}}}, nil, nil},
		{"no skills", ProfileSnapshot{WorkExperiences: []WorkExperience{{ID: "w"}}, ProfessionalStrengths: []Strength{{Name: "s"}}}, []string{MsgNoSkills}, nil},
		{"no experience", ProfileSnapshot{Skills: []Skill{{Name: "Go"}}}, []string{MsgNoExperience}, []string{NoticeNoStrengths}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs, warn := ValidateCompleteness(tt.p)
			if !reflect.DeepEqual(errs, tt.errs) || !reflect.DeepEqual(warn, tt.warn) {
				t.Errorf("got %q %q, want %q %q", errs, warn, tt.errs, tt.warn)
			}
		})
	}
}

func TestExampleJDFacts(t *testing.T) {
	data, err := os.ReadFile("../../examples/companion/jd.md")
	if err != nil {
		t.Fatal(err)
	}
	p := exampleProfile(t)
	f := ExtractFacts(string(data), p.NonNegotiables.ExcludedIndustries)
	want := SalaryFact{Min: 4000, Max: 5200, Currency: "USD", Period: PeriodMonthly, Basis: BasisGross}
	if f.WorkMode != "remoto" || f.Salary == nil || *f.Salary != want || f.TravelPct == nil || *f.TravelPct != 10 {
		t.Errorf("facts = %+v (salary %+v)", f, f.Salary)
	}
	check, _ := Checks(CheckNonNegotiables(p.NonNegotiables, f))
	if failed, unknown := FailedRules(check), UnknownRules(check); len(failed)+len(unknown) != 0 {
		t.Errorf("failed %v, unknown %v; want every rule decided and passed for the example", failed, unknown)
	}
}
