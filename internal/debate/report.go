package debate

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/veredicto/veredicto/internal/labels"
	"github.com/veredicto/veredicto/prompts"
)

// Check is one item of the seed's validation checklists.
type Check struct {
	Phase string // antes, durante, despues
	Item  string
	OK    bool
	Note  string
}

// Checklists checks the seed's three checklists on a result, in code.
// chunks is the size of the knowledge base.
func Checklists(r *Result, chunks int) []Check {
	c := r.Question.Config
	var out []Check
	add := func(phase, item string, ok bool, note string) {
		out = append(out, Check{Phase: phase, Item: item, OK: ok, Note: note})
	}
	words := len(strings.Fields(r.Question.Question))
	add("antes", "¿La pregunta es clara y específica?", words >= 4 && len(r.Question.Options) >= 2,
		fmt.Sprintf("%d palabras, %d opciones", words, len(r.Question.Options)))
	need := 1
	if r.Mode == ModeDebate {
		need = 2
	}
	add("antes", "¿Se seleccionaron los agentes correctos?", len(r.Question.Participants) >= need,
		fmt.Sprintf("%d cargos para la ruta %s", len(r.Question.Participants), r.Mode))
	add("antes", "¿Los timeouts están configurados?", c.Timeout.PerAgent > 0 && c.Timeout.PerRound > 0 && c.Timeout.Total > 0 && c.Timeout.Council > 0 && c.RAG.Timeout > 0,
		fmt.Sprintf("agente %gs, ronda %gs, total %gs, consejo %gs, RAG %gs", c.Timeout.PerAgent, c.Timeout.PerRound, c.Timeout.Total, c.Timeout.Council, c.RAG.Timeout))
	add("antes", "¿El RAG está disponible (si es necesario)?", chunks > 0, fmt.Sprintf("%d fragmentos en la base de conocimiento", chunks))
	add("antes", "¿El disyuntor está activo?", c.Debate.Rounds.Max > 0 && c.CircuitBreaker.MaxIterations > 0 && c.CircuitBreaker.MaxRefinements > 0,
		fmt.Sprintf("máx. %d rondas, %d iteraciones, %d refinamientos", c.Debate.Rounds.Max, c.CircuitBreaker.MaxIterations, c.CircuitBreaker.MaxRefinements))
	add("antes", "¿El log de ejecución está iniciado?", r.SessionID != "" && !r.Start.IsZero(), "sesión "+r.SessionID)

	prolonged := ""
	for i := 1; i < len(r.Rounds); i++ {
		for _, id := range r.Rounds[i].TimedOut() {
			if contains(r.Rounds[i-1].TimedOut(), id) {
				prolonged = id
			}
		}
	}
	add("durante", "¿Ningún agente en timeout prolongado?", prolonged == "", orDash(prolonged, "en timeout en dos rondas seguidas"))
	progressing := true
	var convs []string
	for i, rd := range r.Rounds {
		convs = append(convs, fmt.Sprintf("%.1f%%", rd.Convergence))
		if i > 0 && rd.Convergence < r.Rounds[i-1].Convergence {
			progressing = false
		}
	}
	add("durante", "¿La convergencia progresa?", progressing, strings.Join(convs, " → "))
	loop := r.Trip != nil && r.Trip.Trigger == TriggerLoop
	add("durante", "¿Loop no detectado?", !loop, map[bool]string{true: "loop detectado: IMPASSE", false: "sin loop"}[loop])
	elapsed := r.End.Sub(r.Start)
	add("durante", fmt.Sprintf("¿Tiempo total < %gs?", c.Timeout.Total), elapsed < Dur(c.Timeout.Total) && !r.ReducedByTimeout, elapsed.Round(time.Millisecond).String())
	add("durante", fmt.Sprintf("¿Consultas RAG dentro del límite (%d)?", c.RAG.MaxQueries), r.RAG.Total <= c.RAG.MaxQueries && r.RAG.Refused == 0,
		fmt.Sprintf("%d consultas, %d rechazadas", r.RAG.Total, r.RAG.Refused))

	add("despues", "¿Se generó la síntesis?", strings.TrimSpace(r.Synthesis.Summary) != "", "")
	add("despues", "¿Se calculó la confianza?", len(r.Rounds) > 0, fmt.Sprintf("%.1f%%", r.Confidence))
	escalated := r.Target == TargetNone || r.Target == TargetCouncil && r.Council != nil || r.Target == TargetHuman && (r.Pending || r.Human != nil)
	add("despues", "¿La escalación (si era necesaria) se hizo?", escalated, "destino: "+labels.Of(labels.DebateTarget, r.Target))
	add("despues", "¿El log se finalizó?", !r.End.IsZero(), "")
	clear := r.Final != "" && contains(r.Question.Options, r.Final)
	note := "decisión: " + r.Final
	if r.Pending {
		note = "pendiente de decisión humana"
	}
	add("despues", "¿La decisión final es clara y accionable?", clear, note)
	return out
}

func orDash(s, suffix string) string {
	if s == "" {
		return "—"
	}
	return strings.TrimSpace(s + " " + suffix)
}

// Log is DIR/debate_log.yaml: exactly the seed's debate_log fields.
type Log struct {
	DebateLog LogBody `yaml:"debate_log" json:"debate_log"`
}

// LogBody holds the seed's fields.
type LogBody struct {
	SessionID       string     `yaml:"session_id" json:"session_id"`
	TimestampInicio string     `yaml:"timestamp_inicio" json:"timestamp_inicio"`
	TimestampFim    string     `yaml:"timestamp_fim" json:"timestamp_fim"`
	Query           string     `yaml:"query" json:"query"`
	Participantes   []string   `yaml:"participantes" json:"participantes"`
	Rodadas         []LogRound `yaml:"rodadas" json:"rodadas"`
	RAGQueries      LogRAG     `yaml:"rag_queries" json:"rag_queries"`
	Resultado       LogResult  `yaml:"resultado" json:"resultado"`
	Metricas        LogMetrics `yaml:"metricas" json:"metricas"`
}

// LogRound is one of rodadas; convergencia is a percentage.
type LogRound struct {
	Numero             int      `yaml:"numero" json:"numero"`
	Tipo               string   `yaml:"tipo" json:"tipo"`
	DuracaoMS          int64    `yaml:"duracao_ms" json:"duracao_ms"`
	Convergencia       float64  `yaml:"convergencia" json:"convergencia"`
	AgentesResponderam []string `yaml:"agentes_responderam" json:"agentes_responderam"`
	AgentesTimeout     []string `yaml:"agentes_timeout" json:"agentes_timeout"`
	MudancasPosicao    int      `yaml:"mudancas_posicao" json:"mudancas_posicao"`
}

// LogRAG is rag_queries.
type LogRAG struct {
	Total         int      `yaml:"total" json:"total"`
	Sucesso       int      `yaml:"sucesso" json:"sucesso"`
	Timeout       int      `yaml:"timeout" json:"timeout"`
	ChunksCitados []string `yaml:"chunks_citados" json:"chunks_citados"`
}

// LogResult is resultado; percentages.
type LogResult struct {
	ConvergenciaFinal float64 `yaml:"convergencia_final" json:"convergencia_final"`
	ConfiancaSintese  float64 `yaml:"confianca_sintese" json:"confianca_sintese"`
	EscaladoPara      string  `yaml:"escalado_para" json:"escalado_para"`
	CircuitBreaker    bool    `yaml:"circuit_breaker" json:"circuit_breaker"`
}

// LogMetrics is metricas.
type LogMetrics struct {
	TempoTotalMS      int64 `yaml:"tempo_total_ms" json:"tempo_total_ms"`
	TokensConsumidos  int   `yaml:"tokens_consumidos" json:"tokens_consumidos"`
	RodadasExecutadas int   `yaml:"rodadas_executadas" json:"rodadas_executadas"`
}

func pct(x float64) float64 { return math.Round(x*10) / 10 }

// DebateLog is the seed's log of r.
func (r *Result) DebateLog() Log {
	b := LogBody{
		SessionID:       r.SessionID,
		TimestampInicio: r.Start.UTC().Format(time.RFC3339Nano),
		TimestampFim:    r.End.UTC().Format(time.RFC3339Nano),
		Query:           r.Question.Question,
		RAGQueries:      LogRAG{Total: r.RAG.Total, Sucesso: r.RAG.Succeeded, Timeout: r.RAG.TimedOut, ChunksCitados: nonNil(r.Cited)},
		Resultado: LogResult{ConvergenciaFinal: pct(r.Convergence), ConfiancaSintese: pct(r.Confidence),
			EscaladoPara: r.Target, CircuitBreaker: r.Trip != nil},
		Metricas: LogMetrics{TempoTotalMS: r.End.Sub(r.Start).Milliseconds(),
			TokensConsumidos: r.Usage.PromptTokens + r.Usage.CompletionTokens, RodadasExecutadas: len(r.Rounds)},
	}
	for _, p := range r.Question.Participants {
		b.Participantes = append(b.Participantes, p.ID)
	}
	for _, rd := range r.Rounds {
		b.Rodadas = append(b.Rodadas, LogRound{Numero: rd.Number, Tipo: rd.Kind, DuracaoMS: rd.Duration.Milliseconds(),
			Convergencia: pct(rd.Convergence), AgentesResponderam: nonNil(rd.Responded()), AgentesTimeout: nonNil(rd.TimedOut()),
			MudancasPosicao: rd.Changes})
	}
	return Log{DebateLog: b}
}

// Files are the files a debate run in one process writes: debate.md,
// then debate_log.yaml.
func (r *Result) Files() ([]File, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(r.DebateLog()); err != nil {
		return nil, fmt.Errorf("encode debate log: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode debate log: %w", err)
	}
	return []File{
		{Name: "debate.md", ContentType: "text/markdown; charset=utf-8", Data: []byte(r.Markdown())},
		{Name: "debate_log.yaml", ContentType: "application/yaml", Data: buf.Bytes()},
	}, nil
}

// Write writes DIR/debate.md and then DIR/debate_log.yaml, each to a
// temporary file renamed into place, so a reader never sees half a file.
func (r *Result) Write(dir string) error {
	_, err := r.write(dir)
	return err
}

// Save is Write recording each file's hash in the audit record ctx
// carries (paths relative to the folder the record is kept beside), then
// ending the record.
func (r *Result) Save(ctx context.Context, dir, prefix string) error {
	files, err := r.write(dir)
	if err != nil {
		return err
	}
	if err := recordFiles(ctx, prefix, files); err != nil {
		return err
	}
	return End(ctx)
}

func (r *Result) write(dir string) ([]File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create output %s: %w", dir, err)
	}
	files, err := r.Files()
	if err != nil {
		return nil, err
	}
	// The report first, the log last: a folder with debate_log.yaml holds
	// a whole debate (and a rerun refuses to overwrite it).
	for _, f := range files {
		if err := writeAtomic(filepath.Join(dir, f.Name), f.Data); err != nil {
			return nil, err
		}
	}
	return files, nil
}

func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr != nil || cerr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, firstErr(werr, cerr))
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// Markdown is DIR/debate.md, in Spanish: the decision first, then the
// route, the circuit-breaker block when it fired, the synthesis, the
// council, the positions per round, the evidence, the incidents and the
// checklists.
func (r *Result) Markdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# Debate: %s\n", oneLine(r.Question.Question))
	w("## Decisión\n")
	switch {
	case r.Pending && r.Proposed() == "":
		w("**PENDIENTE DE DECISIÓN HUMANA.** Sin propuesta: ningún participante dio una respuesta válida.\n")
	case r.Pending:
		w("**PENDIENTE DE DECISIÓN HUMANA.** Propuesta: **%s**.\n", r.Proposed())
	case r.Human != nil && !r.Human.Approved:
		w("**La persona rechazó la propuesta.** %s\n", oneLine(r.Human.Comment))
	case r.Final == "":
		w("**Sin decisión.**\n")
	default:
		w("**%s**\n", r.Final)
	}
	w("- Escalado a: %s", labels.Of(labels.DebateTarget, r.Target))
	w("- Motivo: %s", r.FinalReason)
	conf := fmt.Sprintf("%.1f%%", r.Confidence)
	if r.ReducedByTimeout {
		conf += " (reducida por tiempo agotado)"
	}
	w("- Confianza de la síntesis: %s", conf)
	w("- Convergencia final: %.1f%%", r.Convergence)
	if r.Synthesis.Action != "" {
		w("- Acción: %s", oneLine(r.Synthesis.Action))
	}
	w("")
	w("## Ruta\n\n%s: %s\n", labels.Of(labels.DebateMode, r.Mode), r.ModeReason)
	if r.Trip != nil {
		r.breakerBlock(&b)
	}
	w("## Síntesis\n\n%s\n", r.Synthesis.Summary)
	list := func(title string, xs []string) {
		if len(xs) == 0 {
			return
		}
		w("**%s**\n", title)
		for _, x := range xs {
			w("- %s", oneLine(x))
		}
		w("")
	}
	list("Consensos", r.Synthesis.Consensus)
	list("Divergencias no resueltas", r.Synthesis.Divergences)
	if r.Council != nil {
		w("## Consejo\n")
		if r.Escalation.Impasse {
			w("IMPASSE: true\n")
		}
		w("| Consejero | Voto | Confianza | Fundamento |\n|---|---|---|---|")
		for i, m := range r.Council.Members {
			var v *Vote
			if i < len(r.Council.Votes) {
				v = r.Council.Votes[i]
			}
			if v == nil {
				why := "TIMEOUT (sin respuesta a tiempo)"
				if contains(r.Council.Invalid, m.ID) {
					why = "RESPUESTA INVÁLIDA (tras una repregunta)"
				}
				w("| %s | %s | — | — |", m.ID, why)
				continue
			}
			w("| %s | %s | %d | %s |", m.ID, cell(v.Vote), v.Confidence, cell(v.Rationale))
		}
		if r.Council.Decision == "" {
			w("\nResultado del consejo: sin votos válidos.\n")
		} else {
			w("\nResultado del consejo: %.1f%% por **%s**%s.\n", r.Council.Result, r.Council.Decision,
				map[bool]string{true: " (sin tiempo: se fuerza la síntesis)", false: ""}[r.Council.TimedOut])
		}
	}
	w("## Rondas\n")
	for _, rd := range r.Rounds {
		w("### Ronda %d (%s) — convergencia %.1f%%, %d ms\n", rd.Number, labels.Of(labels.RoundKind, rd.Kind), rd.Convergence, rd.Duration.Milliseconds())
		if len(rd.Focus) > 0 {
			list("Divergencias abiertas tratadas", rd.Focus)
		}
		w("| Participante | Recomendación | Confianza | Plazo | Riesgos | Premisas | Mantiene |\n|---|---|---|---|---|---|---|")
		for _, a := range rd.Answers {
			keeps := "—"
			if reb := rd.Rebuttals[a.Participant]; reb != nil {
				keeps = labels.Of(labels.KeepsPosition, reb.KeepsPosition)
			}
			if a.Position == nil {
				why := "TIMEOUT"
				if contains(rd.Invalid, a.Participant) {
					why = "RESPUESTA INVÁLIDA"
				}
				w("| %s | %s (excluido de la convergencia) | — | — | — | — | — |", a.Participant, why)
				continue
			}
			p := a.Position
			name := a.Participant
			if a.TimedOut {
				name += " (TIMEOUT: posición parcial de la ronda anterior)"
			}
			w("| %s | %s | %d | %s | %s | %s | %s |", name, cell(p.Recommendation), p.Confidence, p.Timing,
				strings.Join(categories(p.Risks), ", "), strings.Join(p.Premises, " "), keeps)
		}
		w("")
		for _, a := range rd.Answers {
			if a.Position != nil && !a.TimedOut {
				w("- **%s**: %s", a.Participant, oneLine(a.Position.Position))
			}
		}
		w("")
	}
	w("## Evidencia citada\n")
	if len(r.Cited) == 0 {
		w("Ninguna cita a la base de conocimiento.\n")
	} else {
		for _, id := range r.Cited {
			c, ok := r.Evidence[id]
			if !ok {
				w("- [RAG:%s]", id)
				continue
			}
			excerpt := []rune(oneLine(c.Text))
			if len(excerpt) > 240 {
				excerpt = append(excerpt[:240], '…')
			}
			w("- [RAG:%s] (%s): %s", id, c.Source, string(excerpt))
		}
		w("")
	}
	w("Consultas RAG: %d (éxito %d, timeout %d, rechazadas por el límite %d).\n", r.RAG.Total, r.RAG.Succeeded, r.RAG.TimedOut, r.RAG.Refused)
	if len(r.Events) > 0 {
		w("## Incidencias\n")
		for _, e := range r.Events {
			w("- %s", e)
		}
		w("")
	}
	w("## Checklists\n")
	phases := map[string]string{"antes": "Antes del debate", "durante": "Durante el debate", "despues": "Después del debate"}
	for _, ph := range []string{"antes", "durante", "despues"} {
		w("**%s**\n", phases[ph])
		for _, c := range r.Checklists {
			if c.Phase != ph {
				continue
			}
			mark := " "
			if c.OK {
				mark = "x"
			}
			note := ""
			if c.Note != "" {
				note = " — " + c.Note
			}
			w("- [%s] %s%s", mark, c.Item, note)
		}
		w("")
	}
	w("## Métricas\n")
	w("- Tiempo total: %d ms", r.End.Sub(r.Start).Milliseconds())
	w("- Llamadas al modelo: %d; tokens: %d (entrada %d, salida %d)", r.Usage.Calls, r.Usage.PromptTokens+r.Usage.CompletionTokens, r.Usage.PromptTokens, r.Usage.CompletionTokens)
	w("- Rondas ejecutadas: %d", len(r.Rounds))
	if r.Usage.Calls > 0 {
		var vs []string
		for _, schema := range []string{SchemaRAGQuery, SchemaPosition, SchemaRebuttal, SchemaSynthesis, SchemaVote} {
			vs = append(vs, prompts.PromptVersion(schema))
		}
		w("- Versiones de los prompts: %s", strings.Join(vs, ", "))
	}
	w("- Sesión: %s", r.SessionID)
	return b.String()
}

// breakerBlock writes the seed's circuit-breaker output block, in
// Spanish. The agents in conflict are the ones against the largest
// recommendation of the last round (ConflictingAgents); the escalation is
// the table's (a breaker always escalates: Escalate).
func (r *Result) breakerBlock(b *strings.Builder) {
	var conflict []string
	if len(r.Rounds) > 0 {
		conflict = ConflictingAgents(r.Rounds[len(r.Rounds)-1].Answers)
	}
	join := func(xs []string) string {
		if len(xs) == 0 {
			return "—"
		}
		return oneLine(strings.Join(xs, "; "))
	}
	fmt.Fprintf(b, "## Disyuntor\n\n```\n⚠️ DISYUNTOR ACTIVADO\n\nMOTIVO: %s\nRONDAS EJECUTADAS: %d de %d\nCONVERGENCIA FINAL: %.1f%%\n\nESTADO DEL DEBATE:\n• Consensos alcanzados: %s\n• Divergencias no resueltas: %s\n• Agentes en conflicto: %s\n\nACCIÓN: %s. Escalado a: %s\n```\n\n",
		r.Trip.Condition, len(r.Rounds), r.Question.Config.Debate.Rounds.Max, r.Convergence,
		join(r.Synthesis.Consensus), join(r.Synthesis.Divergences), orDash(strings.Join(conflict, ", "), ""), r.Trip.Action,
		labels.Of(labels.DebateTarget, r.Escalation.Target))
	if r.Trip.Impasse {
		b.WriteString("IMPASSE: las posiciones se estabilizaron sin convergencia.\n\n")
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func cell(s string) string { return strings.ReplaceAll(oneLine(s), "|", "\\|") }
