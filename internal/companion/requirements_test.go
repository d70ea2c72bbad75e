package companion

import (
	"context"
	"fmt"
	"os"
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
	// Prose is no error: the classifier extracts its requirements.
	if got, err := ExtractRequirements("jd.md", "Solo texto sin viñetas."); err != nil || len(got) != 0 {
		t.Errorf("no bullets: %v %v", got, err)
	}
	if err := CheckJD("jd.md", "Solo texto sin viñetas ni pedidos."); err == nil || !strings.Contains(err.Error(), "jd.md") {
		t.Errorf("no requirement at all: %v", err)
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

// TestProseJD: a JD without a list (examples/companion/jd_prosa.md) is
// accepted before any paid phase, and the offline baseline splits it into
// sentences and keeps the ones that ask something of the candidate — not
// the company's story, its culture or its conditions.
func TestProseJD(t *testing.T) {
	b, err := os.ReadFile("../../examples/companion/jd_prosa.md")
	if err != nil {
		t.Fatal(err)
	}
	jd := string(b)
	if reqs, err := ExtractRequirements("jd_prosa.md", jd); err != nil || len(reqs) != 0 {
		t.Fatalf("a prose JD lists %v (%v)", reqs, err)
	}
	if err := CheckJD("jd_prosa.md", jd); err != nil {
		t.Fatalf("CheckJD refuses a prose JD: %v", err)
	}
	var got []string
	for _, r := range RequirementsFromText(jd) {
		got = append(got, r.Text)
		if !strings.Contains(collapse(jd), r.Text) {
			t.Errorf("%q is not a text of the JD", r.Text)
		}
	}
	want := []string{
		"Buscamos a alguien con al menos 4 años de experiencia en desarrollo backend y experiencia sólida con Go en producción",
		"Es excluyente haber trabajado con colas de mensajes como SQS o Kafka",
		"Se requiere experiencia diseñando APIs REST para terceros",
		"Es deseable conocer PostgreSQL a nivel avanzado, y nos importa la experiencia en conciliación financiera",
		"Idealmente, también manejo de Terraform",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("requirements\n%q\nwant\n%q", got, want)
	}
	f := ExtractFacts(jd, nil)
	wantSalary := SalaryFact{Min: 3.2e6, Max: 3.8e6, Currency: "CLP", Period: PeriodMonthly, Basis: BasisNet}
	if f.WorkMode != ModeRemote || f.RelocationRequired == nil || *f.RelocationRequired || f.TravelPct == nil || *f.TravelPct != 0 || f.Salary == nil || *f.Salary != wantSalary {
		t.Errorf("facts %+v salary %+v", f, f.Salary)
	}
}

// TestCheckExtracted: an extracted requirement must be a text of the JD,
// copied verbatim (its white space aside).
func TestCheckExtracted(t *testing.T) {
	jd := "Buscamos experiencia con Go\nen producción. Es deseable saber Kafka."
	p := exampleProfile(t)
	e := NewEngine(DefaultConfig())
	cl := func(reqs ...string) *Classification {
		c := &Classification{}
		for _, r := range reqs {
			c.Requirements = append(c.Requirements, ClassifiedRequirement{Requirement: r, Type: TypeB, Match: MatchCumple})
		}
		return c
	}
	for _, tt := range []struct {
		name string
		c    *Classification
		want string
	}{
		{"verbatim across a line break", cl("Buscamos experiencia con Go en producción", "Es deseable saber Kafka"), ""},
		{"rewritten", cl("Experiencia en Go"), "requirements[0].requirement: is not a text of the job description"},
		{"none", cl(), "none extracted"},
		{"twice", cl("Es deseable saber Kafka", "Es deseable saber Kafka"), "again"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckExtracted(tt.c, jd, p, nil, e)
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("CheckExtracted = %v, want %q", err, tt.want)
			}
		})
	}
}
