package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/audit"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/companion"
	"github.com/veredicto/veredicto/internal/companion/agents"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/confirm/memory"
	filestore "github.com/veredicto/veredicto/internal/store/file"
	"github.com/veredicto/veredicto/statemachines"
)

// companionReplay is what a career companion's replay runs with: the
// recorded input, the analyst answering from the record, the recorded
// scoring configuration and the stage outputs read before the run.
type companionReplay struct {
	r       *audit.Replay
	in      companion.RecordedInput
	analyst companion.Analyst
	engine  companion.Engine
	seeds   []audit.Seed
	out     string
}

// replayCompanion re-runs a career companion's application from its
// record: a folder run's commands ("run" or "resume", then "continue"
// with the person's recorded answer), or the workflow's execution on the
// engine. Either ends as the run did, or the replay diverged.
func replayCompanion(ctx context.Context, r *audit.Replay, rec Record, out string) (*ReplayResult, error) {
	cr := &companionReplay{r: r, out: out}
	if err := json.Unmarshal(r.Start.Input, &cr.in); err != nil {
		return nil, fmt.Errorf("the recorded input: %w", err)
	}
	cr.analyst = companion.Offline{} // its clock is read from the record
	if cr.in.Analyst.Provider != "offline" {
		cr.analyst = agents.New(r, r, cr.in.Analyst.Provider, cr.in.Analyst.Model, cr.in.Analyst.SmallModel)
	}
	if got := cr.analyst.Info(); got != cr.in.Analyst {
		return nil, r.Diverge(&audit.DivergedError{Chain: audit.MainChain, Agent: "classify_requirements",
			What: fmt.Sprintf("the classifier is %s now; the run's was %s (its prompt or rules changed since)", got.ClassifierVersion, cr.in.Analyst.ClassifierVersion)})
	}
	cfg := companion.DefaultConfig()
	if b, err := r.Document(ctx, companion.DocScoring); err == nil {
		if cfg, err = companion.ParseConfig(companion.DocScoring, b); err != nil {
			return nil, fmt.Errorf("the recorded scoring configuration: %w", err)
		}
	}
	cr.engine = companion.NewEngine(cfg)
	var err error
	if cr.seeds, err = r.Seeds(ctx); err != nil {
		return nil, err
	}
	if _, err := ArchiveRecord(out); err != nil {
		return nil, err
	}
	switch cr.in.Surface {
	case companion.SurfaceFolder:
		err = cr.folder(ctx)
	case companion.SurfaceWorkflow:
		err = cr.workflow(ctx)
	default:
		return nil, fmt.Errorf("the recorded input names the surface %q, which replay does not know", cr.in.Surface)
	}
	if derr := r.Diverged(); derr != nil {
		return nil, derr
	}
	if err != nil {
		return nil, err
	}
	part, err := replayedPart(ctx, rec.Store())
	if err != nil {
		return nil, err
	}
	if left := without(r.Unanswered(), part.calls); len(left) > 0 {
		return nil, &audit.DivergedError{Chain: audit.MainChain, What: "the run made model calls the replay did not: " + strings.Join(left, ", ")}
	}
	ran, err := recordedStatus(ctx, rec.Store())
	if err != nil {
		return nil, err
	}
	replayed, err := recordedStatus(ctx, audit.NewDir(filepath.Join(out, "audit")))
	if err != nil {
		return nil, err
	}
	if ran != replayed {
		return nil, &audit.DivergedError{Chain: audit.MainChain, What: fmt.Sprintf("the run left the application %s; the replay leaves it %s", ran, replayed)}
	}
	res := compareFiles(ctx, part.reports, out)
	res.Execution, res.NotReplayed = r.Start.Execution, part.commands
	return res, nil
}

// without is all but the items of some, each taken once.
func without(all, some []string) []string {
	n := map[string]int{}
	for _, s := range some {
		n[s]++
	}
	var out []string
	for _, a := range all {
		if n[a] > 0 {
			n[a]--
			continue
		}
		out = append(out, a)
	}
	return out
}

// recordedPart is what a companion's record holds of the part a replay
// runs: the files it wrote (the last entry of each path), and after it
// the follow-up commands and their model calls, which are not replayed.
type recordedPart struct {
	reports  []audit.Report
	commands []string
	calls    []string
}

// replayedPart reads the part of a record a replay runs: up to the
// summary that ends the last replayable command (the whole execution of
// a workflow); what follows are the follow-up phases.
func replayedPart(ctx context.Context, store audit.Store) (recordedPart, error) {
	lines, err := store.Lines(ctx, audit.MainChain)
	if err != nil {
		return recordedPart{}, err
	}
	var (
		part    recordedPart
		command string
		byPath  = map[string]audit.Report{}
		pending = map[string]audit.Report{} // since the last summary
		calls   []string                    // since the last summary
	)
	for _, line := range lines {
		var e audit.Entry
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		switch e.Kind {
		case audit.KindDecision:
			var d audit.Decision
			if json.Unmarshal(e.Data, &d) == nil && d.Name == companion.DecisionCommand {
				command = d.Outcome
			}
		case audit.KindModel:
			var c audit.ModelCall
			if json.Unmarshal(e.Data, &c) == nil {
				calls = append(calls, c.Agent)
			}
		case audit.KindReport:
			var rep audit.Report
			if json.Unmarshal(e.Data, &rep) == nil {
				pending[rep.Path] = rep
			}
		case audit.KindSummary:
			switch {
			case command != "" && !companion.Replayable(command):
				part.commands, part.calls = append(part.commands, command), append(part.calls, calls...)
			case len(part.commands) > 0:
				return recordedPart{}, fmt.Errorf("the record runs the pipeline (%s) after the follow-up phases %s: a replay runs the pipeline only, so it cannot reproduce it",
					command, strings.Join(part.commands, ", "))
			default:
				maps.Copy(byPath, pending)
			}
			clear(pending)
			calls = nil
		}
	}
	part.reports = slices.Collect(maps.Values(byPath))
	slices.SortFunc(part.reports, func(a, b audit.Report) int { return strings.Compare(a.Path, b.Path) })
	return part, nil
}

// classificationSeed is a cached classification the run read, by the
// input hash it is cached under.
func classificationSeed(s audit.Seed) (string, companion.Classification, bool, error) {
	hash, ok := strings.CutPrefix(s.Key, companion.SeedClassification)
	if !ok {
		return "", companion.Classification{}, false, nil
	}
	var cl companion.Classification
	if err := json.Unmarshal(s.Record, &cl); err != nil {
		return "", cl, false, fmt.Errorf("the recorded classification %s: %w", hash, err)
	}
	return hash, cl, true, nil
}

// seedCache puts the cached classifications the run read into cache.
func (cr *companionReplay) seedCache(ctx context.Context, cache companion.Cache) error {
	for _, s := range cr.seeds {
		hash, cl, ok, err := classificationSeed(s)
		if err != nil {
			return err
		}
		if ok {
			if err := cache.PutClassification(ctx, hash, cl); err != nil {
				return fmt.Errorf("seed the classification cache: %w", err)
			}
		}
	}
	return nil
}

// documents are the recorded input documents by name.
func (cr *companionReplay) documents(ctx context.Context) (map[string][]byte, error) {
	docs := map[string][]byte{}
	for name := range cr.r.Start.Documents {
		b, err := cr.r.Document(ctx, name)
		if err != nil {
			return nil, err
		}
		docs[name] = b
	}
	return docs, nil
}

// folder replays "veredicto companion run|continue": from the recorded
// inputs (or the saved context the run started from), the run's commands
// in order, with the person's recorded answer to the pause.
func (cr *companionReplay) folder(ctx context.Context) error {
	docs, err := cr.documents(ctx)
	if err != nil {
		return err
	}
	var c *companion.Context
	var from []byte
	for _, s := range cr.seeds {
		if s.Key == companion.SeedContext {
			from, c = s.Record, &companion.Context{}
			if err := json.Unmarshal(s.Record, c); err != nil {
				return fmt.Errorf("the recorded context: %w", err)
			}
		}
	}
	if c == nil {
		p, err := companion.ParseProfile(companion.DocProfile, docs[companion.DocProfile])
		if err != nil {
			return err
		}
		if c, err = companion.NewContext(companion.DocProfile, string(docs[companion.DocJD]), p, cr.in.Mode, cr.in.Company, cr.in.Platform, cr.analyst.Info()); err != nil {
			return err
		}
	}
	cache := companion.FileCache{Dir: filepath.Join(cr.out, ".veredicto", "cache"), Tenant: cr.in.Tenant}
	if err := cr.seedCache(ctx, cache); err != nil {
		return err
	}
	folder := CompanionFolder{Out: cr.out, Analyst: cr.analyst, Input: cr.in, Docs: docs, From: from}
	if ctx, err = folder.begin(ctx, cr.r.Start.Execution, cr.r); err != nil {
		return err
	}
	runner := &companion.Runner{Analyst: cr.analyst, Engine: cr.engine, Cache: cache, Refresh: cr.in.Refresh, Tenant: cr.in.Tenant,
		Save: func(ctx context.Context, c *companion.Context) error { return companion.SaveDir(ctx, cr.out, c) }}
	answer, answered := cr.r.HumanFor("")
	answered = answered && (answer.Status == confirm.StatusApproved || answer.Status == confirm.StatusRejected)
	continueIfAnswered := func() error {
		return companion.Continue(ctx, runner, c, answer.Status == confirm.StatusApproved, answer.Principal)
	}
	if answered && companion.CheckPaused(c) == nil { // the run started from the paused context: a continue
		return ignoreOutcome(continueIfAnswered())
	}
	command := companion.CommandRun
	if from != nil {
		command = companion.CommandResume
	}
	err = companion.Command(ctx, runner, c, command)
	if ignoreOutcome(err) == nil && answered && companion.CheckPaused(c) == nil {
		err = continueIfAnswered()
	}
	return ignoreOutcome(err)
}

// ignoreOutcome keeps the errors a replay cannot go on from: an outcome
// the run met too (a pause, a refusal, a failure it recorded) is compared
// through the recorded status instead.
func ignoreOutcome(err error) error {
	var d *audit.DivergedError
	if errors.As(err, &d) {
		return err
	}
	return nil
}

// workflow replays CareerCompanionStateMachine on the engine: the
// inputs stored where the run read them, the stage outputs it read
// seeded, the person's answer delivered from the record.
func (cr *companionReplay) workflow(ctx context.Context) error {
	docs, err := cr.documents(ctx)
	if err != nil {
		return err
	}
	blobs := fileblob.NewDir(cr.out)
	pre := companion.Prefix(cr.in.Tenant, cr.in.ApplicationID)
	for _, name := range []string{companion.DocJD, companion.DocProfile} {
		if err := blobs.Put(ctx, pre+name, docs[name], ""); err != nil {
			return fmt.Errorf("seed %s: %w", name, err)
		}
	}
	kv := filestore.NewLocal(filepath.Join(cr.out, ".veredicto", "context"))
	for _, s := range cr.seeds {
		if _, _, ok, _ := classificationSeed(s); !ok {
			if _, err := kv.PutIfAbsent(ctx, s.Key, s.Record); err != nil {
				return fmt.Errorf("seed %s: %w", s.Key, err)
			}
		}
	}
	if err := cr.seedCache(ctx, companion.KVCache{KV: kv, Tenant: cr.in.Tenant}); err != nil {
		return err
	}
	svc := &companion.Service{Store: kv, Blobs: blobs, Analyst: cr.analyst, Engine: cr.engine,
		Audit: &audit.Folders{Root: filepath.Join(cr.out, "audit"), Single: true}, Replay: cr.r}
	reg := catalog.CompanionRegistry(svc, &confirm.Service{Store: memory.New()})
	eng := asl.New(reg)
	reg.Register("ConfirmFunction", replayedPause(cr.r, eng))
	sm, err := asl.Parse(statemachines.CareerCompanion)
	if err != nil {
		return err
	}
	input, err := json.Marshal(cr.in.StartInput)
	if err != nil {
		return err
	}
	x, err := eng.Start(ctx, sm, input, asl.StartOptions{Name: cr.r.Start.Execution, StateMachineName: "career_companion"})
	if err != nil {
		return err
	}
	_, err = x.Wait(ctx)
	return err
}

// replayedPause answers the anti-impostor confirmation from the record
// (as replayedReviews does a senior review): the person's recorded
// answer, or a divergence when the run never asked.
func replayedPause(r *audit.Replay, eng *asl.Engine) asl.Handler {
	answer := replayedReviews(r, eng)
	return func(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
		if _, ok := r.HumanFor(""); !ok {
			return nil, r.Diverge(&audit.DivergedError{Chain: audit.MainChain, Agent: companion.ToolAntiImpostor,
				What: "the replay asks the anti-impostor confirmation; the run did not"})
		}
		return answer(ctx, raw)
	}
}

// recordedStatus is the last application status the record's main chain
// holds ("" for none).
func recordedStatus(ctx context.Context, store audit.Store) (string, error) {
	lines, err := store.Lines(ctx, audit.MainChain)
	if err != nil {
		return "", err
	}
	status := ""
	for _, line := range lines {
		var e audit.Entry
		var d audit.Decision
		if json.Unmarshal(line, &e) != nil || e.Kind != audit.KindDecision || json.Unmarshal(e.Data, &d) != nil {
			continue
		}
		if d.Name == companion.DecisionStatus {
			status = d.Outcome
		}
	}
	if status == "" {
		return "", &veredicto.NotFoundError{What: "the application's status in the audit record"}
	}
	return status, nil
}
