package companion

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/veredicto/veredicto"
)

// History bounds of refinement: turns kept in the context, and the last
// turns sent with the next instruction.
const (
	MaxHistoryKept   = 50
	HistoryInPrompt  = 6
	MaxInstructionLn = 2000
)

// RefineTurn is one refinement turn of the persisted history.
type RefineTurn struct {
	At          string              `json:"at"`
	Instruction string              `json:"instruction"`
	Reply       string              `json:"reply"`
	Corrections []ProfileCorrection `json:"profile_corrections"`
}

// ProfileCorrection is a factual correction of one achievement: Before is
// the exact fragment of the current value, After replaces it.
type ProfileCorrection struct {
	AchievementID string `json:"achievement_id"`
	Field         string `json:"field" enum:"description,metric"`
	Before        string `json:"before" desc:"fragmento exacto del valor actual"`
	After         string `json:"after"`
}

// Refinement is schema "refine": what changes after one instruction.
type Refinement struct {
	Reply         string              `json:"reply" desc:"respuesta breve al usuario, en español"`
	KillerSummary string              `json:"killer_summary" desc:"el nuevo Killer Summary, o vacío si no cambia"`
	Bullets       []Bullet            `json:"bullets" desc:"todos los bullets nuevos, o lista vacía si no cambian"`
	Answers       []QAPair            `json:"answers" desc:"respuestas de portal cambiadas (pregunta exacta), o vacío"`
	Corrections   []ProfileCorrection `json:"profile_corrections" desc:"correcciones factuales del perfil pedidas por el usuario"`
}

// RefineInput is one refinement turn's input.
type RefineInput struct {
	Instruction string
	History     []RefineTurn // the last HistoryInPrompt turns
	CV          CVContent
	Answers     []QAPair
	Verify      *VerificationResult
	Profile     ProfileSnapshot
	Check       func(*Refinement) error
}

// ApplyCorrections returns a copy of p with the corrections applied and
// recorded in Corrections; a correction naming an unknown achievement, or
// whose Before is not in the current value, is an error.
func ApplyCorrections(p ProfileSnapshot, cs []ProfileCorrection, instruction string, at time.Time) (ProfileSnapshot, error) {
	q := p
	q.WorkExperiences = append([]WorkExperience(nil), p.WorkExperiences...)
	q.Projects = append([]Project(nil), p.Projects...)
	q.Corrections = append([]Correction(nil), p.Corrections...)
	for i := range q.WorkExperiences {
		q.WorkExperiences[i].Achievements = append([]Achievement(nil), q.WorkExperiences[i].Achievements...)
	}
	for i := range q.Projects {
		q.Projects[i].Achievements = append([]Achievement(nil), q.Projects[i].Achievements...)
	}
	find := func(id string) (*Achievement, string) {
		for i := range q.WorkExperiences {
			for j := range q.WorkExperiences[i].Achievements {
				if q.WorkExperiences[i].Achievements[j].ID == id {
					return &q.WorkExperiences[i].Achievements[j], fmt.Sprintf("work_experiences[%d].achievements[%d]", i, j)
				}
			}
		}
		for i := range q.Projects {
			for j := range q.Projects[i].Achievements {
				if q.Projects[i].Achievements[j].ID == id {
					return &q.Projects[i].Achievements[j], fmt.Sprintf("projects[%d].achievements[%d]", i, j)
				}
			}
		}
		return nil, ""
	}
	for i, c := range cs {
		a, path := find(c.AchievementID)
		if a == nil {
			return p, fmt.Errorf("profile_corrections[%d].achievement_id: is not an achievement of the profile", i)
		}
		var v *string
		switch c.Field {
		case "description":
			v = &a.Description
		case "metric":
			v = &a.Metric
		default:
			return p, fmt.Errorf("profile_corrections[%d].field: want description or metric", i)
		}
		if strings.TrimSpace(c.Before) == "" || !strings.Contains(*v, c.Before) {
			return p, fmt.Errorf("profile_corrections[%d].before: is not in the current %s of that achievement", i, c.Field)
		}
		old := *v
		*v = strings.Replace(*v, c.Before, c.After, 1)
		q.Corrections = append(q.Corrections, Correction{At: at.UTC().Format(time.RFC3339), Instruction: instruction, Field: path + "." + c.Field, Before: old, After: *v})
	}
	return q, nil
}

// Refine applies one user instruction to the phase 3–5 outputs: the
// model (or the offline baseline) proposes new texts and factual
// corrections; code applies the corrections to the profile, checks the
// new texts against the corrected profile (one re-ask), and records the
// turn in the bounded history. It reports whether the profile changed.
func Refine(ctx context.Context, f FollowUp, c *Context, instruction string, now time.Time) (bool, error) {
	if err := requirePhase(c, 3, "refine"); err != nil {
		return false, err
	}
	instruction = strings.TrimSpace(instruction)
	if instruction == "" || len(instruction) > MaxInstructionLn {
		return false, &veredicto.InvalidInputError{Field: "instruction", Problem: fmt.Sprintf("must be 1 to %d characters", MaxInstructionLn)}
	}
	asked := map[string]bool{}
	for _, qa := range c.ApplicationQA {
		asked[norm(qa.Question)] = true
	}
	var corrected ProfileSnapshot
	check := func(r *Refinement) error {
		p, err := ApplyCorrections(c.Profile, r.Corrections, instruction, now)
		if err != nil {
			return err
		}
		if strings.TrimSpace(r.KillerSummary) != "" {
			if err := CheckSummary(&Summary{KillerSummary: r.KillerSummary}, p); err != nil {
				return err
			}
		}
		if len(r.Bullets) > 0 {
			if err := CheckBullets(&BulletSet{Bullets: r.Bullets}, p); err != nil {
				return err
			}
		}
		facts := profileFacts(p) + fmt.Sprintf(" %g", p.NonNegotiables.MinSalary)
		for i, a := range r.Answers {
			if !asked[norm(a.Question)] {
				return fmt.Errorf("answers[%d].question: was not asked in phase 4", i)
			}
			if bad := unbackedNumbers(a.Answer, facts); len(bad) > 0 {
				return fmt.Errorf("answers[%d].answer: states %s, which the profile does not", i, strings.Join(bad, ", "))
			}
		}
		corrected = p
		return nil
	}
	hist := c.RefinementHistory
	if len(hist) > HistoryInPrompt {
		hist = hist[len(hist)-HistoryInPrompt:]
	}
	r, u, err := f.Refine(ctx, RefineInput{Instruction: instruction, History: hist, CV: *c.CVContent, Answers: c.ApplicationQA, Verify: c.VerificationResult, Profile: c.Profile, Check: check})
	c.Usage.Add(u)
	if err == nil {
		err = check(&r)
	}
	if err != nil {
		return false, fmt.Errorf("refine: %w", err)
	}
	changed := len(r.Corrections) > 0
	c.Profile = corrected
	if s := strings.TrimSpace(r.KillerSummary); s != "" {
		c.CVContent.KillerSummary = s
	}
	if len(r.Bullets) > 0 {
		c.CVContent.ImpactBullets = map[string][]string{}
		c.CVContent.BulletSources = map[string][][]string{}
		for _, b := range r.Bullets {
			c.CVContent.ImpactBullets[b.ExperienceID] = append(c.CVContent.ImpactBullets[b.ExperienceID], strings.TrimSpace(b.Text))
			c.CVContent.BulletSources[b.ExperienceID] = append(c.CVContent.BulletSources[b.ExperienceID], b.AchievementIDs)
		}
	}
	for _, a := range r.Answers {
		for i := range c.ApplicationQA {
			if norm(c.ApplicationQA[i].Question) == norm(a.Question) {
				c.ApplicationQA[i].Answer = a.Answer
			}
		}
	}
	if changed {
		// Verification and the brand audit judged the old facts.
		c.VerificationResult, c.BrandAudit = nil, nil
		if c.LastCompletedPhase > 4 {
			c.LastCompletedPhase = 4
		}
	}
	corr := r.Corrections
	if corr == nil {
		corr = []ProfileCorrection{}
	}
	c.RefinementHistory = append(c.RefinementHistory, RefineTurn{At: now.UTC().Format(time.RFC3339), Instruction: instruction, Reply: r.Reply, Corrections: corr})
	if n := len(c.RefinementHistory); n > MaxHistoryKept {
		c.RefinementHistory = c.RefinementHistory[n-MaxHistoryKept:]
	}
	return changed, nil
}

var correctionRE = regexp.MustCompile(`(?is)^\s*(.+?)\s*,\s*no\s+(.+?)\s*[.!]?\s*$`)

// offlineRefine applies corrections written "X, no Y" ("coordiné, no
// lideré"; "40 %, no 60 %"): every achievement fragment Y (case kept as
// written in the profile) becomes X, and so do the CV texts. Anything
// else is left for a model.
func offlineRefine(in RefineInput) Refinement {
	m := correctionRE.FindStringSubmatch(in.Instruction)
	if m == nil {
		return Refinement{Reply: BaselineLabel + " solo aplico correcciones factuales de la forma «X, no Y»; para reescribir tono o estilo usa --llm openai.", Bullets: []Bullet{}, Answers: []QAPair{}, Corrections: []ProfileCorrection{}}
	}
	after, before := m[1], m[2]
	re := regexp.MustCompile(`(?i)` + regexp.QuoteMeta(before))
	r := Refinement{Bullets: []Bullet{}, Answers: []QAPair{}, Corrections: []ProfileCorrection{}}
	fix := func(id string, achs []Achievement) {
		for _, a := range achs {
			for _, fv := range []struct{ f, v string }{{"description", a.Description}, {"metric", a.Metric}} {
				if loc := re.FindString(fv.v); loc != "" {
					r.Corrections = append(r.Corrections, ProfileCorrection{AchievementID: a.ID, Field: fv.f, Before: loc, After: after})
				}
			}
		}
	}
	for _, w := range in.Profile.WorkExperiences {
		fix(w.ID, w.Achievements)
	}
	for _, p := range in.Profile.Projects {
		fix(p.ID, p.Achievements)
	}
	if len(r.Corrections) == 0 {
		r.Reply = fmt.Sprintf("%s no encontré «%s» en los logros del perfil; no cambié nada.", BaselineLabel, before)
		return r
	}
	if re.MatchString(in.CV.KillerSummary) {
		r.KillerSummary = re.ReplaceAllLiteralString(in.CV.KillerSummary, after)
	}
	for _, id := range experienceOrder(in.Profile, in.CV.ImpactBullets) {
		for i, b := range in.CV.ImpactBullets[id] {
			var src []string
			if i < len(in.CV.BulletSources[id]) {
				src = in.CV.BulletSources[id][i]
			}
			r.Bullets = append(r.Bullets, Bullet{ExperienceID: id, AchievementIDs: src, Text: re.ReplaceAllLiteralString(b, after)})
		}
	}
	for _, qa := range in.Answers {
		if re.MatchString(qa.Answer) {
			r.Answers = append(r.Answers, QAPair{Question: qa.Question, Answer: re.ReplaceAllLiteralString(qa.Answer, after)})
		}
	}
	r.Reply = fmt.Sprintf("%s corregí «%s» por «%s» en %d logro(s) del perfil y en el contenido generado.", BaselineLabel, before, after, len(r.Corrections))
	return r
}

// Refine is the offline refinement (see offlineRefine).
func (Offline) Refine(ctx context.Context, in RefineInput) (Refinement, veredicto.Usage, error) {
	if err := ctx.Err(); err != nil {
		return Refinement{}, veredicto.Usage{}, err
	}
	return offlineRefine(in), veredicto.Usage{}, nil
}
