package app

import (
	"context"
	"encoding/json"
	"sort"
	"time"

	"github.com/veredicto/veredicto/internal/control"
	"github.com/veredicto/veredicto/internal/httpapi/searchapi"
	"github.com/veredicto/veredicto/internal/intake"
)

// localRuns lists a tenant's executions of every state machine of the
// control plane for GET /runs, so workflows other than the searches (which
// the intake lists with their decisions) show up in the console as they
// are: kind from the machine's name, status, times. The newest
// maxLocalRuns of the tenant are listed, out of at most maxScannedRuns
// executions read.
type localRuns struct{ m *control.Manager }

const (
	maxLocalRuns   = 100
	maxScannedRuns = 1000
)

func (l localRuns) ListRuns(ctx context.Context, tenant string) ([]intake.Run, error) {
	out := []intake.Run{}
	scanned := 0
	for next := ""; ; {
		machines, n := l.m.ListStateMachines(ctx, next, 100)
		for _, sm := range machines {
			kind := searchapi.KindOf(sm.Name)
			for page := ""; scanned < maxScannedRuns; {
				execs, p, err := l.m.ListExecutions(ctx, sm.ARN, "", page, 100, nil)
				if err != nil {
					return nil, err
				}
				for _, e := range execs {
					scanned++
					d, err := l.m.DescribeExecution(ctx, e.ARN)
					if err != nil || d.Tenant != tenant {
						continue // gone since it was listed, or another tenant's
					}
					out = append(out, runOfExecution(kind, d, time.Now()))
				}
				if page = p; page == "" {
					break
				}
			}
		}
		if next = n; next == "" {
			break
		}
	}
	// Newest first, bounded.
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartedAt > out[j].StartedAt })
	if len(out) > maxLocalRuns {
		out = out[:maxLocalRuns]
	}
	return out, nil
}

func runOfExecution(kind string, e control.Execution, now time.Time) intake.Run {
	r := intake.Run{Kind: kind, ID: runID(e), Execution: e.ARN, Status: e.Status, Decisions: map[string]int{}, Error: e.Error}
	if !e.Start.IsZero() {
		r.StartedAt = e.Start.UTC().Format(time.RFC3339)
		end := now
		if !e.Stop.IsZero() {
			end = e.Stop
			r.StoppedAt = e.Stop.UTC().Format(time.RFC3339)
		}
		r.DurationSeconds = end.Sub(e.Start).Round(time.Second).Seconds()
	}
	return r
}

// runID names a run as its person knows it: the debate or application id
// of its input (the execution name, acme--d-1 or a hashed one, is the
// system's), else the execution's name.
func runID(e control.Execution) string {
	var in struct {
		DebateID      string `json:"debate_id"`
		ApplicationID string `json:"application_id"`
	}
	if json.Unmarshal(e.Input, &in) == nil {
		for _, id := range []string{in.DebateID, in.ApplicationID} {
			if id != "" {
				return id
			}
		}
	}
	return e.Name
}
