package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/awslabs/goformation/v7"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/control"
	"github.com/veredicto/veredicto/internal/sfnapi"
)

const serveUsage = `Usage: veredicto serve [--addr 127.0.0.1:8080] [--data DIR] [--template template.yaml]

Runs the local control plane: the Step Functions API (AWS JSON 1.0, POST /
with X-Amz-Target: AWSStepFunctions.<Operation>) for the AWS CLI and the sfn
client, with durable executions kept under DIR/sfn that resume after a
restart. Every AWS::Serverless::StateMachine of the template is registered
as arn:aws:states:us-east-1:000000000000:stateMachine:<LogicalId>. Task
resources bind to the project's functions by name, as in "states run"; the
functions use the local adapters under DIR (inputs, reports, context).
GET /healthz answers 200 while the server runs.

  aws stepfunctions --endpoint-url http://127.0.0.1:8080 list-state-machines

Flags:
`

type serveConfig struct {
	addr     string
	data     string
	template string

	// Hooks of the control plane, set by the wiring rather than by flags:
	// onHistory receives every persisted history event (the event stream's
	// log is fed from it), onStatus every start, resume and end of an
	// execution. See control.Config.
	onHistory func(tenant, executionARN string, ev asl.Event)
	onStatus  func(control.Status)
}

func parseServe(args []string, stderr io.Writer) (serveConfig, error) {
	cfg := serveConfig{}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, serveUsage)
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "address to listen on (loopback by default: the API has no authentication)")
	fs.StringVar(&cfg.data, "data", ".veredicto-local", "folder holding executions, the local buckets and the context store")
	fs.StringVar(&cfg.template, "template", "template.yaml", "SAM template whose state machines are registered at start (skipped when missing)")
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return cfg, err
	}
	if len(positional) > 0 {
		fs.Usage()
		return cfg, fmt.Errorf("unexpected argument %q", positional[0])
	}
	return cfg, nil
}

func (m *Main) runServe(ctx context.Context, args []string) int {
	cfg, err := parseServe(args, m.Stderr)
	if err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		fmt.Fprintf(m.Stderr, "veredicto serve: %v\n", err)
		return exitUsage
	}
	logger := slog.New(slog.NewTextHandler(m.Stderr, nil))
	analyst, notice, err := app.ChooseAnalyst("", "", os.Getenv)
	if err != nil {
		fmt.Fprintf(m.Stderr, "veredicto serve: %v\n", err)
		return exitUsage
	}
	reg := catalog.Registry(catalog.Search(app.NewLocal(cfg.data, analyst).Search))
	srv, err := newServer(ctx, cfg, reg, logger)
	if err != nil {
		fmt.Fprintf(m.Stderr, "veredicto serve: %v\n", err)
		return exitUsage
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		fmt.Fprintf(m.Stderr, "veredicto serve: %v\n", err)
		return exitUsage
	}
	logger.Info("serving", "addr", ln.Addr().String(), "data", cfg.data, "llm", notice)
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		fmt.Fprintf(m.Stderr, "veredicto serve: %v\n", err)
		return exitFailed
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	hs.Shutdown(shutdown)
	return exitOK
}

// server is what `serve` runs: the control plane and its HTTP routes.
type server struct {
	Manager *control.Manager
	API     *sfnapi.Handler
	// Mounts are the other handlers of the server, mounted by Handler
	// when set (nil ones are not).
	Mounts serverMounts
}

// serverMounts are the mount points for the rest of the local server. Each
// handler serves its own sub-paths; Auth, when set, wraps every route but
// the Step Functions API (an operator's interface on loopback, as IAM's is
// on AWS) and GET /healthz.
type serverMounts struct {
	Events        http.Handler                    // GET /api/events (Server-Sent Events)
	Confirmations http.Handler                    // GET/POST /api/confirmations
	Searches      http.Handler                    // /searches and /searches/…
	Flags         http.Handler                    // POST /flags
	Auth          func(http.Handler) http.Handler // JWT verification
}

// newServer opens the control plane under cfg.data and registers the
// template's state machines.
func newServer(ctx context.Context, cfg serveConfig, reg *asl.Registry, logger *slog.Logger) (*server, error) {
	mgr, err := control.Open(ctx, control.Config{Dir: filepath.Join(cfg.data, "sfn"), Registry: reg, Logger: logger,
		OnHistory: cfg.onHistory, OnStatus: cfg.onStatus})
	if err != nil {
		return nil, err
	}
	defs, err := templateMachines(cfg.template)
	switch {
	case errors.Is(err, os.ErrNotExist):
		logger.Warn("no template: no state machine registered at start", "template", cfg.template)
	case err != nil:
		mgr.Close()
		return nil, err
	}
	ids := make([]string, 0, len(defs))
	for id := range defs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if _, err := mgr.RegisterStateMachine(id, string(defs[id])); err != nil {
			mgr.Close()
			return nil, fmt.Errorf("%s: %w", cfg.template, err)
		}
	}
	return &server{Manager: mgr, API: sfnapi.New(mgr, logger)}, nil
}

// Close stops the running executions where they are; they resume at the
// next start.
func (s *server) Close() { s.Manager.Close() }

// Handler routes the server's requests.
func (s *server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	// The Step Functions API: POST / with X-Amz-Target.
	mux.Handle("POST /{$}", s.API)
	auth := s.Mounts.Auth
	if auth == nil {
		auth = func(h http.Handler) http.Handler { return h }
	}
	for pattern, h := range map[string]http.Handler{
		"/api/events":        s.Mounts.Events,
		"/api/confirmations": s.Mounts.Confirmations,
		"/searches":          s.Mounts.Searches,
		"/searches/":         s.Mounts.Searches,
		"/flags":             s.Mounts.Flags,
	} {
		if h != nil {
			mux.Handle(pattern, auth(h))
		}
	}
	return mux
}

// templateMachines reads the definitions of the template's
// AWS::Serverless::StateMachine resources by logical id. DefinitionUri is
// relative to the template; ${XxxArn} placeholders are left for the engine,
// which binds them by name to the catalog.
func templateMachines(path string) (map[string][]byte, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	tmpl, err := goformation.Open(path)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	out := map[string][]byte{}
	for id, sm := range tmpl.GetAllServerlessStateMachineResources() {
		if sm.DefinitionUri == nil || sm.DefinitionUri.String == nil {
			continue // inline or S3 definitions are not served locally
		}
		uri := *sm.DefinitionUri.String
		if strings.Contains(uri, "://") {
			continue
		}
		def, err := os.ReadFile(filepath.Join(filepath.Dir(path), uri))
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, id, err)
		}
		out[id] = def
	}
	return out, nil
}
