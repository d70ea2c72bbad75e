package main

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/loadgen"
	"github.com/veredicto/veredicto/internal/poll"
	"github.com/veredicto/veredicto/internal/sdkhttp"
)

// TestServeKilledDuringABurst sends StartExecution at AWS's burst rate
// (1 300/s) through the signed API, kills the server (kill -9) in the
// middle of it, starts it again on the same data folder and checks that
// every start it acknowledged is there, once, and completes with a whole
// history; a start sent again with the same name and input (as a client
// that got no answer does) starts nothing twice.
func TestServeKilledDuringABurst(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: builds the CLI, drives a burst at it and kills it as a subprocess; make test-long runs it")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "veredicto")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	data := filepath.Join(tmp, "data")
	addr := freeAddr(t)
	endpoint := "http://" + addr
	srv := startServe(t, bin, addr, data)
	k := keyFor(t, data, auth.KeySpec{Name: "burst", Operator: true})
	c := loadgen.NewClient(endpoint, "us-east-1", credentials.NewStaticCredentialsProvider(k.AccessKeyID, k.SecretAccessKey, ""), 64)

	const input = `{"tenant":"burst"}`
	var (
		mu      sync.Mutex
		acked   = map[string]string{} // name → ARN
		unknown []string              // sent, no answer: the client cannot tell
	)
	burst, stop := context.WithCancel(context.Background())
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		poll.Within(20*time.Second, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(acked) >= 1000
		})
		srv.kill() // kill -9, mid-burst
		stop()     // and no more starts: those under way get no answer
	}()
	report, err := loadgen.Run(burst, loadgen.Config{Client: c, Machine: "Burst", Definition: loadgen.PassChain(5),
		Input: input, Prefix: "b", Workers: 64, Rate: 1300, Duration: 20 * time.Second,
		OnStart: func(name, arn string, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				acked[name] = arn
			} else {
				unknown = append(unknown, name)
			}
		}})
	<-killed
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("before the kill: %d starts acknowledged, %d without an answer (%v), p99 %v", len(acked), len(unknown), report.Refused, report.Latency.P99)
	if len(acked) == 0 {
		t.Fatalf("no start was acknowledged before the kill:\n%s", srv.log.String())
	}

	srv = startServe(t, bin, addr, data)
	defer srv.kill()
	// From here on the checks go through a new client that retries as the
	// SDK does by default: the load generator's never retries (it counts
	// failures), and its pool still holds connections the kill broke,
	// which are not the restarted server's answers.
	c = sfn.New(c.Options(), func(o *sfn.Options) {
		o.Retryer = retry.NewStandard()
		o.HTTPClient = sdkhttp.New()
	})
	ctx := context.Background()
	smARN := "arn:aws:states:us-east-1:000000000000:stateMachine:Burst"
	// a client that got no answer sends its start again
	again := 0
	for _, name := range unknown {
		_, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smARN), Name: aws.String(name), Input: aws.String(input)})
		var exists *types.ExecutionAlreadyExists
		switch {
		case err == nil:
			again++
		case errors.As(err, &exists): // it had been started, and has ended
		default:
			t.Fatalf("start %s sent again: %v", name, err)
		}
	}
	// so does one that got its answer: the execution exists, it is not started again
	for name := range acked {
		_, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smARN), Name: aws.String(name), Input: aws.String(input)})
		var exists *types.ExecutionAlreadyExists
		if err != nil && !errors.As(err, &exists) {
			t.Fatalf("acknowledged start %s sent again: %v", name, err)
		}
		break
	}

	var listed []types.ExecutionListItem
	poll.Until(t, 2*time.Minute, func() bool {
		listed = listAll(t, c, smARN)
		for _, x := range listed {
			if x.Status == types.ExecutionStatusRunning {
				return false
			}
		}
		return true
	}, "every execution closed after the restart")
	seen := map[string]int{}
	for _, x := range listed {
		seen[aws.ToString(x.Name)]++
		if x.Status != types.ExecutionStatusSucceeded {
			t.Errorf("%s is %s", aws.ToString(x.Name), x.Status)
		}
	}
	for name, n := range seen {
		if n != 1 {
			t.Errorf("%s listed %d times", name, n)
		}
	}
	var lost []string
	for name, arn := range acked {
		if seen[name] != 1 {
			lost = append(lost, name)
			continue
		}
		assertWholeHistory(t, c, arn)
	}
	sort.Strings(lost)
	if len(lost) > 0 {
		t.Fatalf("%d acknowledged starts lost by the kill: %v", len(lost), lost[:min(len(lost), 10)])
	}
	if len(seen) > len(acked)+len(unknown) {
		t.Errorf("%d executions listed, more than the %d starts sent", len(seen), len(acked)+len(unknown))
	}
	t.Logf("after the restart: %d executions, each SUCCEEDED once; of the %d unanswered starts sent again, %d were answered with their execution, the others had ended (ExecutionAlreadyExists)", len(seen), len(unknown), again)
}

func listAll(t *testing.T, c *sfn.Client, smARN string) []types.ExecutionListItem {
	t.Helper()
	var out []types.ExecutionListItem
	p := sfn.NewListExecutionsPaginator(c, &sfn.ListExecutionsInput{StateMachineArn: aws.String(smARN), MaxResults: 1000})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("ListExecutions: %v", err)
		}
		out = append(out, page.Executions...)
	}
	return out
}

// assertWholeHistory checks a 5-state Pass chain's history: its events
// numbered 1 to 12, started and succeeded once.
func assertWholeHistory(t *testing.T, c *sfn.Client, arn string) {
	t.Helper()
	events := historyOf(t, c, arn)
	count := map[types.HistoryEventType]int{}
	for i, ev := range events {
		if ev.Id != int64(i+1) {
			t.Errorf("%s: event %d has id %d", arn, i+1, ev.Id)
			return
		}
		count[ev.Type]++
	}
	if len(events) != 12 || count[types.HistoryEventTypeExecutionStarted] != 1 || count[types.HistoryEventTypeExecutionSucceeded] != 1 {
		t.Errorf("%s: %d events (%v), want 12, started and succeeded once", arn, len(events), count)
	}
}
