package main

import (
	"context"
	"io"
	"testing"

	"github.com/veredicto/veredicto/internal/llm/llmtest"
)

// BenchmarkCompanionLLMRun measures what one full run costs in model
// calls and prompt size, through the real agents and the OpenAI adapter
// against the scripted server: a first run (every phase pays) and a
// re-run of the same application (the classification comes from the
// cache). Prompt tokens are estimated as characters / 4.
func BenchmarkCompanionLLMRun(b *testing.B) {
	for _, tc := range []struct {
		name   string
		cached bool
	}{{"full", false}, {"cached_rerun", true}} {
		b.Run(tc.name, func(b *testing.B) {
			s := &companionScript{match: allMet}
			srv := llmtest.NewServer(b, s.respond(b))
			getenv := func(k string) string {
				return map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.BaseURL(), "OPENAI_MODEL": "big", "OPENAI_SMALL_MODEL": "mini"}[k]
			}
			cache := b.TempDir()
			m := &Main{Stdout: io.Discard, Stderr: io.Discard}
			run := func() {
				if !tc.cached {
					cache = b.TempDir() // every run pays for its classification
				}
				if code := m.companion(context.Background(), []string{"run", "--jd", exampleJD, "--profile", exampleProfile, "--out", b.TempDir(), "--cache", cache}, getenv); code != exitOK {
					b.Fatalf("exit %d", code)
				}
			}
			if tc.cached {
				run() // fills the cache
			}
			before := len(srv.Calls())
			for b.Loop() {
				run()
			}
			calls := srv.Calls()[before:]
			chars := 0
			for _, c := range calls {
				chars += len([]rune(c.System())) + len([]rune(c.User()))
			}
			n := float64(b.N)
			b.ReportMetric(float64(len(calls))/n, "calls/op")
			b.ReportMetric(float64(chars)/n, "prompt_chars/op")
			b.ReportMetric(float64(chars)/4/n, "est_prompt_tokens/op")
		})
	}
}
