package audit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/llm"
)

// dirBytes is the size of the files under dir.
func dirBytes(b *testing.B, dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			n += info.Size()
		}
		return nil
	})
	return n
}

// BenchmarkModelCallRecord is the record's cost of one model call as a
// search task makes it: the attempt (a 6 KB system prompt the record
// already holds, a 20 KB user message it does not, a 3 KB answer), the
// task's two clock readings, written and synced at the task's end. It
// reports the bytes the record grows by per call.
func BenchmarkModelCallRecord(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	rec := audit.NewRecorder(audit.NewDir(dir), nil)
	sc := &audit.Scope{Recorder: rec, Execution: "bench", Chain: "candidate/c-1", Candidate: "c-1", Deferred: true,
		Model: veredicto.ModelInfo{Provider: "openai", Model: "gpt-4o-mini"}}
	sctx := audit.WithScope(ctx, sc)
	system := strings.Repeat("Eres GEM1. ", 600)
	answer := []byte(`{"content":{"trayectoria":[{"text":"` + strings.Repeat("x", 3000) + `","sources":["candidates/c-1/cv.md"]}]}}`)
	before := dirBytes(b, dir)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		user := fmt.Sprintf("candidate_id: c-%d\n%s", i, strings.Repeat("CV ", 6600))
		b.StartTimer()
		if _, err := sc.Now(sctx, "gem1 start"); err != nil {
			b.Fatal(err)
		}
		a := llm.Attempt{Request: llm.Request{Schema: "gem1", System: system, User: user}, Response: llm.Response{Content: answer,
			Usage: veredicto.Usage{Calls: 1, PromptTokens: 7000, CompletionTokens: 800}}, Latency: time.Second, Number: 1}
		if err := sc.Observe(sctx, a); err != nil {
			b.Fatal(err)
		}
		if _, err := sc.Now(sctx, "gem1 end"); err != nil {
			b.Fatal(err)
		}
		if err := sc.Flush(sctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(dirBytes(b, dir)-before)/float64(b.N), "bytes/call")
}
