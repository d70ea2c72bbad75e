package companion

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/veredicto/veredicto"
)

func TestExtractRequirements(t *testing.T) {
	got, err := ExtractRequirements("jd.md", exampleJD(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 || got[0].Section != "Requisitos" || got[9].Section != "Deseable" || !strings.HasPrefix(got[0].Text, "5+ años") {
		t.Errorf("got %+v", got)
	}
	// Without requirement headings, every bullet outside responsibilities
	// and benefits counts.
	got, _ = ExtractRequirements("jd.md", "Rol backend.\n- Go\n- SQL\n## Ofrecemos\n- Seguro\n")
	if len(got) != 2 {
		t.Errorf("no headings: %+v", got)
	}
	if _, err := ExtractRequirements("jd.md", "Solo texto sin viñetas."); err == nil || !strings.Contains(err.Error(), "jd.md") {
		t.Errorf("no bullets: %v", err)
	}
	var many strings.Builder
	many.WriteString("## Requisitos\n")
	for i := 0; i <= MaxRequirements; i++ {
		fmt.Fprintf(&many, "- requisito %d\n", i)
	}
	if _, err := ExtractRequirements("jd.md", many.String()); err == nil {
		t.Error("more than MaxRequirements accepted")
	}
}

func TestChunks(t *testing.T) {
	mk := func(n int) []JDRequirement { return make([]JDRequirement, n) }
	for _, tt := range []struct {
		n    int
		want []int
	}{{1, []int{1}}, {12, []int{12}}, {13, []int{7, 6}}, {24, []int{12, 12}}, {25, []int{9, 8, 8}}} {
		var got []int
		total := 0
		for _, c := range Chunks(mk(tt.n), ChunkSize) {
			got = append(got, len(c))
			total += len(c)
		}
		if !reflect.DeepEqual(got, tt.want) || total != tt.n {
			t.Errorf("%d: chunks %v, want %v", tt.n, got, tt.want)
		}
	}
}

// countingAnalyst counts the classifier's calls and the size of each.
type countingAnalyst struct {
	Offline
	chunks []int
}

func (a *countingAnalyst) Classify(ctx context.Context, in ClassifyInput) (Classification, veredicto.Usage, error) {
	a.chunks = append(a.chunks, len(in.Requirements))
	return a.Offline.Classify(ctx, in)
}

func TestClassificationIsChunkedOver12(t *testing.T) {
	var jd strings.Builder
	jd.WriteString("# Data Engineer\nBuscamos experiencia en datos para el equipo; salario según experiencia.\n## Requisitos\n")
	for i := 0; i < 14; i++ {
		fmt.Fprintf(&jd, "- Experiencia con la herramienta número %d\n", i)
	}
	a := &countingAnalyst{Offline: Offline{Now: fixedNow}}
	c, err := NewContext("p.yaml", jd.String(), exampleProfile(t), ModeScreening, "", "", a.Info())
	if err != nil {
		t.Fatal(err)
	}
	if err := (&Runner{Analyst: a, Engine: NewEngine(DefaultConfig())}).Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a.chunks, []int{7, 7}) || len(c.ClassifiedRequirements) != 14 || c.ClassifiedRequirements[13].Requirement != "Experiencia con la herramienta número 13" {
		t.Errorf("chunks %v, %d requirements", a.chunks, len(c.ClassifiedRequirements))
	}
}

func TestCheckClassificationRejects(t *testing.T) {
	p := exampleProfile(t)
	e := NewEngine(DefaultConfig())
	given := []JDRequirement{{Text: "Go"}, {Text: "AWS"}}
	ok := func() Classification {
		return Classification{Requirements: []ClassifiedRequirement{{Requirement: "AWS", Type: "B", Match: "cumple"}, {Requirement: "Go", Type: "A", Match: "parcial"}}}
	}
	c := ok()
	if err := CheckClassification(&c, given, p, []string{"pp"}, e); err != nil || c.Requirements[0].Requirement != "Go" || c.Requirements[0].Score != 0.5 {
		t.Fatalf("valid answer: %v %+v", err, c.Requirements)
	}
	// Each rejection names where the answer went wrong and never quotes a
	// requirement, strength or target: they are document text, and the
	// message of a second failure reaches logs.
	for name, tt := range map[string]struct {
		mutate func(*Classification)
		want   string
	}{
		"missing":  {func(c *Classification) { c.Requirements = c.Requirements[:1] }, "requirements: requirement 1 of the 2 given is missing"},
		"invented": {func(c *Classification) { c.Requirements[0].Requirement = "Kubernetes" }, "requirements: requirement 2 of the 2 given is missing"},
		"extra": {func(c *Classification) {
			c.Requirements = append(c.Requirements, ClassifiedRequirement{Requirement: "Kubernetes", Type: "A", Match: "cumple"})
		}, "requirements[2].requirement: is not in the given list"},
		"twice": {func(c *Classification) { c.Requirements[1].Requirement = "AWS" }, "requirements[1].requirement: classifies requirements[0]'s requirement again"},
		"unknown strength": {func(c *Classification) {
			c.StrengthLinks = []StrengthLink{{Strength: "Magia", Target: "Go", Evidence: "x"}}
		}, "strength_links[0].strength: is not a professional strength"},
		"unknown target": {func(c *Classification) {
			c.StrengthLinks = []StrengthLink{{Strength: "Observabilidad", Target: "Rust", Evidence: "x"}}
		}, "strength_links[0].target: is neither"},
		"no evidence": {func(c *Classification) {
			c.StrengthLinks = []StrengthLink{{Strength: "Observabilidad", Target: "pp", Evidence: " "}}
		}, "strength_links[0].evidence: is empty"},
	} {
		c := ok()
		tt.mutate(&c)
		err := CheckClassification(&c, given, p, []string{"pp"}, e)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want an error containing %q", name, err, tt.want)
			continue
		}
		for _, text := range []string{"Kubernetes", "AWS", "Magia", "Rust", "Observabilidad", `"Go"`} {
			if strings.Contains(err.Error(), text) {
				t.Errorf("%s: %q quotes %q", name, err, text)
			}
		}
	}
}

func TestCheckBulletsAndSkills(t *testing.T) {
	p := exampleProfile(t)
	good := Bullet{ExperienceID: "exp-pagofacil", AchievementIDs: []string{"ach-conciliacion"}, Text: "Rediseñé la conciliación: de 4 horas a 25 minutos."}
	if err := CheckBullets(&BulletSet{Bullets: []Bullet{good}}, p); err != nil {
		t.Fatal(err)
	}
	noQuotes := func(name string, err error, texts ...string) {
		t.Helper()
		for _, text := range texts {
			if err != nil && strings.Contains(err.Error(), text) {
				t.Errorf("%s: %q quotes %q", name, err, text)
			}
		}
	}
	for name, tt := range map[string]struct {
		b    Bullet
		want string
	}{
		"invented metric": {Bullet{ExperienceID: "exp-pagofacil", AchievementIDs: []string{"ach-conciliacion"}, Text: "Reduje un 60 % el tiempo."}, "bullets[0].text: states 60"},
		"unverified":      {Bullet{ExperienceID: "exp-pagofacil", AchievementIDs: []string{"ach-charla"}, Text: "Presenté en un meetup."}, "bullets[0].achievement_ids[0]: is not verified"},
		"other job's":     {Bullet{ExperienceID: "exp-banco", AchievementIDs: []string{"ach-conciliacion"}, Text: "x"}, "bullets[0].achievement_ids[0]: is not an achievement of the bullet's experience_id"},
		"no source":       {Bullet{ExperienceID: "exp-pagofacil", Text: "x"}, "bullets[0].achievement_ids: a bullet must rest"},
		"unknown job":     {Bullet{ExperienceID: "exp-x", AchievementIDs: []string{"ach-conciliacion"}, Text: "x"}, "bullets[0].experience_id: is not an experience"},
	} {
		err := CheckBullets(&BulletSet{Bullets: []Bullet{tt.b}}, p)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want an error containing %q", name, err, tt.want)
		}
		noQuotes(name, err, "exp-", "ach-", "meetup")
	}
	reqs := []ClassifiedRequirement{{Requirement: "Go en producción"}}
	if err := CheckSkillsMatrix(&SkillsMatrix{Skills: []SkillMatrixEntry{{Skill: "go", Level: "avanzado", Years: 4, RelevantTo: []string{"Go en producción"}}}}, p, reqs); err != nil {
		t.Errorf("valid matrix: %v", err)
	}
	for name, tt := range map[string]struct {
		e    SkillMatrixEntry
		want string
	}{
		"not in profile": {SkillMatrixEntry{Skill: "Rust", Level: "experto", Years: 5}, "skills[0].skill: is not a skill of the profile"},
		"inflated level": {SkillMatrixEntry{Skill: "Go", Level: "experto", Years: 4}, "skills[0]: must keep the level and years"},
		"inflated years": {SkillMatrixEntry{Skill: "Go", Level: "avanzado", Years: 9}, "skills[0]: must keep the level and years"},
		"unknown req":    {SkillMatrixEntry{Skill: "Go", Level: "avanzado", Years: 4, RelevantTo: []string{"Go en producción", "Rust"}}, "skills[0].relevant_to[1]: is not a requirement"},
	} {
		err := CheckSkillsMatrix(&SkillsMatrix{Skills: []SkillMatrixEntry{tt.e}}, p, reqs)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want an error containing %q", name, err, tt.want)
		}
		noQuotes(name, err, "Rust", "Go", "avanzado", "experto")
	}
	if err := CheckSummary(&Summary{KillerSummary: "Backend engineer con 12 años de experiencia."}, p); err == nil {
		t.Error("summary with an invented number accepted")
	}
}
