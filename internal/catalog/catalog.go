// Package catalog is the one list of the project's functions. Each Function
// names what the three worlds share: the template logical id
// ("Gem1Function", also the ASL resource "${Gem1FunctionArn}"), the folder
// functions/<Folder>, the handler and its input and output types, the state
// machines that invoke it and its sample events under events/.
//
// Everything else derives from this list or is checked against it:
//   - functions/<Folder>/main.go and build.mk are generated from it
//     (go generate ./internal/catalog; a test fails when they are stale);
//   - template.yaml's functions, DefinitionSubstitutions and invoke policies
//     are checked against it (infra tests);
//   - events/ holds exactly the samples the entries name, and each decodes
//     into its function's input type;
//   - the local engine and `veredicto lambda invoke` bind handlers from it;
//     internal/app builds the dependencies by Kind.
//
// Errors cross both runtimes by name: every handler returned here reports
// veredicto.ErrorName(err), the name of the typed error anywhere in the
// chain, never a wrapper's type name.
//
// # Adding a function
//
//  1. Write the handler, func(ctx, In) (Out, error), in its domain package.
//  2. Add one entry with fn(...) to its kind's list (SearchFunctions,
//     CompanionFunctions, …; All concatenates them). If it needs
//     dependencies no Kind builds yet, add a Kind, its <Kind>Functions list
//     (and to All), a field of Services, and a Start<Kind> entry point in
//     internal/app that passes that list to start (entryPoints below names
//     it), so the kind's bootstrap links only its own handlers.
//  3. Run go generate ./internal/catalog: it writes functions/<Folder>/main.go
//     and build.mk.
//  4. Add the resource to template.yaml (and, for a Task, its
//     DefinitionSubstitutions key and LambdaInvokePolicy) and a sample under
//     events/. `go test ./internal/catalog ./infra` says what is missing.
package catalog

//go:generate go run ./gen -root ../..

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda/messages"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/chat"
	"github.com/veredicto/veredicto/internal/companion"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/confirm/memory"
	"github.com/veredicto/veredicto/internal/debate"
	"github.com/veredicto/veredicto/internal/flags"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/intake"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/statemachines"
)

// Kind groups functions by the dependencies their handlers need, which is
// also the internal/app entry point that builds them (so each Lambda binary
// links only the AWS clients its kind uses).
type Kind string

// Kinds.
const (
	// KindSearch: a Task of the executive-search workflow (storage + LLM).
	KindSearch Kind = "search"
	// KindIntake: the S3 trigger and the HTTP API (storage + starter).
	KindIntake Kind = "intake"
	// KindFlags: interview flags over HTTP (LLM).
	KindFlags Kind = "flags"
	// KindPeople: the functions that put a person in the loop (seed 004):
	// confirmations and the event stream (DynamoDB, Step Functions).
	KindPeople Kind = "people"
	// KindDebate: a step of the debate workflow (seed 003): LLM, the
	// knowledge and reports bucket, the debate log table.
	KindDebate Kind = "debate"
	// KindChat: the delegation chat (seed 004 §5–9): the HTTP API and the
	// turns queue's worker (DynamoDB, S3, SQS, Step Functions, LLM).
	KindChat Kind = "chat"
	// KindCompanion: a Task of the career-companion workflow (seed 001):
	// context store, blob store and LLM.
	KindCompanion Kind = "companion"
)

// entryPoints names the internal/app function that starts a Lambda of each
// kind; generated main.go files call it with the logical id.
var entryPoints = map[Kind]string{
	KindSearch:    "StartSearch",
	KindIntake:    "StartIntake",
	KindFlags:     "StartFlags",
	KindPeople:    "StartPeople",
	KindDebate:    "StartDebate",
	KindChat:      "StartChat",
	KindCompanion: "StartCompanion",
}

// EntryPoint is the internal/app function that starts a Lambda of kind k.
func EntryPoint(k Kind) string { return entryPoints[k] }

// State machine files (statemachines/), as Function.StateMachines names them.
const (
	ExecutiveSearch = "executive_search.asl.json"
	Debate          = "debate.asl.json"
	CareerCompanion = "career_companion.asl.json"
)

// Services are the assembled dependencies the handlers are bound to. A
// Lambda entry point fills only what its Kind needs.
type Services struct {
	Search *search.Service
	Intake *intake.Service
	// API serves the HTTP routes of a function behind API Gateway: the
	// Routes its kind assembled (every route, locally).
	API *httpapi.Gateway
	// Judge is the interview-flags contradiction judge (POST /flags, the
	// chat's flags tool).
	Judge flags.ContradictionJudge
	// Confirm is ConfirmFunction's service (the .waitForTaskToken task).
	Confirm *confirm.Service
	// Debate holds the debate workflow's step handlers (seed 003).
	Debate *debate.Steps
	// Stream is the event stream on a streaming Function URL.
	Stream *HandlerFunc[*events.LambdaFunctionURLRequest, *events.LambdaFunctionURLStreamingResponse]
	// ChatTurns runs the delegation chat's queued turns.
	ChatTurns *chat.Service
	// Companion holds the career companion's Task handlers.
	Companion *companion.Service
}

// HandlerFunc is a handler assembled as a function (an HTTP handler behind
// an API Gateway or Function URL adapter) rather than a service's method.
type HandlerFunc[In, Out any] func(context.Context, In) (Out, error)

// Handle calls h.
func (h HandlerFunc[In, Out]) Handle(ctx context.Context, in In) (Out, error) { return h(ctx, in) }

// Function is one function of the project.
type Function struct {
	// LogicalID is the template logical id, e.g. "Gem1Function"; the ASL
	// resource "${Gem1FunctionArn}" binds to it.
	LogicalID string
	// Folder is the folder under functions/ that builds its bootstrap.
	Folder string
	Kind   Kind
	// Doc completes "Command <Folder> is the <LogicalID> Lambda: …".
	Doc string
	// StateMachines lists the statemachines/ files whose Tasks invoke it.
	StateMachines []string
	// Events lists its sample events under events/.
	Events []string
	// In and Out are the handler's input and output types.
	In, Out reflect.Type

	lambda func(*Services) (any, error)
	task   func(*Services) (asl.Handler, error)
}

// Lambda returns the typed handler, func(ctx, In) (Out, error), bound to s:
// the form lambda.Start takes. Its errors are messages.InvokeResponse_Error
// values whose Type is the chain's ASL error name.
func (f Function) Lambda(s *Services) (any, error) { return f.lambda(s) }

// Task returns the same handler for the local engine.
func (f Function) Task(s *Services) (asl.Handler, error) { return f.task(s) }

// All lists every function, in template order.
func All() []Function {
	var out []Function
	for _, kind := range []func() []Function{SearchFunctions, IntakeFunctions, FlagsFunctions, PeopleFunctions,
		DebateFunctions, ChatFunctions, CompanionFunctions} {
		out = append(out, kind()...)
	}
	return out
}

// SearchFunctions are the executive-search workflow's Tasks (seed 000). A
// Lambda's entry point names only its kind's list, so its binary links only
// those handlers.
func SearchFunctions() []Function {
	search1 := func(id, folder, doc, sample string) Function {
		return Function{LogicalID: id, Folder: folder, Kind: KindSearch, Doc: doc,
			StateMachines: []string{ExecutiveSearch}, Events: []string{sample}}
	}
	return []Function{
		fn(search1("ValidateFunction", "validate", "validates a search's inputs and plans the evaluation.", "validate.json"),
			searchDeps, (*search.Service).Validate),
		fn(search1("Gem5Function", "gem5", "GEM5 mandate analysis, once per search.", "gem5.json"),
			searchDeps, (*search.Service).Gem5),
		fn(search1("Gem1Function", "gem1", "GEM1 trajectory and achievements.", "gem1.json"),
			searchDeps, (*search.Service).Gem1),
		fn(search1("Gem2Function", "gem2", "GEM2 business assessment.", "gem2.json"),
			searchDeps, (*search.Service).Gem2),
		fn(search1("Gem3Function", "gem3", "GEM3 verdict and 360 references.", "gem3.json"),
			searchDeps, (*search.Service).Gem3),
		fn(search1("Gem4Function", "gem4", "GEM4 QA audit.", "gem4.json"),
			searchDeps, (*search.Service).Gem4),
		fn(search1("CorrectionFunction", "correction", "the correction step after a blocking QA audit.", "correction.json"),
			searchDeps, (*search.Service).Correct),
		fn(search1("ReportFunction", "report", "a candidate's decision and reports.", "report.json"),
			searchDeps, (*search.Service).Report),
		fn(search1("SummaryFunction", "summary", "the search summary and protocol metrics.", "summary.json"),
			searchDeps, (*search.Service).Summarize),
	}
}

// IntakeFunctions are the upload trigger and the HTTP API of the searches. A
// Lambda's entry point names only its kind's list, so its binary links only
// those handlers.
func IntakeFunctions() []Function {
	return []Function{
		fn(Function{LogicalID: "TriggerFunction", Folder: "trigger", Kind: KindIntake,
			Doc:    "consumes the inputs queue: one evaluation per searches/<tenant>/<id>/READY upload.",
			Events: []string{"trigger-sqs-batch.json", "trigger-sqs-ready.json"}},
			func(s *Services) *intake.Service { return s.Intake }, (*intake.Service).HandleSQS),
		fn(Function{LogicalID: "ApiFunction", Folder: "api", Kind: KindIntake,
			Doc:    "the HTTP API (start searches, read state and reports).",
			Events: []string{"api-get-report.json", "api-get-search.json", "api-post-searches.json"}},
			apiDeps, (*httpapi.Gateway).Handle),
	}
}

// FlagsFunctions are interview flags over HTTP (seed 002). A Lambda's entry
// point names only its kind's list, so its binary links only those handlers.
func FlagsFunctions() []Function {
	return []Function{
		fn(Function{LogicalID: "FlagsFunction", Folder: "flags", Kind: KindFlags,
			Doc:    "POST /flags classifies interview answers with the Flags schema v1.1 (seed 002).",
			Events: []string{"flags-post.json"}},
			apiDeps, (*httpapi.Gateway).Handle),
	}
}

// PeopleFunctions are the functions that put a person in the loop (seed 004):
// confirmations and the event stream. A Lambda's entry point names only its
// kind's list, so its binary links only those handlers.
func PeopleFunctions() []Function {
	return []Function{
		fn(Function{LogicalID: "ConfirmFunction", Folder: "confirm", Kind: KindPeople,
			Doc:           "the .waitForTaskToken task that stores a pending confirmation (seed 004 §3).",
			StateMachines: []string{ExecutiveSearch, Debate, CareerCompanion}, Events: []string{"confirm.json"}},
			func(s *Services) *confirm.Service { return s.Confirm }, (*confirm.Service).Confirm),
		fn(Function{LogicalID: "ConfirmationsFunction", Folder: "confirmations", Kind: KindPeople,
			Doc:    "GET and POST /api/confirmations on the HTTP API (list and resolve confirmations).",
			Events: []string{"confirmations-get.json", "confirmations-post.json"}},
			apiDeps, (*httpapi.Gateway).Handle),
		fn(Function{LogicalID: "StreamFunction", Folder: "stream", Kind: KindPeople,
			Doc:    "the event stream (Server-Sent Events) on a Function URL with response streaming.",
			Events: []string{"stream.json"}},
			func(s *Services) *HandlerFunc[*events.LambdaFunctionURLRequest, *events.LambdaFunctionURLStreamingResponse] {
				return s.Stream
			}, (*HandlerFunc[*events.LambdaFunctionURLRequest, *events.LambdaFunctionURLStreamingResponse]).Handle),
	}
}

// DebateFunctions are the debate workflow's steps and its HTTP routes (seed
// 003). A Lambda's entry point names only its kind's list, so its binary links
// only those handlers.
func DebateFunctions() []Function {
	return []Function{
		fn(debate1("DebatePrepareFunction", "debate-prepare", "validates a debate, routes it and runs the first RAG queries (seed 003).", "debate-prepare.json"),
			debateDeps, (*debate.Steps).Prepare),
		fn(debate1("DebatePositionFunction", "debate-position", "one agent's position in a parallel round (debate_position).", "debate-position.json"),
			debateDeps, (*debate.Steps).Position),
		fn(debate1("DebateCloseRoundFunction", "debate-close-round", "closes a parallel round: convergence checkpoint, loop hash, circuit breaker.", "debate-close-round.json"),
			debateDeps, (*debate.Steps).CloseRound),
		fn(debate1("DebateRebuttalFunction", "debate-rebuttal", "one agent's turn of the sequential round 2 (debate_rebuttal).", "debate-rebuttal.json"),
			debateDeps, (*debate.Steps).Rebuttal),
		fn(debate1("DebateSynthesizeFunction", "debate-synthesize", "the synthesis (debate_synthesis) and the escalation table.", "debate-synthesize.json"),
			debateDeps, (*debate.Steps).Synthesize),
		fn(debate1("DebateVoteFunction", "debate-vote", "one council member's vote (council_vote).", "debate-vote.json"),
			debateDeps, (*debate.Steps).Vote),
		fn(debate1("DebateCouncilFunction", "debate-council", "closes the council: result ≥ 60 decides, else a person.", "debate-council.json"),
			debateDeps, (*debate.Steps).Council),
		fn(debate1("DebateFinishFunction", "debate-finish", "records the debate: log in the table, debate_log.yaml and debate.md in the bucket.", "debate-finish.json"),
			debateDeps, (*debate.Steps).Finish),
		fn(Function{LogicalID: "DebateApiFunction", Folder: "debate-api", Kind: KindDebate,
			Doc:    "the debate routes of the HTTP API: POST /debates, GET /debates/{id}[/report].",
			Events: []string{"debate-api-post.json", "debate-api-get.json"}},
			apiDeps, (*httpapi.Gateway).Handle),
	}
}

// ChatFunctions are the delegation chat (seed 004 §5–9). A Lambda's entry
// point names only its kind's list, so its binary links only those handlers.
func ChatFunctions() []Function {
	return []Function{
		fn(Function{LogicalID: "ChatFunction", Folder: "chat", Kind: KindChat,
			Doc:    "POST /api/chat and GET /api/chat/metrics on the HTTP API: claims a turn of the delegation chat and queues it (seed 004 §5–9).",
			Events: []string{"chat-post.json", "chat-metrics.json"}},
			apiDeps, (*httpapi.Gateway).Handle),
		fn(Function{LogicalID: "ChatTurnFunction", Folder: "chatturn", Kind: KindChat,
			Doc:    "runs the delegation chat's queued turns: the supervisor, its delegations and confirmations, onto the conversation's stream.",
			Events: []string{"chatturn-sqs.json"}},
			func(s *Services) *chat.Service { return s.ChatTurns }, (*chat.Service).HandleSQS),
	}
}

// CompanionFunctions are the career companion's Tasks and HTTP routes (seed
// 001). A Lambda's entry point names only its kind's list, so its binary links
// only those handlers.
func CompanionFunctions() []Function {
	return []Function{
		fn(companion1("CompanionIntentFunction", "companion-intent", "the career companion's profile check and intent classifier (seed 001).", "companion-intent.json"),
			companionDeps, (*companion.Service).Intent),
		fn(companion1("CompanionValidateFunction", "companion-validate", "checks the JD lists requirements before phase 1.", "companion-validate.json"),
			companionDeps, (*companion.Service).Validate),
		fn(companion1("CompanionCultureRadarFunction", "companion-culture-radar", "phase 1, the culture radar.", "companion-culture-radar.json"),
			companionDeps, (*companion.Service).CultureRadar),
		fn(companion1("CompanionCacheLookupFunction", "companion-cache-lookup", "the classification cache lookup by input hash.", "companion-cache-lookup.json"),
			companionDeps, (*companion.Service).CacheLookup),
		fn(companion1("CompanionClassifyFunction", "companion-classify", "phase 2a, requirements classified A-D and matched.", "companion-classify.json"),
			companionDeps, (*companion.Service).Classify),
		fn(companion1("CompanionSasFunction", "companion-sas", "phase 2b, the 5 SAS dimensions.", "companion-sas.json"),
			companionDeps, (*companion.Service).SAS),
		fn(companion1("CompanionScoringFunction", "companion-scoring", "phase 2c, the ScoringEngine (code only).", "companion-scoring.json"),
			companionDeps, (*companion.Service).Scoring),
		fn(companion1("CompanionDecisionFunction", "companion-decision", "records the answer to the anti-impostor pause.", "companion-decision.json"),
			companionDeps, (*companion.Service).RecordDecision),
		fn(companion1("CompanionDraftFunction", "companion-draft", "phase 3, the CV content.", "companion-draft.json"),
			companionDeps, (*companion.Service).Draft),
		fn(Function{LogicalID: "CompanionApiFunction", Folder: "companion-api", Kind: KindCompanion,
			Doc:    "the career companion's HTTP routes (/companion/applications…).",
			Events: []string{"companion-api-post.json", "companion-api-get.json"}},
			apiDeps, (*httpapi.Gateway).Handle),
	}
}

func debate1(id, folder, doc, sample string) Function {
	return Function{LogicalID: id, Folder: folder, Kind: KindDebate, Doc: doc,
		StateMachines: []string{Debate}, Events: []string{sample}}
}

func debateDeps(s *Services) *debate.Steps { return s.Debate }

func companion1(id, folder, doc, sample string) Function {
	return Function{LogicalID: id, Folder: folder, Kind: KindCompanion, Doc: doc,
		StateMachines: []string{CareerCompanion}, Events: []string{sample}}
}

func companionDeps(s *Services) *companion.Service { return s.Companion }

func searchDeps(s *Services) *search.Service { return s.Search }

func apiDeps(s *Services) *httpapi.Gateway { return s.API }

// Lookup returns the function of a logical id.
func Lookup(logicalID string) (Function, error) {
	for _, f := range All() {
		if f.LogicalID == logicalID {
			return f, nil
		}
	}
	return Function{}, fmt.Errorf("no function %q (known: %s)", logicalID, strings.Join(LogicalIDs(), ", "))
}

// LogicalIDs lists every function's logical id, sorted.
func LogicalIDs() []string {
	var ids []string
	for _, f := range All() {
		ids = append(ids, f.LogicalID)
	}
	sort.Strings(ids)
	return ids
}

// Of lists the functions of one kind.
func Of(k Kind) []Function {
	var out []Function
	for _, f := range All() {
		if f.Kind == k {
			out = append(out, f)
		}
	}
	return out
}

// InvokedBy lists the functions whose Tasks a state machine file invokes.
func InvokedBy(machine string) []Function {
	var out []Function
	for _, f := range All() {
		for _, m := range f.StateMachines {
			if m == machine {
				out = append(out, f)
			}
		}
	}
	return out
}

// Registry returns a registry for the local engine holding the Task
// handlers of fns bound to s. A function whose dependency s lacks is
// registered as a handler that fails with that error.
func Registry(s *Services, fns []Function) *asl.Registry {
	r := asl.NewRegistry()
	for _, f := range fns {
		h, err := f.Task(s)
		if err != nil {
			h = func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, err }
		}
		r.Register(f.LogicalID, h)
	}
	return r
}

// SearchRegistry is the registry of the executive-search workflow's
// functions bound to svc, with senior reviews recorded by reviews.
func SearchRegistry(svc *search.Service, reviews *confirm.Service) *asl.Registry {
	return Registry(&Services{Search: svc, Confirm: reviews}, InvokedBy(ExecutiveSearch))
}

// RunSearch runs statemachines/executive_search.asl.json through the local
// engine with its functions bound to svc: the same definition and handlers
// Step Functions and Lambda run in AWS. Senior reviews are recorded in
// memory and forgotten with the run (StartSearch keeps them).
func RunSearch(ctx context.Context, svc *search.Service, in search.StartInput, onEvent func(asl.Event)) (*asl.Result, error) {
	eng := asl.New(SearchRegistry(svc, &confirm.Service{Store: memory.New()}))
	x, err := StartSearch(ctx, eng, in, onEvent)
	if err != nil {
		return nil, err
	}
	return x.Wait(ctx)
}

// StartSearch starts statemachines/executive_search.asl.json on eng (whose
// registry is a SearchRegistry) and returns the running execution, so the
// caller can resolve its senior reviews (eng.SendTaskSuccess, …) while it
// waits.
func StartSearch(ctx context.Context, eng *asl.Engine, in search.StartInput, onEvent func(asl.Event)) (*asl.Execution, error) {
	sm, err := asl.Parse(statemachines.ExecutiveSearch)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ExecutiveSearch, err)
	}
	input, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("%s input: %w", ExecutiveSearch, err)
	}
	return eng.Start(ctx, sm, input, asl.StartOptions{Name: in.SearchID, StateMachineName: "executive_search", OnEvent: onEvent})
}

// fn completes f with the handler: method m of the dependency dep picks
// from the services.
func fn[D, In, Out any](f Function, dep func(*Services) *D, m func(*D, context.Context, In) (Out, error)) Function {
	f.In, f.Out = reflect.TypeFor[In](), reflect.TypeFor[Out]()
	bound := func(s *Services) (func(context.Context, In) (Out, error), error) {
		d := dep(s)
		if d == nil {
			return nil, fmt.Errorf("%s: no %s in the assembled services", f.LogicalID, reflect.TypeFor[*D]())
		}
		return func(ctx context.Context, in In) (Out, error) { return m(d, ctx, in) }, nil
	}
	f.lambda = func(s *Services) (any, error) {
		h, err := bound(s)
		if err != nil {
			return nil, err
		}
		return Named(h), nil
	}
	f.task = func(s *Services) (asl.Handler, error) {
		h, err := bound(s)
		if err != nil {
			return nil, err
		}
		return EngineHandler(h), nil
	}
	return f
}

// EngineHandler is Named for the local engine: h as an asl.Handler whose
// errors are named like Named's.
func EngineHandler[In, Out any](h func(context.Context, In) (Out, error)) asl.Handler {
	return engineNamed(asl.Typed(h))
}

// Named wraps a typed handler so that a returned error leaves it as a
// messages.InvokeResponse_Error value whose Type is veredicto.ErrorName(err):
// aws-lambda-go reports such a value with its declared Type, and the local
// engine names it the same way, so a TransientError wrapped by
// fmt.Errorf("gem1 %s: %w", …) is still "TransientError" to Retry and Catch.
func Named[In, Out any](h func(context.Context, In) (Out, error)) func(context.Context, In) (Out, error) {
	return func(ctx context.Context, in In) (Out, error) {
		out, err := h(ctx, in)
		if err != nil {
			return out, messages.InvokeResponse_Error{Type: veredicto.ErrorName(err), Message: err.Error()}
		}
		return out, nil
	}
}

// engineNamed is Named for the local engine: a failed task ends as the
// *asl.StatesError a Lambda error becomes in Step Functions, named
// veredicto.ErrorName(err), with the cause Step Functions shows (the
// runtime's errorMessage and errorType as JSON).
func engineNamed(h asl.Handler) asl.Handler {
	return func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
		out, err := h(ctx, in)
		if err != nil {
			name := veredicto.ErrorName(err)
			var cause bytes.Buffer
			enc := json.NewEncoder(&cause)
			enc.SetEscapeHTML(false)
			if enc.Encode(messages.InvokeResponse_Error{Type: name, Message: err.Error()}) != nil {
				return nil, &asl.StatesError{Name: name, Cause: err.Error()}
			}
			return nil, &asl.StatesError{Name: name, Cause: strings.TrimSuffix(cause.String(), "\n")}
		}
		return out, nil
	}
}

// CompanionRegistry is the registry of the career companion's functions
// bound to svc, with the anti-impostor pause recorded by confirms.
func CompanionRegistry(svc *companion.Service, confirms *confirm.Service) *asl.Registry {
	return Registry(&Services{Companion: svc, Confirm: confirms}, InvokedBy(CareerCompanion))
}

// StartCompanion starts statemachines/career_companion.asl.json on eng
// (whose registry is a CompanionRegistry) under the execution name
// <tenant>-<application_id>.
func StartCompanion(ctx context.Context, eng *asl.Engine, in companion.StartInput, onEvent func(asl.Event)) (*asl.Execution, error) {
	sm, err := asl.Parse(statemachines.CareerCompanion)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", CareerCompanion, err)
	}
	input, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("%s input: %w", CareerCompanion, err)
	}
	return eng.Start(ctx, sm, input, asl.StartOptions{Name: in.Tenant + "-" + in.ApplicationID, StateMachineName: "career_companion", OnEvent: onEvent})
}
