package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/app/searchapp"
	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/control"
	"github.com/veredicto/veredicto/internal/starter"
)

const lambdaUsage = `Usage: veredicto lambda invoke LOGICAL_ID --event FILE [--data DIR]

Runs a function of template.yaml in-process, the way "sam local invoke"
would: the event is decoded and the response encoded by aws-lambda-go
exactly as in Lambda. The function uses the local adapters under DIR:
DIR/inputs is the inputs bucket (a search lives under
DIR/inputs/searches/<id>/), DIR/reports the reports bucket, DIR/context the
context store; executions run in-process. The LLM is openai when
OPENAI_API_KEY is set, otherwise the offline baseline.

When DIR/inputs does not exist yet and examples/search-demo does (run from
a clone's root), the example is uploaded first as tenant "default"'s search
demo-cfo-andina (DIR/inputs/searches/default/demo-cfo-andina/), the search
every sample in events/ refers to.

The response is printed on stdout. A handler error prints
{"errorMessage", "errorType"} as Lambda reports it and exits 1.

Flags:
`

type lambdaConfig struct {
	logicalID string
	event     string
	data      string
	// example seeds an empty data folder (examples/search-demo).
	example string
}

// Where the events/ samples expect the example search.
const (
	sampleTenant = "default"
	sampleSearch = "demo-cfo-andina"
)

// seedData uploads the example search into a data folder that has no
// inputs yet, so the README's commands work on a fresh clone. It reports
// whether it seeded.
func seedData(ctx context.Context, data, example string) (bool, error) {
	inputs, _, _ := app.LocalLayout(data)
	if _, err := os.Stat(inputs); !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if st, err := os.Stat(example); err != nil || !st.IsDir() {
		return false, nil
	}
	if err := app.UploadLocal(ctx, data, example, sampleTenant, sampleSearch); err != nil {
		return false, fmt.Errorf("seed %s: %w", data, err)
	}
	return true, nil
}

func (m *Main) runLambda(ctx context.Context, args []string) int {
	if len(args) == 0 || args[0] != "invoke" {
		fmt.Fprint(m.Stderr, strings.Replace(lambdaUsage, "\nFlags:\n", "", 1))
		return exitUsage
	}
	var cfg lambdaConfig
	fs := flag.NewFlagSet("lambda invoke", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.Usage = func() {
		fmt.Fprint(m.Stderr, lambdaUsage)
		fs.PrintDefaults()
		fmt.Fprintf(m.Stderr, "\nFunctions: %s\n", strings.Join(catalog.LogicalIDs(), ", "))
	}
	fs.StringVar(&cfg.event, "event", "", "event JSON file (\"-\" for stdin)")
	fs.StringVar(&cfg.data, "data", app.DefaultDataDir, "folder holding the local buckets and context store")
	positional, err := parseInterleaved(fs, args[1:])
	if err == flag.ErrHelp {
		return exitOK
	}
	if err != nil {
		return exitUsage
	}
	if len(positional) != 1 || cfg.event == "" {
		fs.Usage()
		fmt.Fprintln(m.Stderr, "veredicto lambda invoke: want one LOGICAL_ID and --event FILE")
		return exitUsage
	}
	cfg.logicalID = positional[0]
	cfg.example = filepath.Join("examples", "search-demo")
	return m.lambdaInvoke(ctx, cfg, os.Getenv)
}

func (m *Main) lambdaInvoke(ctx context.Context, cfg lambdaConfig, getenv func(string) string) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(m.Stderr, "veredicto lambda invoke: "+format+"\n", args...)
		return exitUsage
	}
	var payload []byte
	var err error
	if cfg.event == "-" {
		payload, err = io.ReadAll(m.Stdin)
	} else {
		payload, err = os.ReadFile(cfg.event)
	}
	if err != nil {
		return fail("%v", err)
	}
	if !json.Valid(payload) {
		return fail("event %s is not valid JSON", cfg.event)
	}
	seeded, err := seedData(ctx, cfg.data, cfg.example)
	if err != nil {
		return fail("%v", err)
	}
	if seeded {
		fmt.Fprintf(m.Stderr, "veredicto lambda invoke: %s was empty; uploaded %s as searches/%s/%s/\n", cfg.data, cfg.example, sampleTenant, sampleSearch)
	}
	client, err := app.ChooseLLM("", "", getenv)
	if err != nil {
		return fail("%v", err)
	}
	analyst, _ := searchapp.Analyst(client)
	local := app.Local{Dir: cfg.data, Analyst: analyst, LLM: client}
	if ep := getenv(starter.EndpointEnv); ep != "" {
		// one code path with AWS: start executions on `veredicto serve`
		// signed as the service principal "lambda" with a key under --data,
		// which must be the server's
		local.Searches = starter.NewSFN(app.ServiceSFN(cfg.data, ep, app.PrincipalLambda), control.StateMachineARN(app.ExecutiveSearchMachine))
	}
	a := app.AssembleLocal(local)
	h, err := a.Handler(cfg.logicalID)
	if err != nil {
		return fail("%v", err)
	}
	lc := &lambdacontext.LambdaContext{
		AwsRequestID:       fmt.Sprintf("local-%d", time.Now().UnixNano()),
		InvokedFunctionArn: "arn:aws:lambda:local:000000000000:function:" + cfg.logicalID,
	}
	ctx, cancel := context.WithTimeout(lambdacontext.NewContext(ctx, lc), 15*time.Minute)
	defer cancel()
	out, err := lambda.NewHandler(h).Invoke(ctx, payload)
	if err != nil {
		// The shape Lambda returns for a function error (catalog handlers
		// already return it, named by the error chain).
		resp, ok := err.(messages.InvokeResponse_Error)
		if !ok {
			resp = messages.InvokeResponse_Error{Message: err.Error(), Type: asl.ErrorName(err)}
		}
		b, _ := json.Marshal(resp)
		fmt.Fprintf(m.Stdout, "%s\n", b)
		return exitFailed
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, out, "", "  ") != nil {
		pretty.Reset()
		pretty.Write(out)
	}
	fmt.Fprintf(m.Stdout, "%s\n", pretty.Bytes())
	return exitOK
}
