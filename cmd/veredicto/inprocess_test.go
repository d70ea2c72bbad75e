package main

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/httpapi/apitest"
)

// inProcess is a local server run in the test's process on a loopback
// port, as "veredicto serve" runs it.
type inProcess struct {
	base string
	srv  *app.Server
}

// serveInProcess assembles and serves cfg (its Data and Logger filled in
// when empty; the embedded template unless it names one); stop runs at
// cleanup.
func serveInProcess(ctx context.Context, t *testing.T, cfg app.ServerConfig) inProcess {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Data == "" {
		cfg.Data = t.TempDir()
	}
	if cfg.Logger == nil {
		// Warnings and errors only, into the test's log: shown when it
		// fails (an answer of 500 or 503 then says why), silent otherwise.
		w := &testLogWriter{t: t}
		t.Cleanup(w.stop) // registered first: runs after the server stopped
		cfg.Logger = slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	cfg.Addr = ln.Addr().String()
	cfg.Self = "http://" + cfg.Addr
	srv, err := app.NewServer(ctx, cfg)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv.Handler, ReadHeaderTimeout: 5 * time.Second}
	go hs.Serve(ln)
	t.Cleanup(func() {
		hs.Close()
		srv.Chat.Wait()
		srv.Close()
	})
	return inProcess{base: cfg.Self, srv: srv}
}

// keyFor is the access key of spec under the data folder data.
func keyFor(t testing.TB, data string, spec auth.KeySpec) auth.Key {
	t.Helper()
	k, err := auth.OpenKeys(data).Ensure(spec)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// operatorSFN is a Step Functions client of the server at base (on data)
// signing with an operator's key.
func operatorSFN(t testing.TB, base, data string) *sfn.Client {
	return apitest.SFN(base, keyFor(t, data, auth.KeySpec{Name: "test-operator", Operator: true}))
}

// tenantSFN signs with a person's key of tenant.
func tenantSFN(t testing.TB, base, data, tenant string) *sfn.Client {
	return apitest.SFN(base, keyFor(t, data, auth.KeySpec{Name: "person@" + tenant, Tenant: tenant}))
}

// testLogWriter writes a server's log lines into t's log until stop: a
// line logged after the test ended is dropped (t.Log would panic).
type testLogWriter struct {
	t       *testing.T
	mu      sync.Mutex
	stopped bool
}

func (w *testLogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.t.Log("serve: " + strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (w *testLogWriter) stop() {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
}
