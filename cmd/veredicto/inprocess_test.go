package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
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
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
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
