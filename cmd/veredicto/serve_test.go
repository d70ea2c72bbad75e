package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/poll"
)

// sfnClient is a Step Functions client of the server on data at endpoint,
// signing with an operator's key.
func sfnClient(t testing.TB, endpoint, data string) *sfn.Client {
	return operatorSFN(t, endpoint, data)
}

// copyDir copies a folder tree (the example search into a data folder).
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// serveProcess is `veredicto serve` running as a subprocess.
type serveProcess struct {
	cmd *exec.Cmd
	log bytes.Buffer
}

func startServe(t testing.TB, bin, addr, data string, args ...string) *serveProcess {
	t.Helper()
	p := &serveProcess{}
	p.cmd = exec.Command(bin, append([]string{"serve", "--addr", addr, "--data", data, "--template", "../../template.yaml"}, args...)...)
	p.cmd.Env = append(os.Environ(), "OPENAI_API_KEY=")
	p.cmd.Stdout, p.cmd.Stderr = &p.log, &p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.kill() })
	var err error
	if !poll.Within(30*time.Second, func() bool {
		var resp *http.Response
		if resp, err = http.Get("http://" + addr + "/healthz"); err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}) {
		t.Fatalf("serve did not answer /healthz: %v\n%s", err, p.log.String())
	}
	return p
}

// buildCLI builds the CLI into a temporary folder.
func buildCLI(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "veredicto")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// kill is kill -9 of the server's PID.
func (p *serveProcess) kill() {
	if p.cmd.ProcessState == nil {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
}

func historyOf(t *testing.T, c *sfn.Client, arn string) []types.HistoryEvent {
	t.Helper()
	var all []types.HistoryEvent
	pg := sfn.NewGetExecutionHistoryPaginator(c, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), MaxResults: 100})
	for pg.HasMorePages() {
		page, err := pg.NextPage(context.Background())
		if err != nil {
			t.Fatalf("GetExecutionHistory: %v", err)
		}
		all = append(all, page.Events...)
	}
	return all
}

// waitForEvent polls the history until an event matches.
func waitForEvent(t *testing.T, c *sfn.Client, arn string, match func(types.HistoryEvent) bool) types.HistoryEvent {
	t.Helper()
	var (
		events  []types.HistoryEvent
		found   types.HistoryEvent
		matched bool
	)
	poll.Within(60*time.Second, func() bool {
		events = historyOf(t, c, arn)
		for _, ev := range events {
			if match(ev) {
				found, matched = ev, true
				return true
			}
		}
		// an execution that has ended will record nothing more
		return len(events) > 0 && strings.HasPrefix(string(events[len(events)-1].Type), "Execution") && events[len(events)-1].Type != types.HistoryEventTypeExecutionStarted
	})
	if !matched {
		var seen []string
		for _, ev := range events {
			seen = append(seen, string(ev.Type))
		}
		last, _ := json.Marshal(events[len(events)-1])
		t.Fatalf("no matching event in the history of %s: %s; last %s", arn, strings.Join(seen, " "), last)
	}
	return found
}

const durableDef = `{"StartAt":"Prepare","States":{
  "Prepare":{"Type":"Pass","Parameters":{"search_id":"demo-cfo-andina","input_prefix":"searches/demo-cfo-andina"},"ResultPath":"$.search","Next":"Check"},
  "Check":{"Type":"Task","Resource":"${ValidateFunctionArn}","Parameters":{"input.$":"$.search","execution.$":"$$.Execution.Name"},"ResultSelector":{"candidates.$":"$.candidates"},"ResultPath":"$.plan","Next":"Pause"},
  "Pause":{"Type":"Wait","Seconds":2,"Next":"Ask"},
  "Ask":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
         "Parameters":{"FunctionName":"ValidateFunction","Payload":{"input":{"search_id":"demo-cfo-andina","input_prefix":"searches/demo-cfo-andina"},"execution.$":"$$.Execution.Name","token.$":"$$.Task.Token"}},
         "ResultPath":"$.answer","Next":"Done"},
  "Done":{"Type":"Pass","End":true}}}`

// TestServeDurable kills the server (kill -9) during a Wait and again while
// a task token waits, restarts it on the same data each time, resolves the
// token and checks the execution succeeded with each state entered once and
// the completed Task invoked once.
func TestServeDurable(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: builds the CLI and kills and restarts it as a subprocess; make test-long runs it")
	}
	tmp := t.TempDir()
	bin := buildCLI(t)
	data := filepath.Join(tmp, "data")
	copyDir(t, "../../examples/search-demo", filepath.Join(data, "inputs", "searches", "demo-cfo-andina"))
	addr := freeAddr(t)
	c := sfnClient(t, "http://"+addr, data)
	ctx := context.Background()

	srv := startServe(t, bin, addr, data)
	list, err := c.ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, sm := range list.StateMachines {
		names = append(names, aws.ToString(sm.Name))
	}
	if got := strings.Join(names, " "); got != "CareerCompanionStateMachine DebateStateMachine ExecutiveSearchStateMachine GatesDemoStateMachine" {
		t.Errorf("template machines %s", got)
	}
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("Durable"), Definition: aws.String(durableDef), RoleArn: aws.String("arn:aws:iam::000000000000:role/x")})
	if err != nil {
		t.Fatal(err)
	}
	x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Name: aws.String("d1"), Input: aws.String(`{"tenant":"acme"}`)})
	if err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(x.ExecutionArn)
	waitForEvent(t, c, arn, func(ev types.HistoryEvent) bool { return ev.Type == types.HistoryEventTypeWaitStateEntered })
	srv.kill()

	srv = startServe(t, bin, addr, data)
	scheduled := waitForEvent(t, c, arn, func(ev types.HistoryEvent) bool { return ev.Type == types.HistoryEventTypeTaskScheduled })
	var params struct { // the resolved Parameters, as Step Functions records them
		FunctionName string
		Payload      struct {
			Token string `json:"token"`
		}
	}
	if err := json.Unmarshal([]byte(aws.ToString(scheduled.TaskScheduledEventDetails.Parameters)), &params); err != nil || params.Payload.Token == "" || params.FunctionName == "" {
		t.Fatalf("no token in the TaskScheduled parameters %s: %v", aws.ToString(scheduled.TaskScheduledEventDetails.Parameters), err)
	}
	srv.kill()

	srv = startServe(t, bin, addr, data)
	defer srv.kill()
	if _, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(params.Payload.Token), Output: aws.String(`{"approved":true}`)}); err != nil {
		t.Fatalf("SendTaskSuccess after two restarts: %v\n%s", err, srv.log.String())
	}
	var out *sfn.DescribeExecutionOutput
	poll.Within(60*time.Second, func() bool { // the check below names the status
		out, err = c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		if err != nil {
			t.Fatal(err)
		}
		return out.Status != types.ExecutionStatusRunning
	})
	if out.Status != types.ExecutionStatusSucceeded {
		t.Fatalf("status %s (%s: %s)", out.Status, aws.ToString(out.Error), aws.ToString(out.Cause))
	}
	if !strings.Contains(aws.ToString(out.Output), `"answer":{"approved":true}`) || !strings.Contains(aws.ToString(out.Output), `"c-001"`) {
		t.Errorf("output %s", aws.ToString(out.Output))
	}
	events := historyOf(t, c, arn)
	var entered []string
	count := map[types.HistoryEventType]int{}
	for i, ev := range events {
		if ev.Id != int64(i+1) {
			t.Errorf("event %d has id %d: lost or duplicated events", i+1, ev.Id)
		}
		count[ev.Type]++
		if ev.StateEnteredEventDetails != nil {
			entered = append(entered, aws.ToString(ev.StateEnteredEventDetails.Name))
		}
	}
	if got, want := strings.Join(entered, " "), "Prepare Check Pause Ask Done"; got != want {
		t.Errorf("states entered %s, want each once: %s", got, want)
	}
	for typ, want := range map[types.HistoryEventType]int{
		types.HistoryEventTypeExecutionStarted: 1, types.HistoryEventTypeLambdaFunctionScheduled: 1, types.HistoryEventTypeLambdaFunctionSucceeded: 1,
		types.HistoryEventTypeTaskScheduled: 1, types.HistoryEventTypeTaskSucceeded: 1, types.HistoryEventTypeExecutionSucceeded: 1,
	} {
		if count[typ] != want {
			t.Errorf("%d %s events, want %d", count[typ], typ, want)
		}
	}
}

// TestServeAWSCLI drives the server with the AWS CLI (v1 of the image, or
// any aws on the PATH that honours AWS_DISABLE_HOST_PREFIX_INJECTION).
func TestServeAWSCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: a Python AWS CLI process per call (6-12 s); make test-long runs it")
	}
	// Its own server and folder: it runs beside the other AWS CLI tests.
	t.Parallel()
	cli := findAWSCLI(t)
	tokens := make(chan string, 4)
	notify := asl.Handler(func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		var p struct{ Token string }
		json.Unmarshal(in, &p)
		tokens <- p.Token
		return nil, nil
	})
	ctx := context.Background()
	data := t.TempDir()
	hs := serveInProcess(ctx, t, app.ServerConfig{Data: data,
		Functions: map[string]asl.Handler{"NotifyFunction": notify}})
	cli.endpoint = hs.base
	op := keyFor(t, data, auth.KeySpec{Name: "ana", Operator: true})
	runAs := cli.run
	run := func(args ...string) (map[string]any, error) { return runAs(op, args...) }
	must := func(args ...string) map[string]any {
		t.Helper()
		out, err := run(args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	def := `{"StartAt":"Ask","States":{"Ask":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
	  "Parameters":{"FunctionName":"NotifyFunction","Payload":{"token.$":"$$.Task.Token"}},"End":true}}}`
	sm := must("create-state-machine", "--name", "Cli", "--definition", def, "--role-arn", "arn:aws:iam::000000000000:role/x")
	smARN, _ := sm["stateMachineArn"].(string)
	x := must("start-execution", "--state-machine-arn", smARN, "--name", "c1", "--input", `{"tenant":"t1"}`)
	arn, _ := x["executionArn"].(string)
	token := func() string {
		t.Helper()
		select {
		case tok := <-tokens:
			return tok
		case <-time.After(30 * time.Second):
			t.Fatal("no task token reached the handler")
			return ""
		}
	}
	must("send-task-success", "--task-token", token(), "--task-output", `{"done":true}`)
	var d map[string]any
	poll.Within(30*time.Second, func() bool { // the check below names the status
		d = must("describe-execution", "--execution-arn", arn)
		return d["status"] != "RUNNING"
	})
	if d["status"] != "SUCCEEDED" || d["output"] != `{"done":true}` {
		t.Errorf("describe-execution: %v", d)
	}
	h := must("get-execution-history", "--execution-arn", arn)
	evs, _ := h["events"].([]any)
	var types []string
	for _, e := range evs {
		m, _ := e.(map[string]any)
		types = append(types, fmt.Sprint(m["type"]))
	}
	if got, want := strings.Join(types, " "), "ExecutionStarted TaskStateEntered TaskScheduled TaskStarted TaskSubmitted TaskSucceeded TaskStateExited ExecutionSucceeded"; got != want {
		t.Errorf("get-execution-history:\n %s\nwant\n %s", got, want)
	}
	// stop a second execution while it waits
	y := must("start-execution", "--state-machine-arn", smARN, "--name", "c2")
	token()
	yarn, _ := y["executionArn"].(string)
	must("stop-execution", "--execution-arn", yarn, "--error", "Operator", "--cause", "enough")
	if d := must("describe-execution", "--execution-arn", yarn); d["status"] != "ABORTED" || d["error"] != "Operator" {
		t.Errorf("after stop-execution: %v", d)
	}
	ts := must("test-state", "--definition", `{"Type":"Pass","Result":{"a":1},"Next":"N"}`, "--role-arn", "arn:aws:iam::000000000000:role/x", "--input", `{}`)
	if ts["status"] != "SUCCEEDED" || ts["output"] != `{"a":1}` || ts["nextState"] != "N" {
		t.Errorf("test-state: %v", ts)
	}
	ls := must("list-executions", "--state-machine-arn", smARN)
	if execs, _ := ls["executions"].([]any); len(execs) != 2 {
		t.Errorf("list-executions: %v", ls)
	}
	for _, tt := range []struct {
		args []string
		code string
	}{
		{[]string{"describe-execution", "--execution-arn", "bad"}, "InvalidArn"},
		{[]string{"describe-state-machine", "--state-machine-arn", smARN + "Nope"}, "StateMachineDoesNotExist"},
		{[]string{"send-task-success", "--task-token", "bad", "--task-output", "{}"}, "InvalidToken"},
		{[]string{"start-execution", "--state-machine-arn", smARN, "--name", "c1", "--input", `{"other":1}`}, "ExecutionAlreadyExists"},
		{[]string{"create-state-machine", "--name", "Broken", "--definition", `{"StartAt":"X","States":{}}`, "--role-arn", "arn:aws:iam::000000000000:role/x"}, "InvalidDefinition"},
	} {
		_, err := run(tt.args...)
		if err == nil || !regexp.MustCompile(`\(`+tt.code+`\)`).MatchString(err.Error()) {
			t.Errorf("aws %s: %v, want (%s)", tt.args[0], err, tt.code)
		}
	}

	// Tenants' keys, through the same CLI: t1 works on its own execution;
	// t2 sees it exactly as a missing one; neither manages machines; no
	// signature, or a key this server never issued, is refused.
	t1 := keyFor(t, data, auth.KeySpec{Name: "ana", Tenant: "t1"})
	t2 := keyFor(t, data, auth.KeySpec{Name: "bea", Tenant: "t2"})
	own, err := runAs(t1, "describe-execution", "--execution-arn", arn)
	if err != nil || own["status"] != "SUCCEEDED" {
		t.Errorf("t1 describes its execution: %v %v", own, err)
	}
	_, other := runAs(t2, "describe-execution", "--execution-arn", arn)
	_, missing := runAs(t2, "describe-execution", "--execution-arn", strings.Replace(arn, ":c1", ":nobody", 1))
	if other == nil || !strings.Contains(other.Error(), "(ExecutionDoesNotExist)") ||
		strings.Replace(other.Error(), ":c1", ":nobody", -1) != missing.Error() {
		t.Errorf("t2 describes t1's execution: %v; a missing one: %v", other, missing)
	}
	if _, err := runAs(t1, "delete-state-machine", "--state-machine-arn", smARN); err == nil || !strings.Contains(err.Error(), "(AccessDeniedException)") {
		t.Errorf("a tenant deletes a state machine: %v", err)
	}
	if _, err := runAs(t1, "start-execution", "--state-machine-arn", smARN, "--name", "t1-other", "--input", `{"tenant":"t2"}`); err == nil ||
		!strings.Contains(err.Error(), "(InvalidExecutionInput)") {
		t.Errorf("t1 starts an execution for t2: %v", err)
	}
	if _, err := run("list-state-machines", "--no-sign-request"); err == nil || !strings.Contains(err.Error(), "(MissingAuthenticationTokenException)") {
		t.Errorf("unsigned: %v", err)
	}
	stranger := auth.Key{AccessKeyID: "VKIASTRANGERSTRANGER", SecretAccessKey: strings.Repeat("s", 40)}
	if _, err := runAs(stranger, "list-state-machines"); err == nil || !strings.Contains(err.Error(), "(UnrecognizedClientException)") {
		t.Errorf("an unknown key: %v", err)
	}
}
