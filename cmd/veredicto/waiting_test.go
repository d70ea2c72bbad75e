package main

import (
	"bytes"
	"context"
	"encoding/json"
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
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/poll"
)

// Executions that wait, for the tests and the soak of parked executions
// (internal/control/park.go): napDef waits a day; askDef waits on a token
// its Task hands to AskFunction, served by a tokenEndpoint.
const (
	napDef = `{"StartAt":"Prepare","States":{
	  "Prepare":{"Type":"Pass","Result":"ready","ResultPath":"$.prepared","Next":"Nap"},
	  "Nap":{"Type":"Wait","Seconds":86400,"Next":"Done"},
	  "Done":{"Type":"Pass","End":true}}}`
	askDef = `{"StartAt":"Prepare","States":{
	  "Prepare":{"Type":"Pass","Result":"ready","ResultPath":"$.prepared","Next":"Ask"},
	  "Ask":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","TimeoutSeconds":604800,
	    "Parameters":{"FunctionName":"AskFunction","Payload":{"token.$":"$$.Task.Token","execution.$":"$$.Execution.Id"}},
	    "ResultPath":"$.answer","Next":"Done"},
	  "Done":{"Type":"Pass","End":true}}}`
)

// tokenEndpoint is a Lambda endpoint (serve --lambda-endpoint) whose
// AskFunction keeps the task tokens it is handed, by execution.
type tokenEndpoint struct {
	url string
	srv *httptest.Server

	mu     sync.Mutex
	tokens map[string]string // execution ARN → token
	asked  int               // invocations, repeats included
}

func startTokenEndpoint(t testing.TB) *tokenEndpoint {
	t.Helper()
	ep := &tokenEndpoint{tokens: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc(httpapi.LambdaInvokeRoute, func(w http.ResponseWriter, r *http.Request) {
		var p struct{ Token, Execution string }
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil || p.Token == "" {
			http.Error(w, "no token", http.StatusBadRequest)
			return
		}
		ep.mu.Lock()
		ep.tokens[p.Execution] = p.Token
		ep.asked++
		ep.mu.Unlock()
		io.WriteString(w, "null")
	})
	ep.srv = httptest.NewServer(mux)
	t.Cleanup(ep.srv.Close)
	ep.url = ep.srv.URL
	return ep
}

// closeConnections closes the server's connections to the endpoint.
func (ep *tokenEndpoint) closeConnections() { ep.srv.CloseClientConnections() }

// handed returns the tokens handed out so far and how often AskFunction
// was invoked.
func (ep *tokenEndpoint) handed() (map[string]string, int) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	out := make(map[string]string, len(ep.tokens))
	for k, v := range ep.tokens {
		out[k] = v
	}
	return out, ep.asked
}

// createMachine creates a state machine through the API and returns its ARN.
func createMachine(t testing.TB, c *sfn.Client, name, def string) string {
	t.Helper()
	out, err := c.CreateStateMachine(context.Background(), &sfn.CreateStateMachineInput{Name: aws.String(name), Definition: aws.String(def),
		RoleArn: aws.String("arn:aws:iam::000000000000:role/x")})
	if err != nil {
		t.Fatalf("CreateStateMachine %s: %v", name, err)
	}
	return aws.ToString(out.StateMachineArn)
}

// parkedOnDisk counts the executions of machine under data whose history
// ends with a park line: parked, nothing recorded since.
func parkedOnDisk(t testing.TB, data, machine string) int {
	t.Helper()
	dir := filepath.Join(data, "sfn", "executions", machine)
	names, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, d := range names {
		b, err := os.ReadFile(filepath.Join(dir, d.Name(), "history.jsonl"))
		if err != nil {
			continue
		}
		lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
		if bytes.HasPrefix(lines[len(lines)-1], []byte(`{"parked":`)) {
			n++
		}
	}
	return n
}

// listRunning lists the RUNNING executions of a machine, every page.
func listRunning(t testing.TB, c *sfn.Client, smARN string) int {
	t.Helper()
	n := 0
	pg := sfn.NewListExecutionsPaginator(c, &sfn.ListExecutionsInput{StateMachineArn: aws.String(smARN), StatusFilter: types.ExecutionStatusRunning, MaxResults: 1000})
	for pg.HasMorePages() {
		page, err := pg.NextPage(context.Background())
		if err != nil {
			t.Fatalf("ListExecutions: %v", err)
		}
		n += len(page.Executions)
	}
	return n
}

// TestServeParkedExecutionsSurviveKill9 parks executions waiting in a Wait
// state and on task tokens, kills the server (kill -9) and restarts it on
// the same data: they are indexed, not replayed, still waiting; their
// tokens complete them, without their Task's function invoked again; a
// parked Wait is stopped.
func TestServeParkedExecutionsSurviveKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: builds the CLI and kills and restarts it as a subprocess; make test-long runs it")
	}
	const n = 10
	ctx := context.Background()
	ep := startTokenEndpoint(t)
	bin := buildCLI(t)
	data := filepath.Join(t.TempDir(), "data")
	addr := freeAddr(t)
	c := sfnClient(t, "http://"+addr, data)
	srv := startServe(t, bin, addr, data, "--lambda-endpoint", ep.url)
	napARN, askARN := createMachine(t, c, "Nap", napDef), createMachine(t, c, "Ask", askDef)
	for i := range n {
		for _, sm := range []string{napARN, askARN} {
			if _, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm), Name: aws.String(fmt.Sprintf("x%d", i)),
				Input: aws.String(`{"tenant":"acme"}`)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	poll.Until(t, 60*time.Second, func() bool { return parkedOnDisk(t, data, "Nap")+parkedOnDisk(t, data, "Ask") == 2*n }, "every execution to park")
	tokens, asked := ep.handed()
	if len(tokens) != n {
		t.Fatalf("%d tokens handed out, want %d", len(tokens), n)
	}
	srv.kill()

	srv = startServe(t, bin, addr, data, "--lambda-endpoint", ep.url)
	if got := listRunning(t, c, napARN) + listRunning(t, c, askARN); got != 2*n {
		t.Errorf("%d executions RUNNING after the restart, want %d", got, 2*n)
	}
	for arn, tok := range tokens {
		if _, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tok), Output: aws.String(`{"ok":true}`)}); err != nil {
			t.Fatalf("SendTaskSuccess to %s after kill -9: %v", arn, err)
		}
	}
	for arn := range tokens {
		var out *sfn.DescribeExecutionOutput
		poll.Within(30*time.Second, func() bool { // the check below names the status
			var err error
			if out, err = c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)}); err != nil {
				t.Fatal(err)
			}
			return out.Status != types.ExecutionStatusRunning
		})
		if out.Status != types.ExecutionStatusSucceeded || !strings.Contains(aws.ToString(out.Output), `"answer":{"ok":true}`) {
			t.Errorf("%s: %s %s", arn, out.Status, aws.ToString(out.Output))
		}
	}
	if _, again := ep.handed(); again != asked {
		t.Errorf("AskFunction invoked %d times, want %d: a parked Task's function was invoked again", again, asked)
	}
	nap := strings.Replace(askARN, ":stateMachine:Ask", ":execution:Nap:x0", 1)
	if _, err := c.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: aws.String(nap), Error: aws.String("Soak.Stop")}); err != nil {
		t.Fatal(err)
	}
	if out, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(nap)}); err != nil || out.Status != types.ExecutionStatusAborted {
		t.Errorf("the stopped Wait: %+v %v", out, err)
	}
	if got := listRunning(t, c, napARN); got != n-1 {
		t.Errorf("%d Waits RUNNING, want %d", got, n-1)
	}
	srv.kill()
	if log := srv.log.String(); strings.Contains(log, "resuming execution") {
		t.Errorf("the restart replayed parked executions:\n%s", log)
	}
}
