package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"
)

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) Latencies {
		var l Latencies
		for _, n := range ns {
			l = append(l, time.Duration(n)*time.Millisecond)
		}
		return l
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // 100 … 1, unsorted
	}
	for _, c := range []struct {
		l    Latencies
		p    float64
		want time.Duration
	}{
		{nil, 50, 0},
		{ms(7), 99, 7 * time.Millisecond},
		{ms(3, 1, 2), 50, 2 * time.Millisecond},
		{ms(4, 1, 3, 2), 50, 2 * time.Millisecond}, // nearest rank: the 2nd of 4
		{ms(hundred...), 99, 99 * time.Millisecond},
		{ms(hundred...), 100, 100 * time.Millisecond},
		{ms(hundred...), 0.5, time.Millisecond},
	} {
		if got := c.l.Percentile(c.p); got != c.want {
			t.Errorf("Percentile(%v) of %v = %v, want %v", c.p, c.l, got, c.want)
		}
	}
	s := ms(hundred...).Summarize()
	if s.N != 100 || s.P50 != 50*time.Millisecond || s.P90 != 90*time.Millisecond || s.P99 != 99*time.Millisecond || s.Max != 100*time.Millisecond {
		t.Errorf("Summarize = %+v", s)
	}
	if (Latencies{}).Summarize() != (Summary{}) {
		t.Error("Summarize of nothing is not zero")
	}
}

func TestRates(t *testing.T) {
	if got := PerSecond(1300, 2*time.Second); got != 650 {
		t.Errorf("PerSecond = %v", got)
	}
	if got := PerSecond(5, 0); got != 0 {
		t.Errorf("PerSecond over no time = %v", got)
	}
	r := Report{Started: 600, Window: 2 * time.Second, Completed: 540, Failed: 60, Drained: 3 * time.Second, CompletedInWindow: 400}
	if r.StartsPerSecond() != 300 || r.CompletionsPerSecond() != 180 {
		t.Errorf("starts %v/s, completions %v/s; want 300 and 180 (a failed execution is no completion)", r.StartsPerSecond(), r.CompletionsPerSecond())
	}
	r.Drained = 0 // never drained: those closed within the window
	if r.CompletionsPerSecond() != 200 {
		t.Errorf("completions without a drain %v/s, want 200", r.CompletionsPerSecond())
	}
}

func TestParseProc(t *testing.T) {
	// the command name holds a space and a parenthesis
	stat := []byte("4242 (vere dicto) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 75 0 0 20 0 12 0 100 0 0\n")
	user, sys, err := parseStat(stat)
	if err != nil || user != 2500*time.Millisecond || sys != 750*time.Millisecond {
		t.Errorf("parseStat = %v %v %v, want 2.5s 750ms", user, sys, err)
	}
	if _, _, err := parseStat([]byte("4242 (x) S 1")); err == nil {
		t.Error("a short stat line parsed")
	}
	rss, peak, threads := parseStatus([]byte("Name:\tveredicto\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\nThreads:\t12\n"))
	if rss != 100<<20 || peak != 200<<20 || threads != 12 {
		t.Errorf("parseStatus = %d %d %d", rss, peak, threads)
	}
	a, err := parseCPULine("cpu  100 0 50 800 50 0 0 0 0 0")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := parseCPULine("cpu  300 0 150 1300 50 0 0 200 0 0")
	busy, steal := machineBetween(a, b)
	if busy != 0.5 || steal != 0.2 {
		t.Errorf("busy %v steal %v, want 0.5 and 0.2", busy, steal)
	}
	if _, err := parseCPULine("cpu0 1 2 3"); err == nil {
		t.Error("a per-CPU line parsed as the aggregate")
	}
}

func TestPassChain(t *testing.T) {
	var sm struct {
		StartAt string
		States  map[string]struct {
			Type, Next string
			End        bool
		}
	}
	if err := json.Unmarshal([]byte(PassChain(5)), &sm); err != nil {
		t.Fatal(err)
	}
	at, n := sm.StartAt, 0
	for ; at != ""; n++ {
		st := sm.States[at]
		if st.Type != "Pass" || st.End == (st.Next != "") {
			t.Fatalf("state %s: %+v", at, st)
		}
		at = st.Next
	}
	if n != 5 || len(sm.States) != 5 {
		t.Errorf("a chain of %d states (%d defined), want 5", n, len(sm.States))
	}
}

// fakeSFN answers as serve would, without a server: every start succeeds
// but each seventh, which is throttled; the executions it started are
// SUCCEEDED.
type fakeSFN struct {
	mu      sync.Mutex
	started []string
	calls   int
}

var _ API = (*fakeSFN)(nil)

func (f *fakeSFN) CreateStateMachine(_ context.Context, in *sfn.CreateStateMachineInput, _ ...func(*sfn.Options)) (*sfn.CreateStateMachineOutput, error) {
	return &sfn.CreateStateMachineOutput{StateMachineArn: aws.String("arn:aws:states:us-east-1:000000000000:stateMachine:" + aws.ToString(in.Name))}, nil
}

func (f *fakeSFN) StartExecution(_ context.Context, in *sfn.StartExecutionInput, _ ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.calls%7 == 0 {
		return nil, &smithy.GenericAPIError{Code: "ThrottlingException", Message: "slow down"}
	}
	f.started = append(f.started, aws.ToString(in.Name))
	return &sfn.StartExecutionOutput{ExecutionArn: aws.String("arn:x:" + aws.ToString(in.Name))}, nil
}

func (f *fakeSFN) ListExecutions(_ context.Context, in *sfn.ListExecutionsInput, _ ...func(*sfn.Options)) (*sfn.ListExecutionsOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := &sfn.ListExecutionsOutput{}
	if in.StatusFilter == types.ExecutionStatusRunning {
		return out, nil
	}
	from := 0
	if in.NextToken != nil {
		fmt.Sscan(aws.ToString(in.NextToken), &from)
	}
	to := min(len(f.started), from+int(in.MaxResults))
	for _, name := range f.started[from:to] {
		out.Executions = append(out.Executions, types.ExecutionListItem{Name: aws.String(name), Status: types.ExecutionStatusSucceeded})
	}
	out.Executions = append(out.Executions, types.ExecutionListItem{Name: aws.String("other-run-1"), Status: types.ExecutionStatusFailed})
	if to < len(f.started) {
		out.NextToken = aws.String(fmt.Sprint(to))
	}
	return out, nil
}

// TestRunCounts: a run counts what was answered and refused, by code,
// calls OnStart for each, and counts its own executions' completions
// (not another run's) through the listing.
func TestRunCounts(t *testing.T) {
	f := &fakeSFN{}
	var mu sync.Mutex
	acked := map[string]bool{}
	r, err := Run(context.Background(), Config{Client: f, Machine: "LoadPass5", Definition: PassChain(5), Prefix: "run",
		Workers: 4, Count: 2100, Drain: time.Minute, Poll: time.Millisecond,
		OnStart: func(name, arn string, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				acked[name] = true
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Started != 1800 || r.Refused["ThrottlingException"] != 300 || len(acked) != 1800 {
		t.Errorf("started %d, refused %v, acknowledged %d; want 1800, 300 throttled, 1800", r.Started, r.Refused, len(acked))
	}
	if r.Completed != 1800 || r.Failed != 0 || r.Running != 0 || r.Drained <= 0 || r.Latency.N != 1800 {
		t.Errorf("report %+v", r)
	}
	var out strings.Builder
	r.Write(&out)
	if !strings.Contains(out.String(), "1800 answered") || !strings.Contains(out.String(), "300 ThrottlingException") {
		t.Errorf("report text:\n%s", out.String())
	}
}

// slowSFN answers every start after delay, or, from the stall-th start
// on, once after stallFor.
type slowSFN struct {
	fakeSFN
	delay, stallFor time.Duration
	stall           int
	n               int
}

func (f *slowSFN) StartExecution(ctx context.Context, in *sfn.StartExecutionInput, o ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
	f.mu.Lock()
	f.n++
	stalls := f.stall > 0 && f.n == f.stall
	f.mu.Unlock()
	time.Sleep(f.delay)
	if stalls {
		time.Sleep(f.stallFor)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = append(f.started, aws.ToString(in.Name))
	return &sfn.StartExecutionOutput{ExecutionArn: aws.String("arn:x:" + aws.ToString(in.Name))}, nil
}

// TestResponseCountsTheQueue: one worker that takes 10 ms a start cannot
// keep 1 000/s; each start's service latency stays 10 ms, but a client on
// the schedule waits for all those queued before it, and the response
// latency says so.
func TestResponseCountsTheQueue(t *testing.T) {
	r, err := Run(context.Background(), Config{Client: &slowSFN{delay: 10 * time.Millisecond}, Machine: "M", Definition: PassChain(1),
		Prefix: "q", Workers: 1, Rate: 1000, Count: 50})
	if err != nil {
		t.Fatal(err)
	}
	if r.Latency.P99 > 300*time.Millisecond || r.Response.P99 < 400*time.Millisecond || r.Response.N != 50 {
		t.Errorf("latency p99 %v, response p99 %v (%d): want the service near 10 ms and the response past 400 ms", r.Latency.P99, r.Response.P99, r.Response.N)
	}
	var out strings.Builder
	r.Write(&out)
	if !strings.Contains(out.String(), "response      p50") {
		t.Errorf("report text without the response latency:\n%s", out.String())
	}
}

// TestSlowestSecondShowsAStall: a stall of over two seconds (so a whole
// second has no answer, wherever it falls) in the middle of a run
// that then catches up keeps the average near the target, and the
// slowest full second shows the stall.
func TestSlowestSecondShowsAStall(t *testing.T) {
	r, err := Run(context.Background(), Config{Client: &slowSFN{stall: 250, stallFor: 2200 * time.Millisecond}, Machine: "M", Definition: PassChain(1),
		Prefix: "s", Workers: 1, Rate: 500, Count: 1750})
	if err != nil {
		t.Fatal(err)
	}
	slowest, secs := r.SlowestSecond()
	if secs < 2 || slowest > 100 || r.StartsPerSecond() < 300 {
		t.Errorf("slowest second %d of %d, average %.0f/s: want the stall's empty second and an average near 500", slowest, secs, r.StartsPerSecond())
	}
	if r, want := (Report{Seconds: []int{500, 480, 20}}), 480; func() int { n, _ := r.SlowestSecond(); return n }() != want {
		t.Errorf("SlowestSecond counts the last, partial second")
	}
}

// TestScheduleNeverWaitsForNothing: at 0.1 starts a second for 5 s, the
// one start due is handed out and the schedule ends at once, not after
// the 10 s the next start would have waited for; a cancelled run stops a
// wait at once too.
func TestScheduleNeverWaitsForNothing(t *testing.T) {
	run := func(ctx context.Context, cfg Config) (int, time.Duration) {
		jobs := make(chan job, 10)
		start := time.Now()
		schedule(ctx, cfg, start, jobs)
		n := 0
		for range jobs {
			n++
		}
		return n, time.Since(start)
	}
	if n, took := run(context.Background(), Config{Rate: 0.1, Duration: 5 * time.Second}); n != 1 || took > 2*time.Second {
		t.Errorf("0.1/s for 5 s: %d starts in %v; want 1, at once", n, took)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if n, took := run(ctx, Config{Rate: 0.1, Count: 3}); n != 1 || took > 2*time.Second {
		t.Errorf("cancelled while waiting for the second start: %d starts in %v; want 1, stopped at once", n, took)
	}
}
