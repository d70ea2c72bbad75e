package asl

import (
	"context"
	"fmt"
	"math"
	mrand "math/rand/v2"

	"github.com/veredicto/veredicto/internal/asl/jsonata"
)

// stepFunctionsFunctions are the functions Step Functions adds to JSONata
// ("JSONata functions provided by Step Functions"), the counterparts of the
// JSONPath intrinsics. $eval is not among JSONata 2.0.6 as the jsonata
// package implements it; $parse takes its place.
var stepFunctionsFunctions = []jsonata.Option{
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

// intArg reads a number argument, rounded down as AWS does for the
// functions that take integers.
func intArg(name string, args []any, i int) (int64, error) {
	f, ok := asFloat(args[i])
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1<<53 {
		return 0, fmt.Errorf("$%s: argument %d must be a number, got %s", name, i+1, typeName(args[i]))
	}
	return int64(math.Floor(f)), nil
}

func fnPartition(_ context.Context, args []any) (any, error) {
	if err := fnArgs("partition", args, 2, 2); err != nil {
		return nil, err
	}
	size, err := intArg("partition", args, 1)
	if err != nil {
		return nil, err
	}
	v, err := (&intrinsic{name: "States.ArrayPartition"}).apply([]any{args[0], size}, nil)
	if err != nil {
		return nil, fmt.Errorf("$partition: %v", err)
	}
	return v, nil
}

func fnRange(_ context.Context, args []any) (any, error) {
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
	v, err := (&intrinsic{name: "States.ArrayRange"}).apply(in, nil)
	if err != nil {
		return nil, fmt.Errorf("$range: %v", err)
	}
	return v, nil
}

func fnHash(_ context.Context, args []any) (any, error) {
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
