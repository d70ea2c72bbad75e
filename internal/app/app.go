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

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/veredicto/veredicto/internal/asl"
	blob "github.com/veredicto/veredicto/internal/blob/fs"
	s3blob "github.com/veredicto/veredicto/internal/blob/s3"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/flags"
	"github.com/veredicto/veredicto/internal/gems"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/intake"
	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/internal/offline"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/starter"
	"github.com/veredicto/veredicto/internal/store/dynamo"
	store "github.com/veredicto/veredicto/internal/store/file"
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
}

// ConfigFromEnv reads the Lambda configuration; missing required settings
// are named.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		InputsBucket: getenv("INPUTS_BUCKET"), ReportsBucket: getenv("REPORTS_BUCKET"), ContextTable: getenv("CONTEXT_TABLE"),
		StateMachineARN: getenv("STATE_MACHINE_ARN"), LLMSecretARN: getenv("LLM_SECRET_ARN"), Model: getenv("OPENAI_MODEL"),
		BaseURL: getenv("OPENAI_BASE_URL"), TenantClaim: getenv("TENANT_CLAIM"),
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
	Search *search.Service
	Intake *intake.Service
	// HTTP serves every HTTP route (searches and flags); see
	// httpapi.Router for its API Gateway and net/http fronts.
	HTTP *httpapi.Router
}

// Handler returns the Lambda handler of a template logical id.
func (a *App) Handler(logicalID string) (any, error) {
	switch logicalID {
	case "TriggerFunction":
		return a.Intake.HandleS3, nil
	case "ApiFunction":
		return a.HTTP.APIGateway(), nil
	case "FlagsFunction":
		return a.HTTP.APIGateway(), nil
	}
	if h := catalog.Lambda(a.Search, logicalID); h != nil {
		return h, nil
	}
	return nil, fmt.Errorf("no function %q (known: %s)", logicalID, strings.Join(LogicalIDs(), ", "))
}

// LogicalIDs lists the functions this package can serve.
func LogicalIDs() []string {
	ids := []string{"TriggerFunction", "ApiFunction", "FlagsFunction"}
	for _, e := range catalog.Search(&search.Service{}) {
		ids = append(ids, e.LogicalID)
	}
	sort.Strings(ids)
	return ids
}

// start runs the Lambda runtime loop with the handler build returns. Each
// function kind has its own entry point (StartSearch, StartIntake,
// StartFlags) so a bootstrap links only the AWS clients it uses.
// Configuration errors end the process with a message (a Lambda init
// failure), never a panic.
func start(logicalID string, build func(ctx context.Context, cfg Config, ac aws.Config) (any, error)) {
	ctx := context.Background()
	var level slog.Level // LOG_LEVEL: DEBUG, INFO (default), WARN, ERROR
	if err := level.UnmarshalText([]byte(os.Getenv("LOG_LEVEL"))); err != nil {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(logger)
	cfg, err := ConfigFromEnv(os.Getenv)
	if err == nil {
		var ac aws.Config
		if ac, err = awsconfig.LoadDefaultConfig(ctx); err == nil {
			var h any
			if h, err = build(ctx, cfg, ac); err == nil {
				lambda.Start(h)
				return
			}
		} else {
			err = fmt.Errorf("aws config: %w", err)
		}
	}
	logger.Error("init failed", "function", logicalID, "error", err)
	os.Exit(1)
}

// storage builds the S3 and DynamoDB adapters.
func storage(cfg Config, ac aws.Config) (inputs, reports *s3blob.Store, kv *dynamo.Store) {
	s3c := s3.NewFromConfig(ac)
	inputs = s3blob.New(s3c, cfg.InputsBucket, "")
	reports = s3blob.New(s3c, cfg.ReportsBucket, "")
	return inputs, reports, dynamo.New(dynamodb.NewFromConfig(ac), cfg.ContextTable, reports)
}

// StartSearch runs one of the executive-search task functions
// (ValidateFunction … SummaryFunction).
func StartSearch(logicalID string) {
	start(logicalID, func(ctx context.Context, cfg Config, ac aws.Config) (any, error) {
		inputs, reports, kv := storage(cfg, ac)
		client, err := awsLLM(ctx, ac, cfg)
		if err != nil {
			return nil, err
		}
		var analyst search.Analyst = offline.New()
		if client != nil {
			analyst = gems.New(client, client.Info())
		}
		svc := &search.Service{Inputs: inputs, Reports: reports, Store: kv, Analyst: analyst, PromptVersions: prompts.PromptVersion,
			DefaultConcurrency: cfg.MaxConcurrency}
		if h := catalog.Lambda(svc, logicalID); h != nil {
			return h, nil
		}
		return nil, fmt.Errorf("%s is not an executive-search function", logicalID)
	})
}

// StartIntake runs TriggerFunction or ApiFunction.
func StartIntake(logicalID string) {
	start(logicalID, func(ctx context.Context, cfg Config, ac aws.Config) (any, error) {
		inputs, reports, kv := storage(cfg, ac)
		var st intake.Starter = missingStarter{}
		if cfg.StateMachineARN != "" {
			st = starter.NewSFN(sfn.NewFromConfig(ac), cfg.StateMachineARN)
		}
		in := &intake.Service{Inputs: inputs, Reports: reports, Records: kv, Starter: st}
		switch logicalID {
		case "TriggerFunction":
			return in.HandleS3, nil
		case "ApiFunction":
			return (&httpapi.Router{Searches: in, TenantClaim: cfg.TenantClaim}).APIGateway(), nil
		}
		return nil, fmt.Errorf("%s is not an intake function", logicalID)
	})
}

// StartFlags runs FlagsFunction.
func StartFlags() {
	start("FlagsFunction", func(ctx context.Context, cfg Config, ac aws.Config) (any, error) {
		client, err := awsLLM(ctx, ac, cfg)
		if err != nil {
			return nil, err
		}
		var judge flags.ContradictionJudge = flags.OfflineJudge{}
		if client != nil {
			judge = flags.LLMJudge{Client: client}
		}
		return (&httpapi.Router{Judge: judge}).APIGateway(), nil
	})
}

// awsLLM reads the LLM key from Secrets Manager (a plain string, or JSON
// with "api_key") and returns the client; without a secret it returns nil
// and the offline baselines run.
func awsLLM(ctx context.Context, ac aws.Config, cfg Config) (*llm.OpenAI, error) {
	if cfg.LLMSecretARN == "" {
		return nil, nil
	}
	out, err := secretsmanager.NewFromConfig(ac).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(cfg.LLMSecretARN)})
	if err != nil {
		return nil, fmt.Errorf("read LLM secret: %w", err)
	}
	key, err := apiKeyFromSecret(aws.ToString(out.SecretString))
	if err != nil {
		return nil, fmt.Errorf("LLM secret %s: %w", cfg.LLMSecretARN, err)
	}
	return llm.NewOpenAI(llm.OpenAIConfig{APIKey: key, BaseURL: cfg.BaseURL, Model: cfg.Model})
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

// NewLocal assembles the services on this machine under dir, with the
// given analyst. Executions run in-process through the engine.
func NewLocal(dir string, analyst search.Analyst) *App {
	in, rep, ctxDir := LocalLayout(dir)
	inputs, reports := blob.NewDir(in), blob.NewDir(rep)
	kv := store.NewLocal(ctxDir)
	svc := &search.Service{Inputs: inputs, Reports: reports, Store: kv, Analyst: analyst, PromptVersions: prompts.PromptVersion}
	run := func(ctx context.Context, name string, input []byte) (*asl.Result, error) {
		var si search.StartInput
		if err := json.Unmarshal(input, &si); err != nil {
			return nil, fmt.Errorf("execution input: %w", err)
		}
		return catalog.RunSearch(ctx, svc, si, nil)
	}
	is := &intake.Service{Inputs: inputs, Reports: reports, Records: kv, Starter: starter.NewLocal(kv, run)}
	var judge flags.ContradictionJudge = flags.OfflineJudge{}
	if g, ok := analyst.(*gems.Analyst); ok {
		judge = flags.LLMJudge{Client: g.Client()}
	}
	return &App{Search: svc, Intake: is, HTTP: &httpapi.Router{Searches: is, Judge: judge}}
}

// ChooseLLM resolves the LLM for runs on this machine: the named provider,
// or openai when OPENAI_API_KEY is set and offline otherwise. For offline it
// returns a nil client; for openai a client on OPENAI_BASE_URL with model
// (default $OPENAI_MODEL, then gpt-4o-mini).
func ChooseLLM(provider, model string, getenv func(string) string) (*llm.OpenAI, error) {
	key := getenv("OPENAI_API_KEY")
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
	return llm.NewOpenAI(llm.OpenAIConfig{APIKey: key, BaseURL: getenv("OPENAI_BASE_URL"), Model: model})
}

// ChooseAnalyst picks the executive-search analyst like ChooseLLM; the
// notice is the one line shown to the user.
func ChooseAnalyst(provider, model string, getenv func(string) string) (search.Analyst, string, error) {
	client, err := ChooseLLM(provider, model, getenv)
	if err != nil {
		return nil, "", err
	}
	if client == nil {
		return offline.New(), "LLM: offline lexical baseline (no OPENAI_API_KEY set): reports are labelled as a baseline, not a model judgment", nil
	}
	return gems.New(client, client.Info()), "LLM: openai-compatible, model " + client.Info().Model, nil
}
