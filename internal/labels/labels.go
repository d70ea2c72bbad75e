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
	"strings"
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
	ConfirmationStatus Domain = "confirmation_status" // pending, approved…
	Tool               Domain = "tool"                // what a confirmation asks about (senior_review…)
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
	// The kinds of the project's state machines (httpapi.KindOf of their
	// names) and the searches the intake lists; a machine a user created
	// shows under its own name.
	RunKind: {
		"search":           "Búsqueda",
		"executive-search": "Búsqueda",
		"career-companion": "Postulación (acompañante de carrera)",
		"debate":           "Debate",
		"gates-demo":       "Demostración de compuertas",
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
		"COUNCIL": "el council de tres miembros",
		"HUMANO":  "una persona",
	},
	DebateMode: {
		"auto":    "automática",
		"simple":  "simple (un cargo)",
		"debate":  "debate (dos o más cargos)",
		"council": "council (decisión crítica)",
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
		"screening":  "screening (fases 1-2)",
		"full":       "completo (fases 1-3)",
		"onboarding": "onboarding (fases 1-2)",
	},
	NonNegotiable: {
		"remote_only":         "Solo remoto",
		"min_salary":          "Salario mínimo",
		"no_relocation":       "Sin reubicación",
		"excluded_industries": "Industrias excluidas",
		"max_travel_pct":      "Viajes máximos",
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
