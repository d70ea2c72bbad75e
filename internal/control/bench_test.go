package control

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/blob/file"
)

// rssBytes reads the process's resident set size from /proc.
func rssBytes(b *testing.B) int64 {
	b.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb * 1024
		}
	}
	b.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// BenchmarkWaitingExecutions starts 10 000 executions that each wait on a
// task token (a Pass, then a .waitForTaskToken Task with a one-week timeout,
// as a confirmation does) and reports the resident memory they hold once
// they have parked (park.go), and the goroutines left. Reproduce with
// go test -run '^$' -bench WaitingExecutions -benchtime 1x ./internal/control
func BenchmarkWaitingExecutions(b *testing.B) {
	const n = 10_000
	def := `{"StartAt":"Prepare","States":{
	  "Prepare":{"Type":"Pass","Result":{"toolName":"senior_review","sensitivity":"high"},"ResultPath":"$.ask","Next":"Confirm"},
	  "Confirm":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","TimeoutSeconds":604800,
	    "Parameters":{"FunctionName":"ConfirmFunction","Payload":{"task_token.$":"$$.Task.Token","preview.$":"$.ask"}},"End":true}}}`
	for i := 0; i < b.N; i++ {
		var asked atomic.Int64
		reg := asl.NewRegistry()
		reg.Register("ConfirmFunction", func(context.Context, json.RawMessage) (json.RawMessage, error) {
			asked.Add(1)
			return nil, nil
		})
		ctx := context.Background()
		m, err := Open(ctx, Config{Dir: b.TempDir(), Registry: reg})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.CreateStateMachine(ctx, "Confirm", def, "", ""); err != nil {
			b.Fatal(err)
		}
		debug.FreeOSMemory()
		before := rssBytes(b)
		goroutines := runtime.NumGoroutine()
		b.StartTimer()
		var wg sync.WaitGroup
		next := make(chan int)
		for w := 0; w < 32; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range next {
					in := fmt.Sprintf(`{"tenant":"t%d","search_id":"s-%06d"}`, j%10, j)
					if _, err := m.StartExecution(ctx, StateMachineARN("Confirm"), fmt.Sprintf("x-%06d", j), in); err != nil {
						b.Error(err)
					}
				}
			}()
		}
		for j := 0; j < n; j++ {
			next <- j
		}
		close(next)
		wg.Wait()
		for asked.Load() < n || parkedCount(m) < n {
			time.Sleep(10 * time.Millisecond)
		}
		b.StopTimer()
		// What the executions hold in a steady state: each GC cycle halves
		// a goroutine stack that uses under a quarter of it, so a server
		// that has been waiting a while holds the shrunk stacks.
		for range 4 {
			runtime.GC()
		}
		debug.FreeOSMemory()
		after := rssBytes(b)
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapInuse)/n/1024, "KiB-heap/waiting")
		b.ReportMetric(float64(ms.StackInuse)/n/1024, "KiB-stack/waiting")
		b.ReportMetric(float64(runtime.NumGoroutine()-goroutines), "goroutines-added")
		b.ReportMetric(float64(after-before)/(1<<20), "MiB-RSS/10k-waiting")
		b.ReportMetric(float64(after-before)/n/1024, "KiB-RSS/waiting")
		b.ReportMetric(float64(after)/(1<<20), "MiB-RSS-total")
		m.Close()
	}
}

// BenchmarkDistributedMapItems runs a Distributed Map over 10 000 objects
// of the local inputs bucket, in batches of 100 recorded as child
// executions (50 at once), and reports the items processed a second:
// listing (each object read once for its ETag), batching, 100 children
// each persisted and fsynced as any execution, their results written to
// the reports bucket. Reproduce with
// go test -run '^$' -bench DistributedMapItems -benchtime 5x ./internal/control
func BenchmarkDistributedMapItems(b *testing.B) {
	const n = 10_000
	ctx := context.Background()
	data := b.TempDir()
	in := file.NewDir(filepath.Join(data, "inputs"))
	for i := range n {
		if err := in.Put(ctx, fmt.Sprintf("searches/acme/big/obj-%05d.json", i), []byte(fmt.Sprintf(`{"n":%d}`, i)), ""); err != nil {
			b.Fatal(err)
		}
	}
	done := make(chan Status, 1)
	reg := asl.NewRegistry()
	reg.Register("KeysFunction", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`"ok"`), nil
	})
	m, err := Open(ctx, Config{Dir: filepath.Join(data, "sfn"), Data: data, Registry: reg, Logger: slog.New(slog.DiscardHandler),
		OnStatus: func(s Status) {
			if s.Status != asl.StatusRunning && !strings.Contains(s.ExecutionARN, "/") { // the parent's end
				done <- s
			}
		}})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	def := strings.Replace(keysMap("searches/acme/big/", `"MaxConcurrency":50,
	  "ResultWriter":{"Resource":"arn:aws:states:::s3:putObject","Parameters":{"Bucket":"veredicto-reports","Prefix":"maps/acme/big"}},`), `"MaxItemsPerBatch":5`, `"MaxItemsPerBatch":100`, 1)
	if _, err := m.CreateStateMachine(ctx, "big", def, "", ""); err != nil {
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		if _, err := m.StartExecution(ctx, StateMachineARN("big"), fmt.Sprintf("run-%d", i), `{"tenant":"acme"}`); err != nil {
			b.Fatal(err)
		}
		if s := <-done; s.Status != asl.StatusSucceeded {
			b.Fatalf("%s %s %s", s.Status, s.Error, s.Cause)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "items/s")
}
