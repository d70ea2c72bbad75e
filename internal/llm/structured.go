package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/veredicto/veredicto"
)

// Generate asks c for a value of type T. It attaches T's strict schema
// (unless req.JSONSchema is set), validates the answer against it, decodes
// it and runs check (citations, ranges, the caller's own rules). On any
// problem it re-asks once, carrying the problem back to the model; a second
// failure is an *InvalidOutputError. The returned Usage covers every call.
func Generate[T any](ctx context.Context, c Client, req Request, check func(*T) error) (T, veredicto.Usage, error) {
	var zero T
	if req.JSONSchema == nil {
		// The schema as kept, not a copy: a request is only read.
		s, err := sharedSchema(reflect.TypeFor[T]())
		if err != nil {
			return zero, veredicto.Usage{}, fmt.Errorf("generate %s: %w", req.Schema, err)
		}
		req.JSONSchema = s
	}
	var total veredicto.Usage
	obs := observerFrom(ctx)
	for attempt := 0; attempt < 2; attempt++ {
		start := time.Now()
		resp, err := c.Complete(ctx, req)
		total.Add(resp.Usage)
		if err != nil {
			if obs != nil {
				if oerr := obs.Observe(ctx, Attempt{Request: req, Err: err, Latency: time.Since(start), Number: attempt + 1}); oerr != nil {
					return zero, total, fmt.Errorf("generate %s: record the attempt: %w", req.Schema, oerr)
				}
			}
			return zero, total, fmt.Errorf("generate %s: %w", req.Schema, err)
		}
		var (
			out     T
			problem = truncatedProblem
		)
		if !resp.Truncated {
			out, problem = decode[T](req.JSONSchema, resp.Content, check)
		}
		// The attempt is recorded before its answer is used.
		if obs != nil {
			if oerr := obs.Observe(ctx, Attempt{Request: req, Response: resp, Latency: time.Since(start), Number: attempt + 1, Problem: problem}); oerr != nil {
				return zero, total, fmt.Errorf("generate %s: record the attempt: %w", req.Schema, oerr)
			}
		}
		if problem == "" {
			return out, total, nil
		}
		if attempt == 1 {
			return zero, total, &InvalidOutputError{Schema: req.Schema, Problem: problem}
		}
		req.Retry = &Reask{Previous: string(resp.Content), Problem: problem}
	}
	panic("unreachable")
}

// Attempt is one attempt of a Generate call, as an Observer sees it: the
// request sent, the answer (or the provider's error), how long it took,
// its number (1, then 2 for the re-ask) and the code's check of the answer
// (Problem, "" when accepted).
type Attempt struct {
	Request  Request
	Response Response
	Err      error
	Latency  time.Duration
	Number   int
	Problem  string
}

// Observer sees every attempt of every Generate call made with a context
// it is attached to (WithObserver), before the answer is used: the audit
// record. An error it returns fails the call.
type Observer interface {
	Observe(ctx context.Context, a Attempt) error
}

type observerKey struct{}

// WithObserver returns ctx in which Generate reports its attempts to o.
func WithObserver(ctx context.Context, o Observer) context.Context {
	return context.WithValue(ctx, observerKey{}, o)
}

func observerFrom(ctx context.Context) Observer {
	o, _ := ctx.Value(observerKey{}).(Observer)
	return o
}

// truncatedProblem is the re-ask of an answer cut off at the output-token
// bound (in Spanish, the language of the prompts).
const truncatedProblem = "la respuesta superó el límite de longitud y quedó cortada; responde de forma más concisa"

func decode[T any](schema json.RawMessage, content []byte, check func(*T) error) (T, string) {
	var out T
	if err := Validate(schema, content); err != nil {
		return out, err.Error()
	}
	dec := json.NewDecoder(bytes.NewReader(content))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return out, err.Error()
	}
	if check != nil {
		if err := check(&out); err != nil {
			return out, err.Error()
		}
	}
	return out, ""
}
