package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/httpapi/apitest"
	"github.com/veredicto/veredicto/internal/poll"
)

// The example of examples/mock-config, as its README uses it.
var (
	mockExample      = filepath.Join("..", "..", "examples", "mock-config")
	orderIntakeARN   = "arn:aws:states:us-east-1:000000000000:stateMachine:OrderIntake"
	orderIntakeInput = `{"orderId": "o-1001", "customer": "c-42", "items": [{"sku": "sku-1", "quantity": 2}, {"sku": "sku-7", "quantity": 1}]}`
)

func readExample(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(mockExample, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// closedExecution waits for an execution to end and describes it.
func closedExecution(ctx context.Context, t *testing.T, c *sfn.Client, arn string) *sfn.DescribeExecutionOutput {
	t.Helper()
	var out *sfn.DescribeExecutionOutput
	poll.Until(t, time.Minute, func() bool {
		var err error
		if out, err = c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)}); err != nil {
			t.Fatal(err)
		}
		return out.Status != types.ExecutionStatusRunning
	}, arn+" to end")
	return out
}

// createOrderIntake creates the example's state machine.
func createOrderIntake(ctx context.Context, t *testing.T, c *sfn.Client) error {
	t.Helper()
	_, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("OrderIntake"),
		Definition: aws.String(readExample(t, "order_intake.asl.json")), RoleArn: aws.String("arn:aws:iam::000000000000:role/local")})
	return err
}

// taskEvents lists the Task events of a state in the history, in order.
func taskEvents(t *testing.T, c *sfn.Client, arn, state string) []string {
	t.Helper()
	var out []string
	in := false
	for _, ev := range historyOf(t, c, arn) {
		typ := string(ev.Type)
		switch {
		case ev.StateEnteredEventDetails != nil:
			in = aws.ToString(ev.StateEnteredEventDetails.Name) == state
		case ev.StateExitedEventDetails != nil:
			in = false
		case in && strings.HasPrefix(typ, "Task"):
			if ev.TaskFailedEventDetails != nil {
				typ += "(" + aws.ToString(ev.TaskFailedEventDetails.Error) + ")"
			}
			out = append(out, typ)
		}
	}
	return out
}

// The walkthrough of examples/mock-config through the Go SDK: each test
// case of its MockConfigFile.json takes the path it names, the retry
// consuming the mocked responses in order; an unknown test case is
// StateMachineDoesNotExist; a run on no test case reaches the Lambda
// function, which this server has no endpoint for.
func TestServeMockConfigExample(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	hs := serveInProcess(ctx, t, app.ServerConfig{Data: data, MockConfig: filepath.Join(mockExample, "MockConfigFile.json")})
	c := operatorSFN(t, hs.base, data)
	if err := createOrderIntake(ctx, t, c); err != nil {
		t.Fatal(err)
	}
	output := `{"customer":"c-42","items":[{"quantity":2,"sku":"sku-1"},{"quantity":1,"sku":"sku-7"}],"orderId":"o-1001",` +
		`"queued":{"messageId":"a1b2c3d4-0000-4000-8000-000000000001"},"validation":{"total":42.5,"valid":true}}`
	tests := []struct {
		name, testCase, status, output, errName string
		validate                                []string // ValidateOrder's Task events
	}{
		{"happy path", "HappyPath", "SUCCEEDED", output, "", []string{"TaskScheduled", "TaskStarted", "TaskSucceeded"}},
		{"retry path", "RetryPath", "SUCCEEDED", output, "", []string{"TaskScheduled", "TaskStarted", "TaskFailed(Lambda.ServiceException)",
			"TaskScheduled", "TaskStarted", "TaskFailed(Lambda.TooManyRequestsException)", "TaskScheduled", "TaskStarted", "TaskSucceeded"}},
		{"rejected path", "RejectedPath", "FAILED", "", "OrderRejected", []string{"TaskScheduled", "TaskStarted", "TaskFailed(InvalidOrderError)"}},
		{"no test case", "", "FAILED", "", "States.Runtime", []string{"TaskScheduled", "TaskStarted", "TaskFailed(States.Runtime)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			arn := orderIntakeARN
			if tt.testCase != "" {
				arn += "#" + tt.testCase
			}
			x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(arn), Name: aws.String("run-" + tt.testCase), Input: aws.String(orderIntakeInput)})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(aws.ToString(x.ExecutionArn), "arn:aws:states:us-east-1:000000000000:execution:OrderIntake:") {
				t.Errorf("execution ARN %s, want one of OrderIntake", aws.ToString(x.ExecutionArn))
			}
			out := closedExecution(ctx, t, c, aws.ToString(x.ExecutionArn))
			if string(out.Status) != tt.status || aws.ToString(out.Output) != tt.output || aws.ToString(out.Error) != tt.errName {
				t.Errorf("got %s %s %s (%s), want %s %s %s", out.Status, aws.ToString(out.Output), aws.ToString(out.Error), aws.ToString(out.Cause), tt.status, tt.output, tt.errName)
			}
			if aws.ToString(out.StateMachineArn) != orderIntakeARN {
				t.Errorf("the execution's machine is %s, want %s", aws.ToString(out.StateMachineArn), orderIntakeARN)
			}
			if got := taskEvents(t, c, aws.ToString(x.ExecutionArn), "ValidateOrder"); strings.Join(got, " ") != strings.Join(tt.validate, " ") {
				t.Errorf("ValidateOrder's events %v, want %v", got, tt.validate)
			}
			if tt.testCase == "" && !strings.Contains(aws.ToString(out.Cause), "--lambda-endpoint") {
				t.Errorf("the cause %q does not say to give --lambda-endpoint", aws.ToString(out.Cause))
			}
		})
	}
	_, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(orderIntakeARN + "#NoSuchCase")})
	var nf *types.StateMachineDoesNotExist
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), orderIntakeARN+"#NoSuchCase") {
		t.Errorf("an unknown test case: %v, want StateMachineDoesNotExist naming it", err)
	}
	// A tenant's key runs test cases as it starts any execution: in its tenant.
	acme := tenantSFN(t, hs.base, data, "acme")
	x, err := acme.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(orderIntakeARN + "#HappyPath"), Input: aws.String(orderIntakeInput)})
	if err != nil {
		t.Fatal(err)
	}
	if out := closedExecution(ctx, t, acme, aws.ToString(x.ExecutionArn)); out.Status != types.ExecutionStatusSucceeded || !strings.Contains(aws.ToString(out.Output), `"tenant":"acme"`) {
		t.Errorf("a tenant's test case: %s %s", out.Status, aws.ToString(out.Output))
	}
}

// Without --mock-config or --lambda-endpoint, a state machine whose Task
// calls a function that is not the project's is refused at create, saying
// what to give; a mock configuration with problems stops the server,
// naming the file and the field.
func TestServeRefusesWhatItCannotRun(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	hs := serveInProcess(ctx, t, app.ServerConfig{Data: data})
	c := operatorSFN(t, hs.base, data)
	err := createOrderIntake(ctx, t, c)
	var inv *types.InvalidDefinition
	if !errors.As(err, &inv) || !strings.Contains(err.Error(), "--lambda-endpoint") || !strings.Contains(err.Error(), "--mock-config") {
		t.Errorf("create: %v, want InvalidDefinition saying to give --lambda-endpoint or --mock-config", err)
	}
	// ValidateStateMachineDefinition: valid, with a warning saying the same.
	v, err := c.ValidateStateMachineDefinition(ctx, &sfn.ValidateStateMachineDefinitionInput{Definition: aws.String(readExample(t, "order_intake.asl.json")),
		Severity: types.ValidateStateMachineDefinitionSeverityWarning})
	says := map[string]string{} // location: what the warning says to give
	if err == nil {
		for _, d := range v.Diagnostics {
			for _, flag := range []string{"--lambda-endpoint", "--mock-config"} {
				if strings.Contains(aws.ToString(d.Message), flag) && says[aws.ToString(d.Location)] == "" {
					says[aws.ToString(d.Location)] = flag
				}
			}
		}
	}
	if err != nil || v.Result != types.ValidateStateMachineDefinitionResultCodeOk || len(v.Diagnostics) != 3 || says["/States/ValidateOrder/Resource"] != "--lambda-endpoint" ||
		says["/States/SaveOrder/Resource"] != "--mock-config" || says["/States/QueueFulfilment/Resource"] != "--mock-config" {
		var got []string
		if v != nil {
			for _, d := range v.Diagnostics {
				got = append(got, aws.ToString(d.Location)+": "+aws.ToString(d.Message))
			}
		}
		t.Errorf("validate: %v %v, want OK with a warning per Task saying what to give", err, got)
	}

	bad := filepath.Join(t.TempDir(), "MockConfigFile.json")
	os.WriteFile(bad, []byte(`{"StateMachines":{"M":{"TestCases":{"T":{"S":"R"}}}},"MockedResponses":{"R":{"0":{"Throw":{"Error":"E"}}}}}`), 0o644)
	_, err = app.NewServer(ctx, app.ServerConfig{Data: t.TempDir(), MockConfig: bad, Self: "http://127.0.0.1:1"})
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), `$.MockedResponses.R["0"].Throw: Cause is missing`) {
		t.Errorf("NewServer with a bad mock config: %v, want its file and path named", err)
	}
}

// fakeLambdaEndpoint stands for `sam local start-lambda` (SAM CLI needs
// Docker, which is absent here): a Lambda endpoint on loopback whose one
// function, ValidateOrder, accepts every order at its item count.
type fakeLambdaEndpoint struct {
	url   string
	mu    sync.Mutex
	asked []string
}

func startFakeLambdaEndpoint(t *testing.T) *fakeLambdaEndpoint {
	t.Helper()
	f := &fakeLambdaEndpoint{}
	mux := http.NewServeMux()
	mux.HandleFunc(httpapi.LambdaInvokeRoute, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.asked = append(f.asked, r.PathValue("name"))
		f.mu.Unlock()
		if r.PathValue("name") != "ValidateOrder" {
			w.Header().Set("X-Amzn-ErrorType", "ResourceNotFoundException")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"Type":"User","message":"Function not found"}`))
			return
		}
		var order struct{ Items []any }
		json.Unmarshal(body, &order)
		fmt.Fprintf(w, `{"valid":true,"total":%d}`, len(order.Items))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

// With --lambda-endpoint, a Task whose function is not the project's
// invokes it there: the example's LocalLambdaPath mocks DynamoDB and SQS
// and calls ValidateOrder on the endpoint, by name.
func TestServeLambdaEndpoint(t *testing.T) {
	ctx := context.Background()
	ep := startFakeLambdaEndpoint(t)
	data := t.TempDir()
	hs := serveInProcess(ctx, t, app.ServerConfig{Data: data, MockConfig: filepath.Join(mockExample, "MockConfigFile.json"), LambdaEndpoint: ep.url})
	c := operatorSFN(t, hs.base, data)
	if err := createOrderIntake(ctx, t, c); err != nil {
		t.Fatal(err)
	}
	x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(orderIntakeARN + "#LocalLambdaPath"), Input: aws.String(orderIntakeInput)})
	if err != nil {
		t.Fatal(err)
	}
	out := closedExecution(ctx, t, c, aws.ToString(x.ExecutionArn))
	if out.Status != types.ExecutionStatusSucceeded || !strings.Contains(aws.ToString(out.Output), `"validation":{"total":2,"valid":true}`) {
		t.Errorf("got %s %s (%s %s), want SUCCEEDED validated by the endpoint", out.Status, aws.ToString(out.Output), aws.ToString(out.Error), aws.ToString(out.Cause))
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if strings.Join(ep.asked, ",") != "ValidateOrder" {
		t.Errorf("the endpoint was asked for %v, want ValidateOrder once", ep.asked)
	}
}

func lambdaErrorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return fmt.Sprint(err)
}

// The Lambda Invoke API on the server's address, signed as the Step
// Functions API is: the project's functions by name or ARN; an operator's
// key with any event, a tenant's with its own tenant only.
func TestServeLambdaInvokeAPI(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	if err := app.UploadLocal(ctx, data, filepath.Join("..", "..", "examples", "search-demo"), "default", "demo-cfo-andina"); err != nil {
		t.Fatal(err)
	}
	hs := serveInProcess(ctx, t, app.ServerConfig{Data: data})
	event, err := os.ReadFile(filepath.Join("..", "..", "events", "validate.json"))
	if err != nil {
		t.Fatal(err)
	}
	key := func(spec auth.KeySpec) *lambda.Client { return apitest.Lambda(hs.base, keyFor(t, data, spec)) }
	operator := key(auth.KeySpec{Name: "ana", Operator: true})
	invoke := func(c *lambda.Client, fn string, payload []byte) (*lambda.InvokeOutput, error) {
		return c.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String(fn), Payload: payload})
	}
	for _, fn := range []string{"ValidateFunction", "arn:aws:lambda:us-east-1:000000000000:function:ValidateFunction"} {
		out, err := invoke(operator, fn, event)
		if err != nil || out.FunctionError != nil || !strings.Contains(string(out.Payload), `"search_id":"demo-cfo-andina"`) {
			t.Errorf("operator, %s: %v %s %s", fn, err, aws.ToString(out.FunctionError), out.Payload)
		}
	}
	if out, err := invoke(key(auth.KeySpec{Name: "person@default", Tenant: "default"}), "ValidateFunction", event); err != nil || out.FunctionError != nil {
		t.Errorf("the event's tenant's key: %v", err)
	}
	if _, err := invoke(key(auth.KeySpec{Name: "person@acme", Tenant: "acme"}), "ValidateFunction", event); lambdaErrorCode(err) != "AccessDeniedException" {
		t.Errorf("another tenant's key: %v, want AccessDeniedException", err)
	}
	// A function an event source invokes is no tenant's to invoke: this
	// SQS body, the default tenant's key's, would have run a chat turn in
	// acme's conversation under a made-up principal.
	turn := []byte(`{"tenant":"default","Records":[{"body":"{\"tenant\":\"acme\",\"chat_id\":\"c1\",\"turn\":1,\"message\":\"hola\",\"principal\":\"boss@acme\"}"}]}`)
	if _, err := invoke(key(auth.KeySpec{Name: "person@default", Tenant: "default"}), "ChatTurnFunction", turn); lambdaErrorCode(err) != "AccessDeniedException" {
		t.Errorf("a tenant's key invokes the chat's turns queue worker: %v, want AccessDeniedException", err)
	}
	out, err := invoke(operator, "CompanionCacheLookupFunction", []byte(`{"tenant":"default","application_id":"none","input_hash":"0","execution":{"name":"e-1"}}`))
	if err != nil || aws.ToString(out.FunctionError) != "Unhandled" || !strings.Contains(string(out.Payload), `"errorType":"NotFoundError"`) {
		t.Errorf("a function error: %v %s %s", err, aws.ToString(out.FunctionError), out.Payload)
	}
	var nf *lambdatypes.ResourceNotFoundException
	if _, err := invoke(operator, "Gem9Function", nil); !errors.As(err, &nf) {
		t.Errorf("an unknown function: %v, want ResourceNotFoundException", err)
	}
	forged := apitest.Lambda(hs.base, auth.Key{AccessKeyID: keyFor(t, data, auth.KeySpec{Name: "ana", Operator: true}).AccessKeyID, SecretAccessKey: "wrong"})
	if _, err := invoke(forged, "ValidateFunction", event); lambdaErrorCode(err) != auth.CodeInvalidSignature {
		t.Errorf("a bad signature: %v, want %s", err, auth.CodeInvalidSignature)
	}
	// The Step Functions API's key scope is "states", Lambda's "lambda":
	// a signature for one service is not one for the other.
	req, _ := http.NewRequest(http.MethodPost, hs.base+"/2015-03-31/functions/ValidateFunction/invocations", bytes.NewReader(event))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Amzn-ErrorType") != auth.CodeMissingAuthenticationToken {
		t.Errorf("unsigned: %d %s, want 403 %s", resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType"), auth.CodeMissingAuthenticationToken)
	}
}

// The walkthrough of examples/mock-config/README.md with the AWS CLI v1:
// its test cases through start-execution on ARN#TestCase, and a function
// through aws lambda invoke.
func TestServeMockConfigAWSCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: a Python AWS CLI process per call (6-12 s); make test-long runs it")
	}
	// Its own server and folder: it runs beside the other AWS CLI tests.
	t.Parallel()
	cli := findAWSCLI(t)
	ctx := context.Background()
	data := t.TempDir()
	hs := serveInProcess(ctx, t, app.ServerConfig{Data: data, MockConfig: filepath.Join(mockExample, "MockConfigFile.json")})
	cli.endpoint = hs.base
	op := keyFor(t, data, auth.KeySpec{Name: "ana", Operator: true})
	run := func(args ...string) (string, error) {
		return cli.text(op, filepath.Join("..", ".."), args[0], args[1:]...)
	}
	must := func(args ...string) string {
		t.Helper()
		out, err := run(args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	must("stepfunctions", "create-state-machine", "--name", "OrderIntake", "--definition", "file://examples/mock-config/order_intake.asl.json",
		"--role-arn", "arn:aws:iam::000000000000:role/local")
	for _, tc := range []string{"HappyPath", "RetryPath"} {
		must("stepfunctions", "start-execution", "--name", "cli-"+tc, "--state-machine-arn", orderIntakeARN+"#"+tc, "--input", "file://examples/mock-config/input.json")
		arn := "arn:aws:states:us-east-1:000000000000:execution:OrderIntake:cli-" + tc
		closedExecution(ctx, t, operatorSFN(t, hs.base, data), arn)
		out := must("stepfunctions", "describe-execution", "--execution-arn", arn, "--query", "[status,output]")
		if !strings.Contains(out, "SUCCEEDED") || !strings.Contains(out, `\"messageId\":\"a1b2c3d4-0000-4000-8000-000000000001\"`) {
			t.Errorf("%s: %s", tc, out)
		}
		types := must("stepfunctions", "get-execution-history", "--execution-arn", arn, "--query", "events[].type", "--output", "text")
		if want := map[string]int{"HappyPath": 0, "RetryPath": 2}[tc]; strings.Count(types, "TaskFailed") != want {
			t.Errorf("%s: %d TaskFailed in %s, want %d", tc, strings.Count(types, "TaskFailed"), types, want)
		}
	}
	if _, err := run("stepfunctions", "start-execution", "--state-machine-arn", orderIntakeARN+"#NoSuchCase"); err == nil || !strings.Contains(err.Error(), "StateMachineDoesNotExist") {
		t.Errorf("an unknown test case: %v", err)
	}
	outFile := filepath.Join(t.TempDir(), "out.json")
	res := must("lambda", "invoke", "--function-name", "CompanionCacheLookupFunction", "--payload", `{"tenant":"default","application_id":"none","input_hash":"0","execution":{"name":"e-1"}}`, outFile)
	body, _ := os.ReadFile(outFile)
	if !strings.Contains(res, `"FunctionError": "Unhandled"`) || !strings.Contains(string(body), `"errorType":"NotFoundError"`) {
		t.Errorf("aws lambda invoke: %s %s", res, body)
	}
	if _, err := run("lambda", "invoke", "--function-name", "Nope", outFile); err == nil || !strings.Contains(err.Error(), "ResourceNotFoundException") {
		t.Errorf("aws lambda invoke of an unknown function: %v", err)
	}
}

// --mock-config defaults to SFN_MOCK_CONFIG, as Step Functions Local reads
// it; --lambda-endpoint must be an http(s) URL.
func TestServeMockFlags(t *testing.T) {
	env := func(k string) string {
		if k == "SFN_MOCK_CONFIG" {
			return "/env/MockConfigFile.json"
		}
		return ""
	}
	tests := []struct {
		args           []string
		mock, endpoint string
		err            string
	}{
		{nil, "/env/MockConfigFile.json", "", ""},
		{[]string{"--mock-config", "mine.json", "--lambda-endpoint", "http://127.0.0.1:3001"}, "mine.json", "http://127.0.0.1:3001", ""},
		{[]string{"--lambda-endpoint", "127.0.0.1:3001"}, "", "", "--lambda-endpoint"},
		{[]string{"--lambda-endpoint", "ftp://h"}, "", "", "want an http:// or https:// URL"},
	}
	for _, tt := range tests {
		cfg, err := parseServe(tt.args, io.Discard, env)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%v: error %v, want one saying %q", tt.args, err, tt.err)
		case tt.err == "" && (err != nil || cfg.MockConfig != tt.mock || cfg.LambdaEndpoint != tt.endpoint):
			t.Errorf("%v: got %q %q %v, want %q %q", tt.args, cfg.MockConfig, cfg.LambdaEndpoint, err, tt.mock, tt.endpoint)
		}
	}
}
