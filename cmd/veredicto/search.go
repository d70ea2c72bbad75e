package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/labels"
	"github.com/veredicto/veredicto/internal/search"
)

const searchUsage = `Usage: veredicto search run DIR [--out OUT] [--llm offline|openai] [--model M] [--concurrency N]
                            [--max-document-kib N] [--max-search-kib N] [--strict-inputs]
                            [--data DIR] [--review [--review-timeout D]]

Evaluates every candidate of the search folder DIR with the executive-search
protocol (GEM5 → GEM1 → GEM2 → GEM3 → GEM4) and writes, under OUT:
  <candidate_id>/report.json, <candidate_id>/report.md, summary.json, summary.md

DIR holds jd.md, kickoff.md and company.md (GEM5's minimum documents),
culture.md, an optional search.yaml (search_id, client, role, gates) and
candidates/<id>/{cv,interview,tests,case,references}.md. A missing jd.md,
kickoff.md or company.md blocks the search before any agent runs (exit 2),
as do a symbolic link leaving DIR, a document or search over its size limit,
and text in an unrecognised encoding. Each agent's minimum documents (seed
000 §2: GEM1 cv and interview, GEM2 tests and case, GEM3 references and
culture.md) are checked before it runs: a candidate lacking one is not sent
to the agent and is escalated to the senior consultant for a structural lack
of evidence, the missing documents named. --strict-inputs refuses the search
instead, listing every candidate's gaps, before any model call. The run
exits 0 when every candidate reached a decision, whatever the decisions are.

Every model call, decision, person's answer and report is recorded in
OUT/audit, a hash-chained record ("veredicto audit verify OUT" checks it,
"veredicto replay OUT --out DIR" re-runs it with no provider); a re-run
moves the earlier record to OUT/.veredicto/audit-history/.

The LLM is "openai" when OPENAI_API_KEY is set (OPENAI_BASE_URL and
OPENAI_MODEL configure any OpenAI-compatible endpoint; OPENAI_TIMEOUT, a Go
duration such as 90s or whole seconds, bounds each HTTP call, default 60s),
otherwise the offline lexical baseline, which needs no network. Stage outputs are kept under
OUT/.veredicto so a re-run reuses finished stages instead of paying again,
and says which ones it reused.

A candidate escalated to ESCALADO_CONSULTOR_SENIOR gets a senior review: a
confirmation under --data (the folder "veredicto confirm --data" reads).
Without --review the run does not wait: the review is recorded as pending
and the candidate stays escalated; approve or reject it later with
"veredicto confirm approve|reject ID --data DIR" and run the search again:
the re-run (stages from the cache, no LLM cost) applies the decision. With
--review the run waits (at most --review-timeout) for the decision, taken
from another shell with the same command; the decision reaches the waiting
run through --data.

Flags:
`

type searchRunConfig struct {
	dir         string
	out         string
	provider    string
	model       string
	concurrency int
	limits      search.Limits
	// data holds the senior reviews (confirmations), shared with
	// "veredicto confirm --data".
	data          string
	review        bool
	reviewTimeout time.Duration
	strictInputs  bool
}

func (m *Main) runSearch(ctx context.Context, args []string) int {
	if len(args) > 0 && args[0] == "debate" {
		return m.runSearchDebate(ctx, args[1:])
	}
	return runSubcommand(m, "search", searchUsage, args, parseSearchRun, func(cfg searchRunConfig) int {
		return m.searchRun(ctx, cfg, os.Getenv)
	})
}

func parseSearchRun(args []string, stderr io.Writer) (searchRunConfig, error) {
	var cfg searchRunConfig
	fs := subcommandFlags("search run", searchUsage, stderr)
	fs.StringVar(&cfg.out, "out", "", "output folder (default: out/<search_id>)")
	fs.StringVar(&cfg.provider, "llm", "", "offline or openai (default: openai when OPENAI_API_KEY is set, else offline)")
	fs.StringVar(&cfg.model, "model", "", "model name for openai (default: $OPENAI_MODEL or gpt-4o-mini)")
	fs.IntVar(&cfg.concurrency, "concurrency", 0, "candidates evaluated at once (default 4)")
	fs.StringVar(&cfg.data, "data", app.DefaultDataDir, "folder of the senior reviews (confirmations), as veredicto confirm --data")
	fs.BoolVar(&cfg.review, "review", false, "wait for the senior consultant's decision on escalated candidates")
	fs.BoolVar(&cfg.strictInputs, "strict-inputs", false, "refuse the search when a candidate lacks an agent's minimum documents, instead of escalating them")
	fs.DurationVar(&cfg.reviewTimeout, "review-timeout", 7*24*time.Hour, "with --review, how long to wait before the candidate stays escalated (whole seconds)")
	var docKiB, searchKiB int64
	fs.Int64Var(&docKiB, "max-document-kib", search.DefaultLimits.DocumentBytes>>10, "largest document accepted, in KiB")
	fs.Int64Var(&searchKiB, "max-search-kib", search.DefaultLimits.SearchBytes>>10, "largest total of a search's documents, in KiB")
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return cfg, err
	}
	if len(positional) != 1 {
		fs.Usage()
		return cfg, fmt.Errorf("want exactly one search folder, got %d", len(positional))
	}
	cfg.dir = positional[0]
	if cfg.concurrency < 0 {
		return cfg, fmt.Errorf("--concurrency must be positive, got %d", cfg.concurrency)
	}
	if docKiB <= 0 || searchKiB <= 0 {
		return cfg, fmt.Errorf("--max-document-kib and --max-search-kib must be positive")
	}
	cfg.limits = search.Limits{DocumentBytes: docKiB << 10, SearchBytes: searchKiB << 10}
	if cfg.reviewTimeout < time.Second || cfg.reviewTimeout > 366*24*time.Hour {
		return cfg, fmt.Errorf("--review-timeout must be between 1s and 366 days, got %s", cfg.reviewTimeout)
	}
	if err := checkProvider(cfg.provider); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// searchRunGCPercent is the garbage collector's target a search run sets.
const searchRunGCPercent = 400

// searchRunMemoryLimit is the soft memory limit a search run sets with
// its GOGC: far above a default search's (≈ 90 MiB for 200 candidates).
const searchRunMemoryLimit = 1 << 30

func (m *Main) searchRun(ctx context.Context, cfg searchRunConfig, getenv func(string) string) int {
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(m.Stderr, "veredicto search run: "+format+"\n", args...)
		return code
	}
	if st, err := os.Stat(cfg.dir); err != nil || !st.IsDir() {
		return fail(exitUsage, "%s is not a folder", cfg.dir)
	}
	// A search run is a batch with a small live heap (its documents, at
	// most --max-search-kib, and its stage records): collecting garbage a
	// fourth as often as Go's default costs it ≈ 35 MiB more for 200
	// candidates and saves about a seventh of its CPU (docs/BENCHMARKS.md,
	// "CPU per model call"). GOGC, when set, decides instead.
	if getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(searchRunGCPercent))
		// A search whose limits were raised far past the defaults could
		// grow five times its live heap: past searchRunMemoryLimit the
		// collector works harder instead. GOMEMLIMIT, when set, decides.
		if getenv("GOMEMLIMIT") == "" {
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(searchRunMemoryLimit))
		}
	}
	// The folder reader refuses symbolic links that leave DIR and reads no
	// more of a document than the limit.
	inputs := search.NewFolder(cfg.dir)
	// Validate before anything else: a missing jd.md or kickoff.md blocks
	// the search at once, with no LLM call.
	s, err := search.LoadWithin(ctx, inputs, "", filepath.Base(filepath.Clean(cfg.dir)), cfg.limits)
	if err != nil {
		var mi *veredicto.MissingInputError
		var ii *veredicto.InvalidInputError
		if errors.As(err, &mi) || errors.As(err, &ii) {
			return fail(exitUsage, "%s: %v", cfg.dir, err)
		}
		return fail(exitFailed, "%v", err)
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(m.Stderr, "warning: %s\n", w)
	}
	if len(s.Candidates) == 0 {
		return fail(exitUsage, "%s has no candidates: add a folder candidates/<id>/ with cv.md (or interview.md, tests.md, case.md, references.md) for each one", cfg.dir)
	}
	if err := search.CheckMandateInputs(s); err != nil {
		return fail(exitUsage, "%s: %v (GEM5's minimum documents: the mandate analysis cannot run without them)", cfg.dir, err)
	}
	if gaps := s.InputGaps(); len(gaps) > 0 {
		if cfg.strictInputs {
			return fail(exitUsage, "%s: --strict-inputs: %v", cfg.dir, &search.InputGapsError{Gaps: gaps})
		}
		fmt.Fprintf(m.Stderr, "warning: %d candidate(s) lack minimum documents and will be escalated when their agent's turn comes (--strict-inputs refuses the search instead)\n", len(gaps))
	}
	analyst, notice, err := app.ChooseAnalyst(cfg.provider, cfg.model, getenv)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	fmt.Fprintln(m.Stderr, notice)
	out := cfg.out
	if out == "" {
		out = filepath.Join("out", s.Docs.SearchID)
	}
	if st, err := os.Stat(out); err == nil && !st.IsDir() {
		return fail(exitUsage, "--out %s is a file; give a folder for the reports", out)
	}
	if prev, err := app.ArchiveRecord(out); err != nil {
		return fail(exitFailed, "keep the earlier run's audit record: %v", err)
	} else if prev != "" {
		fmt.Fprintf(m.Stderr, "the earlier run's audit record is now %s\n", prev)
	}
	prog := newProgress(m.Stderr, cfg.data)
	// Senior reviews are confirmations under --data. With --review, this
	// process delivers the decisions to its own engine: "veredicto confirm"
	// in another shell records a decision (the one resolution record) and
	// leaves its delivery to the Resolver named on the record.
	fs := app.NewFolderSearch(inputs, out, cfg.data, analyst, cfg.limits,
		slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	// The run evaluates the documents just checked, read once.
	fs.Search.UseLoaded("", "", s)
	reviews, eng := fs.Reviews, fs.Engine
	in := search.StartInput{SearchID: s.Docs.SearchID, Concurrency: cfg.concurrency, StrictInputs: cfg.strictInputs,
		Review: &search.ReviewOptions{Wait: cfg.review, TimeoutSeconds: int64(cfg.reviewTimeout / time.Second)}}
	x, err := catalog.StartSearch(ctx, eng, in, prog.event)
	if err != nil {
		return fail(exitFailed, "%v", err)
	}
	if cfg.review {
		deliverCtx, stop := context.WithCancel(ctx)
		defer stop()
		go deliverReviews(deliverCtx, reviews, m.Stderr)
	}
	res, err := x.Wait(ctx)
	// The record is on disk before the run says how it ended, whatever
	// the end (its steps synced it only when they wrote a report).
	if serr := fs.Record.Sync(context.WithoutCancel(ctx)); serr != nil && err == nil {
		err = fmt.Errorf("keep the audit record: %w", serr)
	}
	if err != nil {
		return fail(exitFailed, "%v", err)
	}
	if res.Status != asl.StatusSucceeded {
		return fail(exitFailed, "the evaluation did not finish (%s): %s", strings.ToLower(string(res.Status)), failureMessage(res.Error, res.Cause))
	}
	// The summary the run wrote holds every candidate's row, ranked; the
	// execution's output keeps only each decision and its report's hash.
	var sum search.Summary
	if b, err := os.ReadFile(filepath.Join(out, "summary.json")); err != nil {
		return fail(exitFailed, "read the summary the run wrote: %v", err)
	} else if err := json.Unmarshal(b, &sum); err != nil {
		return fail(exitFailed, "%s: %v", filepath.Join(out, "summary.json"), err)
	}
	fmt.Fprintf(m.Stdout, "Búsqueda %s: %s\n", s.Docs.SearchID, labels.Count(len(sum.Ranking), "candidato evaluado", "candidatos evaluados"))
	for _, r := range sum.Ranking {
		fmt.Fprintf(m.Stdout, "  %-12s %-44s %s\n", r.CandidateID, labels.Of(labels.Decision, r.Decision), filepath.Join(out, r.CandidateID, "report.md"))
	}
	fmt.Fprintf(m.Stdout, "Resumen: %s\n", filepath.Join(out, "summary.md"))
	fmt.Fprintf(m.Stdout, "Registro de auditoría: %s (verifíquelo con: veredicto audit verify %s)\n", filepath.Join(out, "audit"), out)
	if stale := staleReports(out, sum.Ranking); len(stale) > 0 {
		verb := "hold"
		if len(stale) == 1 {
			verb = "holds"
		}
		fmt.Fprintf(m.Stderr, "warning: %s %s reports of an earlier run, for candidates this search no longer has; they are not in this summary (delete them if those candidates left the search)\n", strings.Join(stale, ", "), verb)
	}
	for _, r := range sum.Ranking {
		switch {
		case r.Review == nil:
		case r.Review.Status == search.ReviewPending:
			fmt.Fprintf(m.Stdout, "La revisión senior %s de %s está pendiente. Decide con: veredicto confirm approve|reject %s --data %s [--comment C], y vuelve a ejecutar esta búsqueda para aplicarla\n",
				r.Review.ID, r.CandidateID, r.Review.ID, cfg.data)
		case r.Review.Status == search.ReviewExpired:
			fmt.Fprintf(m.Stdout, "La revisión senior %s de %s venció sin decisión; vuelve a ejecutar esta búsqueda para reabrirla\n", r.Review.ID, r.CandidateID)
		case r.Review.Status == search.ReviewUnavailable:
			fmt.Fprintf(m.Stdout, "No se pudo pedir la revisión senior de %s (ver report.json); vuelve a ejecutar esta búsqueda para reintentarlo\n", r.CandidateID)
		}
	}
	if n := prog.Reused(); n > 0 {
		fmt.Fprintf(m.Stdout, "Reutilizadas de la caché (%s): %s; borra esa carpeta para recalcularlas\n", filepath.Join(out, ".veredicto"), labels.Count(n, "etapa", "etapas"))
	}
	return exitOK
}

// deliverReviews delivers, until ctx ends, the decisions recorded (by
// "veredicto confirm" in another shell) for the tasks this run's engine
// waits on: it polls the store for confirmations in status resolving
// whose Resolver is this run's, and redelivers each through the
// service's Tasks. Redeliver takes the record's delivery lease, so a
// decision is delivered once however many times it is seen.
func deliverReviews(ctx context.Context, reviews *confirm.Service, stderr io.Writer) {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		list, _, err := reviews.List(ctx, "default")
		if err != nil {
			continue // the store is read again on the next tick
		}
		for _, c := range list {
			if c.Status != confirm.StatusResolving || c.Resolver != reviews.Resolver {
				continue
			}
			v, err := reviews.Redeliver(ctx, "default", c.ID)
			switch {
			case err != nil && ctx.Err() == nil:
				fmt.Fprintf(stderr, "senior review %s: %v\n", c.ID, err)
			case err == nil && v.Status != confirm.StatusResolving:
				fmt.Fprintf(stderr, "revisión senior %s: %s por %s, entregada a esta ejecución\n", v.ID, labels.Phrase(labels.ConfirmationStatus, v.Status), v.DecidedBy)
			}
		}
	}
}

// staleReports lists the folders of out holding a candidate report that
// is not one of results: left by an earlier run of the search with other
// candidates.
func staleReports(out string, results []search.CandidateResult) []string {
	entries, err := os.ReadDir(out)
	if err != nil {
		return nil
	}
	current := map[string]bool{}
	for _, r := range results {
		current[r.CandidateID] = true
	}
	var stale []string
	for _, e := range entries {
		if !e.IsDir() || current[e.Name()] {
			continue
		}
		if _, err := os.Stat(filepath.Join(out, e.Name(), "report.json")); err == nil {
			stale = append(stale, filepath.Join(out, e.Name()))
		}
	}
	return stale
}

// progress prints one line per candidate stage as the workflow moves, and
// counts the stages a re-run read from the cache instead of computing.
type progress struct {
	w          io.Writer
	data       string            // --data, for the confirm commands shown
	reviewIDs  map[string]string // candidate → senior review id
	decided    map[string]string // candidate → the decision line printed last
	mu         sync.Mutex
	candidates []string
	reused     map[string][]string // candidate ("-" for the mandate) → reused stage labels
	total      int
	// The evaluation's pace: when the candidates started and which have
	// their first decision, for «n de N evaluados» and what is left.
	started time.Time
	done    map[string]bool
	now     func() time.Time
}

func newProgress(w io.Writer, data string) *progress {
	return &progress{w: w, data: data, reused: map[string][]string{}, reviewIDs: map[string]string{}, decided: map[string]string{},
		done: map[string]bool{}, now: time.Now}
}

// reusedOutput reports whether a task's output says it was read from the cache.
func reusedOutput(out any) bool {
	m, ok := out.(map[string]any)
	return ok && m["reused"] == true
}

func (p *progress) event(ev asl.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.w
	switch {
	case ev.Type == "TaskSucceeded" && ev.State == "Validate":
		if m, ok := ev.Output.(map[string]any); ok {
			if cs, ok := m["candidates"].([]any); ok {
				for _, c := range cs {
					p.candidates = append(p.candidates, fmt.Sprint(c))
				}
				fmt.Fprintf(w, "búsqueda %v: %s\n", m["search_id"], labels.Count(len(p.candidates), "candidato", "candidatos"))
				p.started = p.now()
			}
		}
	case ev.State == "LookupReview" && ev.Type == "TaskSucceeded":
		id := candidateOf(ev.Scope, p.candidates)
		var look struct {
			Payload struct {
				ID, Status string
			}
		}
		b, _ := json.Marshal(ev.Output)
		if json.Unmarshal(b, &look) == nil {
			p.reviewIDs[id] = look.Payload.ID
			fmt.Fprintf(w, "%-9s revisión senior %s: %s\n", id, look.Payload.ID, labels.Phrase(labels.ConfirmationStatus, look.Payload.Status))
		}
	case ev.State == "AskReview" && ev.Type == "TaskScheduled":
		id := candidateOf(ev.Scope, p.candidates)
		fmt.Fprintf(w, "%-9s espera al consultor senior: veredicto confirm approve|reject %s --data %s [--comment C]\n", id, p.reviewIDs[id], p.data)
	case ev.Type == "TaskScheduled" && (ev.State == "LookupReview" || ev.State == "ReportReviewed"):
	case ev.Type == "TaskSucceeded" && ev.State == "ReportReviewed":
		// Printed only when the review changed the decision: a pending
		// review leaves the one already printed.
		if m, ok := ev.Output.(map[string]any); ok {
			id, line := fmt.Sprint(m["candidate_id"]), decisionLine(m)
			if p.decided[id] != line {
				p.decided[id] = line
				fmt.Fprintf(w, "%-9s → %s\n", id, line)
			}
		}
	case ev.Type == "TaskScheduled" && ev.State == "Gem5":
		fmt.Fprintf(w, "%-9s %s\n", "búsqueda", labels.Of(labels.State, "Gem5"))
	case ev.Type == "TaskSucceeded" && ev.State == "Gem5" && reusedOutput(ev.Output):
		p.reused["-"] = append(p.reused["-"], labels.Of(labels.State, "Gem5"))
		p.total++
		fmt.Fprintf(w, "%-9s %s reutilizado de la caché\n", "búsqueda", labels.Of(labels.State, "Gem5"))
	case ev.Type == "TaskScheduled" && ev.Scope != "":
		id := candidateOf(ev.Scope, p.candidates)
		fmt.Fprintf(w, "%-9s %s\n", id, stageLabel(ev.State, ev.Input))
	case ev.Type == "TaskSucceeded" && ev.Scope != "" && ev.State != "Report" && ev.State != "ReportReviewed" && reusedOutput(ev.Output):
		id := candidateOf(ev.Scope, p.candidates)
		p.reused[id] = append(p.reused[id], labels.Of(labels.State, ev.State))
		p.total++
	case ev.Type == "TaskSucceeded" && ev.State == "Report":
		if m, ok := ev.Output.(map[string]any); ok {
			id := fmt.Sprint(m["candidate_id"])
			note := ""
			if r := p.reused[id]; len(r) > 0 {
				note = fmt.Sprintf(" — reutilizado de la caché: %s", strings.Join(r, ", "))
			}
			p.decided[id] = decisionLine(m)
			fmt.Fprintf(w, "%-9s → %s%s\n", id, p.decided[id], note)
			if !p.done[id] {
				p.done[id] = true
				p.pace()
			}
		}
	case ev.Type == "TaskScheduled" && ev.State == "Summary":
		fmt.Fprintln(w, labels.Phrase(labels.State, "Summary"))
	}
}

// decisionLine is a candidate's decision and its reason, in words, from a
// report task's output.
func decisionLine(m map[string]any) string {
	return fmt.Sprintf("%s: %s", labels.Of(labels.Decision, fmt.Sprint(m["decision"])), labels.Phrase(labels.Reason, fmt.Sprint(m["reason"])))
}

// pace prints how many candidates are evaluated, of how many, the time so
// far and, from the pace so far, about how long the rest takes.
func (p *progress) pace() {
	n, total := len(p.done), len(p.candidates)
	if total == 0 {
		return
	}
	elapsed := p.now().Sub(p.started)
	line := fmt.Sprintf("%d de %d evaluados · %s", n, total, roundDuration(elapsed))
	if n < total {
		line += " · faltan unos " + roundDuration(elapsed/time.Duration(n)*time.Duration(total-n))
	} else {
		line += " · falta el resumen"
	}
	fmt.Fprintf(p.w, "%-9s %s\n", "", line)
}

// roundDuration is d for people: seconds under a minute, then minutes
// and seconds.
func roundDuration(d time.Duration) string {
	d = d.Round(time.Second)
	if d < time.Second {
		return "menos de 1 s"
	}
	if d < time.Minute {
		return fmt.Sprintf("%d s", int(d.Seconds()))
	}
	return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
}

// Reused is how many stages were read from the cache.
func (p *progress) Reused() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.total
}

// stageLabel names a candidate stage for the progress display, with the
// attempt read from the task's loop counters.
func stageLabel(state string, input any) string {
	label := labels.Of(labels.State, state)
	var qa, gem3 float64
	if m, ok := input.(map[string]any); ok {
		if c, ok := m["counters"].(map[string]any); ok {
			qa, _ = toFloat(c["qa"])
			gem3, _ = toFloat(c["gem3"])
		}
	}
	switch {
	case state == "Gem4" && qa > 0:
		label += fmt.Sprintf(" (nueva auditoría %d)", int(qa))
	case state == "Correction":
		label += fmt.Sprintf(" %d", int(qa))
	case state == "Gem3" && gem3 > 0:
		label += " (nueva consulta)"
	}
	return label
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case int:
		return float64(x), true
	}
	return 0, false
}

// candidateOf maps a history scope ("Candidates/item[3]") to its candidate.
func candidateOf(scope string, candidates []string) string {
	var i int
	if _, err := fmt.Sscanf(scope[strings.LastIndex(scope, "[")+1:], "%d]", &i); err == nil && i < len(candidates) {
		return candidates[i]
	}
	return scope
}

// failureMessage says why an execution failed: its cause's sentence
// (causeMessage), or its error's name when it has no cause, as a timeout
// has none (Step Functions records States.Timeout without one).
func failureMessage(errName, cause string) string {
	if msg := causeMessage(cause); msg != "" {
		return msg
	}
	return errName
}

// causeMessage is the sentence inside an execution's cause: the Lambda
// runtime's {"errorMessage", "errorType"} JSON is unwrapped to its message,
// so no JSON or Go type name reaches the user.
func causeMessage(cause string) string {
	var c struct {
		ErrorMessage string `json:"errorMessage"`
	}
	if json.Unmarshal([]byte(cause), &c) == nil && c.ErrorMessage != "" {
		return c.ErrorMessage
	}
	return cause
}
