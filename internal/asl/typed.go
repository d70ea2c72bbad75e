package asl

import (
	"context"
	"encoding/json"
)

// Typed adapts a typed task function to a Handler, decoding the state input
// into In and encoding Out, as the Lambda Go runtime does for lambda.Start.
// Errors pass through unchanged, so their type names stay the ASL error
// names.
func Typed[In, Out any](f func(context.Context, In) (Out, error)) Handler {
	return func(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
		var in In
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, err
		}
		out, err := f(ctx, in)
		if err != nil {
			return nil, err
		}
		return json.Marshal(out)
	}
}
