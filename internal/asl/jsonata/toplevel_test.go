package jsonata

import (
	"slices"
	"testing"
)

func TestTopLevelNames(t *testing.T) {
	tests := []struct {
		expr string
		want []string
	}{
		{`phone`, []string{"phone"}},
		{`order.total + tax`, []string{"order", "tax"}},
		{`$states.input.items[value > 3]`, nil},
		{`$states.input.items^(price).name`, nil},
		{`$states.input.items{type: $sum(price)}`, nil},
		{`{"a": 1, "b": $x}`, nil},
		{`{"a": b}`, []string{"b"}},
		{`$map($states.input.a, function($x){ b })`, []string{"b"}},
		{`$count($states.input.a) > 1 ? c : $d`, []string{"c"}},
		{`($v := $states.input; $v.name)`, nil},
		{`'phone' & "x"`, nil},
		{`$states.input.(a + b)`, nil},
	}
	for _, tt := range tests {
		e, err := Compile(tt.expr)
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		if got := e.TopLevelNames(); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.expr, got, tt.want)
		}
	}
}
