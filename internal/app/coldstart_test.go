package app_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeRuntime is the Lambda Runtime API as a bootstrap sees it: one
// invocation to hand out, and a channel that fires when its answer (or
// error) comes back.
type fakeRuntime struct {
	event string
	done  chan string
	given bool
}

func (f *fakeRuntime) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/invocation/next"):
		if f.given {
			<-r.Context().Done() // no second event: wait until the process is killed
			return
		}
		f.given = true
		w.Header().Set("Lambda-Runtime-Aws-Request-Id", "req-1")
		w.Header().Set("Lambda-Runtime-Deadline-Ms", "9999999999999")
		w.Header().Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:Api")
		io.WriteString(w, f.event)
	case r.Method == http.MethodPost:
		b, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusAccepted)
		f.done <- r.URL.Path + " " + string(b)
	default:
		http.NotFound(w, r)
	}
}

// buildBootstrap builds functions/<folder> with the Lambda build's tag for
// this machine's architecture, with the extra build flags (make build adds
// -trimpath -ldflags="-s -w": they change the size, not the behaviour, and
// without them the build reuses what the other tests compiled), and returns
// the binary's path.
func buildBootstrap(tb testing.TB, folder string, flags ...string) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "bootstrap")
	args := append(append([]string{"build", "-tags", "lambda.norpc"}, flags...), "-o", bin, "../../functions/"+folder)
	build := exec.Command("go", args...)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		tb.Fatalf("build functions/%s: %v\n%s", folder, err, out)
	}
	return bin
}

// invoke starts bin with env against a fake Runtime API that hands it
// event, and returns what it posted back ("<path> <body>"), its stderr and
// the time from its start to that answer.
func invoke(tb testing.TB, bin, event string, env []string) (answer, stderr string, elapsed time.Duration) {
	tb.Helper()
	rt := &fakeRuntime{event: event, done: make(chan string, 1)}
	srv := httptest.NewServer(rt)
	defer srv.Close()
	cmd := exec.Command(bin)
	var errOut bytes.Buffer
	cmd.Env, cmd.Stderr = append(env[:len(env):len(env)], "AWS_LAMBDA_RUNTIME_API="+strings.TrimPrefix(srv.URL, "http://")), &errOut
	start := time.Now()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	select {
	case answer = <-rt.done:
		elapsed = time.Since(start)
	case <-time.After(60 * time.Second):
	}
	cmd.Process.Kill()
	cmd.Wait() // stderr is complete only now
	if answer == "" {
		tb.Fatalf("no answer from the bootstrap in 60 s; stderr:\n%s", errOut.String())
	}
	return answer, errOut.String(), elapsed
}

// BenchmarkColdStartApiFunction measures a Lambda cold start locally: from
// starting the bootstrap process (built as for Lambda, but for this
// machine's architecture) to its first handled event posted back to the
// Runtime API. The event is an API request without a token, answered 401
// without any AWS call, so the figure is the process's own init cost (AWS
// SDK configuration included).
func BenchmarkColdStartApiFunction(b *testing.B) {
	bin := buildBootstrap(b, "api", "-trimpath", "-ldflags=-s -w")
	event, err := os.ReadFile("../../events/api-get-search.json")
	if err != nil {
		b.Fatal(err)
	}
	noTenant := strings.Replace(string(event), `"custom:tenant": "default", `, "", 1)
	env := []string{"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=AKID", "AWS_SECRET_ACCESS_KEY=SECRET",
		"INPUTS_BUCKET=in", "REPORTS_BUCKET=rep", "CONTEXT_TABLE=ctx",
		"STATE_MACHINE_ARN=arn:aws:states:us-east-1:123456789012:stateMachine:S"}
	var total time.Duration
	b.ResetTimer()
	for range b.N {
		got, _, elapsed := invoke(b, bin, noTenant, env)
		if !strings.Contains(got, "/response") || !strings.Contains(got, "401") {
			b.Fatalf("unexpected answer: %s", got)
		}
		total += elapsed
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms-to-first-response")
}
