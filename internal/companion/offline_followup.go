package companion

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/veredicto/veredicto"
)

var _ FollowUp = Offline{}

var (
	motivationQRE = regexp.MustCompile(`(?i)por qu[eé]|motiva|inter[eé]s|why`)
	salaryQRE     = regexp.MustCompile(`(?i)renta|salari|sueldo|pretensi|salary|compensa`)
	yearsQRE      = regexp.MustCompile(`(?i)(^|[^\pL])a[ñn]os([^\pL]|$)|years`)
	modeQRE       = regexp.MustCompile(`(?i)modalidad|remot|presencial|h[ií]brid`)
)

// PlatformAnswers answers from the profile and the CV content with fixed
// templates: motivation, salary (the profile's target, never its floor:
// without a target it asks for the role's range), years (of the skill the
// question names, else the longest), work mode, and otherwise the killer summary and the first
// bullet. The answers are text to paste: the baseline's mark is the
// report's, never inside them.
func (Offline) PlatformAnswers(ctx context.Context, in AnswerInput) (PlatformAnswers, veredicto.Usage, error) {
	if err := ctx.Err(); err != nil {
		return PlatformAnswers{}, veredicto.Usage{}, err
	}
	p := in.Profile
	first := ""
	for _, id := range experienceOrder(p, in.CV.ImpactBullets) {
		if b := in.CV.ImpactBullets[id]; len(b) > 0 {
			first = b[0]
			break
		}
	}
	var out PlatformAnswers
	for _, q := range in.Questions {
		var a string
		switch {
		case salaryQRE.MatchString(q) && p.Preferences.TargetSalary > 0:
			a = fmt.Sprintf("Mi expectativa es de %s %s %s, conversable según el paquete completo.", money(p.Preferences.TargetSalary), p.NonNegotiables.Currency, salaryPeriod(p))
		case salaryQRE.MatchString(q):
			a = "Prefiero conversarlo con el rango previsto para el cargo y el paquete completo a la vista: ¿cuál es la banda del rol?"
		case motivationQRE.MatchString(q) && len(p.Motivations) > 0:
			a = "Me motiva " + strings.ToLower(strings.Join(p.Motivations, " y ")) + ". " + firstLine(in.CV.KillerSummary)
		case yearsQRE.MatchString(q) && len(p.Skills) > 0:
			// The skill the question names, else the longest one.
			best := p.Skills[0]
			named := false
			for _, s := range p.Skills {
				if wordIn(q, s.Name) && (!named || s.Years > best.Years) {
					best, named = s, true
				} else if !named && s.Years > best.Years {
					best = s
				}
			}
			a = fmt.Sprintf("%g años con %s (nivel %s), según mi perfil.", best.Years, best.Name, best.Level)
		case modeQRE.MatchString(q) && p.Preferences.WorkMode != "":
			a = fmt.Sprintf("Sí. Prefiero modalidad %s", p.Preferences.WorkMode)
			if p.Preferences.Location != "" {
				a += ", desde " + p.Preferences.Location
			}
			a += "."
		default:
			a = strings.TrimSpace(firstLine(in.CV.KillerSummary) + " " + first)
		}
		out.Answers = append(out.Answers, QAPair{Question: q, Answer: a})
	}
	return out, veredicto.Usage{}, nil
}

func salaryPeriod(p ProfileSnapshot) string {
	if p.NonNegotiables.SalaryPeriod == PeriodAnnual {
		return "anuales"
	}
	return "mensuales"
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// VerifyFacts leaves the factual check to code (CodeViolations) and flags
// transferable requirements the CV does not mention.
func (Offline) VerifyFacts(ctx context.Context, in VerifyInput) (FactCheck, veredicto.Usage, error) {
	if err := ctx.Err(); err != nil {
		return FactCheck{}, veredicto.Usage{}, err
	}
	fc := FactCheck{Violations: []string{}, AdvocacyCheck: []string{}}
	cv := strings.ToLower(in.CV.KillerSummary)
	for _, bs := range in.CV.ImpactBullets {
		cv += " " + strings.ToLower(strings.Join(bs, " "))
	}
	cvStems := stems(cv)
	for _, g := range in.Scoring.GapAnalysis {
		if g.GapType != "transferable" {
			continue
		}
		if overlap(stems(g.Requirement), cvStems) == 0 {
			fc.AdvocacyCheck = append(fc.AdvocacyCheck, fmt.Sprintf("%s el transferible «%s» no aparece en el CV: posiciónalo explícitamente.", BaselineLabel, g.Requirement))
		} else {
			fc.AdvocacyCheck = append(fc.AdvocacyCheck, fmt.Sprintf("%s el transferible «%s» está presente en el CV.", BaselineLabel, g.Requirement))
		}
	}
	return fc, veredicto.Usage{}, nil
}

// InterviewIntel turns the largest gaps and the stack into 3 technical
// questions and the culture signals into 2 culture questions.
func (Offline) InterviewIntel(ctx context.Context, in VerifyInput) (InterviewIntel, veredicto.Usage, error) {
	if err := ctx.Err(); err != nil {
		return InterviewIntel{}, veredicto.Usage{}, err
	}
	var ii InterviewIntel
	for _, g := range in.Scoring.GapAnalysis {
		if len(ii.TechnicalQuestions) == 3 {
			break
		}
		ii.TechnicalQuestions = append(ii.TechnicalQuestions, fmt.Sprintf("La oferta pide «%s»: ¿cómo lo abordarías con tu experiencia actual?", g.Requirement))
	}
	for _, t := range in.Radar.TechStackDetected {
		if len(ii.TechnicalQuestions) == 3 {
			break
		}
		ii.TechnicalQuestions = append(ii.TechnicalQuestions, fmt.Sprintf("Cuéntanos un problema difícil que hayas resuelto con %s.", t))
	}
	for len(ii.TechnicalQuestions) < 3 {
		ii.TechnicalQuestions = append(ii.TechnicalQuestions, []string{"Describe la decisión técnica de la que estás más orgulloso y qué harías distinto.", "¿Cómo diseñarías la observabilidad de un servicio crítico?", "¿Cómo priorizas deuda técnica frente a nuevas funcionalidades?"}[len(ii.TechnicalQuestions)])
	}
	for _, s := range in.Radar.CultureSignals {
		if len(ii.CultureQuestions) == 2 {
			break
		}
		ii.CultureQuestions = append(ii.CultureQuestions, fmt.Sprintf("La empresa dice: «%s». ¿Qué ejemplo tuyo lo demuestra?", s))
	}
	for len(ii.CultureQuestions) < 2 {
		ii.CultureQuestions = append(ii.CultureQuestions, []string{"¿En qué tipo de equipo das lo mejor de ti?", "Cuéntanos un desacuerdo con tu equipo y cómo lo resolviste."}[len(ii.CultureQuestions)])
	}
	return ii, veredicto.Usage{}, nil
}

var (
	hypeRE     = regexp.MustCompile(`(?i)\b(excelente|incre[ií]ble|rockstar|ninja|gur[uú]|apasionad\w*|el mejor|la mejor)\b`)
	businessRE = regexp.MustCompile(`(?i)\b(clientes?|negocio|costos?|ahorro|ingresos|reclamos|operaciones|usuarios?|horas|minutos)\b`)
	techRE     = regexp.MustCompile(`(?i)\b(go|aws|sqs|api|apis|servicios?|arquitectura|postgresql|python|eventos|workers|colas|sistemas?)\b`)
)

// BrandAudit checks the six criteria lexically: no hype words (tone), a
// pillar and the ethos echoed, both technical and business words, the
// non-negotiables (set by code), and one story (the summary shares words
// with the bullets).
func (Offline) BrandAudit(ctx context.Context, in AuditInput) (BrandAuditResult, veredicto.Usage, error) {
	if err := ctx.Err(); err != nil {
		return BrandAuditResult{}, veredicto.Usage{}, err
	}
	var bullets []string
	for _, id := range experienceOrder(in.Profile, in.CV.ImpactBullets) {
		bullets = append(bullets, in.CV.ImpactBullets[id]...)
	}
	all := in.CV.KillerSummary + "\n" + strings.Join(bullets, "\n")
	allStems := stems(all)
	a := BrandAuditResult{RedLinesRespected: true}
	a.ToneMatch = !hypeRE.MatchString(all)
	for _, p := range in.Profile.Pillars {
		if overlap(stems(p), allStems) > 0 {
			a.PillarReinforced = true
		}
	}
	a.EthosVisible = overlap(stems(in.Profile.Ethos), allStems) > 0
	a.TechBusinessBalance = techRE.MatchString(all) && businessRE.MatchString(all)
	a.NarrativeCoherent = overlap(stems(in.CV.KillerSummary), stems(strings.Join(bullets, " "))) > 0
	note := func(ok bool, yes, no string) {
		if ok {
			a.Notes = append(a.Notes, BaselineLabel+" "+yes)
		} else {
			a.Notes = append(a.Notes, BaselineLabel+" "+no)
		}
	}
	note(a.ToneMatch, "tono sin superlativos vacíos.", "hay superlativos que la brand_voice no respalda.")
	note(a.PillarReinforced, "al menos un pilar aparece en el contenido.", "ningún pilar del perfil aparece en el contenido.")
	note(a.EthosVisible, "el ethos se refleja en el contenido.", "el ethos no se ve en el contenido.")
	note(a.TechBusinessBalance, "hay balance técnico/negocio.", "falta el lado técnico o el de negocio.")
	note(a.NarrativeCoherent, "el summary y los bullets cuentan la misma historia.", "el summary y los bullets no comparten hilo.")
	return a, veredicto.Usage{}, nil
}

var retroCategory = []string{"non_negotiables", "brand_voice", "personal_context", "process"}

// Learnings turns each substantive answer into a learning of its
// question's category.
func (Offline) Learnings(ctx context.Context, in RetroInput) (LearningSet, veredicto.Usage, error) {
	if err := ctx.Err(); err != nil {
		return LearningSet{}, veredicto.Usage{}, err
	}
	ls := LearningSet{Learnings: []LearningDraft{}}
	for i, qa := range in.Answers {
		a := strings.TrimSpace(qa.Answer)
		if a == "" || regexp.MustCompile(`(?i)^(no|nada|ninguno|todo bien|sí|si|ok)\.?$`).MatchString(a) {
			continue
		}
		cat := "general"
		if i < len(retroCategory) {
			cat = retroCategory[i]
		}
		ls.Learnings = append(ls.Learnings, LearningDraft{Category: cat, Description: a, TriggerContext: qa.Question, Solution: BaselineLabel + " documentarlo y revisarlo en la próxima postulación"})
	}
	return ls, veredicto.Usage{}, nil
}

// Generalizability: only process learnings with a solution are marked
// generalizable; the others are personal.
func (Offline) Generalizability(ctx context.Context, in GeneralizabilityInput) (GeneralizabilitySet, veredicto.Usage, error) {
	if err := ctx.Err(); err != nil {
		return GeneralizabilitySet{}, veredicto.Usage{}, err
	}
	var g GeneralizabilitySet
	for i, l := range in.Learnings {
		ok := l.Category == "process" && strings.TrimSpace(l.Solution) != ""
		why := BaselineLabel + " aprendizaje personal de esta postulación"
		if ok {
			why = BaselineLabel + " fricción del proceso con solución: aplica a cualquier candidato"
		}
		g.Assessments = append(g.Assessments, Assessment{Index: i, IsGeneralizable: ok, Justification: why})
	}
	return g, veredicto.Usage{}, nil
}
