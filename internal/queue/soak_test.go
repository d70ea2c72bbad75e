package queue_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/veredicto/veredicto"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/intake"
	"github.com/veredicto/veredicto/internal/queue"
	"github.com/veredicto/veredicto/internal/starter"
	filestore "github.com/veredicto/veredicto/internal/store/file"
)

// flakyStarter fails a share of its calls with a TransientError (a
// throttled StartExecution) and counts the executions really started.
type flakyStarter struct {
	mu       sync.Mutex
	rng      *rand.Rand
	failRate float64
	started  map[string]int
	failures int
	repeats  int // calls that found the execution already started
}

func (f *flakyStarter) Start(_ context.Context, name string, _ []byte) (starter.Execution, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rng.Float64() < f.failRate {
		f.failures++
		return starter.Execution{}, &veredicto.TransientError{Op: "start execution " + name, Err: errors.New("ThrottlingException")}
	}
	if f.started[name] > 0 {
		f.repeats++
		return starter.Execution{Name: name}, nil
	}
	f.started[name]++
	return starter.Execution{Name: name, Started: true}, nil
}

func (f *flakyStarter) Describe(_ context.Context, name string) (starter.Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.started[name] == 0 {
		return starter.Status{}, &veredicto.NotFoundError{What: "execution " + name}
	}
	return starter.Status{Name: name, Status: "RUNNING"}, nil
}

func writeFile(t *testing.T, root, rel, body string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSoak sends 500 READY notifications through the local queue, the
// watcher and the consumer as `veredicto serve` wires them, to the real
// intake handler whose starter fails 5 % of its calls: every search starts
// exactly once, none is lost, the dead-letter queue stays empty. Figures
// (docs/BENCHMARKS.md) are logged with -v.
func TestSoak(t *testing.T) {
	const searches = 500
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	data := t.TempDir()
	inputs := filepath.Join(data, "inputs")
	for i := range searches {
		dir := fmt.Sprintf("searches/t%d/s-%03d/", i%7, i)
		writeFile(t, inputs, dir+"jd.md", "# CFO\n\nLidera finanzas.\n")
		writeFile(t, inputs, dir+"kickoff.md", "# Kickoff\n\nBuscamos un CFO.\n")
		writeFile(t, inputs, dir+"company.md", "# Empresa\n\nDistribuidora.\n")
		writeFile(t, inputs, dir+"candidates/c-1/cv.md", "# CV\n\nCFO diez años.\n")
		writeFile(t, inputs, dir+"READY", "")
	}
	q, err := queue.Open(filepath.Join(data, "queue"), queue.Config{MaxReceiveCount: 5, Visibility: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	w := &queue.Watcher{Inputs: inputs, Bucket: "veredicto-inputs", Queue: q, Logger: quiet}
	begin := time.Now()
	if n, err := w.Scan(ctx); n != searches || err != nil {
		t.Fatalf("watcher queued %d (%v), want %d", n, err, searches)
	}
	if n, err := w.Scan(ctx); n != 0 || err != nil {
		t.Fatalf("second scan queued %d (%v), want 0: nothing changed", n, err)
	}
	sent := time.Since(begin)

	st := &flakyStarter{rng: rand.New(rand.NewPCG(19, 5)), failRate: 0.05, started: map[string]int{}}
	svc := &intake.Service{Inputs: fileblob.NewDir(inputs), Reports: fileblob.NewDir(filepath.Join(data, "reports")),
		Records: filestore.NewMemory(), Starter: st, Logger: quiet}
	var wg sync.WaitGroup
	cctx, stop := context.WithCancel(ctx)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			(&queue.Consumer{Queue: q, Handle: svc.HandleSQS, Idle: 10 * time.Millisecond, Logger: quiet}).Run(cctx)
		}()
	}
	for {
		queued, dead, err := q.Depth(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if queued == 0 {
			stop()
			wg.Wait()
			if dead != 0 {
				t.Errorf("dead-letter queue holds %d messages, want 0", dead)
			}
			break
		}
		select {
		case <-ctx.Done():
			stop()
			wg.Wait()
			t.Fatalf("queue not drained: %d queued, %d dead, %d started", queued, dead, len(st.started))
		case <-time.After(20 * time.Millisecond):
		}
	}
	elapsed := time.Since(begin)
	lost, duplicated := 0, 0
	for i := range searches {
		switch n := st.started[starter.ExecutionName(fmt.Sprintf("t%d", i%7), fmt.Sprintf("s-%03d", i))]; {
		case n == 0:
			lost++
		case n > 1:
			duplicated++
		}
	}
	if len(st.started) != searches || lost != 0 || duplicated != 0 {
		t.Errorf("started %d searches, %d lost, %d duplicated; want %d, 0, 0", len(st.started), lost, duplicated, searches)
	}
	if st.failures == 0 {
		t.Error("no transient failure was injected: the test proved nothing about redelivery")
	}
	t.Logf("soak: %d READY markers queued in %v; drained in %v (%.0f starts/s); %d injected transient failures, %d starts found already started",
		searches, sent.Round(time.Millisecond), elapsed.Round(time.Millisecond), float64(searches)/elapsed.Seconds(), st.failures, st.repeats)
}
