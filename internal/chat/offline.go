package chat

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/veredicto/veredicto"
)

// Offline is the supervisor without a language model: it delegates when
// the turn's intent reaches HintThreshold — it follows the system prompt's
// internal hint, which the turn's scorer (the keyword heuristic or the
// tenant's learned model) put there — filling the tool's arguments from
// the request's words (ids, e-mail, operation verbs), and otherwise
// answers from a fixed template that says it is offline. A status
// question («¿ya terminó…?») is delegated only to an agent whose tool can
// answer it without acting again (the analyst's status, the flags
// classifier's reading). After a tool it relays the tool's summary.
type Offline struct{ Registry *Registry }

var _ Model = Offline{}

// OfflineNotice opens every offline answer.
const OfflineNotice = "(Modo sin conexión: sin modelo de lenguaje.)"

// OfflineTemplate is the offline answer to a request it does not delegate.
const OfflineTemplate = OfflineNotice + " Solo puedo delegar peticiones claras en los especialistas. Prueba, por ejemplo: «compara a c-001 con c-002 en la búsqueda cfo-2026», «marca las banderas de la entrevista int-1», «abre un debate sobre c-005 en la búsqueda cfo-2026» o «envía los informes de c-001 de la búsqueda cfo-2026 a cliente@example.com»."

// OfflineStatusTemplate answers, offline, a status question whose agent
// has no way to tell the status without acting again.
const OfflineStatusTemplate = OfflineNotice + " Sin modelo no puedo consultar el estado de ese trabajo sin volver a lanzarlo; sigue su avance en el stream de la conversación."

var hintRE = regexp.MustCompile(`INTERNAL DELEGATION HINT: The user's request likely maps to specialist agent '([a-z0-9-]+)'`)

// hinted is the agent the system prompt's internal hint names, or "".
func hinted(system string) string {
	if m := hintRE.FindStringSubmatch(system); m != nil {
		return m[1]
	}
	return ""
}

// Next answers one call deterministically.
func (o Offline) Next(_ context.Context, p Prompt) (Reply, error) {
	if len(p.Messages) == 0 {
		return Reply{Content: OfflineTemplate}, nil
	}
	last := p.Messages[len(p.Messages)-1]
	if last.Role == "tool" {
		return Reply{Content: OfflineNotice + " " + relay(last.Content)}, nil
	}
	target := hinted(p.System)
	if p.System == "" {
		// No system prompt (a caller of its own): score the request.
		if in := o.Registry.ScoreDelegationIntent(last.Content); in.Score >= HintThreshold {
			target = in.Target
		}
	}
	agent, ok := o.Registry.Agent(target)
	if !ok || !slices.ContainsFunc(p.Tools, func(t ToolSpec) bool { return t.Name == agent.Tool }) {
		return Reply{Content: OfflineTemplate}, nil
	}
	if IsStatusQuestion(last.Content) && agent.Action != ActionSearch && agent.Action != ActionFlags {
		return Reply{Content: OfflineStatusTemplate}, nil
	}
	args := OfflineArgs(agent, last.Content)
	b, _ := json.Marshal(args)
	return Reply{ToolCalls: []ToolCall{{ID: "offline-1", Name: agent.Tool, Arguments: b}}}, nil
}

// relay reads a tool message (toolMessage) back into a sentence.
func relay(msg string) string {
	_, body, _ := strings.Cut(msg, "<<<\n")
	body, _, _ = strings.Cut(body, "\n>>>")
	var r struct {
		OK      bool   `json:"ok"`
		Summary string `json:"summary"`
		Error   string `json:"error"`
	}
	if json.Unmarshal([]byte(body), &r) != nil {
		return "La herramienta respondió algo que no sé leer."
	}
	if !r.OK {
		return "No se pudo completar: " + r.Error
	}
	if r.Summary == "" {
		return "Hecho."
	}
	return r.Summary
}

var (
	candidateRE = regexp.MustCompile(`(?i)\bc-\d{1,6}\b`)
	emailRE     = regexp.MustCompile(`[^\s@<>"(),;]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,24}`)
)

// idAfter returns the first word after one of the markers that looks like
// an id (holds a digit, '-' or '_'), or "".
func idAfter(text string, markers ...string) string {
	toks := strings.FieldsFunc(text, func(r rune) bool {
		return r == ' ' || r == ',' || r == '?' || r == '¿' || r == '!' || r == ':' || r == ';' || r == '\n' || r == '\t' || r == '«' || r == '»' || r == '"'
	})
	for i, tk := range toks {
		if !slices.Contains(markers, fold(tk)) {
			continue
		}
		for _, next := range toks[i+1 : min(i+4, len(toks))] {
			next = strings.TrimRight(next, ".")
			if strings.ContainsAny(next, "0123456789-_") && veredicto.ValidID(next) && !candidateRE.MatchString(next) {
				return next
			}
		}
	}
	return ""
}

// OfflineArgs fills an agent's tool arguments from the request's words.
func OfflineArgs(a *Agent, text string) map[string]any {
	toks := words(fold(text))
	has := func(prefixes ...string) bool {
		return slices.ContainsFunc(toks, func(t string) bool {
			return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(t, p) })
		})
	}
	cands := []string{}
	for _, c := range candidateRE.FindAllString(text, MaxCompare) {
		if c = strings.ToLower(c); !slices.Contains(cands, c) {
			cands = append(cands, c)
		}
	}
	searchID := idAfter(text, "busqueda", "search", "proceso")
	name := a.Name
	if name == "" {
		name = a.ID
	}
	args := map[string]any{"reason": "la petición encaja con " + name + " (heurística sin conexión)", "request": text}
	switch a.Action {
	case ActionSearch:
		op := "status"
		switch {
		case IsStatusQuestion(text):
			// «¿Ya terminó de correr la evaluación?» asks, it does not run.
		case len(cands) >= 2 || has("compar"):
			op = "compare"
		case has("lanza", "inicia", "ejecuta", "run", "start", "launch", "evalua", "corre"):
			op = "start"
		}
		dim := ""
		if i := slices.IndexFunc(toks, func(t string) bool { return t == "en" || t == "on" || t == "sobre" }); op == "compare" && i >= 0 {
			for _, t := range toks[i+1:] {
				if !candidateRE.MatchString(t) && t != "la" && t != "el" && t != "the" && t != "busqueda" && t != "search" && t != searchID {
					dim = t
					break
				}
			}
		}
		args["operation"], args["search_id"], args["candidate_ids"], args["dimension"] = op, searchID, cands, dim
	case ActionFlags:
		args["interview_id"] = idAfter(text, "entrevista", "interview", "transcripcion", "transcript")
	case ActionCompanion:
		mode := "screening"
		if has("complet", "full") {
			mode = "full"
		}
		args["mode"], args["company"], args["platform"] = mode, "", ""
		args["application_id"] = idAfter(text, "postulacion", "application", "vacante", "job", "aplicacion")
	case ActionDebate:
		cand := ""
		if len(cands) > 0 {
			cand = cands[0]
		}
		args["search_id"], args["candidate_id"], args["question"], args["options"] = searchID, cand, text, []string{}
	case ActionReports:
		op := "send"
		if has("export") {
			op = "export"
		}
		args["operation"], args["search_id"], args["candidate_ids"], args["recipient"] = op, searchID, cands, emailRE.FindString(text)
	}
	return args
}
