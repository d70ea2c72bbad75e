package jsonata

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"
)

// FuzzCompile checks that no expression makes Compile or Eval panic or run
// unbounded: every outcome is a value or an *Error (or the context's error).
// Run it longer with: go test -run '^$' -fuzz FuzzCompile -fuzztime 30s ./internal/asl/jsonata
func FuzzCompile(f *testing.F) {
	data, err := os.ReadFile("testdata/corpus.json")
	if err != nil {
		f.Fatal(err)
	}
	var cases []struct {
		Expr string `json:"expr"`
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		f.Fatal(err)
	}
	for _, c := range cases {
		f.Add(c.Expr)
	}
	var input any
	if err := json.Unmarshal([]byte(order), &input); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		e, err := Compile(expr, WithMaxSteps(20000), WithMaxDepth(200))
		if err != nil {
			var je *Error
			if !errors.As(err, &je) || je.Code == "" {
				t.Fatalf("Compile(%q) error %v is not a coded *Error", expr, err)
			}
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err = e.Eval(ctx, input, map[string]any{"x": 1.0})
		if err != nil {
			var je *Error
			if !errors.As(err, &je) && !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Eval(%q) error %v is neither a *Error nor the deadline", expr, err)
			}
		}
	})
}
