package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/asl"
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

The response is printed on stdout. A handler error prints
{"errorMessage", "errorType"} as Lambda reports it and exits 1.

Flags:
`

type lambdaConfig struct {
	logicalID string
	event     string
	data      string
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
		fmt.Fprintf(m.Stderr, "\nFunctions: %s\n", strings.Join(app.LogicalIDs(), ", "))
	}
	fs.StringVar(&cfg.event, "event", "", "event JSON file (\"-\" for stdin)")
	fs.StringVar(&cfg.data, "data", ".veredicto-local", "folder holding the local buckets and context store")
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
	analyst, _, err := app.ChooseAnalyst("", "", getenv)
	if err != nil {
		return fail("%v", err)
	}
	a := app.NewLocal(cfg.data, analyst)
	if ep := getenv(starter.EndpointEnv); ep != "" {
		// one code path with AWS: start executions on `veredicto serve`
		a.Intake.Starter = starter.NewEndpoint(ep, control.StateMachineARN("ExecutiveSearchStateMachine"))
	}
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
		// The shape Lambda returns for a function error.
		resp := messages.InvokeResponse_Error{Message: err.Error(), Type: asl.ErrorName(err)}
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
