// Package loadgen drives the Step Functions API of `veredicto serve` as a
// client would: StartExecution calls signed with SigV4 through the Go
// SDK's sfn client, from N workers, at a target rate or as fast as they
// go, for a duration. It reports the starts answered per second and their
// latency (p50, p90, p99, max), how fast the started executions completed,
// and the CPU and memory the server (from /proc/<pid>), the generator and
// the whole machine used meanwhile: on a shared 2-core machine a figure
// means little without the load beside it.
//
// Completions are counted without a DescribeExecution per execution
// (which would double the load it measures): once the starts stop, the
// started executions still RUNNING are listed (ListExecutions with a
// status filter, which pages only through those) until none is left; at
// the end one listing of the machine's executions counts them by status.
package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/veredicto/veredicto/internal/sdkhttp"
)

// PassChain is a state machine of n Pass states, one after the other.
func PassChain(n int) string {
	var b strings.Builder
	b.WriteString(`{"StartAt":"P1","States":{`)
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"P%d":{"Type":"Pass",`, i)
		if i == n {
			b.WriteString(`"End":true}`)
		} else {
			fmt.Fprintf(&b, `"Next":"P%d"}`, i+1)
		}
	}
	b.WriteString(`}}`)
	return b.String()
}

// NewClient is a Step Functions client of endpoint signing with creds. It
// keeps a connection per worker and never retries: a refused or failed
// call is counted, not hidden.
func NewClient(endpoint, region string, creds aws.CredentialsProvider, workers int) *sfn.Client {
	httpc := sdkhttp.New(func(tr *http.Transport) {
		tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 2*workers, 2*workers
	})
	return sfn.New(sfn.Options{
		Region: region, BaseEndpoint: aws.String(endpoint), Credentials: aws.NewCredentialsCache(creds),
		HTTPClient: httpc, Retryer: aws.NopRetryer{},
		// serve answers on its own address, not on the sync- host
		// StartSyncExecution and TestState would be sent to
		APIOptions: []func(*middleware.Stack) error{func(s *middleware.Stack) error {
			return s.Initialize.Add(middleware.InitializeMiddlewareFunc("NoHostPrefix",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					return next.HandleInitialize(smithyhttp.DisableEndpointHostPrefix(ctx, true), in)
				}), middleware.Before)
		}},
	})
}

// API is what a run calls, shaped like the sfn client's methods.
type API interface {
	CreateStateMachine(context.Context, *sfn.CreateStateMachineInput, ...func(*sfn.Options)) (*sfn.CreateStateMachineOutput, error)
	StartExecution(context.Context, *sfn.StartExecutionInput, ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error)
	ListExecutions(context.Context, *sfn.ListExecutionsInput, ...func(*sfn.Options)) (*sfn.ListExecutionsOutput, error)
}

var _ API = (*sfn.Client)(nil)

// Config is one run.
type Config struct {
	Client     API
	Machine    string // the state machine's name: created, or reused when it exists with Definition
	Definition string
	Input      string // every execution's input ("{}" when empty)
	// Prefix starts every execution name: <Prefix>-<n>. Empty: one made
	// of the time, so runs on the same machine do not collide.
	Prefix   string
	Workers  int
	Rate     float64       // starts per second; 0: as fast as the workers go
	Duration time.Duration // how long starts are sent
	Count    int           // stop after this many starts (0: Duration alone)
	// Drain bounds the wait, once the starts stop, for the started
	// executions to close; Poll is how often it looks (default 100 ms).
	// A zero Drain does not wait nor count completions.
	Drain time.Duration
	Poll  time.Duration
	// ServerPID is the server's process, whose CPU and memory are
	// reported (0: not reported).
	ServerPID int
	// OnStart, when set, is called by the workers with every start sent:
	// its name and, once answered, its ARN, or the error.
	OnStart func(name, arn string, err error)
}

// job is one start, due at a time on the schedule.
type job struct {
	n   int
	due time.Time
}

// Run creates the state machine, sends the starts and waits for the
// executions to close, then reports.
func Run(ctx context.Context, cfg Config) (Report, error) {
	if cfg.Workers < 1 || cfg.Duration <= 0 && cfg.Count <= 0 {
		return Report{}, errors.New("loadgen: need at least one worker and a duration or a count")
	}
	if cfg.Input == "" {
		cfg.Input = "{}"
	}
	if cfg.Prefix == "" {
		cfg.Prefix = "lg" + strconv.FormatInt(time.Now().UnixMilli(), 36)
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 100 * time.Millisecond
	}
	sm, err := cfg.Client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String(cfg.Machine),
		Definition: aws.String(cfg.Definition), RoleArn: aws.String("arn:aws:iam::000000000000:role/loadgen")})
	if err != nil {
		return Report{}, fmt.Errorf("loadgen: create state machine %s: %w", cfg.Machine, err)
	}
	smARN := aws.ToString(sm.StateMachineArn)

	pid := ""
	if cfg.ServerPID > 0 {
		pid = strconv.Itoa(cfg.ServerPID)
	}
	before := takeSnapshot(pid)
	r := Report{Target: cfg.Rate, Workers: cfg.Workers, Refused: map[string]int{}}

	jobs := make(chan job, cfg.Workers)
	first := time.Now()
	go schedule(ctx, cfg, first, jobs)
	var (
		mu      sync.Mutex
		lat     Latencies
		resp    Latencies // from when each start was due (Rate > 0)
		seconds []int     // answered starts in each second after first
		behind  time.Duration
		last    time.Time
		wg      sync.WaitGroup
	)
	for w := 0; w < cfg.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine, mineResp Latencies
			var mySeconds []int
			refused := map[string]int{}
			var late time.Duration
			var lastDone time.Time
			for j := range jobs {
				late = max(late, time.Since(j.due))
				name := cfg.Prefix + "-" + strconv.Itoa(j.n)
				t0 := time.Now()
				out, err := cfg.Client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smARN), Name: aws.String(name), Input: aws.String(cfg.Input)})
				lastDone = time.Now()
				if err != nil {
					refused[errorCode(err)]++
				} else {
					mine = append(mine, lastDone.Sub(t0))
					if cfg.Rate > 0 {
						// what a client on the schedule waited: the time
						// it queued behind busy workers counts
						mineResp = append(mineResp, lastDone.Sub(j.due))
					}
					sec := int(lastDone.Sub(first) / time.Second)
					for len(mySeconds) <= sec {
						mySeconds = append(mySeconds, 0)
					}
					mySeconds[sec]++
				}
				if cfg.OnStart != nil {
					arn := ""
					if out != nil {
						arn = aws.ToString(out.ExecutionArn)
					}
					cfg.OnStart(name, arn, err)
				}
			}
			mu.Lock()
			lat, resp = append(lat, mine...), append(resp, mineResp...)
			for len(seconds) < len(mySeconds) {
				seconds = append(seconds, 0)
			}
			for i, n := range mySeconds {
				seconds[i] += n
			}
			for code, n := range refused {
				r.Refused[code] += n
			}
			behind = max(behind, late)
			if lastDone.After(last) {
				last = lastDone
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	r.Window, r.Started, r.Latency, r.Behind = last.Sub(first), len(lat), lat.Summarize(), behind
	r.Response, r.Seconds = resp.Summarize(), seconds
	if r.Window < 0 {
		r.Window = 0
	}
	// The server's CPU while the starts ran, apart from the drain and the
	// listings that follow (which add the bench's own reads to it).
	if starts := takeSnapshot(pid); pid != "" && before.serverErr == nil && starts.serverErr == nil {
		u := usage(before.server, starts.server)
		r.ServerStarts = &u
	}

	if cfg.Drain > 0 && r.Started > 0 {
		running, err := countRunning(ctx, cfg.Client, smARN, cfg.Prefix)
		if err != nil {
			return r, err
		}
		r.CompletedInWindow = max(r.Started-running, 0)
		deadline := time.Now().Add(cfg.Drain)
		for running > 0 && time.Now().Before(deadline) {
			select {
			case <-ctx.Done():
				return r, ctx.Err()
			case <-time.After(cfg.Poll):
			}
			if running, err = countRunning(ctx, cfg.Client, smARN, cfg.Prefix); err != nil {
				return r, err
			}
		}
		if running == 0 {
			r.Drained = time.Since(first)
		}
		byStatus, err := countByStatus(ctx, cfg.Client, smARN, cfg.Prefix)
		if err != nil {
			return r, err
		}
		for status, n := range byStatus {
			switch status {
			case types.ExecutionStatusSucceeded:
				r.Completed += n
			case types.ExecutionStatusRunning:
				r.Running += n
			default:
				r.Failed += n
			}
		}
	}
	after := takeSnapshot(pid)
	r.Client = usage(before.self, after.self)
	if pid != "" && before.serverErr == nil && after.serverErr == nil {
		u := usage(before.server, after.server)
		r.Server = &u
	}
	r.Machine = Machine{CPUs: numCPU(), LoadBefore: before.load, LoadAfter: after.load}
	r.Machine.Busy, r.Machine.Steal = machineBetween(before.cpu, after.cpu)
	return r, nil
}

// schedule hands the workers their starts: at the target rate, the n-th
// due n/rate after first (sent late when every worker is busy, never
// dropped), or as fast as they take them. It stops at the duration or
// the count.
func schedule(ctx context.Context, cfg Config, first time.Time, jobs chan<- job) {
	defer close(jobs)
	for n := 0; cfg.Count <= 0 || n < cfg.Count; n++ {
		due := time.Now()
		if cfg.Rate > 0 {
			due = first.Add(time.Duration(float64(n) / cfg.Rate * float64(time.Second)))
		}
		if cfg.Duration > 0 && due.Sub(first) >= cfg.Duration {
			return // before waiting for a start that is not to be sent
		}
		if d := time.Until(due); cfg.Rate > 0 && d > time.Millisecond {
			// shorter waits are sent at once: the next wait catches up
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
		select {
		case jobs <- job{n: n, due: due}:
		case <-ctx.Done():
			return
		}
	}
}

// errorCode names a failed call: the API's error code, or what failed
// on the way.
func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "Canceled"
	case strings.Contains(err.Error(), "connection refused"):
		return "ConnectionRefused"
	}
	return "TransportError"
}

// countRunning lists the run's executions still RUNNING.
func countRunning(ctx context.Context, c API, smARN, prefix string) (int, error) {
	n, err := countByStatus(ctx, c, smARN, prefix, types.ExecutionStatusRunning)
	return n[types.ExecutionStatusRunning], err
}

// countByStatus pages through the machine's executions (only those with
// status, when given) and counts the run's, by status.
func countByStatus(ctx context.Context, c API, smARN, prefix string, status ...types.ExecutionStatus) (map[types.ExecutionStatus]int, error) {
	in := &sfn.ListExecutionsInput{StateMachineArn: aws.String(smARN), MaxResults: 1000}
	if len(status) > 0 {
		in.StatusFilter = status[0]
	}
	out := map[types.ExecutionStatus]int{}
	p := sfn.NewListExecutionsPaginator(c, in)
	for p.HasMorePages() {
		var page *sfn.ListExecutionsOutput
		var err error
		for try := 0; try < 3; try++ { // a connection the transport dropped: not what is measured
			if page, err = p.NextPage(ctx); err == nil || ctx.Err() != nil {
				break
			}
		}
		if err != nil {
			return out, fmt.Errorf("loadgen: list executions: %w", err)
		}
		for _, x := range page.Executions {
			if strings.HasPrefix(aws.ToString(x.Name), prefix+"-") {
				out[x.Status]++
			}
		}
	}
	return out, nil
}

// snapshot is the counters a run's usage is the difference of.
type snapshot struct {
	self, server procSample
	serverErr    error
	cpu          cpuSample
	load         float64
}

func takeSnapshot(pid string) snapshot {
	var s snapshot
	s.self, _ = sampleProc("self")
	if pid != "" {
		s.server, s.serverErr = sampleProc(pid)
	}
	s.cpu, _ = sampleCPU()
	s.load = loadAverage()
	return s
}
