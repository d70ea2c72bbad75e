// Package companion is the candidate-side career companion of seed 001: a
// job description and the candidate's ProfileSnapshot go through a fixed
// sequence of phases (intent check, culture radar, requirement
// classification and match, SAS, scoring, drafting, and the phases 4–7 the
// user triggers). "El LLM clasifica. El código calcula.": the model only
// classifies and writes; every score, cap, gate and non-negotiable is Go,
// in this package, unit-tested to the letter of the seed.
package companion

import (
	"fmt"
	"strings"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/yamldoc"
)

// ProfileSnapshot is the candidate's profile: the source of truth every
// claim of the generated content must be backed by.
type ProfileSnapshot struct {
	Name                  string           `yaml:"name" json:"name"`
	Headline              string           `yaml:"headline" json:"headline"`
	Skills                []Skill          `yaml:"skills" json:"skills"`
	WorkExperiences       []WorkExperience `yaml:"work_experiences" json:"work_experiences"`
	Projects              []Project        `yaml:"projects" json:"projects"`
	ProfessionalStrengths []Strength       `yaml:"professional_strengths" json:"professional_strengths"`
	Goals                 []string         `yaml:"goals" json:"goals"`
	Motivations           []string         `yaml:"motivations" json:"motivations"`
	Values                []string         `yaml:"values" json:"values"`
	Preferences           Preferences      `yaml:"preferences" json:"preferences"`
	NonNegotiables        NonNegotiables   `yaml:"non_negotiables" json:"non_negotiables"`
	BrandVoice            string           `yaml:"brand_voice" json:"brand_voice"`
	Pillars               []string         `yaml:"pillars" json:"pillars"`
	Ethos                 string           `yaml:"ethos" json:"ethos"`
	// Corrections records the factual corrections applied to this profile
	// by "companion refine" (newest last).
	Corrections []Correction `yaml:"corrections,omitempty" json:"corrections,omitempty"`
}

// Skill is one skill of the Power Stack.
type Skill struct {
	Name  string  `yaml:"name" json:"name"`
	Level string  `yaml:"level" json:"level"` // basico | intermedio | avanzado | experto
	Years float64 `yaml:"years" json:"years"`
}

// SkillLevels are the accepted skill levels, lowest first.
var SkillLevels = []string{"basico", "intermedio", "avanzado", "experto"}

// WorkExperience is one job with its achievements.
type WorkExperience struct {
	ID           string        `yaml:"id" json:"id"`
	Company      string        `yaml:"company" json:"company"`
	Role         string        `yaml:"role" json:"role"`
	Start        string        `yaml:"start" json:"start"` // YYYY-MM
	End          string        `yaml:"end" json:"end"`     // YYYY-MM, or empty while current
	Achievements []Achievement `yaml:"achievements" json:"achievements"`
}

// Achievement is one accomplishment; only verified ones may become impact
// bullets, and a bullet may only state the metric recorded here.
type Achievement struct {
	ID          string `yaml:"id" json:"id"`
	Description string `yaml:"description" json:"description"`
	Metric      string `yaml:"metric" json:"metric"`
	Verified    bool   `yaml:"verified" json:"verified"`
}

// Project is a personal or professional project.
type Project struct {
	ID           string        `yaml:"id" json:"id"`
	Name         string        `yaml:"name" json:"name"`
	Description  string        `yaml:"description" json:"description"`
	Skills       []string      `yaml:"skills" json:"skills"`
	Achievements []Achievement `yaml:"achievements" json:"achievements"`
}

// Strength is a professional strength; the MVP bonus counts the ones the
// classifier links, with evidence, to a requirement or a pain point.
type Strength struct {
	Name     string `yaml:"name" json:"name"`
	Evidence string `yaml:"evidence" json:"evidence"`
}

// Preferences are the candidate's working preferences.
type Preferences struct {
	Autonomy string `yaml:"autonomy" json:"autonomy"`   // alta | media | baja
	RoleType string `yaml:"role_type" json:"role_type"` // e.g. "individual contributor", "tech lead"
	WorkMode string `yaml:"work_mode" json:"work_mode"` // remoto | hibrido | presencial
	Location string `yaml:"location" json:"location"`
	// TargetSalary is the pay the candidate asks for (what a portal's
	// salary question is answered with), in non_negotiables.currency and
	// salary_period; min_salary is the floor, never said.
	TargetSalary float64 `yaml:"target_salary,omitempty" json:"target_salary,omitempty"`
}

// NonNegotiables are the candidate's binary rules; an unset rule is not
// checked.
type NonNegotiables struct {
	RemoteOnly bool    `yaml:"remote_only" json:"remote_only"`
	MinSalary  float64 `yaml:"min_salary" json:"min_salary"`
	Currency   string  `yaml:"currency" json:"currency"`
	// SalaryPeriod is mensual (the default) or anual; SalaryBasis bruto or
	// liquido (empty: not said, compared as the JD's).
	SalaryPeriod       string   `yaml:"salary_period,omitempty" json:"salary_period,omitempty"`
	SalaryBasis        string   `yaml:"salary_basis,omitempty" json:"salary_basis,omitempty"`
	NoRelocation       bool     `yaml:"no_relocation" json:"no_relocation"`
	ExcludedIndustries []string `yaml:"excluded_industries" json:"excluded_industries"`
	// MaxTravelPct is the most travel accepted, in percent of the time;
	// nil means not checked (0 means no travel at all).
	MaxTravelPct *float64 `yaml:"max_travel_pct" json:"max_travel_pct"`
}

// Correction is one factual correction recorded in a profile.
type Correction struct {
	At          string `yaml:"at" json:"at"`
	Instruction string `yaml:"instruction" json:"instruction"`
	Field       string `yaml:"field" json:"field"`
	Before      string `yaml:"before" json:"before"`
	After       string `yaml:"after" json:"after"`
}

// ParseProfile decodes a ProfileSnapshot YAML strictly (unknown fields,
// wrong types: an error naming the file, the field and the line) and checks
// the values code relies on: ids present and unique, known skill levels and
// work modes, non-negative numbers, a currency with a salary.
func ParseProfile(name string, data []byte) (ProfileSnapshot, error) {
	var p ProfileSnapshot
	if err := yamldoc.Decode(name, data, &p); err != nil {
		return p, err
	}
	bad := func(field, problem string) error {
		return &veredicto.InvalidInputError{File: name, Field: field, Problem: problem}
	}
	for i, s := range p.Skills {
		f := fmt.Sprintf("skills[%d]", i)
		if strings.TrimSpace(s.Name) == "" {
			return p, bad(f+".name", "is required")
		}
		if s.Level != "" && !contains(SkillLevels, s.Level) {
			return p, bad(f+".level", "must be one of "+strings.Join(SkillLevels, ", "))
		}
		if s.Years < 0 || s.Years > 60 {
			return p, bad(f+".years", "must be between 0 and 60")
		}
	}
	ids := map[string]string{}
	claim := func(id, field string) error {
		if strings.TrimSpace(id) == "" {
			return bad(field, "is required")
		}
		if prev, ok := ids[id]; ok {
			return bad(field, fmt.Sprintf("repeats the id %q of %s", id, prev))
		}
		ids[id] = field
		return nil
	}
	for i, w := range p.WorkExperiences {
		f := fmt.Sprintf("work_experiences[%d]", i)
		if err := claim(w.ID, f+".id"); err != nil {
			return p, err
		}
		if strings.TrimSpace(w.Company) == "" {
			return p, bad(f+".company", "is required")
		}
		if strings.TrimSpace(w.Role) == "" {
			return p, bad(f+".role", "is required")
		}
		for _, d := range []struct{ v, f string }{{w.Start, ".start"}, {w.End, ".end"}} {
			if d.v != "" && !monthRE(d.v) {
				return p, bad(f+d.f, "must be a month written YYYY-MM")
			}
		}
		if w.Start != "" && w.End != "" && w.End < w.Start {
			return p, bad(f+".end", "is before start")
		}
		for j, a := range w.Achievements {
			af := fmt.Sprintf("%s.achievements[%d]", f, j)
			if err := claim(a.ID, af+".id"); err != nil {
				return p, err
			}
			if strings.TrimSpace(a.Description) == "" {
				return p, bad(af+".description", "is required")
			}
		}
	}
	for i, pr := range p.Projects {
		f := fmt.Sprintf("projects[%d]", i)
		if err := claim(pr.ID, f+".id"); err != nil {
			return p, err
		}
		if strings.TrimSpace(pr.Name) == "" {
			return p, bad(f+".name", "is required")
		}
		for j, a := range pr.Achievements {
			af := fmt.Sprintf("%s.achievements[%d]", f, j)
			if err := claim(a.ID, af+".id"); err != nil {
				return p, err
			}
			if strings.TrimSpace(a.Description) == "" {
				return p, bad(af+".description", "is required")
			}
		}
	}
	for i, s := range p.ProfessionalStrengths {
		if strings.TrimSpace(s.Name) == "" {
			return p, bad(fmt.Sprintf("professional_strengths[%d].name", i), "is required")
		}
	}
	switch p.Preferences.WorkMode {
	case "", "remoto", "hibrido", "presencial":
	default:
		return p, bad("preferences.work_mode", "must be remoto, hibrido or presencial")
	}
	switch p.Preferences.Autonomy {
	case "", "alta", "media", "baja":
	default:
		return p, bad("preferences.autonomy", "must be alta, media or baja")
	}
	nn := p.NonNegotiables
	if nn.MinSalary < 0 {
		return p, bad("non_negotiables.min_salary", "must not be negative")
	}
	if nn.MinSalary > 0 && strings.TrimSpace(nn.Currency) == "" {
		return p, bad("non_negotiables.currency", "is required with min_salary (e.g. EUR, USD, CLP)")
	}
	switch nn.SalaryPeriod {
	case "", PeriodMonthly, PeriodAnnual:
	default:
		return p, bad("non_negotiables.salary_period", "must be mensual or anual")
	}
	switch nn.SalaryBasis {
	case "", BasisGross, BasisNet:
	default:
		return p, bad("non_negotiables.salary_basis", "must be bruto or liquido")
	}
	if t := p.Preferences.TargetSalary; t < 0 {
		return p, bad("preferences.target_salary", "must not be negative")
	} else if t > 0 && strings.TrimSpace(nn.Currency) == "" {
		return p, bad("non_negotiables.currency", "is required with preferences.target_salary (the currency of both amounts)")
	} else if t > 0 && t < nn.MinSalary {
		return p, bad("preferences.target_salary", "is below non_negotiables.min_salary, the floor")
	}
	if nn.MaxTravelPct != nil && (*nn.MaxTravelPct < 0 || *nn.MaxTravelPct > 100) {
		return p, bad("non_negotiables.max_travel_pct", "must be between 0 and 100")
	}
	return p, nil
}

func monthRE(s string) bool {
	if len(s) != 7 || s[4] != '-' {
		return false
	}
	for i, r := range s {
		if i != 4 && (r < '0' || r > '9') {
			return false
		}
	}
	return s[5:] >= "01" && s[5:] <= "12"
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// The seed's friendly messages of the pre-pipeline validation.
const (
	MsgNoSkills     = "Tu perfil necesita al menos un skill en el Power Stack para calcular el score."
	MsgNoExperience = "Agrega al menos una experiencia laboral o proyecto para generar Impact Bullets."
	// NoticeNoStrengths is a warning, not an error: with no professional
	// strengths the MVP bonus is 0.
	NoticeNoStrengths = "Tu perfil no tiene professional_strengths: el bonus MVP será 0."
)

// ValidateCompleteness is the seed's pre-pipeline check: the friendly
// messages of what is missing (none when the profile is complete enough),
// and the warnings that do not stop the pipeline.
func ValidateCompleteness(p ProfileSnapshot) (errs, warnings []string) {
	if len(p.Skills) == 0 {
		errs = append(errs, MsgNoSkills)
	}
	if len(p.WorkExperiences) == 0 && len(p.Projects) == 0 {
		errs = append(errs, MsgNoExperience)
	}
	if len(p.ProfessionalStrengths) == 0 {
		warnings = append(warnings, NoticeNoStrengths)
	}
	return errs, warnings
}

// ProfileIncompleteError is a profile that lacks the minimum the pipeline
// needs; Messages are the seed's friendly messages. It is an invalid input:
// its ASL name is InvalidInputError.
type ProfileIncompleteError struct {
	File     string
	Messages []string
}

func (e *ProfileIncompleteError) Error() string {
	return fmt.Sprintf("%s: the profile is incomplete: %s", e.File, strings.Join(e.Messages, " "))
}

// ErrorName is the ASL error name: the vocabulary's InvalidInputError.
func (*ProfileIncompleteError) ErrorName() string { return veredicto.NameInvalidInput }

// IntentRejectedError is input that is not a career task (or that carries
// instructions for the model); nothing else ran.
type IntentRejectedError struct {
	Reason string
}

func (e *IntentRejectedError) Error() string {
	return "the input is not a career-companion task: " + e.Reason
}

// ErrorName is the ASL error name: input that is not a career task is an
// invalid input (InvalidInputError), caught like an incomplete profile.
func (*IntentRejectedError) ErrorName() string { return veredicto.NameInvalidInput }
