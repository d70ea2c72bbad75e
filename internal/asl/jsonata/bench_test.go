package jsonata

import (
	"context"
	"fmt"
	"testing"
)

// benchStates is a $states binding shaped like a Step Functions state's: an
// input with 50 line items.
func benchStates() map[string]any {
	items := make([]any, 50)
	for i := range items {
		items[i] = map[string]any{"name": fmt.Sprintf("item-%d", i), "price": float64(i % 20), "qty": float64(i%3 + 1)}
	}
	return map[string]any{"states": map[string]any{
		"input":   map[string]any{"orderId": "o-1", "items": items},
		"context": map[string]any{"Execution": map[string]any{"Id": "exec-1"}},
	}}
}

// BenchmarkEvalFilter is the typical ASL expression
// {% $states.input.items[price > 10].name %}, compiled once.
func BenchmarkEvalFilter(b *testing.B) {
	benchEval(b, `$states.input.items[price > 10].name`)
}

// BenchmarkEvalOutput builds an Output object with an aggregate.
func BenchmarkEvalOutput(b *testing.B) {
	benchEval(b, `{"id": $states.input.orderId, "total": $sum($states.input.items.(price * qty)), "big": $count($states.input.items[price > 10])}`)
}

func benchEval(b *testing.B, expr string) {
	e, err := Compile(expr)
	if err != nil {
		b.Fatal(err)
	}
	bindings := benchStates()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Eval(ctx, nil, bindings); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(`{"id": $states.input.orderId, "total": $sum($states.input.items.(price * qty)), "big": $count($states.input.items[price > 10])}`); err != nil {
			b.Fatal(err)
		}
	}
}
