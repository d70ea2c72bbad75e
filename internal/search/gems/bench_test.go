package gems_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/audit"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/search/gems"
	"github.com/veredicto/veredicto/internal/search/searchtest"
	filestore "github.com/veredicto/veredicto/internal/store/file"
	"github.com/veredicto/veredicto/prompts"
)

// scriptedClient is an in-process LLM with a fixed latency: every
// candidate passes every gate (GEM1–GEM3 8, SI, QA 8), five calls each.
type scriptedClient struct {
	latency time.Duration
	calls   atomic.Int64
}

func (c *scriptedClient) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	c.calls.Add(1)
	if c.latency > 0 {
		select {
		case <-time.After(c.latency):
		case <-ctx.Done():
			return llm.Response{}, ctx.Err()
		}
	}
	id := "-"
	if m := candidateRE.FindStringSubmatch(req.User); m != nil {
		id = m[1]
	}
	// Cite only the CV: every candidate of the example has one.
	cv := "candidates/" + id + "/cv.md"
	var v any
	switch req.Schema {
	case "gem5":
		v = searchtest.Gem5()
	case "gem1":
		v = gem1(cv, 8)
	case "gem2":
		v = gem2(cv, 8)
	case "gem3":
		s := 8
		v = answer(gem3Content(cv, "SI"), scores(&s))
	case "gem4":
		v = gem4(8, false)
	default:
		return llm.Response{}, fmt.Errorf("unexpected schema %s", req.Schema)
	}
	b, _ := json.Marshal(v)
	return llm.Response{Content: b, Usage: veredicto.Usage{Calls: 1, PromptTokens: 1200, CompletionTokens: 300}}, nil
}

// processCPU is the CPU time (user + sys) this process has used.
func processCPU(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func syntheticSearch(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	ids := make([]string, n)
	for i := range n {
		ids[i] = fmt.Sprintf("c-%03d", i)
	}
	searchtest.WriteSearch(b, dir, ids)
	return dir
}

func benchSearch(b *testing.B, candidates, concurrency int, latency time.Duration) {
	benchSearchAudited(b, candidates, concurrency, latency, nil)
}

// The audit records the benchmarks keep: serve's, synced after every step,
// and "search run"'s, synced when a step writes a report.
var (
	recordPerStep   = func(root string) search.Auditor { return &audit.Folders{Root: root} }
	recordOnReports = func(root string) search.Auditor { return &audit.Folders{Root: root, Single: true, SyncOnReport: true} }
)

// benchSearchAudited runs the search, keeping its audit record on disk
// with record when it is not nil.
func benchSearchAudited(b *testing.B, candidates, concurrency int, latency time.Duration, record func(root string) search.Auditor) {
	dir := syntheticSearch(b, candidates)
	var calls, allCalls int64
	var cpu time.Duration
	files := 0
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		client := &scriptedClient{latency: latency}
		reports, recordDir := b.TempDir(), b.TempDir()
		svc := &search.Service{Inputs: fileblob.NewDir(dir), Reports: fileblob.NewDir(reports), Store: filestore.NewMemory(),
			Analyst: gems.New(client, veredicto.ModelInfo{Provider: "scripted", Model: "bench"}), PromptVersions: prompts.PromptVersion}
		if record != nil {
			svc.Audit = record(recordDir)
		}
		cpu0 := processCPU(b)
		b.StartTimer()
		res, err := catalog.RunSearch(context.Background(), svc, search.StartInput{SearchID: "bench", Concurrency: concurrency}, nil)
		if err != nil || res.Status != asl.StatusSucceeded {
			b.Fatalf("run: %v %+v", err, res)
		}
		b.StopTimer()
		cpu += processCPU(b) - cpu0
		calls = client.calls.Load()
		allCalls += calls
		files += searchtest.CountFiles(b, reports, recordDir)
		b.StartTimer()
	}
	perCand := b.Elapsed() / time.Duration(b.N*candidates)
	b.ReportMetric(float64(perCand.Microseconds())/1000, "ms/candidate")
	// The process's CPU (user + sys, every goroutine: engine, stores,
	// audit record, the scripted client's JSON) per model call.
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(allCalls), "cpu-ms/call")
	// The files and folders it made (reports, record): each a new inode.
	b.ReportMetric(float64(files)/float64(allCalls), "new-files/call")
	if latency > 0 {
		ideal := time.Duration(float64(calls) / float64(concurrency) * float64(latency))
		b.ReportMetric(float64(b.Elapsed()/time.Duration(b.N))/float64(ideal), "x-ideal")
	}
}

// BenchmarkSearch200NoLatency: the platform's own overhead per candidate
// (engine, stage store, citations, reports) with an instant LLM.
func BenchmarkSearch200NoLatency(b *testing.B) { benchSearch(b, 200, 20, 0) }

// BenchmarkSearch200Latency100ms: wall time against the ideal
// calls ÷ concurrency × latency, at --concurrency 20.
func BenchmarkSearch200Latency100ms(b *testing.B) { benchSearch(b, 200, 20, 100*time.Millisecond) }

// BenchmarkSearch200NoLatencyAudited is BenchmarkSearch200NoLatency with
// the execution's audit record kept on disk as serve keeps it, each step's
// entries synced when it ends.
func BenchmarkSearch200NoLatencyAudited(b *testing.B) {
	benchSearchAudited(b, 200, 20, 0, recordPerStep)
}

// BenchmarkSearch200Latency100msAudited is BenchmarkSearch200Latency100ms
// with the audit record.
func BenchmarkSearch200Latency100msAudited(b *testing.B) {
	benchSearchAudited(b, 200, 20, 100*time.Millisecond, recordPerStep)
}

// BenchmarkSearch200NoLatencyAuditedOnReport keeps the record as "search
// run" does: synced when a report or the summary is written.
func BenchmarkSearch200NoLatencyAuditedOnReport(b *testing.B) {
	benchSearchAudited(b, 200, 20, 0, recordOnReports)
}

// BenchmarkSearch200Latency100msAuditedOnReport is
// BenchmarkSearch200Latency100ms with the record "search run" keeps.
func BenchmarkSearch200Latency100msAuditedOnReport(b *testing.B) {
	benchSearchAudited(b, 200, 20, 100*time.Millisecond, recordOnReports)
}

// recordingClient answers like scriptedClient and records prompt sizes.
type recordingClient struct {
	scriptedClient
	mu      sync.Mutex
	byCand  map[string]int // prompt characters (system + user) per candidate
	prefix  map[string]int // per agent: characters shared by every candidate's call
	firstOf map[string]string
}

func (r *recordingClient) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	id := "-"
	if m := candidateRE.FindStringSubmatch(req.User); m != nil {
		id = m[1]
	}
	r.mu.Lock()
	r.byCand[id] += len(req.System) + len(req.User)
	full := req.System + req.User
	if prev, ok := r.firstOf[req.Schema]; !ok {
		r.firstOf[req.Schema] = full
		r.prefix[req.Schema] = len(full)
	} else {
		n := 0
		for n < len(prev) && n < len(full) && prev[n] == full[n] {
			n++
		}
		r.prefix[req.Schema] = min(r.prefix[req.Schema], n)
	}
	r.mu.Unlock()
	return r.scriptedClient.Complete(ctx, req)
}

// BenchmarkExamplePromptSize measures the prompts the LLM analyst sends for
// examples/search-demo: characters per candidate (≈ 4 characters per token
// for Spanish with GPT-4-class tokenizers, an estimate) and the share that
// is a prefix identical across candidates, which providers cache.
func BenchmarkExamplePromptSize(b *testing.B) {
	for range b.N {
		rc := &recordingClient{byCand: map[string]int{}, prefix: map[string]int{}, firstOf: map[string]string{}}
		svc := &search.Service{Inputs: fileblob.NewDir("../../../examples/search-demo"), Reports: fileblob.NewDir(b.TempDir()), Store: filestore.NewMemory(),
			Analyst: gems.New(rc, veredicto.ModelInfo{Provider: "scripted", Model: "bench"}), PromptVersions: prompts.PromptVersion}
		res, err := catalog.RunSearch(context.Background(), svc, search.StartInput{SearchID: "demo-cfo-andina"}, nil)
		if err != nil || res.Status != asl.StatusSucceeded {
			b.Fatalf("run: %v %+v", err, res)
		}
		total, cands := 0, 0
		for id, n := range rc.byCand {
			if id != "-" {
				total += n
				cands++
			}
		}
		shared := 0
		for agent, n := range rc.prefix {
			if agent != "gem5" {
				shared += n
			}
		}
		b.ReportMetric(float64(total)/float64(cands), "prompt-chars/candidate")
		b.ReportMetric(float64(total)/float64(cands)/4, "est-tokens/candidate")
		b.ReportMetric(100*float64(shared)/(float64(total)/float64(cands)), "cacheable-%")
	}
}
