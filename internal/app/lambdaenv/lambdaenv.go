// Package lambdaenv is what every Lambda of the project shares: its
// configuration read once from the environment (Config), its AWS
// configuration (the region and credentials Lambda gives it), its logger,
// and the runtime loop that serves its handler (Start).
//
// Each kind of function has its entry point in internal/app/<kind>app,
// which builds that kind's services and calls Start; this package imports
// no AWS service client and no domain package, so a bootstrap links only
// what its kind uses. What only some kinds need lives beside it: the LLM
// key (lambdaenv/llmsecret) and the buckets and context table
// (lambdaenv/storage).
package lambdaenv

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/veredicto/veredicto/internal/catalog/function"
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
	// AuditRetention is how long each audit record object stays locked
	// in GOVERNANCE mode (AUDIT_RETENTION_DAYS; zero: no lock).
	AuditRetention time.Duration
}

// ConfigFromEnv reads the Lambda configuration; missing required settings
// are named.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		InputsBucket: getenv("INPUTS_BUCKET"), ReportsBucket: getenv("REPORTS_BUCKET"), ContextTable: getenv("CONTEXT_TABLE"),
		StateMachineARN: getenv("STATE_MACHINE_ARN"), LLMSecretARN: getenv("LLM_SECRET_ARN"), Model: getenv("OPENAI_MODEL"),
		BaseURL: getenv("OPENAI_BASE_URL"), TenantClaim: getenv("TENANT_CLAIM"), RunMachines: SplitList(getenv("RUN_STATE_MACHINE_ARNS")),
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
	if c.AuditRetention, err = AuditRetention(getenv); err != nil {
		return c, err
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

// MaxOpenAITimeout is the longest OPENAI_TIMEOUT accepted: a Lambda
// function runs at most 15 minutes.
const MaxOpenAITimeout = 15 * time.Minute

// OpenAITimeout reads OPENAI_TIMEOUT, the bound on one HTTP call to the LLM
// provider: a Go duration ("90s", "1m30s") or a whole number of seconds
// ("90"), above zero and at most MaxOpenAITimeout. Unset, it is zero and
// the client's default (llm.DefaultCallTimeout, 60s) applies. The local
// CLI and server read it the same way.
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

// SplitList reads a comma-separated setting, blanks dropped.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Build assembles a kind's services (a pointer to its <kind>fn.Services)
// from the configuration.
type Build func(ctx context.Context, cfg Config, ac aws.Config) (services any, err error)

// Start runs the Lambda runtime loop with the handler of logicalID, one of
// functions (its kind's list, the only one the entry point names), bound to
// the services build assembles. Configuration errors end the process with
// a message (a Lambda init failure), never a panic.
func Start(logicalID string, kind function.Kind, functions func() []function.Function, build Build) {
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

// lambdaHandler binds logicalID, one of functions, to the services build
// assembles; a function of another kind is refused before anything is
// built.
func lambdaHandler(ctx context.Context, logicalID string, kind function.Kind, functions func() []function.Function, build Build) (any, error) {
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
	services, err := build(ctx, cfg, ac)
	if err != nil {
		return nil, err
	}
	return f.Lambda(services)
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
