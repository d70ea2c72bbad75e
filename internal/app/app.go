// Package app assembles the project's services from configuration: the AWS
// adapters (S3, DynamoDB, Step Functions, Secrets Manager) inside Lambda,
// or the embedded local adapters (folders, the in-process engine) on one
// machine. Both expose the same handlers by template logical id, so a
// Lambda's main.go and `veredicto lambda invoke` run identical code.
package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/veredicto/veredicto/internal/asl"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	s3blob "github.com/veredicto/veredicto/internal/blob/s3"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/catalog/flagsfn"
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/catalog/intakefn"
	"github.com/veredicto/veredicto/internal/catalog/searchfn"
	"github.com/veredicto/veredicto/internal/companion"
	"github.com/veredicto/veredicto/internal/confirm"
	fileconfirm "github.com/veredicto/veredicto/internal/confirm/file"
	fileeventlog "github.com/veredicto/veredicto/internal/eventlog/file"
	"github.com/veredicto/veredicto/internal/flags"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/intake"
	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/search/gems"
	"github.com/veredicto/veredicto/internal/search/offline"
	"github.com/veredicto/veredicto/internal/starter"
	"github.com/veredicto/veredicto/internal/store/dynamo"
	filestore "github.com/veredicto/veredicto/internal/store/file"
	"github.com/veredicto/veredicto/prompts"
)

// Config is read once from the environment (template.yaml sets it).
type Config struct {
	InputsBucket    string // INPUTS_BUCKET
	ReportsBucket   string // REPORTS_BUCKET
	ContextTable    string // CONTEXT_TABLE
	StateMachineARN string // STATE_MACHINE_ARN (trigger and API)
	LLMSecretARN    string // LLM_SECRET_ARN: Secrets Manager secret holding the API key
	Model           string // OPENAI_MODEL
	BaseURL         string // OPENAI_BASE_URL
	TenantClaim     string // TENANT_CLAIM (default custom:tenant)
	MaxConcurrency  int    // MAX_CONCURRENCY: candidates at once when a start does not say
	// RunMachines are the state machines whose runs GET /runs lists
	// besides the searches (RUN_STATE_MACHINE_ARNS, comma-separated; API).
	RunMachines []string
	// EventsTable is the event log's table (EVENTS_TABLE), for the
	// workflows that append their progress to an execution's stream.
	EventsTable string
	// OpenAITimeout bounds one HTTP call to the LLM provider
	// (OPENAI_TIMEOUT; zero: llm.DefaultCallTimeout).
	OpenAITimeout time.Duration
}

// ConfigFromEnv reads the Lambda configuration; missing required settings
// are named.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		InputsBucket: getenv("INPUTS_BUCKET"), ReportsBucket: getenv("REPORTS_BUCKET"), ContextTable: getenv("CONTEXT_TABLE"),
		StateMachineARN: getenv("STATE_MACHINE_ARN"), LLMSecretARN: getenv("LLM_SECRET_ARN"), Model: getenv("OPENAI_MODEL"),
		BaseURL: getenv("OPENAI_BASE_URL"), TenantClaim: getenv("TENANT_CLAIM"), RunMachines: split(getenv("RUN_STATE_MACHINE_ARNS")),
		EventsTable: getenv("EVENTS_TABLE"),
	}
	var missing []string
	for name, v := range map[string]string{"INPUTS_BUCKET": c.InputsBucket, "REPORTS_BUCKET": c.ReportsBucket, "CONTEXT_TABLE": c.ContextTable} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return c, fmt.Errorf("configuration: environment variable(s) %s not set", strings.Join(missing, ", "))
	}
	timeout, err := OpenAITimeout(getenv)
	if err != nil {
		return c, err
	}
	c.OpenAITimeout = timeout
	if v := getenv("MAX_CONCURRENCY"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 40 {
			return c, fmt.Errorf("configuration: MAX_CONCURRENCY %q must be an integer from 1 to 40", v)
		}
		c.MaxConcurrency = n
	}
	if c.TenantClaim == "" {
		c.TenantClaim = "custom:tenant"
	}
	if c.Model == "" {
		c.Model = "gpt-4o-mini"
	}
	return c, nil
}

// App holds the assembled services.
type App struct {
	catalog.Services
	// Debates serves the debate routes (POST /debates…).
	Debates *httpapi.Debates
}

// Handler returns the Lambda handler of a template logical id.
func (a *App) Handler(logicalID string) (any, error) {
	f, err := catalog.Lookup(logicalID)
	if err != nil {
		return nil, err
	}
	return catalog.Lambda(f, &a.Services)
}

// start runs the Lambda runtime loop with the handler of logicalID, a
// function of kind, bound to the services build assembles. Each kind has its
// own entry point (StartSearch, StartIntake, StartFlags) so a bootstrap links
// only the AWS clients it uses. Configuration errors end the process with a
// message (a Lambda init failure), never a panic.
func start(logicalID string, kind function.Kind, functions func() []function.Function, build func(ctx context.Context, cfg Config, ac aws.Config) (catalog.Services, error)) {
	ctx := context.Background()
	logger := lambdaLogger(os.Getenv("LOG_LEVEL"))
	slog.SetDefault(logger)
	h, err := lambdaHandler(ctx, logicalID, kind, functions, build)
	if err == nil {
		lambda.Start(h)
		return
	}
	logger.Error("init failed", "function", logicalID, "error", err)
	os.Exit(1)
}

// lambdaHandler binds logicalID, one of functions (its kind's list, the only
// one the entry point names, so that the binary links only that kind's
// handlers), to the services build assembles.
func lambdaHandler(ctx context.Context, logicalID string, kind function.Kind, functions func() []function.Function, build func(ctx context.Context, cfg Config, ac aws.Config) (catalog.Services, error)) (any, error) {
	var f function.Function
	var ids []string
	for _, c := range functions() {
		ids = append(ids, c.LogicalID)
		if c.LogicalID == logicalID {
			f = c
		}
	}
	if f.LogicalID == "" {
		return nil, fmt.Errorf("no %s function %q (the %s entry point serves %s)", kind, logicalID, kind, strings.Join(ids, ", "))
	}
	cfg, err := ConfigFromEnv(os.Getenv)
	if err != nil {
		return nil, err
	}
	ac, err := lambdaAWSConfig(os.Getenv)
	if err != nil {
		return nil, err
	}
	svcs, err := build(ctx, cfg, ac)
	if err != nil {
		return nil, err
	}
	return catalog.Lambda(f, &svcs)
}

// lambdaLogger logs JSON to stderr at LOG_LEVEL (DEBUG, INFO (default),
// WARN, ERROR), with the Lambda request id of the invocation on every
// record logged with its context.
func lambdaLogger(level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(requestIDHandler{slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l})})
}

// requestIDHandler adds "request_id" from the invocation's lambdacontext.
type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if lc, ok := lambdacontext.FromContext(ctx); ok && lc.AwsRequestID != "" {
		r.AddAttrs(slog.String("request_id", lc.AwsRequestID))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(as)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}

// storage builds the S3 and DynamoDB adapters.
func storage(cfg Config, ac aws.Config) (inputs, reports *s3blob.Store, kv *dynamo.Store) {
	s3c := s3.NewFromConfig(ac)
	inputs = s3blob.New(s3c, cfg.InputsBucket, "")
	reports = s3blob.New(s3c, cfg.ReportsBucket, "")
	return inputs, reports, dynamo.New(dynamodb.NewFromConfig(ac), cfg.ContextTable, reports)
}

// bucketLayout is where the inputs and reports buckets (or folders) hold
// a tenant's search: the only prefixes a search task accepts.
func bucketLayout(tenant, searchID string) (input, report string) {
	return intake.InputPrefix(tenant, searchID), intake.ReportPrefix(tenant, searchID)
}

// StartSearch runs one of the executive-search task functions
// (function.KindSearch).
func StartSearch(logicalID string) {
	start(logicalID, function.KindSearch, searchfn.Functions, func(ctx context.Context, cfg Config, ac aws.Config) (catalog.Services, error) {
		inputs, reports, kv := storage(cfg, ac)
		client, err := awsLLM(ctx, ac, cfg)
		if err != nil {
			return catalog.Services{}, err
		}
		var analyst search.Analyst = offline.New()
		if client != nil {
			analyst = gems.New(client, client.Info())
		}
		return catalog.Services{Search: &search.Service{Inputs: inputs, Reports: reports, Store: kv, Analyst: analyst,
			PromptVersions: prompts.PromptVersion, DefaultConcurrency: cfg.MaxConcurrency, Layout: bucketLayout}}, nil
	})
}

// StartIntake runs TriggerFunction or ApiFunction (function.KindIntake).
func StartIntake(logicalID string) {
	start(logicalID, function.KindIntake, intakefn.Functions, func(ctx context.Context, cfg Config, ac aws.Config) (catalog.Services, error) {
		inputs, reports, kv := storage(cfg, ac)
		var st intake.Starter = missingStarter{}
		client := sfn.NewFromConfig(ac)
		if cfg.StateMachineARN != "" {
			st = starter.NewSFN(client, cfg.StateMachineARN)
		}
		in := &intake.Service{Inputs: inputs, Reports: reports, Records: kv, Starter: st}
		rt := httpapi.Routes{Searches: in}
		if len(cfg.RunMachines) > 0 {
			rt.Runs = &httpapi.SFNRuns{Client: client, Machines: cfg.RunMachines}
		}
		return catalog.Services{Intake: in, API: gateway(cfg, rt)}, nil
	})
}

// StartFlags runs FlagsFunction (function.KindFlags).
func StartFlags(logicalID string) {
	start(logicalID, function.KindFlags, flagsfn.Functions, func(ctx context.Context, cfg Config, ac aws.Config) (catalog.Services, error) {
		client, err := awsLLM(ctx, ac, cfg)
		if err != nil {
			return catalog.Services{}, err
		}
		j := judge(client)
		return catalog.Services{Judge: j, API: gateway(cfg, httpapi.Routes{Judge: j})}, nil
	})
}

// gateway serves routes behind API Gateway, the tenant from the claim
// cfg.TenantClaim of the JWT the API's authorizer verified.
func gateway(cfg Config, rt httpapi.Routes) *httpapi.Gateway {
	rt.Logger = slog.Default()
	return &httpapi.Gateway{Handler: httpapi.New(rt), TenantClaim: cfg.TenantClaim}
}

// judge is the flags contradiction judge: the LLM's when there is a
// client, otherwise the offline one.
func judge(client *llm.OpenAI) flags.ContradictionJudge {
	if client == nil {
		return flags.OfflineJudge{}
	}
	return flags.LLMJudge{Client: client}
}

// awsLLM reads the LLM key from Secrets Manager (a plain string, or JSON
// with "api_key") and returns the client; without a secret it returns nil
// and the offline baselines run.
func awsLLM(ctx context.Context, ac aws.Config, cfg Config) (*llm.OpenAI, error) {
	key, err := awsLLMKey(ctx, ac, cfg)
	if key == "" || err != nil {
		return nil, err
	}
	return llm.NewOpenAI(llm.OpenAIConfig{APIKey: key, BaseURL: cfg.BaseURL, Model: cfg.Model, CallTimeout: cfg.OpenAITimeout})
}

// awsLLMKey reads the LLM API key from Secrets Manager; "" without a
// secret.
func awsLLMKey(ctx context.Context, ac aws.Config, cfg Config) (string, error) {
	if cfg.LLMSecretARN == "" {
		return "", nil
	}
	out, err := secretsmanager.NewFromConfig(ac).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(cfg.LLMSecretARN)})
	if err != nil {
		return "", fmt.Errorf("read LLM secret: %w", err)
	}
	key, err := apiKeyFromSecret(aws.ToString(out.SecretString))
	if err != nil {
		return "", fmt.Errorf("LLM secret %s: %w", cfg.LLMSecretARN, err)
	}
	return key, nil
}

// apiKeyFromSecret reads the API key from a secret's string: the key
// itself, or a JSON object with "api_key". The error never quotes the
// secret.
func apiKeyFromSecret(secret string) (string, error) {
	secret = strings.TrimSpace(secret)
	if strings.HasPrefix(secret, "{") {
		var js struct {
			APIKey string `json:"api_key"`
		}
		if err := json.Unmarshal([]byte(secret), &js); err != nil || strings.TrimSpace(js.APIKey) == "" {
			return "", fmt.Errorf("the secret is a JSON object without a non-empty \"api_key\"")
		}
		return strings.TrimSpace(js.APIKey), nil
	}
	if secret == "" {
		return "", fmt.Errorf("the secret is empty")
	}
	return secret, nil
}

// missingStarter fails clearly when a function that starts executions was
// deployed without STATE_MACHINE_ARN.
type missingStarter struct{}

func (missingStarter) Start(context.Context, string, []byte) (starter.Execution, error) {
	return starter.Execution{}, fmt.Errorf("configuration: STATE_MACHINE_ARN is not set for this function")
}

func (missingStarter) Describe(context.Context, string) (starter.Status, error) {
	return starter.Status{}, fmt.Errorf("configuration: STATE_MACHINE_ARN is not set for this function")
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
	Debates  httpapi.DebateStarter
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
	svc := &search.Service{Inputs: inputs, Reports: reports, Store: kv, Analyst: cfg.Analyst, PromptVersions: prompts.PromptVersion, Layout: bucketLayout}
	services, resolving := localPeople(dir)
	searches := cfg.Searches
	if searches == nil {
		// Senior reviews are recorded with the other confirmations under dir.
		eng := asl.New(catalog.SearchRegistry(svc, services.Confirm))
		searches = starter.NewLocal(kv, func(ctx context.Context, name string, input []byte) (*asl.Result, error) {
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
	services.Search, services.Intake, services.Judge = svc, is, judge(client)
	var debates *httpapi.Debates
	services.Debate, debates = localDebate(dir, client, kv, services.Confirm, cfg.Debates, cfg.Logger)
	var chatAPI *httpapi.Chat
	chatAPI, services.ChatTurns = localChat(dir, services)
	services.Companion = LocalCompanion(dir, client, cfg.Events)
	services.API = &httpapi.Gateway{Handler: httpapi.New(httpapi.Routes{Searches: is, Judge: services.Judge,
		Debates: debates, Chat: chatAPI, Confirmations: resolving})}
	return &App{Services: services, Debates: debates}
}

// MaxOpenAITimeout is the longest OPENAI_TIMEOUT accepted: a Lambda
// function runs at most 15 minutes.
const MaxOpenAITimeout = 15 * time.Minute

// OpenAITimeout reads OPENAI_TIMEOUT, the bound on one HTTP call to the LLM
// provider: a Go duration ("90s", "1m30s") or a whole number of seconds
// ("90"), above zero and at most MaxOpenAITimeout. Unset, it is zero and
// the client's default (llm.DefaultCallTimeout, 60s) applies.
func OpenAITimeout(getenv func(string) string) (time.Duration, error) {
	v := strings.TrimSpace(getenv("OPENAI_TIMEOUT"))
	if v == "" {
		return 0, nil
	}
	var (
		d   time.Duration
		err error
	)
	if n, nerr := strconv.ParseInt(v, 10, 64); nerr != nil {
		d, err = time.ParseDuration(v)
	} else if n > 0 && n <= int64(MaxOpenAITimeout/time.Second) {
		d = time.Duration(n) * time.Second
	}
	if err != nil || d <= 0 || d > MaxOpenAITimeout {
		return 0, fmt.Errorf("configuration: OPENAI_TIMEOUT %q must be a Go duration such as 90s or 2m, or a whole number of seconds, above 0 and at most %s", v, MaxOpenAITimeout)
	}
	return d, nil
}

// ChooseLLM resolves the LLM for runs on this machine: the named provider,
// or openai when OPENAI_API_KEY is set and offline otherwise. For offline it
// returns a nil client; for openai a client on OPENAI_BASE_URL with model
// (default $OPENAI_MODEL, then gpt-4o-mini), each HTTP call bounded by
// OPENAI_TIMEOUT.
func ChooseLLM(provider, model string, getenv func(string) string) (*llm.OpenAI, error) {
	key := getenv("OPENAI_API_KEY")
	timeout, err := OpenAITimeout(getenv)
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
	a, notice := Analyst(client)
	return a, notice, nil
}

// Analyst is the executive-search analyst of a client: the LLM agents, or
// the offline baseline when client is nil. The notice is the one line
// shown to the user.
func Analyst(client *llm.OpenAI) (search.Analyst, string) {
	if client == nil {
		return offline.New(), "LLM: offline lexical baseline (no OPENAI_API_KEY set): reports are labelled as a baseline, not a model judgment"
	}
	return gems.New(client, client.Info()), "LLM: openai-compatible, model " + client.Info().Model
}

// split reads a comma-separated setting, blanks dropped.
func split(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// FolderSearch is a search folder evaluated on this machine, as "veredicto
// search run" does: its reports under out, stage records under
// out/.veredicto, senior reviews under the data folder, the workflow on the
// in-process engine.
type FolderSearch struct {
	Search  *search.Service
	Reviews *confirm.Service
	Engine  *asl.Engine
}

// NewFolderSearch assembles a FolderSearch reading the search from inputs.
// Its senior reviews are delivered by this process (resolver names it on
// the records), never by another one.
func NewFolderSearch(inputs search.BlobReader, out, data string, analyst search.Analyst, limits search.Limits, logger *slog.Logger) *FolderSearch {
	svc := &search.Service{
		Inputs:         inputs,
		Reports:        fileblob.NewDir(out),
		Store:          filestore.NewLocal(filepath.Join(out, ".veredicto", "context")),
		Analyst:        analyst,
		PromptVersions: prompts.PromptVersion,
		Limits:         limits,
	}
	reviews := &confirm.Service{Store: fileconfirm.Local(data), Events: fileeventlog.Local(data), Logger: logger,
		Resolver: fmt.Sprintf("veredicto search run --review (pid %d, started %s)", os.Getpid(), time.Now().UTC().Format(time.RFC3339Nano))}
	eng := asl.New(catalog.SearchRegistry(svc, reviews))
	// The engine resolves the reviews' tasks; the reviews' service delivers
	// to the engine: the one cycle, closed here.
	reviews.Tasks = confirm.EngineTasks{Engine: eng}
	return &FolderSearch{Search: svc, Reviews: reviews, Engine: eng}
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
