// Package catalog is the one list of the project's functions. Each Function
// (internal/catalog/function) names what the three worlds share: the
// template logical id ("Gem1Function", also the ASL resource
// "${Gem1FunctionArn}"), the folder functions/<Folder>, the handler and its
// input and output types, the state machines that invoke it and its sample
// events under events/.
//
// Each kind of function keeps its list and its binding where only that kind
// is imported: internal/catalog/<kind>fn (searchfn, intakefn, flagsfn,
// peoplefn, debatefn, chatfn, companionfn, chatlinkfn) lists its
// functions, each bound with function.Bind to a dependency in that kind's
// Services, and the kind's Lambda entry point, internal/app/<kind>app,
// builds those Services and imports only that list. A bootstrap therefore
// links only its kind's handlers and domain packages
// (TestBootstrapsLinkOnlyTheirKind). This
// package aggregates the kinds (its kinds table: list, entry point, the
// kind's Services from the local ones) for everything that needs the whole
// list (All, Lookup, InvokedBy) and binds any function to the services
// assembled on one machine (Services, Lambda, Task, Registry).
//
// Everything else derives from this list or is checked against it:
//   - functions/<Folder>/main.go and build.mk are generated from it
//     (go generate ./internal/catalog; a test fails when they are stale);
//   - template.yaml's functions, DefinitionSubstitutions and invoke policies
//     are checked against it (infra tests);
//   - events/ holds exactly the samples the entries name, and each decodes
//     into its function's input type;
//   - the local engine and `veredicto lambda invoke` bind handlers from it;
//     internal/app assembles the services.
//
// Errors cross both runtimes by name: every handler bound here reports
// veredicto.ErrorName(err), the name of the typed error anywhere in the
// chain, never a wrapper's type name (function.Named, EngineHandler).
//
// # Adding a function
//
//  1. Write the handler, func(ctx, In) (Out, error), in its domain package.
//  2. Add one entry with function.Bind(...) to its kind's list
//     (internal/catalog/<kind>fn). If it needs a dependency its kind's
//     Services lacks, add a field there, build it in the kind's entry point
//     (internal/app/<kind>app) and map it from the local Services in kinds
//     below. A new kind is a function.Kind, a <kind>fn package (Services,
//     Functions), an internal/app/<kind>app package (Start(logicalID)) and
//     a row of kinds.
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
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda/messages"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/catalog/chatfn"
	"github.com/veredicto/veredicto/internal/catalog/chatlinkfn"
	"github.com/veredicto/veredicto/internal/catalog/companionapifn"
	"github.com/veredicto/veredicto/internal/catalog/companionfn"
	"github.com/veredicto/veredicto/internal/catalog/debateapifn"
	"github.com/veredicto/veredicto/internal/catalog/debatefn"
	"github.com/veredicto/veredicto/internal/catalog/flagsfn"
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/catalog/intakefn"
	"github.com/veredicto/veredicto/internal/catalog/peoplefn"
	"github.com/veredicto/veredicto/internal/catalog/searchfn"
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

// kind is one kind of functions: its list, the services its handlers are
// bound to (built from the assembled Services), and its Lambda entry point.
type kind struct {
	kind      function.Kind
	functions func() []function.Function
	services  func(*Services) any
	entry     entry
}

// entry is where a kind's Lambda starts: the function Func of the package
// Pkg (a path under the module), called with the logical id.
type entry struct{ Pkg, Func string }

// kinds lists every kind, in template order.
var kinds = []kind{
	{function.KindSearch, searchfn.Functions, func(s *Services) any {
		return &searchfn.Services{Search: s.Search}
	}, entry{"internal/app/searchapp", "Start"}},
	{function.KindIntake, intakefn.Functions, func(s *Services) any {
		return &intakefn.Services{Intake: s.Intake, API: s.API}
	}, entry{"internal/app/intakeapp", "Start"}},
	{function.KindFlags, flagsfn.Functions, func(s *Services) any {
		return &flagsfn.Services{API: s.API}
	}, entry{"internal/app/flagsapp", "Start"}},
	{function.KindPeople, peoplefn.Functions, func(s *Services) any {
		return &peoplefn.Services{Confirm: s.Confirm, API: s.API, Stream: s.Stream}
	}, entry{"internal/app/peopleapp", "Start"}},
	{function.KindDebate, debatefn.Functions, func(s *Services) any {
		return &debatefn.Services{Debate: s.Debate}
	}, entry{"internal/app/debateapp", "Start"}},
	{function.KindDebateAPI, debateapifn.Functions, func(s *Services) any {
		return &debateapifn.Services{API: s.API}
	}, entry{"internal/app/debateapiapp", "Start"}},
	{function.KindChat, chatfn.Functions, func(s *Services) any {
		return &chatfn.Services{API: s.API, Turns: s.ChatTurns}
	}, entry{"internal/app/chatapp", "Start"}},
	{function.KindCompanion, companionfn.Functions, func(s *Services) any {
		return &companionfn.Services{Companion: s.Companion}
	}, entry{"internal/app/companionapp", "Start"}},
	{function.KindCompanionAPI, companionapifn.Functions, func(s *Services) any {
		return &companionapifn.Services{API: s.API}
	}, entry{"internal/app/companionapiapp", "Start"}},
	{function.KindChatLink, chatlinkfn.Functions, func(s *Services) any {
		return &chatlinkfn.Services{Links: s.ChatLinks}
	}, entry{"internal/app/chatlinkapp", "Start"}},
}

func kindOf(k function.Kind) (kind, bool) {
	for _, c := range kinds {
		if c.kind == k {
			return c, true
		}
	}
	return kind{}, false
}

// EntryPoint is where a Lambda of kind k starts, as the generated main.go
// calls it: the package path under the module and the function's name ("",
// "" for an unknown kind).
func EntryPoint(k function.Kind) (pkg, fn string) {
	c, _ := kindOf(k)
	return c.entry.Pkg, c.entry.Func
}

// Services are every kind's dependencies assembled on one machine
// (internal/app's AssembleLocal): Lambda and Task bind a function of any
// kind to them. A Lambda entry point assembles only its kind's services
// (<kind>fn.Services).
type Services struct {
	Search *search.Service
	Intake *intake.Service
	// API serves the HTTP routes of a function behind API Gateway: every
	// route, locally.
	API *httpapi.Gateway
	// Judge is the interview-flags contradiction judge (POST /flags, the
	// chat's flags tool).
	Judge flags.ContradictionJudge
	// Confirm is ConfirmFunction's service (the .waitForTaskToken task).
	Confirm *confirm.Service
	// Debate holds the debate workflow's step handlers (seed 003).
	Debate *debate.Steps
	// Stream is the event stream on a streaming Function URL.
	Stream *peoplefn.Stream
	// ChatTurns runs the delegation chat's queued turns.
	ChatTurns *chat.Service
	// Companion holds the career companion's Task handlers.
	Companion *companion.Service
	// ChatLinks says executions' status changes in the conversations that
	// started them.
	ChatLinks *chat.Links
}

// of is the services of kind k among s.
func (s *Services) of(k function.Kind) (any, error) {
	c, ok := kindOf(k)
	if !ok {
		return nil, fmt.Errorf("no kind %q in the catalog", k)
	}
	return c.services(s), nil
}

// Lambda returns f's typed handler bound to s (function.Function.Lambda).
func Lambda(f function.Function, s *Services) (any, error) {
	ks, err := s.of(f.Kind)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.LogicalID, err)
	}
	return f.Lambda(ks)
}

// Task returns f's handler bound to s for the local engine: a failure ends
// as the *asl.StatesError its Lambda error becomes in Step Functions.
func Task(f function.Function, s *Services) (asl.Handler, error) {
	ks, err := s.of(f.Kind)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.LogicalID, err)
	}
	h, err := f.Invoke(ks)
	if err != nil {
		return nil, err
	}
	return engineNamed(h), nil
}

// All lists every function, in template order.
func All() []function.Function {
	var out []function.Function
	for _, c := range kinds {
		out = append(out, c.functions()...)
	}
	return out
}

// Lookup returns the function of a logical id.
func Lookup(logicalID string) (function.Function, error) {
	for _, f := range All() {
		if f.LogicalID == logicalID {
			return f, nil
		}
	}
	return function.Function{}, fmt.Errorf("no function %q (known: %s)", logicalID, strings.Join(LogicalIDs(), ", "))
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
func Of(k function.Kind) []function.Function {
	var out []function.Function
	for _, f := range All() {
		if f.Kind == k {
			out = append(out, f)
		}
	}
	return out
}

// InvokedBy lists the functions whose Tasks a state machine file invokes.
func InvokedBy(machine string) []function.Function {
	var out []function.Function
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
func Registry(s *Services, fns []function.Function) *asl.Registry {
	r := asl.NewRegistry()
	for _, f := range fns {
		h, err := Task(f, s)
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
	return Registry(&Services{Search: svc, Confirm: reviews}, InvokedBy(function.ExecutiveSearch))
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
		return nil, fmt.Errorf("%s: %w", function.ExecutiveSearch, err)
	}
	input, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("%s input: %w", function.ExecutiveSearch, err)
	}
	return eng.Start(ctx, sm, input, asl.StartOptions{Name: RunName(in.SearchID, time.Now()), StateMachineName: "executive_search", OnEvent: onEvent})
}

// RunName names a run of searchID started at t: unique per run, as Step
// Functions names are, so each run's audit record and the stages it
// computed are told from an earlier run's. At most 80 characters.
func RunName(searchID string, t time.Time) string {
	stamp := t.UTC().Format("20060102-150405.000000")
	if r := []rune(searchID); len(r) > 80-1-len(stamp) {
		searchID = string(r[:80-1-len(stamp)])
	}
	return searchID + "-" + stamp
}

// EngineHandler is function.Named for the local engine: h as an
// asl.Handler whose errors are named like Named's.
func EngineHandler[In, Out any](h func(context.Context, In) (Out, error)) asl.Handler {
	return engineNamed(function.NamedJSON(h))
}

// engineNamed turns a handler's named error (a messages.InvokeResponse_Error,
// as function.NamedJSON returns) into the *asl.StatesError a Lambda error
// becomes in Step Functions: named by its Type, with the cause Step
// Functions shows (the runtime's errorMessage and errorType as JSON).
func engineNamed(h function.JSONHandler) asl.Handler {
	return func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
		out, err := h(ctx, in)
		if err != nil {
			ir, ok := err.(messages.InvokeResponse_Error)
			if !ok {
				ir = messages.InvokeResponse_Error{Type: veredicto.ErrorName(err), Message: err.Error()}
			}
			var cause bytes.Buffer
			enc := json.NewEncoder(&cause)
			enc.SetEscapeHTML(false)
			if enc.Encode(ir) != nil {
				return nil, &asl.StatesError{Name: ir.Type, Cause: ir.Message}
			}
			return nil, &asl.StatesError{Name: ir.Type, Cause: strings.TrimSuffix(cause.String(), "\n")}
		}
		return out, nil
	}
}

// CompanionRegistry is the registry of the career companion's functions
// bound to svc, with the anti-impostor pause recorded by confirms.
func CompanionRegistry(svc *companion.Service, confirms *confirm.Service) *asl.Registry {
	return Registry(&Services{Companion: svc, Confirm: confirms}, InvokedBy(function.CareerCompanion))
}

// StartCompanion starts statemachines/career_companion.asl.json on eng
// (whose registry is a CompanionRegistry) under the execution name
// <tenant>-<application_id>.
func StartCompanion(ctx context.Context, eng *asl.Engine, in companion.StartInput, onEvent func(asl.Event)) (*asl.Execution, error) {
	sm, err := asl.Parse(statemachines.CareerCompanion)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", function.CareerCompanion, err)
	}
	input, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("%s input: %w", function.CareerCompanion, err)
	}
	return eng.Start(ctx, sm, input, asl.StartOptions{Name: in.Tenant + "-" + in.ApplicationID, StateMachineName: "career_companion", OnEvent: onEvent})
}
