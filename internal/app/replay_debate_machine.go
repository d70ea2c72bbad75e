package app

import (
	"context"
	"fmt"

	"github.com/veredicto/veredicto/internal/audit"
)

func replayDebateMachine(ctx context.Context, r *audit.Replay, rec Record, out string) (*ReplayResult, error) {
	return nil, fmt.Errorf("not yet")
}
