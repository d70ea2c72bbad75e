package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

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
		s, err := SchemaFor(zero)
		if err != nil {
			return zero, veredicto.Usage{}, fmt.Errorf("generate %s: %w", req.Schema, err)
		}
		req.JSONSchema = s
	}
	var total veredicto.Usage
	for attempt := 0; attempt < 2; attempt++ {
		resp, err := c.Complete(ctx, req)
		total.Add(resp.Usage)
		if err != nil {
			return zero, total, fmt.Errorf("generate %s: %w", req.Schema, err)
		}
		var (
			out     T
			problem = truncatedProblem
		)
		if !resp.Truncated {
			out, problem = decode[T](req.JSONSchema, resp.Content, check)
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
