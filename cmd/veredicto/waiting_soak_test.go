package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/httpapi/apitest"
	"github.com/veredicto/veredicto/internal/loadgen"
	"github.com/veredicto/veredicto/internal/poll"
	"github.com/veredicto/veredicto/internal/sdkhttp"
)

// BenchmarkWaitingSoak is issue 34's waiting soak: SOAK_N executions
// (100 000 by default) started through the signed Step Functions API of a
// `veredicto serve` subprocess, each left waiting — in a Wait state of a
// day ("wait") or on a task token ("token") — then measured as they wait:
// the server's resident memory, goroutines (serve --pprof) and OS threads;
// the latency of ListExecutions pages (100 items, through every page) and
// of the console's GET /runs; then the server is killed (kill -9) and
// restarted on the same data: the time until it answers again, and that
// every execution still waits; then SOAK_SAMPLE (1 000) of them, at random,
// are answered one after the other with SendTaskSuccess ("token": the
// call's latency, and until the execution's end is recorded) or stopped
// with StopExecution ("wait"). It takes several minutes a variant (the
// starts are fsynced); make bench-long runs it, make test does not.
func BenchmarkWaitingSoak(b *testing.B) {
	n := soakEnv(b, "SOAK_N", 100_000)
	sample := soakEnv(b, "SOAK_SAMPLE", 1000)
	for _, variant := range []string{"token", "wait"} {
		b.Run(variant, func(b *testing.B) {
			for range b.N {
				soak(b, variant, n, min(sample, n))
			}
		})
	}
}

func soakEnv(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive count", name, v)
	}
	return n
}

func soak(b *testing.B, variant string, n, sample int) {
	ep := startTokenEndpoint(b)
	bin := buildCLI(b)
	data := filepath.Join(b.TempDir(), "data")
	addr, prof := freeAddr(b), freeAddr(b)
	// The client's idle connections are closed before the server's
	// goroutines are counted: each holds one in the server. What is timed
	// goes through rawAPI (no SDK, no retries: a retry's backoff is the
	// client's time, not the server's).
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	c := sfn.New(sfnClient(b, "http://"+addr, data).Options(), func(o *sfn.Options) { o.HTTPClient = sdkhttp.Client(&http.Client{Transport: tr}) })
	api := newRawAPI(b, "http://"+addr, data)
	args := []string{"--lambda-endpoint", ep.url, "--pprof", prof}
	srv := startServe(b, bin, addr, data, args...)
	machine, def := "Ask", askDef
	if variant == "wait" {
		machine, def = "Nap", napDef
	}
	smARN := createMachine(b, c, machine, def)
	base := serverStats(b, srv, prof)
	b.Logf("%s: server at start: %s", variant, base)

	began := time.Now()
	startAll(b, c, smARN, n)
	startRate := float64(n) / time.Since(began).Seconds()
	// Parked: the Tasks have had their tokens and the goroutines are gone.
	poll.Until(b, 10*time.Minute, func() bool {
		if variant == "token" {
			if tokens, _ := ep.handed(); len(tokens) < n {
				return false
			}
		}
		tr.CloseIdleConnections()
		ep.closeConnections() // the server's to AskFunction
		return serverStats(b, srv, prof).goroutines <= base.goroutines+2
	}, fmt.Sprintf("the %d executions to park", n))
	waiting := serverStats(b, srv, prof)
	b.Logf("%s: %d started in %s (%.0f/s); waiting: %s", variant, n, time.Since(began).Round(time.Second), startRate, waiting)

	pages := listPages(b, api, smARN, n)
	runs := consoleRuns(b, addr, data)
	b.Logf("%s: ListExecutions, %d pages of 100: p50 %s p99 %s max %s; GET /runs (the console's list): p50 %s max %s",
		variant, len(pages), pct(pages, 50), pct(pages, 99), pct(pages, 100), pct(runs, 50), pct(runs, 100))

	srv.kill()
	killed := time.Now()
	srv = startServe(b, bin, addr, data, args...) // returns once /healthz answers
	restart := time.Since(killed)
	api = newRawAPI(b, "http://"+addr, data)
	first := time.Now()
	if got := api.listPage(b, smARN, ""); len(got.Executions) == 0 {
		b.Fatal("no execution listed after the restart")
	}
	firstList := time.Since(first)
	restarted := serverStats(b, srv, prof)
	pages = listPages(b, api, smARN, n) // every one still RUNNING
	b.Logf("%s: kill -9, restart: answering after %s (first ListExecutions page %s later); every one of the %d still RUNNING; %s; ListExecutions, %d pages of 100: p50 %s p99 %s max %s",
		variant, restart.Round(time.Millisecond), firstList.Round(time.Millisecond), n, restarted, len(pages), pct(pages, 50), pct(pages, 99), pct(pages, 100))

	var calls []time.Duration
	if variant == "token" {
		var resumed, ends []time.Duration
		calls, resumed, ends = answerSample(b, api, c, ep, sample)
		b.Logf("%s: SendTaskSuccess on %d at random, one at a time: the call p50 %s p99 %s max %s; until its TaskSucceeded p50 %s p99 %s max %s; until its ExecutionSucceeded p50 %s p99 %s max %s",
			variant, sample, pct(calls, 50), pct(calls, 99), pct(calls, 100), pct(resumed, 50), pct(resumed, 99), pct(resumed, 100), pct(ends, 50), pct(ends, 99), pct(ends, 100))
		b.ReportMetric(ms(pct(resumed, 99)), "ms-tasksucceeded-p99")
	} else {
		calls = stopSample(b, api, smARN, n, sample)
		b.Logf("%s: StopExecution on %d at random, one at a time: p50 %s p99 %s max %s", variant, sample, pct(calls, 50), pct(calls, 99), pct(calls, 100))
	}
	srv.kill()
	if strings.Contains(srv.log.String(), "resuming execution") {
		b.Errorf("the restart replayed parked executions")
	}

	mib := func(kb int64) float64 { return float64(kb) / 1024 }
	b.ReportMetric(startRate, "starts/s")
	b.ReportMetric(mib(waiting.rssKB), "MiB-RSS-waiting")
	b.ReportMetric(float64(waiting.rssKB-base.rssKB)/float64(n), "KiB-RSS/waiting")
	b.ReportMetric(float64(waiting.goroutines), "goroutines")
	b.ReportMetric(float64(waiting.threads), "threads")
	b.ReportMetric(restart.Seconds(), "s-restart")
	b.ReportMetric(mib(restarted.rssKB), "MiB-RSS-restarted")
	b.ReportMetric(ms(pct(pages, 99)), "ms-list-p99")
	b.ReportMetric(ms(pct(calls, 50)), "ms-resume-p50")
	b.ReportMetric(ms(pct(calls, 99)), "ms-resume-p99")
}

// startAll starts n executions of smARN through the API, 32 at a time.
func startAll(b *testing.B, c *sfn.Client, smARN string, n int) {
	ctx := context.Background()
	var wg sync.WaitGroup
	next := make(chan int)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				in := fmt.Sprintf(`{"tenant":"t%d","n":%d}`, i%10, i)
				if _, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smARN), Name: aws.String(fmt.Sprintf("x-%06d", i)), Input: aws.String(in)}); err != nil {
					b.Errorf("StartExecution %d: %v", i, err)
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
}

// stats is what the soak reads of the server process.
type stats struct {
	rssKB               int64
	threads, goroutines int
}

func (s stats) String() string {
	return fmt.Sprintf("RSS %.1f MiB, %d goroutines, %d OS threads", float64(s.rssKB)/1024, s.goroutines, s.threads)
}

var goroutineTotal = regexp.MustCompile(`goroutine profile: total (\d+)`)

func serverStats(b *testing.B, p *serveProcess, prof string) stats {
	b.Helper()
	var s stats
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		v = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB"))
		switch k {
		case "VmRSS":
			s.rssKB, _ = strconv.ParseInt(v, 10, 64)
		case "Threads":
			s.threads, _ = strconv.Atoi(v)
		}
	}
	resp, err := http.Get("http://" + prof + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		b.Fatalf("serve --pprof: %v", err)
	}
	defer resp.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	m := goroutineTotal.FindSubmatch(head)
	if m == nil {
		b.Fatalf("no goroutine count in %q", head)
	}
	s.goroutines, _ = strconv.Atoi(string(m[1]))
	return s
}

// listPages pages through the machine's executions, 100 a page, timing
// each page; it checks every one of the n is listed RUNNING.
func listPages(b *testing.B, api *rawAPI, smARN string, n int) []time.Duration {
	b.Helper()
	var took []time.Duration
	running := 0
	for next := ""; ; {
		t0 := time.Now()
		page := api.listPage(b, smARN, next)
		took = append(took, time.Since(t0))
		for _, x := range page.Executions {
			if x.Status == "RUNNING" {
				running++
			}
		}
		if next = page.NextToken; next == "" {
			break
		}
	}
	if running != n {
		b.Fatalf("%d listed RUNNING, want %d", running, n)
	}
	return took
}

// rawAPI calls the Step Functions API as the SDK does (AWS JSON 1.0,
// signed with SigV4) with a plain HTTP client: no retries, no SDK on the
// timed path.
type rawAPI struct {
	endpoint string
	creds    aws.Credentials
	hc       *http.Client
	signer   *v4.Signer
}

func newRawAPI(b *testing.B, endpoint, data string) *rawAPI {
	k := keyFor(b, data, auth.KeySpec{Name: "test-operator", Operator: true})
	return &rawAPI{endpoint: endpoint, creds: aws.Credentials{AccessKeyID: k.AccessKeyID, SecretAccessKey: k.SecretAccessKey},
		hc: &http.Client{Transport: &http.Transport{}}, signer: v4.NewSigner()}
}

// call runs op with in, decoding its answer into out.
func (r *rawAPI) call(b *testing.B, op string, in, out any) {
	b.Helper()
	body, err := json.Marshal(in)
	if err != nil {
		b.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, r.endpoint+"/", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AWSStepFunctions."+op)
	sum := sha256.Sum256(body)
	if err := r.signer.SignHTTP(context.Background(), r.creds, req, hex.EncodeToString(sum[:]), "states", apitest.Region, time.Now()); err != nil {
		b.Fatal(err)
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		b.Fatalf("%s: %v", op, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("%s: %d %s %v", op, resp.StatusCode, answer, err)
	}
	if out != nil {
		if err := json.Unmarshal(answer, out); err != nil {
			b.Fatalf("%s: %v: %s", op, err, answer)
		}
	}
}

type executionsPage struct {
	Executions []struct{ Status string }
	NextToken  string
}

func (r *rawAPI) listPage(b *testing.B, smARN, next string) executionsPage {
	b.Helper()
	var page executionsPage
	in := map[string]any{"stateMachineArn": smARN, "maxResults": 100}
	if next != "" {
		in["nextToken"] = next
	}
	r.call(b, "ListExecutions", in, &page)
	return page
}

// consoleRuns times the console's list of runs (GET /runs) for a tenant,
// 20 times.
func consoleRuns(b *testing.B, addr, data string) []time.Duration {
	b.Helper()
	key, err := auth.LoadOrCreateKey(data)
	if err != nil {
		b.Fatal(err)
	}
	l := live{base: "http://" + addr, data: data, key: key}
	tok := l.token(b, "t3", "soak")
	var took []time.Duration
	for range 20 {
		req, _ := http.NewRequest(http.MethodGet, l.base+"/runs", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		t0 := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		took = append(took, time.Since(t0))
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("GET /runs: %d", resp.StatusCode)
		}
	}
	return took
}

// answerSample answers sample tokens at random, one at a time: the
// SendTaskSuccess call's latency, and the time from the call until the
// resumed execution records its TaskSucceeded and its ExecutionSucceeded
// (their events' times).
func answerSample(b *testing.B, api *rawAPI, c *sfn.Client, ep *tokenEndpoint, sample int) (calls, resumed, ends []time.Duration) {
	b.Helper()
	ctx := context.Background()
	tokens, _ := ep.handed()
	arns := make([]string, 0, len(tokens))
	for arn := range tokens {
		arns = append(arns, arn)
	}
	slices.Sort(arns)
	rand.Shuffle(len(arns), func(i, j int) { arns[i], arns[j] = arns[j], arns[i] })
	type sent struct {
		arn string
		at  time.Time
	}
	var done []sent
	for _, arn := range arns[:sample] {
		t0 := time.Now()
		api.call(b, "SendTaskSuccess", map[string]string{"taskToken": tokens[arn], "output": `{"approved":true}`}, nil)
		calls = append(calls, time.Since(t0))
		done = append(done, sent{arn, t0})
	}
	for _, s := range done {
		var end, task time.Time
		poll.Until(b, 60*time.Second, func() bool {
			out, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(s.arn), ReverseOrder: true, MaxResults: 10})
			if err != nil {
				b.Fatal(err)
			}
			if len(out.Events) == 0 || out.Events[0].Type != types.HistoryEventTypeExecutionSucceeded {
				return false
			}
			end = aws.ToTime(out.Events[0].Timestamp)
			for _, ev := range out.Events {
				if ev.Type == types.HistoryEventTypeTaskSucceeded {
					task = aws.ToTime(ev.Timestamp)
				}
			}
			return true
		}, s.arn+" to succeed")
		resumed, ends = append(resumed, task.Sub(s.at)), append(ends, end.Sub(s.at))
	}
	return calls, resumed, ends
}

// stopSample stops sample of the n executions at random, one at a time.
func stopSample(b *testing.B, api *rawAPI, smARN string, n, sample int) []time.Duration {
	b.Helper()
	var took []time.Duration
	for _, i := range rand.Perm(n)[:sample] {
		arn := strings.Replace(smARN, ":stateMachine:", ":execution:", 1) + fmt.Sprintf(":x-%06d", i)
		t0 := time.Now()
		api.call(b, "StopExecution", map[string]string{"executionArn": arn, "error": "Soak.Stop"}, nil)
		took = append(took, time.Since(t0))
	}
	return took
}

// pct is the p-th percentile of ds (100: the maximum), as the load
// generator reports them, rounded for the log.
func pct(ds []time.Duration, p int) time.Duration {
	return loadgen.Latencies(ds).Percentile(float64(p)).Round(10 * time.Microsecond)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
