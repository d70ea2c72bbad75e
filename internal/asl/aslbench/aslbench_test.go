package aslbench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// want computes each workload's expected output from its meaning, not from
// the engine.
func want(t *testing.T, w Workload) any {
	t.Helper()
	var in map[string]any
	if err := json.Unmarshal([]byte(w.Input), &in); err != nil {
		t.Fatal(err)
	}
	switch w.Name {
	case "pass-chain", "task-chain":
		n := PassStates
		if w.Name == "task-chain" {
			n = TaskStates
		}
		return map[string]any{"v": in["v"], "last": map[string]any{"v": in["v"], "step": float64(n - 1)}}
	case "inline-map":
		items := in["items"].([]any)
		out := make([]any, len(items))
		for i, it := range items {
			out[i] = map[string]any{"id": it.(map[string]any)["id"], "i": float64(i)}
		}
		return out
	case "choice-loop":
		return map[string]any{"i": float64(ChoiceLimit)}
	}
	t.Fatalf("no expectation for %s", w.Name)
	return nil
}

func TestWorkloads(t *testing.T) {
	for _, w := range All() {
		t.Run(w.Name, func(t *testing.T) {
			r, err := NewRunner(w)
			if err != nil {
				t.Fatal(err)
			}
			out, n, err := r.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var got any
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if exp := want(t, w); !reflect.DeepEqual(got, exp) {
				t.Errorf("output %s, want %v", trim(out), exp)
			}
			if n == 0 {
				t.Error("no transitions counted")
			}
		})
	}
}

func trim(b []byte) string {
	s := string(b)
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

func TestWriteRoundTrips(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir, All()); err != nil {
		t.Fatal(err)
	}
	for _, w := range All() {
		var doc struct {
			Definition json.RawMessage `json:"definition"`
			Input      json.RawMessage `json:"input"`
			Identity   string          `json:"identity"`
		}
		b, err := readFile(dir, w.Name)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(doc.Definition), `"StartAt"`) || doc.Identity != w.Identity {
			t.Errorf("%s: %s", w.Name, fmt.Sprint(doc.Identity))
		}
	}
}

// BenchmarkWorkloads runs the four workloads of make bench-compare; the
// figures in docs/BENCHMARKS.md come from `make bench-compare`, which
// interleaves them with the Node engine.
func BenchmarkWorkloads(b *testing.B) {
	for _, w := range All() {
		b.Run(w.Name, func(b *testing.B) {
			r, err := NewRunner(w)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			transitions := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_, n, err := r.Run(ctx)
				if err != nil {
					b.Fatal(err)
				}
				transitions += n
			}
			b.ReportMetric(float64(transitions)/b.Elapsed().Seconds(), "transitions/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(transitions), "ns/transition")
		})
	}
}

func readFile(dir, name string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, name+".json")) }

// BenchmarkControl is the control loop of bench-compare: compare its
// GOMAXPROCS=1 and =2 figures with the workloads'.
func BenchmarkControl(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		ControlRun()
	}
}

// TestControlAllocatesWhatItSays: the control's allocations per run are the
// objects it names (and its slice), its bytes near ControlBytes, so that
// it stays comparable to the Task chain it stands for.
func TestControlAllocatesWhatItSays(t *testing.T) {
	m := MeasureControl(20 * time.Millisecond)
	if m.Runs < 1 || m.Allocs < ControlObjects || m.Allocs > ControlObjects+2 {
		t.Errorf("control: %d runs, %.1f allocations per run, want %d objects and their slice", m.Runs, m.Allocs, ControlObjects)
	}
	const runs = 50
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		ControlRun()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per < ControlBytes*9/10 || per > ControlBytes*11/10 {
		t.Errorf("control allocates %d bytes per run, want about %d", per, ControlBytes)
	}
}
