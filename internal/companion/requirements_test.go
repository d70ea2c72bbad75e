package companion

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/llm"
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

func (a *countingAnalyst) Classify(ctx context.Context, in ClassifyInput) (Classification, llm.Usage, error) {
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
	for name, mutate := range map[string]func(*Classification){
		"missing":  func(c *Classification) { c.Requirements = c.Requirements[:1] },
		"invented": func(c *Classification) { c.Requirements[0].Requirement = "Kubernetes" },
		"twice":    func(c *Classification) { c.Requirements[1].Requirement = "AWS" },
		"unknown strength": func(c *Classification) {
			c.StrengthLinks = []StrengthLink{{Strength: "Magia", Target: "Go", Evidence: "x"}}
		},
		"unknown target": func(c *Classification) {
			c.StrengthLinks = []StrengthLink{{Strength: "Observabilidad", Target: "Rust", Evidence: "x"}}
		},
		"no evidence": func(c *Classification) {
			c.StrengthLinks = []StrengthLink{{Strength: "Observabilidad", Target: "pp", Evidence: " "}}
		},
	} {
		c := ok()
		mutate(&c)
		if err := CheckClassification(&c, given, p, []string{"pp"}, e); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestCheckBulletsAndSkills(t *testing.T) {
	p := exampleProfile(t)
	good := Bullet{ExperienceID: "exp-pagofacil", AchievementIDs: []string{"ach-conciliacion"}, Text: "Rediseñé la conciliación: de 4 horas a 25 minutos."}
	if err := CheckBullets(&BulletSet{Bullets: []Bullet{good}}, p); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]Bullet{
		"invented metric": {ExperienceID: "exp-pagofacil", AchievementIDs: []string{"ach-conciliacion"}, Text: "Reduje un 60 % el tiempo."},
		"unverified":      {ExperienceID: "exp-pagofacil", AchievementIDs: []string{"ach-charla"}, Text: "Presenté en un meetup."},
		"other job's":     {ExperienceID: "exp-banco", AchievementIDs: []string{"ach-conciliacion"}, Text: "x"},
		"no source":       {ExperienceID: "exp-pagofacil", Text: "x"},
		"unknown job":     {ExperienceID: "exp-x", AchievementIDs: []string{"ach-conciliacion"}, Text: "x"},
	} {
		if err := CheckBullets(&BulletSet{Bullets: []Bullet{b}}, p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	reqs := []ClassifiedRequirement{{Requirement: "Go en producción"}}
	if err := CheckSkillsMatrix(&SkillsMatrix{Skills: []SkillMatrixEntry{{Skill: "go", Level: "avanzado", Years: 4, RelevantTo: []string{"Go en producción"}}}}, p, reqs); err != nil {
		t.Errorf("valid matrix: %v", err)
	}
	for name, e := range map[string]SkillMatrixEntry{
		"not in profile": {Skill: "Rust", Level: "experto", Years: 5},
		"inflated level": {Skill: "Go", Level: "experto", Years: 4},
		"inflated years": {Skill: "Go", Level: "avanzado", Years: 9},
		"unknown req":    {Skill: "Go", Level: "avanzado", Years: 4, RelevantTo: []string{"Rust"}},
	} {
		if err := CheckSkillsMatrix(&SkillsMatrix{Skills: []SkillMatrixEntry{e}}, p, reqs); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := CheckSummary(&Summary{KillerSummary: "Backend engineer con 12 años de experiencia."}, p); err == nil {
		t.Error("summary with an invented number accepted")
	}
}
