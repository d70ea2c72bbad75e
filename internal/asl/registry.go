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

func (r *Registry) lookup(name string) (Handler, bool) {
	if r == nil {
		return nil, false
	}
	h, ok := (*r.handlers.Load())[name]
	return h, ok
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
}

func (e *UnboundError) Error() string {
	return fmt.Sprintf("state %q: no handler is registered for resource %q (looked for %q)", e.State, e.Resource, e.Binding)
}

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
