package agents

import (
	"context"
	"fmt"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/companion"
)

// Schema names of the phases the user triggers.
const (
	SchemaPlatformAnswer   = "platform_answer"
	SchemaVerifyFacts      = "verify_facts"
	SchemaInterviewIntel   = "interview_intel"
	SchemaBrandAudit       = "brand_audit"
	SchemaLearnings        = "learnings"
	SchemaGeneralizability = "generalizability"
	SchemaRefine           = "refine"
)

var _ companion.FollowUp = (*Analyst)(nil)

func cvMessage(cv companion.CVContent, p companion.ProfileSnapshot) *message {
	var m message
	m.data("Perfil (ProfileSnapshot, fuente de verdad)", profileView(p))
	m.data("Contenido del CV generado", cv)
	return &m
}

// PlatformAnswers answers the confirmed portal questions (phase 4).
func (a *Analyst) PlatformAnswers(ctx context.Context, in companion.AnswerInput) (companion.PlatformAnswers, veredicto.Usage, error) {
	m := cvMessage(in.CV, in.Profile)
	if in.Platform != "" {
		m.text("Plataforma", in.Platform)
	}
	m.data(fmt.Sprintf("Preguntas del portal (%d, en orden)", len(in.Questions)), in.Questions)
	return generate(ctx, a.client, SchemaPlatformAnswer, m, in.Check)
}

// VerifyFacts cross-checks the CV against the profile (phase 5).
func (a *Analyst) VerifyFacts(ctx context.Context, in companion.VerifyInput) (companion.FactCheck, veredicto.Usage, error) {
	m := cvMessage(in.CV, in.Profile)
	m.data("Brechas del scoring", in.Scoring.GapAnalysis)
	return generate(ctx, a.client, SchemaVerifyFacts, m, in.Check)
}

// InterviewIntel anticipates 3 technical and 2 culture questions.
func (a *Analyst) InterviewIntel(ctx context.Context, in companion.VerifyInput) (companion.InterviewIntel, veredicto.Usage, error) {
	var m message
	m.data("Contenido del CV generado", in.CV)
	m.data("Culture Radar", in.Radar)
	m.data("Scoring", map[string]any{"confidence": in.Scoring.Confidence, "gap_analysis": in.Scoring.GapAnalysis})
	return generate(ctx, a.client, SchemaInterviewIntel, &m, in.CheckQ)
}

// BrandAudit audits the CV against the brand voice (phase 6).
func (a *Analyst) BrandAudit(ctx context.Context, in companion.AuditInput) (companion.BrandAuditResult, veredicto.Usage, error) {
	m := cvMessage(in.CV, in.Profile)
	return generate[companion.BrandAuditResult](ctx, a.client, SchemaBrandAudit, m, nil)
}

// Learnings formulates the retrospective's learnings (phase 7).
func (a *Analyst) Learnings(ctx context.Context, in companion.RetroInput) (companion.LearningSet, veredicto.Usage, error) {
	var m message
	m.text("Resumen de la sesión", in.Summary)
	m.data("Respuestas de la persona a las 4 preguntas", in.Answers)
	return generate(ctx, a.client, SchemaLearnings, &m, in.Check)
}

// Generalizability assesses each learning.
func (a *Analyst) Generalizability(ctx context.Context, in companion.GeneralizabilityInput) (companion.GeneralizabilitySet, veredicto.Usage, error) {
	var m message
	m.data("Learnings (índice desde 0)", in.Learnings)
	return generate(ctx, a.client, SchemaGeneralizability, &m, in.Check)
}

// Refine applies one instruction with the recent history.
func (a *Analyst) Refine(ctx context.Context, in companion.RefineInput) (companion.Refinement, veredicto.Usage, error) {
	m := cvMessage(in.CV, in.Profile)
	if len(in.Answers) > 0 {
		m.data("Respuestas del portal", in.Answers)
	}
	if in.Verify != nil {
		m.data("Verificación", in.Verify)
	}
	if len(in.History) > 0 {
		m.data(fmt.Sprintf("Historial reciente (%d turnos)", len(in.History)), in.History)
	}
	m.text("Instrucción de la persona", in.Instruction)
	return generate(ctx, a.client, SchemaRefine, m, in.Check)
}
