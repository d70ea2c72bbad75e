package asl

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-lambda-go/lambda/messages"
)

// Handler is a Task implementation: the same signature a Go Lambda handler
// has after JSON decoding is taken out of it.
type Handler func(ctx context.Context, in json.RawMessage) (json.RawMessage, error)

// Registry binds Task resources to handlers. Handlers are registered under
// the template logical id of their function ("Gem1Function"); the ASL
// resource "${Gem1FunctionArn}" resolves to it. It is safe for concurrent use.
type Registry struct {
	mu       sync.Mutex                         // serialises Register
	handlers atomic.Pointer[map[string]Handler] // replaced whole, never written: Tasks look up without a lock
	external atomic.Pointer[External]           // SetExternal's
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	r := &Registry{}
	r.handlers.Store(&map[string]Handler{})
	return r
}

// Register binds name (a logical id such as "Gem1Function", or a literal
// resource ARN) to h, replacing any earlier binding.
func (r *Registry) Register(name string, h Handler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	next := maps.Clone(*r.handlers.Load())
	next[name] = h
	r.handlers.Store(&next)
}

// Lookup returns the handler registered under name.
func (r *Registry) Lookup(name string) (Handler, bool) { return r.lookup(name) }

func (r *Registry) lookup(name string) (Handler, bool) {
	if r == nil {
		return nil, false
	}
	h, ok := (*r.handlers.Load())[name]
	return h, ok
}

// External serves a Task that no registered handler serves, as Step
// Functions would call the service it names: resource is the state's
// Resource (without .waitForTaskToken), binding the name looked up (a
// lambda:invoke's FunctionName, otherwise the resource). It returns
// nil, nil for a resource it does not serve either (the Task is then
// unbound), or an error saying why it cannot serve it here (a Lambda
// function with no endpoint to call). It must be safe for concurrent use.
type External func(resource, binding string) (Handler, error)

// SetExternal makes fn serve the Tasks no registered handler serves (see
// External); nil removes it. Set it before state machines are checked:
// Engine.Check remembers a definition it accepted.
func (r *Registry) SetExternal(fn External) {
	if fn == nil {
		r.external.Store(nil)
		return
	}
	r.external.Store(&fn)
}

// resolve is the handler of a Task: the one registered under binding, else
// External's. A nil handler with a nil error is an unbound Task.
func (r *Registry) resolve(resource, binding string) (Handler, error) {
	if h, ok := r.lookup(binding); ok {
		return h, nil
	}
	if r == nil || binding == "" {
		return nil, nil // a lambda:invoke without a FunctionName is unbound
	}
	if ext := r.external.Load(); ext != nil {
		return (*ext)(resource, binding)
	}
	return nil, nil
}

// Service integration resources the engine understands.
const (
	lambdaInvoke      = "arn:aws:states:::lambda:invoke"
	waitForTaskToken  = ".waitForTaskToken"
	substitutionStart = "${"
)

// bindingName maps a Task resource to the registry name that serves it:
// "${Gem1FunctionArn}" → "Gem1Function"; any other resource is looked up as
// written.
func bindingName(resource string) string {
	if strings.HasPrefix(resource, substitutionStart) && strings.HasSuffix(resource, "}") {
		key := resource[2 : len(resource)-1]
		return strings.TrimSuffix(key, "Arn")
	}
	return resource
}

// UnboundError names a Task resource that no registered handler serves.
type UnboundError struct {
	State    string
	Resource string
	Binding  string
	// Reason, when set, is why the registry's External cannot serve it.
	Reason error
}

func (e *UnboundError) Error() string {
	if e.Reason != nil {
		return fmt.Sprintf("state %q: resource %q: %v", e.State, e.Resource, e.Reason)
	}
	return fmt.Sprintf("state %q: no handler is registered for resource %q (looked for %q)", e.State, e.Resource, e.Binding)
}

func (e *UnboundError) Unwrap() error { return e.Reason }

// ErrorName is the ASL error name of a handler error, exactly as the Go
// Lambda runtime (aws-lambda-go v1.55.1, lambdaErrorResponse) reports it as
// errorType: the declared Type of a messages.InvokeResponse_Error value;
// otherwise the name of the error's dynamic type, a pointer type by its
// element name (so a *messages.InvokeResponse_Error is
// "InvokeResponse_Error", whatever its Type says). Wrapping changes the name,
// as it does in Lambda: return the typed error itself at the task boundary.
func ErrorName(err error) string {
	if ir, ok := err.(messages.InvokeResponse_Error); ok {
		return ir.Type
	}
	t := reflect.TypeOf(err)
	if t.Kind() == reflect.Pointer {
		return t.Elem().Name()
	}
	return t.Name()
}
