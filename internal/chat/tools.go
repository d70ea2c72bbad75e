package chat

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/smithy-go"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/flags"
	"github.com/veredicto/veredicto/internal/intake"
	"github.com/veredicto/veredicto/internal/labels"
	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/starter"
)

// Tool is the implementation behind one action (Agent.Action).
type Tool interface {
	// Args returns a pointer to a new zero value of the arguments' type:
	// its strict schema is the tool's parameters, and the model's
	// arguments decode into it.
	Args() any
	// Run does the work. A *ToolError is told to the model; any other
	// error fails the delegation too, with a generic message.
	Run(ctx context.Context, call Call) (Result, error)
}

// Call is one tool invocation inside a turn.
type Call struct {
	Tenant, ChatID string
	Turn           int
	Agent          *Agent
	// Args are the validated arguments, decoded into the tool's Args type.
	Args any
	// Step reports progress of the delegated work (an execution-step on
	// the conversation's stream).
	Step func(action, content string, metadata map[string]any)
	// Confirm asks the person before a sensitive action and waits for the
	// decision (seed §3): true when approved.
	Confirm func(ctx context.Context, c Sensitive) (bool, error)
	// Room, asked before a tool starts a workflow, is a *ToolError when
	// the conversation cannot follow one more (nil when no links are
	// kept).
	Room func(ctx context.Context) error
	// Started links a workflow the tool started, or found running, to the
	// conversation: its progress and confirmations reach the
	// conversation's stream, and the chat says when it ends. False when it
	// could not be linked (named in the log): the tool then promises no
	// news of it.
	Started func(ctx context.Context, w Workflow) bool
}

// room asks c.Room, when set.
func (c Call) room(ctx context.Context) error {
	if c.Room == nil {
		return nil
	}
	return c.Room(ctx)
}

// started calls c.Started, when set.
func (c Call) started(ctx context.Context, w Workflow) bool {
	return c.Started != nil && c.Started(ctx, w)
}

// notFollowed ends a start's summary when the conversation could not
// link the workflow: no promise of news, the way to ask instead.
const notFollowed = "; esta conversación no pudo quedar vinculada a su avance: pregunte por su estado para saber cómo va."

// Sensitive describes an action that needs a person's confirmation.
type Sensitive struct {
	ToolName    string
	Category    string // data_write, external_api, email_send
	Sensitivity string // low, medium, high
	Undoable    bool
	Preview     any
}

// Result is what a tool answers: a short Spanish summary for the person
// and the model, and structured data for the model and the stream.
type Result struct {
	Summary string `json:"summary"`
	Data    any    `json:"data,omitempty"`
}

// ToolError is a failure the model is told about, in Spanish.
type ToolError struct{ Message string }

func (e *ToolError) Error() string { return e.Message }

func toolErr(format string, a ...any) error { return &ToolError{Message: fmt.Sprintf(format, a...)} }

// Common arguments of every delegation: the brief reason shown to the
// person (seed §11) and the task in the person's words.
type delegation struct {
	Reason  string `json:"reason"`
	Request string `json:"request"`
}

// reasonOf reads the common fields of any tool's arguments.
func reasonOf(args any) delegation {
	b, _ := json.Marshal(args)
	var d delegation
	_ = json.Unmarshal(b, &d)
	return d
}

// Searches is what the search analyst uses of the intake service
// (*intake.Service), tenant-scoped: another tenant's search is not found.
type Searches interface {
	Start(ctx context.Context, tenant, origin string, req intake.StartRequest) (intake.Started, error)
	State(ctx context.Context, tenant, searchID string) (intake.SearchState, error)
	Report(ctx context.Context, tenant, searchID, candidateID string, markdown bool) ([]byte, error)
}

var _ Searches = (*intake.Service)(nil)

// SearchArgs are the search analyst's arguments.
type SearchArgs struct {
	Reason       string   `json:"reason" desc:"Motivo breve (una frase) que se muestra a la persona"`
	Request      string   `json:"request" desc:"La tarea para el especialista, en palabras de la persona"`
	Operation    string   `json:"operation" enum:"start,status,compare"`
	SearchID     string   `json:"search_id"`
	CandidateIDs []string `json:"candidate_ids" desc:"Para compare: 2 a 6 ids de candidatos; vacío en otro caso"`
	Dimension    string   `json:"dimension" desc:"Para compare: la dimensión o tema a contrastar (p. ej. deuda); vacío si no se pide"`
}

// SearchTool is the executive-search analyst: it starts a search's
// evaluation, reads its state, or compares candidates from their reports.
type SearchTool struct{ Searches Searches }

func (SearchTool) Args() any { return &SearchArgs{} }

// MaxCompare bounds a comparison.
const MaxCompare = 6

func (t SearchTool) Run(ctx context.Context, c Call) (Result, error) {
	a := c.Args.(*SearchArgs)
	if !veredicto.ValidID(a.SearchID) {
		return Result{}, toolErr("search_id %q no es un id de búsqueda válido", a.SearchID)
	}
	switch a.Operation {
	case "start":
		if err := c.room(ctx); err != nil {
			return Result{}, err
		}
		st, err := t.Searches.Start(ctx, c.Tenant, "chat", intake.StartRequest{SearchID: a.SearchID})
		if err != nil {
			return Result{}, notFoundOr(err, "la búsqueda %s no existe o no se ha subido", a.SearchID)
		}
		// The search reports back here: its progress, its senior reviews
		// and its end.
		followed := c.started(ctx, Workflow{Kind: KindSearch, Subject: st.SearchID, Execution: cmp.Or(st.ARN, st.Execution)})
		c.Step("started", "evaluación de la búsqueda iniciada", map[string]any{"search_id": st.SearchID, "execution": st.Execution, "started": st.Started})
		msg := fmt.Sprintf("Evaluación de la búsqueda %s iniciada (ejecución %s); su avance y las revisiones que pida se verán en esta conversación, que avisará cuando termine.", st.SearchID, st.Execution)
		switch {
		case !st.Started && followed:
			msg = fmt.Sprintf("La búsqueda %s ya estaba en evaluación (ejecución %s); esta conversación seguirá su avance y avisará cuando termine.", st.SearchID, st.Execution)
		case !st.Started:
			msg = fmt.Sprintf("La búsqueda %s ya estaba en evaluación (ejecución %s)%s", st.SearchID, st.Execution, notFollowed)
		case !followed:
			msg = fmt.Sprintf("Evaluación de la búsqueda %s iniciada (ejecución %s)%s", st.SearchID, st.Execution, notFollowed)
		}
		return Result{Summary: msg, Data: st}, nil
	case "status":
		st, err := t.Searches.State(ctx, c.Tenant, a.SearchID)
		if err != nil {
			return Result{}, notFoundOr(err, "la búsqueda %s no existe", a.SearchID)
		}
		decided := 0
		for _, cs := range st.Candidates {
			if cs.Decision != "" {
				decided++
			}
		}
		return Result{Summary: fmt.Sprintf("Búsqueda %s: %s, %d candidatos, %d con decisión.", st.SearchID, st.Status, len(st.Candidates), decided), Data: st}, nil
	case "compare":
		return t.compare(ctx, c, a)
	}
	return Result{}, toolErr("operation %q no existe (start, status o compare)", a.Operation)
}

// Comparison is one candidate's row of a comparison: figures taken from
// the report by code, never the report's text.
type Comparison struct {
	CandidateID string         `json:"candidate_id"`
	Decision    string         `json:"decision"`
	Scores      map[string]int `json:"scores"` // stage → score_dimension
	Issues      int            `json:"issues"`
	Critical    int            `json:"critical_issues"`
	// DimensionMentions counts the findings that mention the requested
	// dimension (word match after folding).
	DimensionMentions int `json:"dimension_mentions"`
}

func (t SearchTool) compare(ctx context.Context, c Call, a *SearchArgs) (Result, error) {
	ids := slices.Compact(slices.Clone(a.CandidateIDs))
	if len(ids) < 2 || len(ids) > MaxCompare {
		return Result{}, toolErr("compare necesita entre 2 y %d candidate_ids (recibió %d)", MaxCompare, len(ids))
	}
	var rows []Comparison
	dim := words(fold(a.Dimension))
	for _, id := range ids {
		if !veredicto.ValidID(id) {
			return Result{}, toolErr("candidate_id %q no es válido", id)
		}
		b, err := t.Searches.Report(ctx, c.Tenant, a.SearchID, id, false)
		if err != nil {
			return Result{}, notFoundOr(err, "no hay informe de %s en la búsqueda %s (¿terminó su evaluación?)", id, a.SearchID)
		}
		var rep search.Report
		if err := json.Unmarshal(b, &rep); err != nil {
			return Result{}, fmt.Errorf("report %s/%s: %w", a.SearchID, id, err)
		}
		row := Comparison{CandidateID: id, Decision: rep.Decision, Scores: map[string]int{}}
		for _, stage := range rep.StageOrder {
			var ct struct {
				Scores      search.Scores  `json:"scores"`
				IssuesFound []search.Issue `json:"issues_found"`
			}
			if json.Unmarshal(rep.Stages[stage], &ct) != nil {
				continue
			}
			if ct.Scores.ScoreDimension != nil {
				row.Scores[stage] = *ct.Scores.ScoreDimension
			}
			for _, is := range ct.IssuesFound {
				row.Issues++
				if is.Severity == "critica" {
					row.Critical++
				}
				if len(dim) > 0 && (matcher{seq: dim, prefix: true}).in(words(fold(is.Description))) {
					row.DimensionMentions++
				}
			}
		}
		rows = append(rows, row)
		c.Step("read", "informe del candidato leído", map[string]any{"search_id": a.SearchID, "candidate_id": id, "decision": rep.Decision})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Comparación en la búsqueda %s:", a.SearchID)
	for _, r := range rows {
		decision := orDash(r.Decision)
		if r.Decision != "" {
			decision = labels.Of(labels.Decision, r.Decision)
		}
		fmt.Fprintf(&b, " %s: %s, %s (%d críticos)", r.CandidateID, decision, labels.Count(r.Issues, "hallazgo", "hallazgos"), r.Critical)
		if len(dim) > 0 {
			fmt.Fprintf(&b, ", %d sobre %q", r.DimensionMentions, a.Dimension)
		}
		b.WriteString(";")
	}
	return Result{Summary: strings.TrimSuffix(b.String(), ";") + ".", Data: rows}, nil
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// notFoundOr turns a not-found (or a bad request) into a message for the
// model; other errors pass through.
func notFoundOr(err error, format string, a ...any) error {
	var nf *veredicto.NotFoundError
	var re *intake.RequestError
	var ie *veredicto.InvalidInputError
	switch {
	case errors.As(err, &nf):
		return toolErr(format, a...)
	case errors.As(err, &re):
		return toolErr("%s", strings.Join(re.Problems, "; "))
	case errors.As(err, &ie):
		return toolErr("%s", ie.Error())
	}
	return err
}

// BlobReader reads the tenant's uploaded documents.
type BlobReader interface {
	Get(ctx context.Context, key string) ([]byte, error)
	List(ctx context.Context, prefix string) ([]string, error)
}

// FlagsArgs are the flags classifier's arguments.
type FlagsArgs struct {
	Reason      string `json:"reason" desc:"Motivo breve (una frase) que se muestra a la persona"`
	Request     string `json:"request" desc:"La tarea para el especialista, en palabras de la persona"`
	InterviewID string `json:"interview_id" desc:"Id de la entrevista subida (carpeta interviews/<id>/)"`
}

// FlagsTool is the interview-flags classifier: it reads an uploaded
// interview (interviews/<tenant>/<id>/questions.yaml, transcript*.yaml and
// an optional context.yaml) and classifies it with internal/flags.
type FlagsTool struct {
	Inputs BlobReader
	Judge  flags.ContradictionJudge
	Now    func() time.Time
}

func (FlagsTool) Args() any { return &FlagsArgs{} }

// MaxTranscripts bounds the transcripts of one interview.
const MaxTranscripts = 20

// InterviewPrefix is where an interview's documents are uploaded.
func InterviewPrefix(tenant, id string) string { return "interviews/" + tenant + "/" + id + "/" }

func (t FlagsTool) Run(ctx context.Context, c Call) (Result, error) {
	a := c.Args.(*FlagsArgs)
	if !veredicto.ValidID(a.InterviewID) {
		return Result{}, toolErr("interview_id %q no es un id de entrevista válido", a.InterviewID)
	}
	prefix := InterviewPrefix(c.Tenant, a.InterviewID)
	keys, err := t.Inputs.List(ctx, prefix)
	if err != nil {
		return Result{}, fmt.Errorf("list %s: %w", prefix, err)
	}
	var req flags.Request
	for _, k := range keys {
		name := strings.TrimPrefix(k, prefix)
		switch {
		case name == "questions.yaml" || name == "context.yaml" || strings.HasPrefix(name, "transcript") && strings.HasSuffix(name, ".yaml"):
		default:
			continue
		}
		b, err := t.Inputs.Get(ctx, k)
		if err != nil {
			return Result{}, fmt.Errorf("read %s: %w", k, err)
		}
		switch {
		case name == "questions.yaml":
			req.Questions = b
		case name == "context.yaml":
			req.Context = b
		case len(req.Transcripts) < MaxTranscripts:
			req.Transcripts = append(req.Transcripts, b)
		}
	}
	if len(req.Questions) == 0 || len(req.Transcripts) == 0 {
		return Result{}, toolErr("la entrevista %s no existe o le faltan documentos (questions.yaml y al menos un transcript*.yaml)", a.InterviewID)
	}
	c.Step("started", "clasificación de señales de la entrevista iniciada", map[string]any{"interview_id": a.InterviewID, "transcripts": len(req.Transcripts)})
	res, warnings, err := flags.Evaluate(ctx, req, t.Judge, t.Now)
	if err != nil {
		var ie *veredicto.InvalidInputError
		if errors.As(err, &ie) {
			return Result{}, toolErr("documento inválido en la entrevista %s: %s", a.InterviewID, ie.Error())
		}
		return Result{}, fmt.Errorf("flags %s: %w", a.InterviewID, err)
	}
	red := 0
	for _, q := range res.ByQuestion {
		if !q.ClosureOK || q.ContradictionWithContext || q.DriftDetected {
			red++
		}
	}
	c.Step("finished", "señales de la entrevista clasificadas", map[string]any{"interview_id": a.InterviewID, "flags_id": res.FlagsID, "questions": len(res.ByQuestion)})
	return Result{
		Summary: fmt.Sprintf("Banderas de la entrevista %s (%s): cierre %s, autoridad %s, riesgo verbal %s; %d de %d preguntas con cierre fallido, contradicción o deriva.",
			a.InterviewID, res.FlagsID, res.Summary.OverallClosure, res.Summary.OverallAuthority, res.Summary.OverallVerbalRisk, red, len(res.ByQuestion)),
		Data: struct {
			flags.Flags
			Warnings int `json:"warnings"`
		}{res, len(warnings)},
	}, nil
}

// Starter starts executions: the methods of the aws-sdk-go-v2 sfn client,
// so the real client serves against Step Functions and "veredicto serve".
type Starter interface {
	StartExecution(ctx context.Context, in *sfn.StartExecutionInput, opts ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error)
}

var _ Starter = (*sfn.Client)(nil)

// CompanionArgs are the career companion's arguments.
type CompanionArgs struct {
	Reason        string `json:"reason" desc:"Motivo breve (una frase) que se muestra a la persona"`
	Request       string `json:"request" desc:"La tarea para el especialista, en palabras de la persona"`
	ApplicationID string `json:"application_id" desc:"Id de la postulación ya creada (su vacante y perfil subidos)"`
	Mode          string `json:"mode" enum:"screening,full"`
	Company       string `json:"company" desc:"Empresa de la vacante; vacío si no se indica"`
	Platform      string `json:"platform" desc:"Plataforma de postulación; vacío si no se indica"`
}

// DebateArgs are the debate committee's arguments.
type DebateArgs struct {
	Reason      string   `json:"reason" desc:"Motivo breve (una frase) que se muestra a la persona"`
	Request     string   `json:"request" desc:"La tarea para el especialista, en palabras de la persona"`
	Question    string   `json:"question" desc:"La pregunta que el comité debe resolver"`
	Options     []string `json:"options" desc:"Las recomendaciones posibles; vacío: avanzar / no avanzar"`
	SearchID    string   `json:"search_id" desc:"Búsqueda del caso; vacío si no aplica"`
	CandidateID string   `json:"candidate_id" desc:"Candidato sobre el que se debate; vacío si no aplica"`
}

// debateID is the id of the debate a call starts (its execution input's
// debate_id).
func debateID(c Call) string { return ExecutionName(c.Tenant, c.ChatID, c.Turn, "debate") }

// DebateSubject is the debate a call starts: its debate_id.
func DebateSubject(c Call) string { return debateID(c) }

// CompanionSubject is the application a call runs: its application_id.
func CompanionSubject(c Call) string { return c.Args.(*CompanionArgs).ApplicationID }

// DebateExecution names a debate the chat starts as the debates API
// names debate_id's execution, so GET /debates/{debate_id} finds it.
func DebateExecution(c Call) string { return starter.ExecutionName(c.Tenant, debateID(c)) }

// CompanionInput is CareerCompanionStateMachine's execution input for a
// delegation: {tenant, application_id, mode, company, platform, refresh}.
func CompanionInput(c Call) (any, error) {
	a := c.Args.(*CompanionArgs)
	if !veredicto.ValidID(a.ApplicationID) {
		return nil, toolErr("application_id %q no es un id de postulación válido; crea la postulación (vacante y perfil) primero", a.ApplicationID)
	}
	return map[string]any{"tenant": c.Tenant, "application_id": a.ApplicationID, "mode": a.Mode,
		"company": a.Company, "platform": a.Platform, "refresh": false}, nil
}

// DefaultCommittee is the debate's committee when the chat opens one: a
// search's decision seen from money, people and the evidence.
var DefaultCommittee = []map[string]string{
	{"id": "cfo", "brief": "Finanzas: coste de la contratación frente a lo que el cargo debe aportar."},
	{"id": "chro", "brief": "Personas: encaje con el equipo y la cultura, riesgos de liderazgo y de salida."},
	{"id": "consultor-senior", "brief": "Consultoría: qué prueba el informe del candidato, qué lo contradice y qué falta comprobar."},
}

// DebateInput is DebateStateMachine's execution input for a delegation:
// {tenant, debate_id, question: {question, options, participants, mode},
// knowledge}, the knowledge being the search's inputs and the candidate's
// report when the chat names them.
func DebateInput(c Call) (any, error) {
	a := c.Args.(*DebateArgs)
	if strings.TrimSpace(a.Question) == "" {
		return nil, toolErr("falta la pregunta del debate")
	}
	options := a.Options
	if len(options) < 2 {
		options = []string{"avanzar", "no avanzar"}
	}
	var knowledge []string
	if a.SearchID != "" {
		if !veredicto.ValidID(a.SearchID) {
			return nil, toolErr("search_id %q no es un id de búsqueda válido", a.SearchID)
		}
		knowledge = append(knowledge, "searches/"+c.Tenant+"/"+a.SearchID+"/")
		if a.CandidateID != "" {
			if !veredicto.ValidID(a.CandidateID) {
				return nil, toolErr("candidate_id %q no es válido", a.CandidateID)
			}
			knowledge = append(knowledge, "reports/"+c.Tenant+"/"+a.SearchID+"/"+a.CandidateID+"/")
		}
	}
	return map[string]any{"tenant": c.Tenant, "debate_id": debateID(c),
		"question":  map[string]any{"question": a.Question, "options": options, "participants": DefaultCommittee, "mode": "auto"},
		"knowledge": knowledge}, nil
}

// MachineTool starts a state machine of the project (the career companion,
// the debate) through the Step Functions API: the input is the tool's
// arguments plus tenant, chat and turn. When the machine is not registered
// the tool says so.
type MachineTool struct {
	Client Starter
	// MachineARN is the state machine's ARN; Name its logical id, for
	// messages.
	MachineARN, Name string
	// NewArgs returns a pointer to a new zero value of the arguments' type.
	NewArgs func() any
	// Input, when set, builds the execution input from the call (the JSON
	// the machine documents); by default it is the arguments plus tenant,
	// chat_id and source "chat".
	Input func(c Call) (any, error)
	// Execution, when set, names the execution (DebateExecution: the
	// name GET /debates/{id} finds); by default ExecutionName.
	Execution func(c Call) string
	// Kind is the workflow's kind as the conversation follows it
	// (KindCompanion, KindDebate); Subject, when set, what it is about
	// (CompanionSubject, DebateSubject), by default its execution's name.
	Kind    string
	Subject func(c Call) string
}

func (t MachineTool) Args() any { return t.NewArgs() }

// Names of the machines the chat starts, as the template names them.
const (
	CompanionMachine = "CareerCompanionStateMachine"
	DebateMachine    = "DebateStateMachine"
)

// CompanionTool is the career companion's delegation, the same in every
// runtime: CompanionMachine (machineARN; empty, the tool says it is not
// deployed) started through client with CompanionInput, and followed by
// the conversation as KindCompanion about its application.
func CompanionTool(client Starter, machineARN string) MachineTool {
	return MachineTool{Client: client, MachineARN: machineARN, Name: CompanionMachine, NewArgs: func() any { return &CompanionArgs{} },
		Input: CompanionInput, Kind: KindCompanion, Subject: CompanionSubject}
}

// DebateTool is the debate committee's delegation, the same in every
// runtime: DebateMachine (machineARN; empty, not deployed) started through
// client with DebateInput under DebateExecution's name, and followed by the
// conversation as KindDebate about its debate_id.
func DebateTool(client Starter, machineARN string) MachineTool {
	return MachineTool{Client: client, MachineARN: machineARN, Name: DebateMachine, NewArgs: func() any { return &DebateArgs{} },
		Input: DebateInput, Execution: DebateExecution, Kind: KindDebate, Subject: DebateSubject}
}

func (t MachineTool) Run(ctx context.Context, c Call) (Result, error) {
	if t.Client == nil || t.MachineARN == "" {
		return Result{}, toolErr("el flujo %s no está disponible en este despliegue", t.Name)
	}
	var input any
	if t.Input != nil {
		v, err := t.Input(c)
		if err != nil {
			return Result{}, err
		}
		input = v
	} else {
		b, _ := json.Marshal(c.Args)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		m["tenant"], m["chat_id"], m["source"] = c.Tenant, c.ChatID, "chat"
		input = m
	}
	in, err := json.Marshal(input)
	if err != nil {
		return Result{}, fmt.Errorf("input of %s: %w", t.Name, err)
	}
	name := ExecutionName(c.Tenant, c.ChatID, c.Turn, c.Agent.ID)
	if t.Execution != nil {
		name = t.Execution(c)
	}
	if err := c.room(ctx); err != nil {
		return Result{}, err
	}
	out, err := t.Client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(t.MachineARN), Name: aws.String(name), Input: aws.String(string(in))})
	if err != nil {
		var ae smithy.APIError
		if errors.As(err, &ae) {
			switch ae.ErrorCode() {
			case "StateMachineDoesNotExist":
				return Result{}, toolErr("el flujo %s no está registrado en este despliegue; no se pudo delegar", t.Name)
			case "ExecutionAlreadyExists":
				return Result{}, toolErr("ya se inició %s en este turno", t.Name)
			}
		}
		return Result{}, &veredicto.TransientError{Op: "start " + t.Name, Err: err}
	}
	arn := aws.ToString(out.ExecutionArn)
	subject := name
	if t.Subject != nil {
		subject = t.Subject(c)
	}
	followed := c.started(ctx, Workflow{Kind: cmp.Or(t.Kind, t.Name), Subject: subject, Execution: arn})
	c.Step("started", "iniciado: "+t.Name, map[string]any{"machine": t.Name, "execution": arn})
	summary := fmt.Sprintf("Iniciado %s (ejecución %s); su avance y las confirmaciones que pida se verán en esta conversación, que avisará cuando termine.", t.Name, name)
	if !followed {
		summary = fmt.Sprintf("Iniciado %s (ejecución %s)%s", t.Name, name, notFollowed)
	}
	return Result{Summary: summary, Data: map[string]string{"execution": arn, "name": name}}, nil
}

// ExecutionName is the deterministic name of a delegated execution: one
// per tenant, chat, turn and agent (a retried call finds it), within Step
// Functions' 80 characters of [A-Za-z0-9_-]: a readable part and a hash of
// the four values (tenant and chat ids may hold '-', so the readable part
// alone could be shared).
func ExecutionName(tenant, chatID string, turn int, agent string) string {
	readable := unsafeName.ReplaceAllString(fmt.Sprintf("chat-%s-%d-%s", chatID, turn, agent), "_")
	if len(readable) > 67 {
		readable = readable[:67]
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%d:%s|%d:%s|%d|%s", len(tenant), tenant, len(chatID), chatID, turn, agent)))
	return readable + "-" + hex.EncodeToString(sum[:6])
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// ReportsArgs are the reports agent's arguments.
type ReportsArgs struct {
	Reason       string   `json:"reason" desc:"Motivo breve (una frase) que se muestra a la persona"`
	Request      string   `json:"request" desc:"La tarea para el especialista, en palabras de la persona"`
	Operation    string   `json:"operation" enum:"send,export"`
	SearchID     string   `json:"search_id"`
	CandidateIDs []string `json:"candidate_ids" desc:"1 a 6 candidatos cuyos informes se envían o exportan"`
	Recipient    string   `json:"recipient" desc:"Para send: correo del destinatario; vacío en export"`
}

// Outbox sends a message to someone outside Veredicto (an email gateway
// on AWS, a folder on this machine).
type Outbox interface {
	Send(ctx context.Context, tenant string, m Outgoing) (string, error)
}

// Outgoing is one message to send.
type Outgoing struct {
	ID          string   `json:"id"`
	To          string   `json:"to"`
	Subject     string   `json:"subject"`
	SearchID    string   `json:"search_id"`
	CandidateID []string `json:"candidate_ids"`
	// Body is the reports in Markdown.
	Body string `json:"body"`
}

// ReportsTool sends (after the person confirms) or exports candidates'
// reports.
type ReportsTool struct {
	Searches Searches
	Outbox   Outbox
}

func (ReportsTool) Args() any { return &ReportsArgs{} }

var emailPattern = regexp.MustCompile(`^[^@\s<>"]{1,64}@[A-Za-z0-9.-]{1,190}\.[A-Za-z]{2,24}$`)

func (t ReportsTool) Run(ctx context.Context, c Call) (Result, error) {
	a := c.Args.(*ReportsArgs)
	ids := slices.Compact(slices.Clone(a.CandidateIDs))
	if !veredicto.ValidID(a.SearchID) {
		return Result{}, toolErr("search_id %q no es un id de búsqueda válido", a.SearchID)
	}
	if len(ids) < 1 || len(ids) > MaxCompare {
		return Result{}, toolErr("se necesitan entre 1 y %d candidate_ids", MaxCompare)
	}
	var body strings.Builder
	for _, id := range ids {
		if !veredicto.ValidID(id) {
			return Result{}, toolErr("candidate_id %q no es válido", id)
		}
		md, err := t.Searches.Report(ctx, c.Tenant, a.SearchID, id, true)
		if err != nil {
			return Result{}, notFoundOr(err, "no hay informe de %s en la búsqueda %s", id, a.SearchID)
		}
		body.Write(md)
		body.WriteString("\n\n")
	}
	switch a.Operation {
	case "export":
		c.Step("finished", "informes exportados", map[string]any{"search_id": a.SearchID, "candidates": len(ids), "bytes": body.Len()})
		return Result{Summary: fmt.Sprintf("%s de la búsqueda %s (%d bytes de Markdown).", countedReports(len(ids), "Exportado", "Exportados"), a.SearchID, body.Len()),
			Data: map[string]any{"search_id": a.SearchID, "candidate_ids": ids, "bytes": body.Len()}}, nil
	case "send":
	default:
		return Result{}, toolErr("operation %q no existe (send o export)", a.Operation)
	}
	if !emailPattern.MatchString(a.Recipient) {
		return Result{}, toolErr("recipient %q no es un correo válido", a.Recipient)
	}
	if t.Outbox == nil {
		return Result{}, toolErr("el envío de correo no está configurado en este despliegue")
	}
	subject := fmt.Sprintf("Informes de la búsqueda %s", a.SearchID)
	ok, err := c.Confirm(ctx, Sensitive{ToolName: c.Agent.Tool, Category: "email_send", Sensitivity: "high", Undoable: false,
		Preview: map[string]any{"to": a.Recipient, "subject": subject, "search_id": a.SearchID, "candidate_ids": ids}})
	if err != nil {
		return Result{}, err
	}
	if !ok {
		return Result{Summary: "La persona rechazó el envío: no se envió nada.", Data: map[string]any{"sent": false}}, nil
	}
	id, err := t.Outbox.Send(ctx, c.Tenant, Outgoing{ID: hashID(fmt.Sprintf("%s/%s/%d/%s", c.Tenant, c.ChatID, c.Turn, a.Recipient)), To: a.Recipient, Subject: subject, SearchID: a.SearchID, CandidateID: ids, Body: body.String()})
	if err != nil {
		return Result{}, fmt.Errorf("send reports of %s: %w", a.SearchID, err)
	}
	c.Step("finished", "informes enviados", map[string]any{"search_id": a.SearchID, "candidates": len(ids), "message_id": id})
	return Result{Summary: fmt.Sprintf("%s de la búsqueda %s a %s.", countedReports(len(ids), "Enviado", "Enviados"), a.SearchID, a.Recipient),
		Data: map[string]any{"sent": true, "message_id": id}}, nil
}

// hashID is a short stable id of s.
func hashID(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:12])
}

// schemaOf is a tool's strict parameters schema.
func schemaOf(t Tool) (json.RawMessage, error) {
	v := reflect.ValueOf(t.Args())
	if v.Kind() != reflect.Pointer {
		return nil, fmt.Errorf("Args must return a pointer, not %s", v.Type())
	}
	return llm.SchemaFor(v.Elem().Interface())
}

// countedReports is "Enviado 1 informe" or "Enviados 3 informes": the
// participle and the noun agree with n.
func countedReports(n int, one, many string) string {
	if n == 1 {
		return one + " " + labels.Count(n, "informe", "informes")
	}
	return many + " " + labels.Count(n, "informe", "informes")
}
