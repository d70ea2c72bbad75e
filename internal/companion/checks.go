package companion

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Classification is one classifier answer (schema
// "classify_requirements"): the chunk's requirements, classified and
// matched, and the strength links the MVP bonus counts.
type Classification struct {
	Requirements  []ClassifiedRequirement `json:"requirements"`
	StrengthLinks []StrengthLink          `json:"strength_links"`
}

func norm(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// CheckClassification checks a classifier answer against its input: every
// given requirement exactly once (copied verbatim, any order; the answer
// is reordered to the given order), known types and matches, and strength
// links that name a profile strength, target a given requirement or pain
// point, and carry evidence. Scores are set from the match by Normalize.
func CheckClassification(c *Classification, given []JDRequirement, p ProfileSnapshot, painPoints []string, e Engine) error {
	// Messages name positions, never the texts: they are document text,
	// and a second failure's message reaches logs.
	first := map[string]int{}
	for i, r := range c.Requirements {
		k := norm(r.Requirement)
		if j, dup := first[k]; dup {
			return fmt.Errorf("requirements[%d].requirement: classifies requirements[%d]'s requirement again", i, j)
		}
		first[k] = i
	}
	ordered := make([]ClassifiedRequirement, 0, len(given))
	for gi, g := range given {
		i, ok := first[norm(g.Text)]
		if !ok {
			return fmt.Errorf("requirements: requirement %d of the %d given is missing (classify every requirement of the list, copied verbatim)", gi+1, len(given))
		}
		r := c.Requirements[i]
		r.Requirement = g.Text
		ordered = append(ordered, r)
		delete(first, norm(g.Text))
	}
	for i, r := range c.Requirements {
		if _, extra := first[norm(r.Requirement)]; extra {
			return fmt.Errorf("requirements[%d].requirement: is not in the given list (copy each requirement verbatim)", i)
		}
	}
	n, err := e.Normalize(ordered)
	if err != nil {
		return err
	}
	strengths := map[string]string{}
	for _, s := range p.ProfessionalStrengths {
		strengths[norm(s.Name)] = s.Name
	}
	targets := map[string]bool{}
	for _, g := range given {
		targets[norm(g.Text)] = true
	}
	for _, pp := range painPoints {
		targets[norm(pp)] = true
	}
	for i, l := range c.StrengthLinks {
		name, ok := strengths[norm(l.Strength)]
		if !ok {
			return fmt.Errorf("strength_links[%d].strength: is not a professional strength of the profile", i)
		}
		if !targets[norm(l.Target)] {
			return fmt.Errorf("strength_links[%d].target: is neither a given requirement nor a pain point", i)
		}
		if strings.TrimSpace(l.Evidence) == "" {
			return fmt.Errorf("strength_links[%d].evidence: is empty", i)
		}
		c.StrengthLinks[i].Strength = name
	}
	c.Requirements = n
	return nil
}

// CheckCultureRadar bounds the pain points to 1–3 and checks the enums.
func CheckCultureRadar(c *CultureRadar) error {
	if len(c.PainPoints) == 0 || len(c.PainPoints) > 3 {
		return fmt.Errorf("pain_points: want 1 to 3, got %d", len(c.PainPoints))
	}
	if !contains(TechMaturities, c.TechMaturity) {
		return fmt.Errorf("tech_maturity: is not %s", strings.Join(TechMaturities, ", "))
	}
	if !contains(CompanySizes, c.CompanySizeSignal) {
		return fmt.Errorf("company_size_signal: is not %s", strings.Join(CompanySizes, ", "))
	}
	return nil
}

var numRE = regexp.MustCompile(`\d+(?:[.,]\d+)?`)

// numbers returns the numbers written in s ("4 horas", "40 %", "2,5").
func numbers(s string) []string {
	var out []string
	for _, n := range numRE.FindAllString(s, -1) {
		out = append(out, strings.ReplaceAll(n, ",", "."))
	}
	return out
}

// unbackedNumbers lists the numbers of text that do not appear in source.
func unbackedNumbers(text, source string) []string {
	have := map[string]bool{}
	for _, n := range numbers(source) {
		have[n] = true
	}
	var out []string
	for _, n := range numbers(text) {
		if !have[n] {
			out = append(out, n)
		}
	}
	return out
}

// achievementsOf maps the achievement ids of an experience or project to
// the achievements.
func achievementsOf(p ProfileSnapshot) (map[string]map[string]Achievement, map[string]bool) {
	out := map[string]map[string]Achievement{}
	isProject := map[string]bool{}
	for _, w := range p.WorkExperiences {
		m := map[string]Achievement{}
		for _, a := range w.Achievements {
			m[a.ID] = a
		}
		out[w.ID] = m
	}
	for _, pr := range p.Projects {
		m := map[string]Achievement{}
		for _, a := range pr.Achievements {
			m[a.ID] = a
		}
		out[pr.ID] = m
		isProject[pr.ID] = true
	}
	return out, isProject
}

// Bullet is one impact bullet and the achievements it rests on.
type Bullet struct {
	ExperienceID   string   `json:"experience_id" desc:"id de la experiencia o proyecto del perfil"`
	AchievementIDs []string `json:"achievement_ids" desc:"ids de los logros verificados en que se basa"`
	Text           string   `json:"text" desc:"[Acción] + [Contexto/Complejidad] + [Resultado cuantificable]"`
}

// BulletSet is the bullets answer (schema "draft_bullets").
type BulletSet struct {
	Bullets []Bullet `json:"bullets"`
}

// CheckBullets enforces "solo datos verificados, sin inventar métricas":
// each bullet names an experience or project of the profile and at least
// one of its achievements, every cited achievement is verified, and every
// number in the bullet appears in the cited achievements.
func CheckBullets(b *BulletSet, p ProfileSnapshot) error {
	achs, _ := achievementsOf(p)
	if len(b.Bullets) == 0 {
		return errors.New("bullets: empty")
	}
	for i, bl := range b.Bullets {
		m, ok := achs[bl.ExperienceID]
		if !ok {
			return fmt.Errorf("bullets[%d].experience_id: is not an experience or project of the profile", i)
		}
		if len(bl.AchievementIDs) == 0 {
			return fmt.Errorf("bullets[%d].achievement_ids: a bullet must rest on at least one verified achievement", i)
		}
		var src strings.Builder
		for j, id := range bl.AchievementIDs {
			a, ok := m[id]
			if !ok {
				return fmt.Errorf("bullets[%d].achievement_ids[%d]: is not an achievement of the bullet's experience_id", i, j)
			}
			if !a.Verified {
				return fmt.Errorf("bullets[%d].achievement_ids[%d]: is not verified; only verified achievements may become bullets", i, j)
			}
			src.WriteString(a.Description + " " + a.Metric + " ")
		}
		if strings.TrimSpace(bl.Text) == "" {
			return fmt.Errorf("bullets[%d].text: is empty", i)
		}
		if bad := unbackedNumbers(bl.Text, src.String()); len(bad) > 0 {
			return fmt.Errorf("bullets[%d].text: states %s, which the cited achievements do not (no invented metrics)", i, strings.Join(bad, ", "))
		}
	}
	return nil
}

// SkillsMatrix is the skills-matrix answer (schema "skills_matrix").
type SkillsMatrix struct {
	Skills []SkillMatrixEntry `json:"skills"`
}

// CheckSkillsMatrix keeps the matrix to the profile: every skill is a
// profile skill at its documented level and years, listed once, relevant
// to given requirements.
func CheckSkillsMatrix(m *SkillsMatrix, p ProfileSnapshot, reqs []ClassifiedRequirement) error {
	skills := map[string]Skill{}
	for _, s := range p.Skills {
		skills[norm(s.Name)] = s
	}
	rq := map[string]bool{}
	for _, r := range reqs {
		rq[norm(r.Requirement)] = true
	}
	seen := map[string]bool{}
	for i, e := range m.Skills {
		s, ok := skills[norm(e.Skill)]
		if !ok {
			return fmt.Errorf("skills[%d].skill: is not a skill of the profile (integrity check)", i)
		}
		if seen[norm(e.Skill)] {
			return fmt.Errorf("skills[%d].skill: is listed twice", i)
		}
		seen[norm(e.Skill)] = true
		if e.Level != s.Level || e.Years != s.Years {
			return fmt.Errorf("skills[%d]: must keep the level and years the profile gives this skill", i)
		}
		for j, r := range e.RelevantTo {
			if !rq[norm(r)] {
				return fmt.Errorf("skills[%d].relevant_to[%d]: is not a requirement of the JD", i, j)
			}
		}
		m.Skills[i].Skill = s.Name
	}
	return nil
}

// Summary is the killer-summary answer (schema "draft_summary").
type Summary struct {
	KillerSummary string `json:"killer_summary" desc:"3-4 líneas"`
}

// MaxSummaryChars bounds the killer summary.
const MaxSummaryChars = 900

// CheckSummary bounds the summary and rejects numbers the profile does not
// state.
func CheckSummary(s *Summary, p ProfileSnapshot) error {
	t := strings.TrimSpace(s.KillerSummary)
	if t == "" {
		return errors.New("killer_summary: is empty")
	}
	if n := len([]rune(t)); n > MaxSummaryChars {
		return fmt.Errorf("killer_summary: %d characters; at most %d (3-4 lines)", n, MaxSummaryChars)
	}
	if bad := unbackedNumbers(t, profileFacts(p)); len(bad) > 0 {
		return fmt.Errorf("killer_summary: states %s, which the profile does not (no invented metrics)", strings.Join(bad, ", "))
	}
	return nil
}

// profileFacts is the profile's verifiable text: skills with years,
// verified achievements, experiences and projects.
func profileFacts(p ProfileSnapshot) string {
	var b strings.Builder
	for _, s := range p.Skills {
		fmt.Fprintf(&b, "%s %g\n", s.Name, s.Years)
	}
	for _, w := range p.WorkExperiences {
		fmt.Fprintf(&b, "%s %s %s %s\n", w.Company, w.Role, w.Start, w.End)
		for _, a := range w.Achievements {
			if a.Verified {
				fmt.Fprintf(&b, "%s %s\n", a.Description, a.Metric)
			}
		}
	}
	for _, pr := range p.Projects {
		fmt.Fprintf(&b, "%s %s\n", pr.Name, pr.Description)
		for _, a := range pr.Achievements {
			if a.Verified {
				fmt.Fprintf(&b, "%s %s\n", a.Description, a.Metric)
			}
		}
	}
	for _, s := range p.ProfessionalStrengths {
		fmt.Fprintf(&b, "%s %s\n", s.Name, s.Evidence)
	}
	fmt.Fprintf(&b, "%s %s\n", p.Headline, strings.Join(p.Pillars, " "))
	return b.String()
}
