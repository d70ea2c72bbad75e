package asl

import (
	"context"
	"fmt"
	"math"
	mrand "math/rand/v2"

	"github.com/veredicto/veredicto/internal/asl/jsonata"
)

// stepFunctionsFunctions are the options every ASL expression is compiled
// with: the functions Step Functions adds to JSONata
// ("JSONata functions provided by Step Functions"), the counterparts of the
// JSONPath intrinsics. $eval is not among JSONata 2.0.6 as the jsonata
// package implements it; $parse takes its place.
var stepFunctionsFunctions = []jsonata.Option{
	// Step Functions' memory bound on one value an expression builds:
	// about 6.7 MB of characters, or 873 782 array items ([1..873782]
	// evaluates there, one item more is "Expression evaluation memory limit
	// exceeded").
	jsonata.WithMaxSize(6_990_256, 873_782),
	jsonata.WithFunction("partition", fnPartition),
	jsonata.WithFunction("range", fnRange),
	jsonata.WithFunction("hash", fnHash),
	jsonata.WithFunction("random", fnRandom),
	jsonata.WithFunction("uuid", fnUUID),
	jsonata.WithFunction("parse", fnParse),
}

func fnArgs(name string, args []any, lo, hi int) error {
	if len(args) < lo || len(args) > hi {
		if lo == hi {
			return fmt.Errorf("$%s takes %d argument(s), got %d", name, lo, len(args))
		}
		return fmt.Errorf("$%s takes %d to %d arguments, got %d", name, lo, hi, len(args))
	}
	for i, a := range args {
		if jsonata.IsUndefined(a) {
			return fmt.Errorf("$%s: argument %d is undefined", name, i+1)
		}
	}
	return nil
}

// intArg reads a number argument. A non-integer is cut towards zero, as
// Step Functions does for its functions that take integers ($range(-1.7, …)
// starts at -1).
func intArg(name string, args []any, i int) (int64, error) {
	f, ok := asFloat(args[i])
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1<<53 {
		return 0, fmt.Errorf("$%s: argument %d must be a number, got %s", name, i+1, typeName(args[i]))
	}
	return int64(math.Trunc(f)), nil
}

// Where Step Functions' functions have no answer (a chunk size of zero, an
// empty array, a range without a step or stepping away from its end, a hash
// without an algorithm) they return undefined rather than fail, so the field
// holding the expression fails as "returned nothing (undefined)".

func fnPartition(_ context.Context, args []any) (any, error) {
	if len(args) < 2 {
		return jsonata.Undefined, nil
	}
	if err := fnArgs("partition", args, 2, 2); err != nil {
		return nil, err
	}
	size, err := intArg("partition", args, 1)
	if err != nil {
		return nil, err
	}
	if arr, ok := args[0].([]any); size <= 0 || (ok && len(arr) == 0) {
		return jsonata.Undefined, nil
	}
	v, err := (&intrinsic{name: "States.ArrayPartition"}).apply([]any{args[0], size}, nil)
	if err != nil {
		return nil, fmt.Errorf("$partition: %v", err)
	}
	return v, nil
}

func fnRange(_ context.Context, args []any) (any, error) {
	if len(args) < 3 {
		return jsonata.Undefined, nil
	}
	if err := fnArgs("range", args, 3, 3); err != nil {
		return nil, err
	}
	in := make([]any, 3)
	for i := range in {
		n, err := intArg("range", args, i)
		if err != nil {
			return nil, err
		}
		in[i] = n
	}
	start, end, step := in[0].(int64), in[1].(int64), in[2].(int64)
	if step == 0 || (end > start && step < 0) || (end < start && step > 0) {
		return jsonata.Undefined, nil
	}
	// Unlike States.ArrayRange (at most 1000 items), $range is bounded by
	// memory: Step Functions builds 360 145 items and refuses one more.
	if n := (end-start)/step + 1; n > maxJSONataRange {
		return nil, &jsonata.Error{Code: "U1003", Message: fmt.Sprintf("$range would build %d items, over %d", n, maxJSONataRange)}
	}
	out := make([]any, 0, (end-start)/step+1)
	for i := start; (step > 0 && i <= end) || (step < 0 && i >= end); i += step {
		out = append(out, i)
	}
	if len(out) == 1 {
		return out[0], nil // a one-value sequence is the value, as JSONata returns it
	}
	return out, nil
}

const maxJSONataRange = 360_145

func fnHash(_ context.Context, args []any) (any, error) {
	if len(args) == 1 {
		return jsonata.Undefined, nil
	}
	if err := fnArgs("hash", args, 2, 2); err != nil {
		return nil, err
	}
	v, err := hashOf(args)
	if err != nil {
		return nil, fmt.Errorf("$hash: %v", err)
	}
	return v, nil
}

func fnRandom(_ context.Context, args []any) (any, error) {
	if err := fnArgs("random", args, 0, 1); err != nil {
		return nil, err
	}
	if len(args) == 1 {
		seed, err := intArg("random", args, 0)
		if err != nil {
			return nil, err
		}
		return mrand.New(mrand.NewPCG(uint64(seed), 0)).Float64(), nil
	}
	return mrand.Float64(), nil
}

func fnUUID(_ context.Context, args []any) (any, error) {
	if err := fnArgs("uuid", args, 0, 0); err != nil {
		return nil, err
	}
	return newUUID(), nil
}

func fnParse(_ context.Context, args []any) (any, error) {
	if err := fnArgs("parse", args, 1, 1); err != nil {
		return nil, err
	}
	s, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("$parse: the argument must be a string, got %s", typeName(args[0]))
	}
	v, err := parseJSON([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("$parse: the argument is not valid JSON text: %v", err)
	}
	return v, nil
}
