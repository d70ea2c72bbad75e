package companion

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/veredicto/veredicto"
)

// FollowUp is the model side of the phases the user triggers (4–7) and of
// refinement. Like Analyst, it classifies and writes; code checks and
// decides.
type FollowUp interface {
	PlatformAnswers(ctx context.Context, in AnswerInput) (PlatformAnswers, veredicto.Usage, error)
	VerifyFacts(ctx context.Context, in VerifyInput) (FactCheck, veredicto.Usage, error)
	InterviewIntel(ctx context.Context, in VerifyInput) (InterviewIntel, veredicto.Usage, error)
	BrandAudit(ctx context.Context, in AuditInput) (BrandAuditResult, veredicto.Usage, error)
	Learnings(ctx context.Context, in RetroInput) (LearningSet, veredicto.Usage, error)
	Generalizability(ctx context.Context, in GeneralizabilityInput) (GeneralizabilitySet, veredicto.Usage, error)
	Refine(ctx context.Context, in RefineInput) (Refinement, veredicto.Usage, error)
}

// AnswerInput is phase 4's input: the portal questions to answer.
type AnswerInput struct {
	Questions []string
	Platform  string
	CV        CVContent
	Profile   ProfileSnapshot
	Check     func(*PlatformAnswers) error
}

// PlatformAnswers is schema "platform_answer".
type PlatformAnswers struct {
	Answers []QAPair `json:"answers"`
}

// CheckAnswers requires every question answered once, in order, with no
// number the profile does not state, and never the salary floor: a salary
// answer follows preferences.target_salary (non_negotiables.min_salary is
// the line the candidate will not cross, not what they ask for).
func CheckAnswers(a *PlatformAnswers, questions []string, p ProfileSnapshot) error {
	if len(a.Answers) != len(questions) {
		return fmt.Errorf("answers: %d answers for %d questions", len(a.Answers), len(questions))
	}
	facts := profileFacts(p)
	if t := p.Preferences.TargetSalary; t > 0 {
		facts += fmt.Sprintf(" %g %s %s", t, money(t), p.NonNegotiables.Currency)
	}
	floor := p.NonNegotiables.MinSalary
	for i, q := range questions {
		if norm(a.Answers[i].Question) != norm(q) {
			return fmt.Errorf("answers[%d].question: must be question %d of the list, verbatim and in order", i, i+1)
		}
		a.Answers[i].Question = q
		if strings.TrimSpace(a.Answers[i].Answer) == "" {
			return fmt.Errorf("answers[%d].answer: is empty", i)
		}
		if floor > 0 && floor != p.Preferences.TargetSalary && statesAmount(a.Answers[i].Answer, floor) {
			return fmt.Errorf("answers[%d].answer: states the salary floor (non_negotiables.min_salary); a salary answer gives preferences.target_salary, or asks for the role's range", i)
		}
		if bad := unbackedNumbers(a.Answers[i].Answer, facts); len(bad) > 0 {
			return fmt.Errorf("answers[%d].answer: states %s, which the profile does not (no invented data)", i, strings.Join(bad, ", "))
		}
	}
	return nil
}

// statesAmount reports whether text writes the amount v, in any notation
// parseAmount reads ("3800", "3.800", "3,800").
func statesAmount(text string, v float64) bool {
	for _, m := range amountRE.FindAllStringSubmatch(text, -1) {
		if m[2] == "" && parseAmount(m[1]) == v {
			return true
		}
	}
	return false
}

// VerifyInput is phase 5's input.
type VerifyInput struct {
	CV      CVContent
	Profile ProfileSnapshot
	Radar   CultureRadar
	Scoring ScoringResult
	Check   func(*FactCheck) error
	CheckQ  func(*InterviewIntel) error
}

// FactCheck is schema "verify_facts": the model's factual cross-check.
type FactCheck struct {
	Violations    []string `json:"violations" desc:"afirmaciones del CV sin respaldo en el perfil"`
	AdvocacyCheck []string `json:"advocacy_check" desc:"¿se posicionaron bien los transferibles?"`
}

// CheckIntel requires 3 technical and 2 culture questions.
func CheckIntel(ii *InterviewIntel) error {
	if len(ii.TechnicalQuestions) != 3 || len(ii.CultureQuestions) != 2 {
		return fmt.Errorf("want 3 technical_questions and 2 culture_questions, got %d and %d", len(ii.TechnicalQuestions), len(ii.CultureQuestions))
	}
	return nil
}

// CodeViolations are the CV claims code can refute: numbers in the
// summary and bullets that the profile does not state.
func CodeViolations(cv CVContent, p ProfileSnapshot) []string {
	facts := profileFacts(p)
	var out []string
	if bad := unbackedNumbers(cv.KillerSummary, facts); len(bad) > 0 {
		out = append(out, fmt.Sprintf("Killer Summary: cifras sin respaldo en el perfil (%s)", strings.Join(bad, ", ")))
	}
	for _, id := range experienceOrder(p, cv.ImpactBullets) {
		for _, b := range cv.ImpactBullets[id] {
			if bad := unbackedNumbers(b, facts); len(bad) > 0 {
				out = append(out, fmt.Sprintf("Bullet de %s: cifras sin respaldo en el perfil (%s)", id, strings.Join(bad, ", ")))
			}
		}
	}
	return out
}

// AuditInput is phase 6's input.
type AuditInput struct {
	CV      CVContent
	Profile ProfileSnapshot
}

// RetroQuestions are the seed's 4 questions of phase 7, asked by the flow.
var RetroQuestions = []string{
	"¿Hubo algún momento donde casi afirmamos algo que no deberíamos?",
	"¿El tono funcionó bien para este tipo de empresa?",
	"¿Surgió algo nuevo que debería documentarse en tu perfil?",
	"¿El workflow funcionó bien o hay fricciones que mejorar?",
}

// RetroInput is phase 7's input.
type RetroInput struct {
	Summary string // the session summary (code-made JSON)
	Answers []QAPair
	Check   func(*LearningSet) error
}

// LearningDraft is one learning before its generalizability is assessed.
type LearningDraft struct {
	Category       string `json:"category" enum:"non_negotiables,brand_voice,personal_context,process,general"`
	Description    string `json:"description"`
	TriggerContext string `json:"trigger_context"`
	Solution       string `json:"solution"`
}

// LearningSet is schema "learnings".
type LearningSet struct {
	Learnings []LearningDraft `json:"learnings"`
}

// GeneralizabilityInput is the learnings to assess.
type GeneralizabilityInput struct {
	Learnings []LearningDraft
	Check     func(*GeneralizabilitySet) error
}

// Assessment is one learning's generalizability (by index).
type Assessment struct {
	Index           int    `json:"index"`
	IsGeneralizable bool   `json:"is_generalizable"`
	Justification   string `json:"justification" desc:"criterios: se repite 2+ veces, es generalizable, tiene solución"`
}

// GeneralizabilitySet is schema "generalizability".
type GeneralizabilitySet struct {
	Assessments []Assessment `json:"assessments"`
}

// CheckAssessments requires one assessment per learning.
func CheckAssessments(g *GeneralizabilitySet, n int) error {
	seen := map[int]bool{}
	for _, a := range g.Assessments {
		if a.Index < 0 || a.Index >= n || seen[a.Index] {
			return fmt.Errorf("assessments: index %d is out of range or repeated", a.Index)
		}
		seen[a.Index] = true
	}
	if len(seen) != n {
		return fmt.Errorf("assessments: %d of %d learnings assessed", len(seen), n)
	}
	return nil
}

func requirePhase(c *Context, phase int, what string) error {
	if c.Status == StatusPaused || c.Status == StatusStopped || c.LastCompletedPhase < phase {
		return &veredicto.ConflictError{What: "application " + c.ApplicationID, Problem: fmt.Sprintf("%s needs phase %d completed (last completed: %d, status %s)", what, phase, c.LastCompletedPhase, c.Status)}
	}
	if c.CVContent == nil {
		return &veredicto.ConflictError{What: "application " + c.ApplicationID, Problem: what + " needs the CV content of phase 3 (a full run)"}
	}
	return nil
}

// RequireCV refuses what needs the CV's content (phase 3 of a full run,
// finished and not paused): the answers, the verification, the audit.
func RequireCV(c *Context, what string) error { return requirePhase(c, 3, what) }

func markPhase(c *Context, phase int) {
	if c.LastCompletedPhase < phase {
		c.LastCompletedPhase = phase
	}
}

// Answer runs phase 4 over confirmed questions.
func Answer(ctx context.Context, f FollowUp, c *Context, platform string, questions []string) error {
	if err := requirePhase(c, 3, "answer"); err != nil {
		return err
	}
	if len(questions) == 0 {
		return &veredicto.InvalidInputError{Field: "questions", Problem: "give at least one portal question (--question) or a --platform"}
	}
	if len(questions) > 20 {
		return &veredicto.InvalidInputError{Field: "questions", Problem: "at most 20 questions at once"}
	}
	check := func(a *PlatformAnswers) error { return CheckAnswers(a, questions, c.Profile) }
	a, u, err := f.PlatformAnswers(ctx, AnswerInput{Questions: questions, Platform: platform, CV: *c.CVContent, Profile: c.Profile, Check: check})
	c.Usage.Add(u)
	if err == nil {
		err = check(&a)
	}
	if err != nil {
		return fmt.Errorf("phase 4 answers: %w", err)
	}
	c.ApplicationQA = append(c.ApplicationQA, a.Answers...)
	if c.PlatformName == "" {
		c.PlatformName = platform
	}
	markPhase(c, 4)
	return nil
}

// Verify runs phase 5: the model's factual cross-check plus the code's
// own (numbers), the non-negotiables in code, and the interview intel.
func Verify(ctx context.Context, f FollowUp, c *Context) error {
	if err := requirePhase(c, 3, "verify"); err != nil {
		return err
	}
	in := VerifyInput{CV: *c.CVContent, Profile: c.Profile, Radar: *c.CultureRadar, Scoring: *c.ScoringResult, CheckQ: CheckIntel}
	fc, u, err := f.VerifyFacts(ctx, in)
	c.Usage.Add(u)
	if err != nil {
		return fmt.Errorf("phase 5 verify: %w", err)
	}
	ii, u, err := f.InterviewIntel(ctx, in)
	c.Usage.Add(u)
	if err == nil {
		err = CheckIntel(&ii)
	}
	if err != nil {
		return fmt.Errorf("phase 5 interview intel: %w", err)
	}
	violations := append(CodeViolations(*c.CVContent, c.Profile), fc.Violations...)
	nonneg, notes := Checks(CheckNonNegotiables(c.Profile.NonNegotiables, ExtractFacts(c.JDText, c.Profile.NonNegotiables.ExcludedIndustries)))
	c.VerificationResult = &VerificationResult{
		Passed:     len(violations) == 0 && len(FailedRules(nonneg)) == 0,
		Violations: nonNil(violations), NonNegotiablesCheck: nonneg, NonNegotiablesNotes: notes, AdvocacyCheck: nonNil(fc.AdvocacyCheck), InterviewIntel: &ii,
	}
	markPhase(c, 5)
	return nil
}

// Audit runs phase 6; overall_passed is computed by code (all six), and
// red_lines_respected also requires every non-negotiable to pass.
func Audit(ctx context.Context, f FollowUp, c *Context) error {
	if err := requirePhase(c, 3, "audit"); err != nil {
		return err
	}
	a, u, err := f.BrandAudit(ctx, AuditInput{CV: *c.CVContent, Profile: c.Profile})
	c.Usage.Add(u)
	if err != nil {
		return fmt.Errorf("phase 6 audit: %w", err)
	}
	if c.ScoringResult != nil && len(FailedRules(c.ScoringResult.NonNegotiablesCheck)) > 0 {
		a.RedLinesRespected = false
	}
	a.OverallPassed = a.ToneMatch && a.PillarReinforced && a.EthosVisible && a.TechBusinessBalance && a.RedLinesRespected && a.NarrativeCoherent
	a.Notes = nonNil(a.Notes)
	c.BrandAudit = &a
	markPhase(c, 6)
	return nil
}

// Retro runs phase 7 with the user's answers to RetroQuestions.
func Retro(ctx context.Context, f FollowUp, c *Context, answers []string) error {
	// A finished session only: a retrospective during the anti-impostor
	// pause would mark phase 7 done and the resumed run would skip the
	// CV's content.
	if c.LastCompletedPhase < 2 || (c.Status != StatusCompleted && c.Status != StatusStopped) {
		return &veredicto.ConflictError{What: "application " + c.ApplicationID, Problem: fmt.Sprintf("the retrospective needs a finished session (last completed: %d, status %s)", c.LastCompletedPhase, c.Status)}
	}
	if len(answers) != len(RetroQuestions) {
		return &veredicto.InvalidInputError{Field: "answers", Problem: fmt.Sprintf("want %d answers, one per question, got %d", len(RetroQuestions), len(answers))}
	}
	qa := make([]QAPair, len(answers))
	for i, a := range answers {
		qa[i] = QAPair{Question: RetroQuestions[i], Answer: a}
	}
	summary := sessionSummary(c)
	check := func(l *LearningSet) error {
		if len(l.Learnings) > 10 {
			return errors.New("learnings: at most 10")
		}
		return nil
	}
	ls, u, err := f.Learnings(ctx, RetroInput{Summary: summary, Answers: qa, Check: check})
	c.Usage.Add(u)
	if err == nil {
		err = check(&ls)
	}
	if err != nil {
		return fmt.Errorf("phase 7 learnings: %w", err)
	}
	out := make([]Learning, len(ls.Learnings))
	if len(ls.Learnings) > 0 {
		gcheck := func(g *GeneralizabilitySet) error { return CheckAssessments(g, len(ls.Learnings)) }
		g, u, err := f.Generalizability(ctx, GeneralizabilityInput{Learnings: ls.Learnings, Check: gcheck})
		c.Usage.Add(u)
		if err == nil {
			err = gcheck(&g)
		}
		if err != nil {
			return fmt.Errorf("phase 7 generalizability: %w", err)
		}
		for i, l := range ls.Learnings {
			out[i] = Learning{Category: l.Category, Description: l.Description, TriggerContext: l.TriggerContext, Solution: l.Solution}
		}
		for _, a := range g.Assessments {
			out[a.Index].IsGeneralizable = a.IsGeneralizable
			out[a.Index].GeneralizabilityJustification = a.Justification
		}
	}
	c.Learnings = out
	markPhase(c, 7)
	return nil
}

func sessionSummary(c *Context) string {
	var b strings.Builder
	fmt.Fprintf(&b, "modo: %s; última fase: %d; estado: %s\n", c.Mode, c.LastCompletedPhase, c.Status)
	if s := c.ScoringResult; s != nil {
		fmt.Fprintf(&b, "confidence: %.2f; SAS: %d; decisión: %s; brechas: %d\n", s.Confidence.Final, s.SAS.Total, s.DecisionMatrix, len(s.GapAnalysis))
	}
	if c.Drift != nil && c.Drift.Alert {
		fmt.Fprintf(&b, "drift: %+.2f\n", c.Drift.Delta)
	}
	if v := c.VerificationResult; v != nil {
		fmt.Fprintf(&b, "verificación: %v (%d violaciones)\n", v.Passed, len(v.Violations))
	}
	if a := c.BrandAudit; a != nil {
		fmt.Fprintf(&b, "auditoría de marca: %v\n", a.OverallPassed)
	}
	return b.String()
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
