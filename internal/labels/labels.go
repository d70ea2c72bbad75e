// Package labels is the one table of the Spanish words people read for the
// codes the project keeps in its data and logs: decisions, the reasons an
// evaluation ended, statuses, kinds of run, what a confirmation asks.
// Codes stay codes in JSON, YAML and logs; wherever a consultant or a
// candidate reads one — a report, the console, a line the CLI prints about
// their work — it is shown through Of. The console reads the same table
// (JSON).
//
// Every code a contract defines has a label here: the tests check the
// table against the contracts' constants, and a rendering that lets a code
// through unlabelled fails them.
package labels

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// Domain is a family of codes: the same code may read differently in two
// (a run's "SUCCEEDED" and a confirmation's "approved").
type Domain string

// Domains.
const (
	Decision           Domain = "decision"            // a candidate's decision (APROBADO, DESCARTADO_GEM1…)
	Reason             Domain = "reason"              // why a candidate's evaluation ended (gate_gem1, qa_aprobado…)
	RunStatus          Domain = "run_status"          // an execution's status (RUNNING, SUCCEEDED…)
	RunKind            Domain = "run_kind"            // what a run is (search, debate…)
	LinkedOutcome      Domain = "linked_outcome"      // how a workflow started from a conversation ended
	ConfirmationStatus Domain = "confirmation_status" // pending, approved…
	Tool               Domain = "tool"                // what a confirmation asks about (senior_review…)
	ChatTool           Domain = "chat_tool"           // what a chat turn calls: a delegation or the chat's own tool
	Category           Domain = "category"            // a confirmation's category (decision, email_send…)
	Sensitivity        Domain = "sensitivity"         // low, medium, high
	Gate               Domain = "gate"                // a step of a candidate's evaluation (gate_gem1…)
	GateOutcome        Domain = "gate_outcome"        // how a gate decided (supera_umbral…)

	// The debate (seed 003): its log keeps the seed's codes; its report
	// reads them here.
	DebateTarget  Domain = "debate_target"  // escalado_para: NENHUM, COUNCIL, HUMANO
	DebateMode    Domain = "debate_mode"    // the route: simple, debate, council
	RoundKind     Domain = "round_kind"     // posicoes_iniciais, rebatidas, refinamento
	KeepsPosition Domain = "keeps_position" // a rebuttal's Sim, Nao, Parcialmente

	// The career companion (seed 001).
	CompanionDecision Domain = "companion_decision" // decision_matrix
	CompanionStatus   Domain = "companion_status"   // an application's status
	CompanionMode     Domain = "companion_mode"     // screening, full, onboarding
	NonNegotiable     Domain = "non_negotiable"     // a rule of non_negotiables_check
	RequirementMatch  Domain = "requirement_match"  // cumple, transferible, parcial, no_cumple
	GapType           Domain = "gap_type"           // hard_gap, partial, transferable, nice_to_have
	TechMaturity      Domain = "tech_maturity"      // the culture radar's tech_maturity
	CompanySize       Domain = "company_size"       // the culture radar's company_size_signal

	// The search's reports.
	DecisionDetail  Domain = "decision_detail"  // the sentence a report's decision heading adds
	Recommendation  Domain = "recommendation"   // GEM3's recommendation (SI, NO)
	QADecision      Domain = "qa_decision"      // GEM4's audit decision (APROBADO, BLOQUEADO)
	Severity        Domain = "severity"         // a finding's severity (critica…)
	ReferenceStatus Domain = "reference_status" // a 360 reference against the CV (confirma…)
	ReviewStatus    Domain = "review_status"    // a senior review as a report records it (pending…)
	Audit           Domain = "audit"            // which GEM4 audit (gem4, gem4_retry_1…)

	// What the console and the CLI show of a run's steps.
	State      Domain = "state"       // a state of the project's state machines (Gem1, Gate1, Approved…)
	StepAction Domain = "step_action" // what a step did (started, finished…)

	// A confirmation's preview: the name of each field.
	PreviewField Domain = "preview_field"
	// What a confirmation asks, by its toolName: the decision at stake in
	// words.
	Question Domain = "question"

	// The career companion's report (seed 001), beside the codes above.
	RequirementType  Domain = "requirement_type"  // A, B, C, D
	LearningCategory Domain = "learning_category" // non_negotiables…
	SkillLevel       Domain = "skill_level"       // basico…
)

var table = map[Domain]map[string]string{
	Decision: {
		"APROBADO":                  "Aprobado",
		"DESCARTADO_GEM1":           "Descartado en GEM1 (trayectoria y logros)",
		"DESCARTADO_GEM2":           "Descartado en GEM2 (evaluación de negocio)",
		"DESCARTADO_GEM3":           "Descartado en GEM3 (veredicto y referencias)",
		"ESCALADO_CONSULTOR_SENIOR": "Escalado al consultor senior",
		"APROBADO_POR_CONSULTOR":    "Aprobado por el consultor senior",
		"DESCARTADO_POR_CONSULTOR":  "Descartado por el consultor senior",
		"BLOQUEADO_QA_REINTENTO":    "Bloqueado por QA, en corrección",
	},
	Reason: {
		"gate_gem1":                         "No alcanzó el umbral de GEM1",
		"gate_gem2":                         "No alcanzó el umbral de GEM2",
		"gate_gem3":                         "No alcanzó el umbral de GEM3",
		"qa_aprobado":                       "Aprobado por la auditoría QA",
		"bloqueos_qa_consecutivos":          "Tres bloqueos de QA seguidos",
		"contradiccion_critica_irresoluble": "Contradicción crítica irresoluble entre fuentes",
		"falta_estructural_evidencia":       "Falta estructural de evidencia",
		"recomendacion_ambigua":             "Recomendación de GEM3 ambigua",
		"error_tecnico":                     "Error técnico",
	},
	RunStatus: {
		"PENDING":         "Pendiente",
		"RUNNING":         "En curso",
		"SUCCEEDED":       "Terminada",
		"FAILED":          "Fallida",
		"TIMED_OUT":       "Tiempo agotado",
		"ABORTED":         "Detenida",
		"PENDING_REDRIVE": "Pendiente de reanudar",
		"DAMAGED":         "Registro dañado",
	},
	// The kinds of the project's state machines (searchapi.KindOf of their
	// names) and the searches the intake lists; a machine a user created
	// shows under its own name.
	RunKind: {
		"search":           "Búsqueda",
		"executive-search": "Búsqueda",
		"career-companion": "Postulación (acompañante de carrera)",
		"debate":           "Debate",
		"gates-demo":       "Demostración de compuertas",
	},
	// How a workflow a conversation started ended, as the chat says it
	// (chat.Outcome*): the middle of «Búsqueda X (desde el turno N): …».
	LinkedOutcome: {
		"succeeded":  "terminó",
		"escalated":  "terminó con escalamiento",
		"failed":     "falló",
		"timed_out":  "se detuvo por tiempo agotado",
		"aborted":    "se detuvo antes de terminar",
		"unfollowed": "sigue en curso, pero esta conversación dejó de seguir su avance",
		"closed":     "sin aviso: la conversación no admite más mensajes",
	},
	ConfirmationStatus: {
		"pending":   "Pendiente",
		"resolving": "Decidida, entregándose",
		"approved":  "Aprobada",
		"rejected":  "Rechazada",
		"expired":   "Vencida",
		"damaged":   "Registro dañado",
	},
	Tool: {
		"senior_review":   "Revisión del consultor senior",
		"debate_decision": "Decisión del debate",
		"anti_impostor":   "Pausa antes de postular",
		// the chat's reports agent asks before it sends mail
		"delegate_to_reports": "Enviar informes por correo",
	},
	ChatTool: {
		"delegate_to_search-analyst":   "Delegación en el analista de búsqueda",
		"delegate_to_flags-classifier": "Delegación en el clasificador de banderas",
		"delegate_to_companion":        "Delegación en el acompañante de postulaciones",
		"delegate_to_debate":           "Delegación en el comité de debate",
		"delegate_to_reports":          "Delegación en el agente de informes",
		"current_time":                 "Hora actual",
		"recent_turns":                 "Turnos recientes de la conversación",
	},
	Category: {
		"decision":     "Decisión",
		"data_write":   "Escritura de datos",
		"external_api": "Servicio externo",
		"email_send":   "Envío de correo",
	},
	Sensitivity: {
		"low":    "baja",
		"medium": "media",
		"high":   "alta",
	},
	Gate: {
		"gate_gem1": "GEM1 · trayectoria y logros",
		"gate_gem2": "GEM2 · evaluación de negocio",
		"gate_gem3": "GEM3 · veredicto y referencias",
		"gate_qa":   "GEM4 · auditoría QA",
	},
	GateOutcome: {
		"supera_umbral":               "supera el umbral",
		"bajo_umbral":                 "no alcanza el umbral",
		"sin_evidencia_citada":        "no cita ninguna fuente: falta estructural de evidencia",
		"entradas_minimas_faltantes":  "no se ejecutó: faltan documentos mínimos",
		"recomendacion_incoherente":   "recomendación SI/NO incoherente con su puntaje",
		"qa_bloqueado_reintento":      "bloqueado por QA: se corrige y se audita de nuevo",
		"qa_bloqueado_sin_reintentos": "bloqueado por QA sin reintentos restantes",
		"contradiccion_irresoluble":   "contradicción crítica irresoluble",
	},
	DebateTarget: {
		"NENHUM":  "ninguno: la decisión se emite",
		"COUNCIL": "el consejo de tres miembros",
		"HUMANO":  "una persona",
	},
	DebateMode: {
		"auto":    "automática",
		"simple":  "simple (un cargo)",
		"debate":  "debate (dos o más cargos)",
		"council": "consejo (decisión crítica)",
	},
	RoundKind: {
		"posicoes_iniciais": "posiciones iniciales",
		"rebatidas":         "réplicas cruzadas",
		"refinamento":       "refinamiento final",
	},
	KeepsPosition: {
		"Sim":          "Sí",
		"Nao":          "No",
		"Parcialmente": "En parte",
	},

	DecisionDetail: {
		"APROBADO":                  "el candidato supera todas las etapas y la auditoría QA",
		"DESCARTADO_GEM1":           "trayectoria y logros por debajo del umbral",
		"DESCARTADO_GEM2":           "capacidad de ejecución por debajo del umbral",
		"DESCARTADO_GEM3":           "veredicto y referencias por debajo del umbral",
		"ESCALADO_CONSULTOR_SENIOR": "la evidencia no permite una decisión defendible",
		"APROBADO_POR_CONSULTOR":    "decisión humana sobre un caso escalado",
		"DESCARTADO_POR_CONSULTOR":  "decisión humana sobre un caso escalado",
		"BLOQUEADO_QA_REINTENTO":    "la auditoría QA pidió correcciones",
	},
	Recommendation: {
		"SI": "sí",
		"NO": "no",
	},
	QADecision: {
		"APROBADO":  "aprobado",
		"BLOQUEADO": "bloqueado",
	},
	Severity: {
		"critica": "crítica",
		"alta":    "alta",
		"media":   "media",
		"baja":    "baja",
	},
	ReferenceStatus: {
		"confirma":      "confirma",
		"contradice":    "contradice",
		"no_comparable": "no comparable",
	},
	ReviewStatus: {
		"pending":     "pendiente",
		"approved":    "aprobada",
		"rejected":    "rechazada",
		"expired":     "vencida",
		"unavailable": "no disponible",
	},
	Audit: {
		"gem4":         "Primera auditoría",
		"gem4_retry_1": "Segunda auditoría",
		"gem4_retry_2": "Tercera auditoría",
		"gem4_retry_3": "Cuarta auditoría",
	},

	// Every state of statemachines/*.asl.json (a name two machines share
	// reads the same in both).
	State: {
		// executive_search
		"Validate":               "Validación",
		"SearchBlocked":          "Búsqueda bloqueada",
		"Gem5":                   "GEM5 mandato",
		"MandateGate":            "Control del mandato",
		"MandateBlocked":         "Mandato bloqueado",
		"Candidates":             "Candidatos",
		"Gem1":                   "GEM1",
		"Gate1":                  "Umbral GEM1",
		"DiscardedGem1":          "No supera el umbral de GEM1",
		"Gem2":                   "GEM2",
		"Gate2":                  "Umbral GEM2",
		"DiscardedGem2":          "No supera el umbral de GEM2",
		"Gem3":                   "GEM3",
		"Gem3Consistent":         "Coherencia de GEM3",
		"Gem3Ambiguous":          "GEM3 ambiguo",
		"Gem3Reask":              "GEM3 nueva consulta",
		"EscalatedAmbiguous":     "Escalado: GEM3 ambiguo",
		"Gate3":                  "Umbral GEM3",
		"DiscardedGem3":          "No supera el umbral de GEM3",
		"Gem4":                   "GEM4 QA",
		"QAGate":                 "Umbral QA",
		"NextQAAttempt":          "Nueva auditoría QA",
		"Correction":             "Corrección QA",
		"Approved":               "QA aprobado",
		"EscalatedContradiction": "Escalado: contradicción",
		"EscalatedNoEvidence":    "Escalado: falta de evidencia",
		"EscalatedQABlocks":      "Escalado: bloqueos de QA",
		"TechnicalError":         "Error técnico",
		"Report":                 "Informe",
		"NeedsReview":            "¿Requiere revisión?",
		"Reported":               "Informe escrito",
		"LookupReview":           "Consulta de revisión",
		"ReviewRoute":            "Camino de la revisión",
		"AskReview":              "Revisión senior",
		"ReviewApproved":         "Revisión: aprobado",
		"ReviewRejected":         "Revisión: rechazado",
		"ApprovedEarlier":        "Revisión previa: aprobado",
		"RejectedEarlier":        "Revisión previa: rechazado",
		"ReviewExpired":          "Revisión vencida",
		"ReviewPending":          "Revisión pendiente",
		"ReviewUnavailable":      "Revisión no disponible",
		"ReportReviewed":         "Informe final",
		"ReportFailed":           "Informe no escrito",
		"Summary":                "Resumen",
		"Done":                   "Fin",
		// career_companion
		"Begin":                "Inicio",
		"Intent":               "Verificación de la oferta",
		"CultureRadar":         "Radar cultural",
		"CacheLookup":          "Consulta de la clasificación guardada",
		"ClassificationCached": "Clasificación reutilizada",
		"Classify":             "Clasificación de requisitos",
		"Sas":                  "Evaluación SAS",
		"Scoring":              "Puntaje",
		"AntiImpostorRule":     "Regla anti-impostor",
		"AskAntiImpostor":      "Pausa anti-impostor",
		"MarkProceed":          "Continuar",
		"RecordProceed":        "Continuación registrada",
		"MarkStop":             "Detenerse",
		"RecordStop":           "Detención registrada",
		"Draft":                "Redacción del CV",
		"Stopped":              "Detenida por la persona",
		"Rejected":             "Rechazada por la verificación",
		// debate
		"Prepare":                "Preparación",
		"Round1":                 "Ronda 1",
		"Position":               "Posición",
		"PositionTimedOut":       "Posición: tiempo agotado",
		"PositionFailed":         "Posición: falla",
		"CloseRound1":            "Cierre de la ronda 1",
		"Checkpoint":             "Punto de control",
		"Rebuttal":               "Réplica",
		"RebuttalTimedOut":       "Réplica: tiempo agotado",
		"Refine":                 "Refinamiento",
		"RefinePosition":         "Posición refinada",
		"RefinePositionTimedOut": "Posición refinada: tiempo agotado",
		"RefinePositionFailed":   "Posición refinada: falla",
		"CloseRefine":            "Cierre del refinamiento",
		"Synthesize":             "Síntesis",
		"Escalation":             "Escalamiento",
		"Council":                "Consejo",
		"Vote":                   "Voto",
		"VoteTimedOut":           "Voto: tiempo agotado",
		"VoteFailed":             "Voto: falla",
		"CloseCouncil":           "Cierre del consejo",
		"AfterCouncil":           "Tras el consejo",
		"AskHuman":               "Decisión de una persona",
		"FinishAnswered":         "Cierre con decisión",
		"FinishUnanswered":       "Cierre sin decisión",
		"Finish":                 "Cierre",
		"DebateFailed":           "Debate fallido",
		// gates_demo
		"Defaults":      "Valores por omisión",
		"EachCandidate": "Cada candidato",
		"Escalated":     "Escalado",
	},
	StepAction: {
		"started":   "inicia",
		"finished":  "termina",
		"retried":   "reintenta",
		"failed":    "falla",
		"succeeded": "termina con éxito",
		"timed-out": "agota su tiempo",
		"aborted":   "se detiene",
		// a Map's items
		"iteration-started":   "inicia un elemento",
		"iteration-succeeded": "termina un elemento",
		"iteration-failed":    "falla en un elemento",
		"iteration-aborted":   "se detiene en un elemento",
	},

	PreviewField: {
		// senior_review (executive_search.asl.json) and its escalation package
		"search_id":                   "Búsqueda",
		"candidate_id":                "Candidato",
		"decision":                    "Decisión actual",
		"report":                      "Informe",
		"escalation":                  "Paquete de escalamiento",
		"motivo":                      "Motivo",
		"documentos_faltantes":        "Documentos faltantes",
		"resumen_ejecutivo":           "Resumen ejecutivo",
		"bloqueos_y_correcciones":     "Bloqueos y correcciones intentadas",
		"riesgos_si_se_fuerza_cierre": "Riesgos si se fuerza el cierre",
		// anti_impostor (career_companion.asl.json)
		"application_id": "Postulación",
		"hard_gaps":      "Brechas duras",
		"message":        "Mensaje",
		// debate_decision (the debate's Preview)
		"debate_id":         "Debate",
		"question":          "Pregunta",
		"options":           "Opciones",
		"proposed_decision": "Decisión propuesta",
		"confidence":        "Confianza",
		"summary":           "Síntesis",
		"divergences":       "Divergencias",
		"reasons":           "Motivos",
		// the chat's reports agent (email_send)
		"to":            "Destinatario",
		"subject":       "Asunto",
		"candidate_ids": "Candidatos",
	},

	Question: {
		"senior_review":       "¿Aprobar al candidato escalado? Aprobar lo deja «Aprobado por el consultor senior»; rechazar, «Descartado por el consultor senior».",
		"debate_decision":     "¿Aceptar la decisión que propone el debate? Rechazarla la deja sin decidir.",
		"anti_impostor":       "¿Seguir con la postulación pese a las brechas duras? Aprobar sigue con la redacción del CV; rechazar la detiene.",
		"delegate_to_reports": "¿Enviar estos informes por correo? El envío no se puede deshacer.",
	},

	CompanionDecision: {
		"max_priority":    "Máxima prioridad",
		"consider":        "Considerar",
		"strategic_only":  "Solo estratégica",
		"not_recommended": "No recomendada",
	},
	CompanionStatus: {
		"running":   "en curso",
		"paused":    "en pausa, esperando tu respuesta",
		"stopped":   "detenida por ti",
		"completed": "completa",
		"rejected":  "rechazada: no es una oferta de empleo",
	},
	CompanionMode: {
		"screening":  "evaluación rápida (fases 1-2)",
		"full":       "completo (fases 1-3)",
		"onboarding": "incorporación (fases 1-2)",
	},
	NonNegotiable: {
		"remote_only":         "Solo remoto",
		"min_salary":          "Salario mínimo",
		"no_relocation":       "Sin reubicación",
		"excluded_industries": "Industrias excluidas",
		"max_travel_pct":      "Viajes máximos",
	},
	RequirementType: {
		"A": "filtro duro",
		"B": "obligatorio",
		"C": "deseable real",
		"D": "deseable inflado",
	},
	RequirementMatch: {
		"cumple":       "Cumple",
		"transferible": "Transferible",
		"parcial":      "Parcial",
		"no_cumple":    "No cumple",
	},
	GapType: {
		"hard_gap":     "brecha dura",
		"partial":      "cumplimiento parcial",
		"transferable": "experiencia transferible",
		"nice_to_have": "deseable",
	},
	TechMaturity: {
		"legacy":       "legado",
		"mixed":        "mixta",
		"modern":       "moderna",
		"cutting_edge": "de vanguardia",
	},
	CompanySize: {
		"startup":    "Startup",
		"mid":        "mediana",
		"enterprise": "gran empresa",
		"unknown":    "sin dato",
	},
	LearningCategory: {
		"non_negotiables":  "innegociables",
		"brand_voice":      "voz de marca",
		"personal_context": "contexto personal",
		"process":          "proceso",
		"general":          "general",
	},
	SkillLevel: {
		"basico":     "básico",
		"intermedio": "intermedio",
		"avanzado":   "avanzado",
		"experto":    "experto",
	},
}

// Lookup is the label of code in domain; ok is false when the table has
// none.
func Lookup(d Domain, code string) (label string, ok bool) {
	label, ok = table[d][code]
	return label, ok
}

// Of is the label of code in domain. A code the table lacks (a bug the
// tests are there to catch) reads as itself with its underscores spaced,
// never as nothing.
func Of(d Domain, code string) string {
	if l, ok := Lookup(d, code); ok {
		return l
	}
	return strings.ReplaceAll(code, "_", " ")
}

// Phrase is Of for the middle of a sentence: the label with its first
// letter lowered, unless it opens with an acronym (GEM1, QA).
func Phrase(d Domain, code string) string {
	l := Of(d, code)
	r := []rune(l)
	if len(r) > 1 && unicode.IsUpper(r[0]) && !unicode.IsUpper(r[1]) && !unicode.IsDigit(r[1]) {
		r[0] = unicode.ToLower(r[0])
	}
	return string(r)
}

// Count is n followed by the noun that agrees with it: "1 informe",
// "2 informes", "0 informes".
func Count(n int, singular, plural string) string {
	if n == 1 {
		return "1 " + singular
	}
	return strconv.Itoa(n) + " " + plural
}

// Codes lists a domain's codes, sorted.
func Codes(d Domain) []string {
	out := make([]string, 0, len(table[d]))
	for c := range table[d] {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// Domains lists the domains, sorted.
func Domains() []Domain {
	out := make([]Domain, 0, len(table))
	for d := range table {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// JSON is the whole table, {domain: {code: label}}, for the console.
func JSON() []byte {
	b, _ := json.Marshal(table)
	return b
}
