// Package app assembles the project's services on one machine: the local
// adapters (folders, the in-process engine, the control plane) for
// `veredicto serve`, the CLI and `veredicto lambda invoke`. Inside Lambda
// each kind of function is assembled by its own entry point,
// internal/app/<kind>app, on the AWS adapters (S3, DynamoDB, Step
// Functions, Secrets Manager); this package reuses those packages'
// builders, never the other way round, so a bootstrap links only its kind.
// Both bind the same handlers by template logical id (internal/catalog),
// so a Lambda's main.go and `veredicto lambda invoke` run identical code.
package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	"github.com/veredicto/veredicto/internal/app/searchapp"
	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/audit"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/companion"
	"github.com/veredicto/veredicto/internal/confirm"
	confirmengine "github.com/veredicto/veredicto/internal/confirm/engine"
	fileconfirm "github.com/veredicto/veredicto/internal/confirm/file"
	fileeventlog "github.com/veredicto/veredicto/internal/eventlog/file"
	"github.com/veredicto/veredicto/internal/flags"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/httpapi/confirmapi"
	"github.com/veredicto/veredicto/internal/httpapi/debateapi"
	"github.com/veredicto/veredicto/internal/httpapi/flagsapi"
	"github.com/veredicto/veredicto/internal/httpapi/searchapi"
	"github.com/veredicto/veredicto/internal/intake"
	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/internal/search"
	localstarter "github.com/veredicto/veredicto/internal/starter/local"
	filestore "github.com/veredicto/veredicto/internal/store/file"
	"github.com/veredicto/veredicto/prompts"
)

// App holds the assembled services.
type App struct {
	catalog.Services
	// Debates serves the debate routes (POST /debates…).
	Debates *debateapi.Routes
}

// Handler returns the Lambda handler of a template logical id.
func (a *App) Handler(logicalID string) (any, error) {
	f, err := catalog.Lookup(logicalID)
	if err != nil {
		return nil, err
	}
	return catalog.Lambda(f, &a.Services)
}

// LocalLayout is where the local adapters keep data under a folder: the
// inputs "bucket", the reports "bucket" and the context store.
func LocalLayout(dir string) (inputs, reports, context string) {
	return filepath.Join(dir, "inputs"), filepath.Join(dir, "reports"), filepath.Join(dir, "context")
}

// Local configures the services on one machine.
type Local struct {
	// Dir is the data folder (inputs, reports, context, confirmations…).
	Dir string
	// Analyst is the executive search's (offline or LLM agents); LLM the
	// client of the flags judge and the debate's and companion's agents
	// (nil: their offline baselines).
	Analyst search.Analyst
	LLM     *llm.OpenAI
	// Searches and Debates start the executions of their state machines;
	// nil runs them in-process on the engine.
	Searches intake.Starter
	Debates  debateapi.Starter
	// Events receives the companion's progress (nil: none).
	Events companion.Appender
	Logger *slog.Logger
}

// NewLocal assembles the services on this machine under dir, with the
// given analyst and, for the flags judge, the LLM client (nil: offline).
// Executions run in-process through the engine.
func NewLocal(dir string, analyst search.Analyst, client *llm.OpenAI) *App {
	return AssembleLocal(Local{Dir: dir, Analyst: analyst, LLM: client})
}

// AssembleLocal builds every service on this machine from cfg, each with
// its dependencies at construction.
func AssembleLocal(cfg Local) *App {
	dir, client := cfg.Dir, cfg.LLM
	in, rep, ctxDir := LocalLayout(dir)
	inputs, reports := fileblob.NewDir(in), fileblob.NewDir(rep)
	kv := filestore.NewLocal(ctxDir)
	// One store of audit records: DATA/reports/audit/<tenant>/<execution>/.
	records := &audit.Folders{Root: filepath.Join(rep, AuditPrefix)}
	svc := &search.Service{Inputs: inputs, Reports: reports, Store: kv, Analyst: cfg.Analyst, PromptVersions: prompts.PromptVersion, Layout: search.BucketLayout,
		Audit: records}
	confirms, stream, resolving := localPeople(dir)
	searches := cfg.Searches
	if searches == nil {
		// Senior reviews are recorded with the other confirmations under dir.
		eng := asl.New(catalog.SearchRegistry(svc, confirms))
		searches = localstarter.New(kv, func(ctx context.Context, name string, input []byte) (*asl.Result, error) {
			var si search.StartInput
			if err := json.Unmarshal(input, &si); err != nil {
				return nil, fmt.Errorf("execution input: %w", err)
			}
			x, err := catalog.StartSearch(ctx, eng, si, nil)
			if err != nil {
				return nil, err
			}
			return x.Wait(ctx)
		})
	}
	is := &intake.Service{Inputs: inputs, Reports: reports, Records: kv, Starter: searches, Logger: cfg.Logger}
	judge := flags.NewJudge(client)
	steps, debates := localDebate(dir, client, kv, confirms, cfg.Debates, records, cfg.Logger)
	chatAPI, turns := localChat(dir, is, confirms, judge)
	api := &httpapi.Gateway{Handler: httpapi.New(nil, searchapi.Routes{Searches: is}, flagsapi.Routes{Judge: judge, Record: localFlagsRecord(records, reports, client)},
		debates, chatAPI, confirmapi.Routes{Service: resolving})}
	return &App{Debates: debates, Services: catalog.Services{Search: svc, Intake: is, API: api, Judge: judge, Confirm: confirms,
		Debate: steps, Stream: stream, ChatTurns: turns, Companion: LocalCompanion(dir, client, cfg.Events), ChatLinks: localChatLinks(dir)}}
}

// ChooseLLM resolves the LLM for runs on this machine: the named provider,
// or openai when OPENAI_API_KEY is set and offline otherwise. For offline it
// returns a nil client; for openai a client on OPENAI_BASE_URL with model
// (default $OPENAI_MODEL, then gpt-4o-mini), each HTTP call bounded by
// OPENAI_TIMEOUT.
func ChooseLLM(provider, model string, getenv func(string) string) (*llm.OpenAI, error) {
	key := getenv("OPENAI_API_KEY")
	timeout, err := lambdaenv.OpenAITimeout(getenv)
	if err != nil {
		return nil, err
	}
	if provider == "" {
		provider = "offline"
		if key != "" {
			provider = "openai"
		}
	}
	switch provider {
	case "offline":
		return nil, nil
	case "openai":
	default:
		return nil, fmt.Errorf("unknown LLM provider %q (want offline or openai)", provider)
	}
	if model == "" {
		model = getenv("OPENAI_MODEL")
	}
	if model == "" {
		model = "gpt-4o-mini"
	}
	return llm.NewOpenAI(llm.OpenAIConfig{APIKey: key, BaseURL: getenv("OPENAI_BASE_URL"), Model: model, CallTimeout: timeout})
}

// ChooseAnalyst picks the executive-search analyst like ChooseLLM; the
// notice is the one line shown to the user.
func ChooseAnalyst(provider, model string, getenv func(string) string) (search.Analyst, string, error) {
	client, err := ChooseLLM(provider, model, getenv)
	if err != nil {
		return nil, "", err
	}
	a, notice := searchapp.Analyst(client)
	return a, notice, nil
}

// FolderSearch is a search folder evaluated on this machine, as "veredicto
// search run" does: its reports under out, stage records under
// out/.veredicto, senior reviews under the data folder, the workflow on the
// in-process engine.
type FolderSearch struct {
	Search  *search.Service
	Reviews *confirm.Service
	Engine  *asl.Engine
	// Record is the run's audit record (OUT/audit), synced when a step
	// reports: the CLI syncs it (Sync) before it says how the run ended.
	Record *audit.Folders
}

// NewFolderSearch assembles a FolderSearch reading the search from inputs.
// Its senior reviews are delivered by this process (resolver names it on
// the records), never by another one.
func NewFolderSearch(inputs search.BlobReader, out, data string, analyst search.Analyst, limits search.Limits, logger *slog.Logger) *FolderSearch {
	// One execution per output folder: its record is OUT/audit
	// (ArchiveRecord moves an earlier run's aside first). The engine keeps
	// every step's result in this process: the record is synced when a
	// report or the summary is written, and at the end.
	record := &audit.Folders{Root: filepath.Join(out, "audit"), Single: true, SyncOnReport: true}
	svc := &search.Service{
		Inputs:         inputs,
		Reports:        fileblob.NewDir(out),
		Store:          filestore.NewLocal(filepath.Join(out, ".veredicto", "context")),
		Analyst:        analyst,
		PromptVersions: prompts.PromptVersion,
		Limits:         limits,
		Audit:          record,
	}
	reviews := &confirm.Service{Store: fileconfirm.Local(data), Events: fileeventlog.Local(data), Logger: logger,
		Resolver: fmt.Sprintf("veredicto search run --review (pid %d, started %s)", os.Getpid(), time.Now().UTC().Format(time.RFC3339Nano))}
	eng := asl.New(catalog.SearchRegistry(svc, reviews))
	// The engine resolves the reviews' tasks; the reviews' service delivers
	// to the engine: the one cycle, closed here.
	reviews.Tasks = confirmengine.Tasks{Engine: eng}
	return &FolderSearch{Search: svc, Reviews: reviews, Engine: eng, Record: record}
}

// ProjectRegistry binds every Task handler of the executive search with
// local adapters, for "veredicto states run": documents are read and
// reports written relative to the current folder (input_prefix and
// report_prefix in the execution input), stage records and senior reviews
// kept under DefaultDataDir.
func ProjectRegistry(analyst search.Analyst) *asl.Registry {
	svc := &search.Service{Inputs: fileblob.NewDir("."), Reports: fileblob.NewDir("."), Store: filestore.NewLocal(filepath.Join(DefaultDataDir, "context")),
		Analyst: analyst, PromptVersions: prompts.PromptVersion}
	return catalog.SearchRegistry(svc, &confirm.Service{Store: fileconfirm.Local(DefaultDataDir), Events: fileeventlog.Local(DefaultDataDir)})
}
