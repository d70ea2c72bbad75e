package lambdaenv

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/catalog/intakefn"
	"github.com/veredicto/veredicto/internal/catalog/searchfn"
)

func TestConfigFromEnvNamesMissingSettings(t *testing.T) {
	_, err := ConfigFromEnv(func(k string) string {
		if k == "REPORTS_BUCKET" {
			return "r"
		}
		return ""
	})
	if err == nil || !strings.Contains(err.Error(), "CONTEXT_TABLE, INPUTS_BUCKET") {
		t.Errorf("error %v, want it to name CONTEXT_TABLE and INPUTS_BUCKET", err)
	}
	env := map[string]string{"INPUTS_BUCKET": "i", "REPORTS_BUCKET": "r", "CONTEXT_TABLE": "t"}
	c, err := ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil || c.TenantClaim != "custom:tenant" || c.Model != "gpt-4o-mini" {
		t.Errorf("defaults: %+v %v", c, err)
	}
}

// TestOpenAITimeout: OPENAI_TIMEOUT is a Go duration or whole seconds; a
// bad value is refused by name (the local CLI and server read it through
// app.ChooseLLM, Lambda through ConfigFromEnv).
func TestOpenAITimeout(t *testing.T) {
	tests := []struct {
		value string
		want  time.Duration // 0 with ok: unset, the client's default
		ok    bool
	}{
		{"", 0, true},
		{"90", 90 * time.Second, true},
		{"90s", 90 * time.Second, true},
		{"1m30s", 90 * time.Second, true},
		{"250ms", 250 * time.Millisecond, true},
		{" 45 ", 45 * time.Second, true},
		{"900", 15 * time.Minute, true},
		{"901", 0, false},
		{"16m", 0, false},
		{"0", 0, false},
		{"-5s", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
	}
	for _, tt := range tests {
		env := map[string]string{"OPENAI_TIMEOUT": tt.value, "OPENAI_API_KEY": "k", "INPUTS_BUCKET": "i", "REPORTS_BUCKET": "r", "CONTEXT_TABLE": "t"}
		get := func(k string) string { return env[k] }
		got, err := OpenAITimeout(get)
		if tt.ok && (err != nil || got != tt.want) || !tt.ok && err == nil {
			t.Errorf("OPENAI_TIMEOUT=%q: %v, %v; want %v (ok %v)", tt.value, got, err, tt.want, tt.ok)
		}
		c, cerr := ConfigFromEnv(get)
		if tt.ok && cerr != nil || !tt.ok && (cerr == nil || !strings.Contains(cerr.Error(), "OPENAI_TIMEOUT")) {
			t.Errorf("OPENAI_TIMEOUT=%q: %v, want an error naming OPENAI_TIMEOUT only for a bad value", tt.value, cerr)
		}
		if cerr == nil && c.OpenAITimeout != tt.want {
			t.Errorf("OPENAI_TIMEOUT=%q: Config.OpenAITimeout %v, want %v", tt.value, c.OpenAITimeout, tt.want)
		}
	}
}

// TestEntryPointsServeTheirKindOnly: each Lambda entry point builds the
// dependencies of one kind, so it refuses a function of another kind at
// init, before any AWS call.
func TestEntryPointsServeTheirKindOnly(t *testing.T) {
	build := func(context.Context, Config, aws.Config) (any, error) {
		t.Error("build called for a function of another kind")
		return nil, nil
	}
	tests := []struct {
		id        string
		kind      function.Kind
		functions func() []function.Function
		want      string
	}{
		{"Gem1Function", function.KindIntake, intakefn.Functions, `no intake function "Gem1Function" (the intake entry point serves TriggerFunction, ApiFunction)`},
		{"FlagsFunction", function.KindSearch, searchfn.Functions, `no search function "FlagsFunction"`},
		{"Gem9Function", function.KindSearch, searchfn.Functions, `no search function "Gem9Function"`},
	}
	for _, tt := range tests {
		_, err := lambdaHandler(context.Background(), tt.id, tt.kind, tt.functions, build)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s as %s: got %v, want %q", tt.id, tt.kind, err, tt.want)
		}
	}
}

func TestLogsCarryTheLambdaRequestID(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(requestIDHandler{slog.NewJSONHandler(&buf, nil)}).With("function", "Gem1Function")
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-42"})
	log.InfoContext(ctx, "stage done", "stage", "gem1")
	log.InfoContext(context.Background(), "outside an invocation")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d log lines, want 2: %s", len(lines), buf.String())
	}
	for i, want := range []string{`"request_id":"req-42"`, ""} {
		if got := strings.Contains(lines[i], `"request_id"`); got != (want != "") || (want != "" && !strings.Contains(lines[i], want)) {
			t.Errorf("line %d: %s; want request_id %q", i, lines[i], want)
		}
	}
}
