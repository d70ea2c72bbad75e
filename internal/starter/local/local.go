// Package local starts executions in-process, through the project's engine
// (internal/asl), as the local composition does; it is apart from
// internal/starter so that the Lambdas, which start executions on Step
// Functions, link no engine.
package local

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/starter"
)

// KV is the record store the local starter keeps execution status in
// (the project's context store).
type KV interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	PutIfAbsent(ctx context.Context, key string, value []byte) (bool, error)
}

// RunFunc runs one execution in-process.
type RunFunc func(ctx context.Context, name string, input []byte) (*asl.Result, error)

// Local runs executions in-process through the project's engine, with the
// same deterministic-name contract as Step Functions: a name is claimed
// with a conditional write before anything runs, so a duplicate start finds
// it taken. Start returns when the execution has finished.
type Local struct {
	kv  KV
	run RunFunc
	now func() time.Time
}

// New returns a local starter recording status in kv.
func New(kv KV, run RunFunc) *Local {
	return &Local{kv: kv, run: run, now: time.Now}
}

func startedKey(name string) string  { return "execution/" + name + "/started" }
func finishedKey(name string) string { return "execution/" + name + "/finished" }

// Start claims name and runs the execution to its end.
func (l *Local) Start(ctx context.Context, name string, input []byte) (starter.Execution, error) {
	st := starter.Status{Name: name, Status: "RUNNING", StartedAt: l.now().UTC()}
	b, _ := json.Marshal(st)
	claimed, err := l.kv.PutIfAbsent(ctx, startedKey(name), b)
	if err != nil {
		return starter.Execution{}, fmt.Errorf("start execution %s: %w", name, err)
	}
	if !claimed {
		return starter.Execution{Name: name, ARN: "local:" + name}, nil
	}
	res, err := l.run(ctx, name, input)
	if err != nil {
		st.Status, st.Error, st.Cause = "FAILED", "States.Runtime", err.Error()
	} else {
		st.Status, st.Error, st.Cause = string(res.Status), res.Error, res.Cause
	}
	st.StoppedAt = l.now().UTC()
	b, _ = json.Marshal(st)
	if _, err := l.kv.PutIfAbsent(ctx, finishedKey(name), b); err != nil {
		return starter.Execution{}, fmt.Errorf("record execution %s: %w", name, err)
	}
	return starter.Execution{Name: name, ARN: "local:" + name, Started: true}, nil
}

// Describe reports the execution's status.
func (l *Local) Describe(ctx context.Context, name string) (starter.Status, error) {
	for _, key := range []string{finishedKey(name), startedKey(name)} {
		b, ok, err := l.kv.Get(ctx, key)
		if err != nil {
			return starter.Status{}, fmt.Errorf("describe execution %s: %w", name, err)
		}
		if ok {
			var st starter.Status
			if err := json.Unmarshal(b, &st); err != nil {
				return starter.Status{}, fmt.Errorf("describe execution %s: %w", name, err)
			}
			return st, nil
		}
	}
	return starter.Status{}, &veredicto.NotFoundError{What: "execution " + name}
}
