package companion

import (
	"context"
	"testing"
)

// BenchmarkOfflineFullRun is a full run (intent through phase 3) with the
// offline analyst and no storage: the code's whole cost per application.
func BenchmarkOfflineFullRun(b *testing.B) {
	jd := exampleJD(&testing.T{})
	p := exampleProfile(&testing.T{})
	a := Offline{Now: fixedNow}
	r := &Runner{Analyst: a, Engine: NewEngine(DefaultConfig())}
	b.ReportAllocs()
	for b.Loop() {
		c, err := NewContext("profile.yaml", jd, p, ModeFull, "Andes Fintech", "", a.Info())
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Run(context.Background(), c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCodeOverhead is what code adds around the model's answers in
// one run: requirement extraction, the classification check, the scoring
// engine, the non-negotiables, the draft checks and the report.
func BenchmarkCodeOverhead(b *testing.B) {
	jd := exampleJD(&testing.T{})
	p := exampleProfile(&testing.T{})
	a := Offline{Now: fixedNow}
	c, _ := NewContext("profile.yaml", jd, p, ModeFull, "Andes Fintech", "", a.Info())
	if err := (&Runner{Analyst: a, Engine: NewEngine(DefaultConfig())}).Run(context.Background(), c); err != nil {
		b.Fatal(err)
	}
	e := NewEngine(DefaultConfig())
	cl := Classification{Requirements: c.ClassifiedRequirements, StrengthLinks: c.StrengthLinks}
	bullets := BulletSet{}
	for id, bs := range c.CVContent.ImpactBullets {
		for i, t := range bs {
			bullets.Bullets = append(bullets.Bullets, Bullet{ExperienceID: id, AchievementIDs: c.CVContent.BulletSources[id][i], Text: t})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		reqs, err := ExtractRequirements("jd", jd)
		if err != nil {
			b.Fatal(err)
		}
		cc := Classification{Requirements: append([]ClassifiedRequirement(nil), cl.Requirements...), StrengthLinks: append([]StrengthLink(nil), cl.StrengthLinks...)}
		if err := CheckClassification(&cc, reqs, p, c.CultureRadar.PainPoints, e); err != nil {
			b.Fatal(err)
		}
		f := ExtractFacts(jd, p.NonNegotiables.ExcludedIndustries)
		if _, err := e.Score(cc.Requirements, cc.StrengthLinks, *c.SASEvaluation, true, CheckNonNegotiables(p.NonNegotiables, f)); err != nil {
			b.Fatal(err)
		}
		if err := CheckBullets(&bullets, p); err != nil {
			b.Fatal(err)
		}
		_ = Report(c)
	}
}
