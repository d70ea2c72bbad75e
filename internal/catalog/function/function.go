// Package function is what every list of the catalog shares: the Function
// entry (names, folder, kind, sample events, handler types), the Kind of a
// function's dependencies, and Bind, which completes an entry with its
// handler bound to its kind's services, its errors named for both runtimes.
//
// It imports no domain package, no AWS client and not the engine, so a
// kind's list (internal/catalog/<kind>fn) and its Lambda entry point
// (internal/app/<kind>app) link only that kind's packages.
package function

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/aws/aws-lambda-go/lambda/messages"

	"github.com/veredicto/veredicto"
)

// Kind groups functions by the dependencies their handlers need, which is
// also the entry point that builds them: each kind has its own list
// (internal/catalog/<kind>fn) and its own Lambda entry point
// (internal/app/<kind>app), so each Lambda binary links only the packages
// and AWS clients its kind uses.
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
	// KindDebateAPI: the debate's HTTP routes (storage + starter), apart
	// from its steps so that they link no HTTP API.
	KindDebateAPI Kind = "debate-api"
	// KindChat: the delegation chat (seed 004 §5–9): the HTTP API and the
	// turns queue's worker (DynamoDB, S3, SQS, Step Functions, LLM).
	KindChat Kind = "chat"
	// KindCompanion: a Task of the career-companion workflow (seed 001):
	// context store, blob store and LLM.
	KindCompanion Kind = "companion"
	// KindCompanionAPI: the career companion's HTTP routes (its service +
	// starter), apart from its Tasks so that they link no HTTP API.
	KindCompanionAPI Kind = "companion-api"
	// KindChatLink: the execution status changes EventBridge delivers,
	// said in the conversations that started the executions (DynamoDB
	// only: the context table's links, the events table).
	KindChatLink Kind = "chatlink"
)

// State machine files (statemachines/), as Function.StateMachines names them.
const (
	ExecutiveSearch = "executive_search.asl.json"
	Debate          = "debate.asl.json"
	CareerCompanion = "career_companion.asl.json"
)

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

	lambda func(services any) (any, error)
	invoke func(services any) (JSONHandler, error)
}

// JSONHandler is a handler on JSON documents, as the local engine invokes a
// Task; its errors are messages.InvokeResponse_Error values, as Named's.
type JSONHandler func(ctx context.Context, in json.RawMessage) (json.RawMessage, error)

// Lambda returns the typed handler, func(ctx, In) (Out, error), bound to
// services (a pointer to its kind's Services): the form lambda.Start takes.
// Its errors are messages.InvokeResponse_Error values whose Type is the
// chain's ASL error name.
func (f Function) Lambda(services any) (any, error) {
	if f.lambda == nil {
		return nil, fmt.Errorf("%s: no handler bound (complete the entry with function.Bind)", f.LogicalID)
	}
	return f.lambda(services)
}

// Invoke returns the same handler on JSON documents, for the local engine:
// the input decoded into In, the output encoded from Out, every error
// (decoding included) a messages.InvokeResponse_Error named as Named names
// it.
func (f Function) Invoke(services any) (JSONHandler, error) {
	if f.invoke == nil {
		return nil, fmt.Errorf("%s: no handler bound (complete the entry with function.Bind)", f.LogicalID)
	}
	return f.invoke(services)
}

// Bind completes f with its handler: method m of the dependency that dep
// picks from the kind's services S. Lambda and Invoke then take a *S.
func Bind[S, D, In, Out any](f Function, dep func(*S) *D, m func(*D, context.Context, In) (Out, error)) Function {
	f.In, f.Out = reflect.TypeFor[In](), reflect.TypeFor[Out]()
	bound := func(services any) (func(context.Context, In) (Out, error), error) {
		s, ok := services.(*S)
		if !ok || s == nil {
			return nil, fmt.Errorf("%s: bound to %T, want the %s services (%s)", f.LogicalID, services, f.Kind, reflect.TypeFor[*S]())
		}
		d := dep(s)
		if d == nil {
			return nil, fmt.Errorf("%s: no %s in the assembled services", f.LogicalID, reflect.TypeFor[*D]())
		}
		return func(ctx context.Context, in In) (Out, error) { return m(d, ctx, in) }, nil
	}
	f.lambda = func(services any) (any, error) {
		h, err := bound(services)
		if err != nil {
			return nil, err
		}
		return Named(h), nil
	}
	f.invoke = func(services any) (JSONHandler, error) {
		h, err := bound(services)
		if err != nil {
			return nil, err
		}
		return NamedJSON(h), nil
	}
	return f
}

// HandlerFunc is a handler assembled as a function (an HTTP handler behind
// an API Gateway or Function URL adapter) rather than a service's method.
type HandlerFunc[In, Out any] func(context.Context, In) (Out, error)

// Handle calls h.
func (h HandlerFunc[In, Out]) Handle(ctx context.Context, in In) (Out, error) { return h(ctx, in) }

// Named wraps a typed handler so that a returned error leaves it as a
// messages.InvokeResponse_Error value whose Type is veredicto.ErrorName(err):
// aws-lambda-go reports such a value with its declared Type, and the local
// engine names it the same way, so a TransientError wrapped by
// fmt.Errorf("gem1 %s: %w", …) is still "TransientError" to Retry and Catch.
func Named[In, Out any](h func(context.Context, In) (Out, error)) func(context.Context, In) (Out, error) {
	return func(ctx context.Context, in In) (Out, error) {
		out, err := h(ctx, in)
		if err != nil {
			return out, invokeError(err)
		}
		return out, nil
	}
}

// NamedJSON is Named on JSON documents: h's input decoded from the
// document, its output encoded, every error (a document that does not
// decode included) named as Named names it.
func NamedJSON[In, Out any](h func(context.Context, In) (Out, error)) JSONHandler {
	return func(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
		var in In
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, invokeError(err)
		}
		out, err := h(ctx, in)
		if err != nil {
			return nil, invokeError(err)
		}
		b, err := json.Marshal(out)
		if err != nil {
			return nil, invokeError(err)
		}
		return b, nil
	}
}

func invokeError(err error) messages.InvokeResponse_Error {
	return messages.InvokeResponse_Error{Type: veredicto.ErrorName(err), Message: err.Error()}
}
