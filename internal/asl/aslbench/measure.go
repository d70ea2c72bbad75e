package aslbench

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
)

// Measurement is the throughput of one engine on one workload.
type Measurement struct {
	Runs        int             `json:"runs"`
	Seconds     float64         `json:"seconds"`
	Transitions int             `json:"transitions"` // per run
	Output      json.RawMessage `json:"output"`
	// Allocs is the heap allocations per transition (Go only).
	Allocs float64 `json:"allocs,omitempty"`
	// Collections is the garbage collections per run (Go only).
	Collections float64 `json:"collections,omitempty"`
}

// PerSecond is the transitions per second.
func (m Measurement) PerSecond() float64 {
	if m.Seconds == 0 {
		return 0
	}
	return float64(m.Runs*m.Transitions) / m.Seconds
}

// Runner runs one workload in-process: the definition is parsed and the
// engine built once, as a library user would.
type Runner struct {
	w   Workload
	sm  *asl.StateMachine
	eng *asl.Engine
}

// NewRunner parses w's definition.
func NewRunner(w Workload) (*Runner, error) {
	sm, err := asl.Parse([]byte(w.Definition))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", w.Name, err)
	}
	return &Runner{w: w, sm: sm, eng: asl.New(w.Registry())}, nil
}

// Run executes the workload once and returns its output and transitions.
func (r *Runner) Run(ctx context.Context) (json.RawMessage, int, error) {
	res, err := r.eng.Run(ctx, r.sm, json.RawMessage(r.w.Input), asl.StartOptions{Name: "bench"})
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", r.w.Name, err)
	}
	if res.Status != asl.StatusSucceeded {
		return nil, 0, fmt.Errorf("%s: %s: %s: %s", r.w.Name, res.Status, res.Error, res.Cause)
	}
	return res.Output, res.Transitions, nil
}

// Measure warms up with one run, then runs the workload for at least d.
func (r *Runner) Measure(ctx context.Context, d time.Duration) (Measurement, error) {
	out, n, err := r.Run(ctx)
	if err != nil {
		return Measurement{}, err
	}
	m := Measurement{Transitions: n, Output: out}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for m.Runs == 0 || time.Since(start) < d {
		if _, _, err := r.Run(ctx); err != nil {
			return Measurement{}, err
		}
		m.Runs++
	}
	m.Seconds = time.Since(start).Seconds()
	runtime.ReadMemStats(&after)
	m.Allocs = float64(after.Mallocs-before.Mallocs) / float64(m.Runs*m.Transitions)
	m.Collections = float64(after.NumGC-before.NumGC) / float64(m.Runs)
	return m, nil
}
