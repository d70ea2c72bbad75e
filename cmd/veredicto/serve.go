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
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/awslabs/goformation/v7"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/confirm"
	fileconfirm "github.com/veredicto/veredicto/internal/confirm/file"
	"github.com/veredicto/veredicto/internal/console"
	"github.com/veredicto/veredicto/internal/control"
	fileeventlog "github.com/veredicto/veredicto/internal/eventlog/file"
	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/internal/queue"
	"github.com/veredicto/veredicto/internal/sfnapi"
	"github.com/veredicto/veredicto/internal/starter"
	"github.com/veredicto/veredicto/internal/stream"
)

const serveUsage = `Usage: veredicto serve [--addr 127.0.0.1:8080] [--data DIR] [--template template.yaml]

Runs the local control plane: the Step Functions API (AWS JSON 1.0, POST /
with X-Amz-Target: AWSStepFunctions.<Operation>) for the AWS CLI and the sfn
client, with durable executions kept under DIR/sfn that resume after a
restart. Every AWS::Serverless::StateMachine of the template is registered
as arn:aws:states:us-east-1:000000000000:stateMachine:<LogicalId>. Task
resources bind to the project's functions by name, as in "states run"; the
functions use the local adapters under DIR (inputs, reports, context).

It also serves the project's HTTP API with the same routes as on AWS
(/searches…, /flags), the confirmations (GET/POST /api/confirmations) and
the event stream (GET /api/events?execution=…, Server-Sent Events) and the
delegation chat (POST /api/chat, GET /api/chat/metrics; a conversation's
stream is GET /api/events?chat=…). Those
need a bearer token: "veredicto token --tenant T --data DIR" prints one
(the key is created under DIR on first start). GET /healthz answers 200
while the server runs; the Step Functions API needs no token (it is the
operator's interface, as IAM's is on AWS), which is why the server listens
on loopback by default. The web console is at / (open
http://127.0.0.1:8080/ and paste such a token).

Uploads take the AWS path: a READY marker written under
DIR/inputs/searches/<tenant>/<search_id>/ is notified to a durable local
queue (DIR/queue/inputs) consumed by TriggerFunction's handler, with a
dead-letter queue after 5 receives ("veredicto queue -h").

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
	// queue configures the local inputs queue (zero: its defaults).
	queue queue.Config
	// chat configures the delegation chat (zero: from the environment).
	chat chatConfig
}

func parseServe(args []string, stderr io.Writer) (serveConfig, error) {
	cfg := serveConfig{}
	fs := subcommandFlags("serve", serveUsage, stderr)
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
	client, err := app.ChooseLLM("", "", os.Getenv)
	if err != nil {
		fmt.Fprintf(m.Stderr, "veredicto serve: %v\n", err)
		return exitUsage
	}
	// Listen first: the server's own address is the Step Functions endpoint
	// its starter and its confirmations call, as they call AWS's.
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		fmt.Fprintf(m.Stderr, "veredicto serve: %v\n", err)
		return exitUsage
	}
	defer ln.Close()
	srv, notice, err := assemble(ctx, cfg, "http://"+ln.Addr().String(), client, logger)
	if err != nil {
		fmt.Fprintf(m.Stderr, "veredicto serve: %v\n", err)
		return exitUsage
	}
	defer srv.Close()
	// The commands run on the same --data (confirm) find the server here.
	endpoint := "http://" + ln.Addr().String()
	if err := writeServeEndpoint(cfg.data, endpoint); err != nil {
		logger.Warn("could not record the server's address under --data; confirm needs --endpoint", "error", err.Error())
	} else {
		defer removeServeEndpoint(cfg.data, endpoint)
	}
	logger.Info("serving", "addr", ln.Addr().String(), "data", cfg.data, "llm", notice)
	// No WriteTimeout: event streams are long-lived (the stream handler sets
	// a deadline per write itself).
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	// Its own tasks still wait after a restart (the control plane keeps
	// their tokens): decisions recorded before it are delivered now.
	go srv.Redeliver(ctx)
	// The queue's consumer starts executions through the server itself, so
	// it runs once the server is listening, and stops before it closes.
	qctx, stopQueue := context.WithCancel(ctx)
	queueDone := srv.Inputs.Run(qctx)
	defer func() { stopQueue(); <-queueDone }()
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

// serveEndpointFile holds, under --data, the Step Functions endpoint of the
// server running on that folder.
const serveEndpointFile = "serve.endpoint"

func writeServeEndpoint(data, endpoint string) error {
	if err := os.MkdirAll(data, 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(data, "."+serveEndpointFile+".tmp")
	if err := os.WriteFile(tmp, []byte(endpoint+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(data, serveEndpointFile))
}

// removeServeEndpoint removes the record if it is still this server's.
func removeServeEndpoint(data, endpoint string) {
	if got, ok := readServeEndpoint(data); ok && got == endpoint {
		os.Remove(filepath.Join(data, serveEndpointFile))
	}
}

// readServeEndpoint is the endpoint of the server last started on data
// (which may have been killed since).
func readServeEndpoint(data string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(data, serveEndpointFile))
	if err != nil {
		return "", false
	}
	e := strings.TrimSpace(string(b))
	if !strings.HasPrefix(e, "http://") || len(e) > 200 {
		return "", false
	}
	return e, true
}

// ExecutiveSearchMachine is the template logical id of the executive
// search's state machine, which the local starter (S3 trigger, POST
// /searches) starts through the Step Functions API.
const ExecutiveSearchMachine = "ExecutiveSearchStateMachine"

// DebateMachine is the template logical id of the debate's state machine
// (seed 003), which POST /debates starts through the Step Functions API.
const DebateMachine = "DebateStateMachine"

// CareerCompanionMachine is the template logical id of the career
// companion's state machine, which POST /companion/applications starts.
const CareerCompanionMachine = "CareerCompanionStateMachine"

// assemble builds the whole local server on the endpoint it will listen on:
// the project's functions bound to the local adapters under cfg.data, the
// confirmations and the event log, the control plane feeding the log, and
// the HTTP routes behind local JWT verification. The starter and the
// confirmations reach the control plane through the real sfn client on
// self, the one code path they have on AWS.
func assemble(ctx context.Context, cfg serveConfig, self string, client *llm.OpenAI, logger *slog.Logger) (*server, string, error) {
	analyst, notice := app.Analyst(client)
	a := app.NewLocal(cfg.data, analyst, client)
	sfnClient := sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(self),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
	a.Intake.Starter = starter.NewEndpoint(self, control.StateMachineARN(ExecutiveSearchMachine))
	a.Intake.Logger = logger // the queue consumer logs through it: one log format
	a.Debate, a.DebateAPI = app.LocalDebate(cfg.data, client, starter.NewEndpoint(self, control.StateMachineARN(DebateMachine)))
	a.Debate.Logger = logger
	events := fileeventlog.Local(cfg.data)
	decisions := fileconfirm.Local(cfg.data)
	confirmations := &confirm.Service{Store: decisions, Events: events, Tasks: sfnClient, Logger: logger}
	a.Companion.Events = events
	companionStarter := starter.NewEndpoint(self, control.StateMachineARN(CareerCompanionMachine))
	a.HTTP.Companion = app.CompanionAPI(a.Companion, func(ctx context.Context, name string, input []byte) error {
		_, err := companionStarter.Start(ctx, name, input)
		return err
	})
	reg := catalog.Registry(&a.Services, catalog.All())
	reg.Register("ConfirmFunction", catalog.EngineHandler(confirmations.Confirm))

	srv := &server{}
	recorder := &stream.Recorder{Log: events, AgentsFor: srv.agentsFor}
	if cfg.onHistory == nil {
		cfg.onHistory = recorder.Hook(logger)
	}
	cfg.onHistory = expiringConfirmations(cfg.onHistory, confirmations, logger)
	mgr, api, err := openControl(ctx, cfg, reg, logger)
	if err != nil {
		return nil, "", err
	}
	srv.Manager, srv.API = mgr, api
	a.HTTP.Executions = localRuns{mgr} // GET /runs lists every workflow's runs, not only searches

	key, err := auth.LoadOrCreateKey(cfg.data)
	if err != nil {
		mgr.Close()
		return nil, "", fmt.Errorf("auth key: %w", err)
	}
	verify := &auth.HS256{Key: key, Policy: auth.Policy{Issuer: LocalIssuer}}
	srv.Mounts = serverMounts{
		Auth:          auth.Middleware(verify, auth.MiddlewareOptions{Logger: logger}),
		EventsAuth:    auth.Middleware(verify, auth.MiddlewareOptions{QueryToken: true, Logger: logger}), // EventSource cannot set headers
		Confirmations: &confirm.Handler{Service: confirmations, Logger: logger},
		Events:        &stream.Handler{Log: events, Watch: events, Resolve: executions{mgr}, Logger: logger},
		Searches:      a.HTTP.Handler(tenantOf),
		Flags:         a.HTTP.Handler(tenantOf),
		Console:       console.Handler(console.LocalConfig),
		Debates:       a.DebateAPI.Handler(tenantOf),
		Companion:     a.HTTP.Handler(tenantOf),
	}
	chatHandler, chatNotice, err := assembleChat(cfg, a, sfnClient, events, confirmations, logger)
	if err != nil {
		mgr.Close()
		return nil, "", err
	}
	srv.Mounts.Chat = chatHandler
	notice += "; " + chatNotice
	// Turns a killed server left unfinished are closed before any new one
	// runs: no queue runs them again here.
	if n, err := chatHandler.Service.CloseInterrupted(ctx); err != nil {
		logger.Warn("close the chat turns an earlier run left unfinished", "error", err)
	} else if n > 0 {
		logger.Info("closed chat turns an earlier run left unfinished", "count", n)
	}
	if srv.Inputs, err = openInputsQueue(cfg.data, cfg.queue, a.Intake.HandleSQS, logger); err != nil {
		mgr.Close()
		return nil, "", err
	}
	srv.Redeliver = func(ctx context.Context) { redeliverDecisions(ctx, confirmations, decisions, logger) }
	return srv, notice, nil
}

// expiringConfirmations wraps a history hook: when an execution ends, the
// confirmations its tasks still waited on expire first, so the stream
// shows them resolved before its finish.
func expiringConfirmations(next func(tenant, arn string, ev asl.Event), svc *confirm.Service, logger *slog.Logger) func(tenant, arn string, ev asl.Event) {
	return func(tenant, arn string, ev asl.Event) {
		switch ev.Type {
		case "ExecutionSucceeded", "ExecutionFailed", "ExecutionAborted", "ExecutionTimedOut":
			if _, err := svc.ExpireExecution(context.Background(), tenant, arn); err != nil {
				logger.Warn("expire the confirmations of an ended execution", "execution", arn, "error", err)
			}
		}
		next(tenant, arn, ev)
	}
}

// redeliverDecisions is the start-up sweep of the confirmations left
// resolving (decided, never delivered) by a crash or a failed SendTask.
func redeliverDecisions(ctx context.Context, svc *confirm.Service, store *fileconfirm.Store, logger *slog.Logger) {
	tenants, err := store.Tenants()
	if err == nil {
		var n int
		n, err = svc.RedeliverAll(ctx, tenants)
		if n > 0 {
			logger.Info("delivered decisions recorded before the restart", "count", n)
		}
	}
	if err != nil && ctx.Err() == nil {
		logger.Warn("some recorded decisions are still undelivered; POST them again to deliver", "error", err)
	}
}

// tenantOf is the tenant of a request the auth middleware let through.
func tenantOf(r *http.Request) string {
	t, _ := auth.TenantFrom(r.Context())
	return t
}

// executions resolves the event stream's ?execution= for a tenant: an
// execution ARN, or a name looked up among the registered state machines.
// Another tenant's execution is not found, exactly like a missing one.
type executions struct{ m *control.Manager }

func (x executions) ResolveExecution(ctx context.Context, tenant, ref string) (string, error) {
	arns := []string{ref}
	if !strings.HasPrefix(ref, "arn:") {
		arns = arns[:0]
		for next := ""; ; {
			page, n := x.m.ListStateMachines(ctx, next, 1000)
			for _, sm := range page {
				arns = append(arns, control.ExecutionARN(sm.Name, ref))
			}
			if next = n; next == "" {
				break
			}
		}
	}
	for _, arn := range arns {
		if e, err := x.m.DescribeExecution(ctx, arn); err == nil && e.Tenant == tenant {
			return e.ARN, nil
		}
	}
	return "", &veredicto.NotFoundError{What: "execution " + ref}
}

// agentsFor names the function behind each Task state of an execution's
// machine, so every step on the stream says which agent it was. It is
// called for every history event, so the map is built once per state
// machine (keyed by ARN and creation time: a machine deleted and created
// again under the name gets its own) from the definition the control plane
// keeps in memory: no disk read and no JSON parse per event.
func (s *server) agentsFor(executionARN string) map[string]string {
	if s.Manager == nil {
		return nil
	}
	sm, err := s.Manager.DescribeStateMachine(context.Background(), stream.MachineOf(executionARN))
	if err != nil {
		return nil
	}
	key := sm.ARN + "@" + sm.Created.Format(time.RFC3339Nano)
	s.agentsMu.Lock()
	defer s.agentsMu.Unlock()
	if agents, ok := s.agents[key]; ok {
		return agents
	}
	agents, err := stream.AgentsOf([]byte(sm.Definition))
	if err != nil {
		agents = nil // remembered too: the definition will not parse better next time
	}
	if s.agents == nil || len(s.agents) >= maxAgentMaps {
		s.agents = map[string]map[string]string{} // bounded: a few machines in practice
	}
	s.agents[key] = agents
	return agents
}

// maxAgentMaps bounds the per-machine agent maps agentsFor keeps.
const maxAgentMaps = 256

// server is what `serve` runs: the control plane and its HTTP routes.
type server struct {
	Manager *control.Manager
	API     *sfnapi.Handler
	// Mounts are the other handlers of the server, mounted by Handler
	// when set (nil ones are not).
	Mounts serverMounts
	// Inputs is the local inputs queue; RunQueue consumes it.
	Inputs *inputsQueue
	// Redeliver delivers the decisions a previous run recorded but could
	// not hand to their waiting tasks; it runs once the server listens.
	Redeliver func(context.Context)

	agentsMu sync.Mutex
	agents   map[string]map[string]string // agentsFor's cache
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
	Chat          http.Handler                    // POST /api/chat, GET /api/chat/metrics
	Console       http.Handler                    // GET / and its assets: the web console (no token: it signs in)
	Debates       http.Handler                    // /debates and /debates/… (seed 003)
	Companion     http.Handler                    // /companion/applications…
	Auth          func(http.Handler) http.Handler // JWT verification
	// EventsAuth, when set, wraps Events instead of Auth (the stream also
	// takes the token as ?access_token=, for browsers' EventSource).
	EventsAuth func(http.Handler) http.Handler
}

// newServer opens the control plane under cfg.data and registers the
// template's state machines; Mounts are left for the caller.
func newServer(ctx context.Context, cfg serveConfig, reg *asl.Registry, logger *slog.Logger) (*server, error) {
	mgr, api, err := openControl(ctx, cfg, reg, logger)
	if err != nil {
		return nil, err
	}
	return &server{Manager: mgr, API: api}, nil
}

// openControl opens the control plane under cfg.data and registers the
// template's state machines.
func openControl(ctx context.Context, cfg serveConfig, reg *asl.Registry, logger *slog.Logger) (*control.Manager, *sfnapi.Handler, error) {
	mgr, err := control.Open(ctx, control.Config{Dir: filepath.Join(cfg.data, "sfn"), Registry: reg, Logger: logger,
		OnHistory: cfg.onHistory, OnStatus: cfg.onStatus})
	if err != nil {
		return nil, nil, err
	}
	defs, err := templateMachines(cfg.template)
	switch {
	case errors.Is(err, os.ErrNotExist):
		logger.Warn("no template: no state machine registered at start", "template", cfg.template)
	case err != nil:
		mgr.Close()
		return nil, nil, err
	}
	ids := make([]string, 0, len(defs))
	for id := range defs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if _, err := mgr.RegisterStateMachine(id, string(defs[id])); err != nil {
			mgr.Close()
			return nil, nil, fmt.Errorf("%s: %w", cfg.template, err)
		}
	}
	return mgr, sfnapi.New(mgr, logger), nil
}

// Close stops the running executions where they are; they resume at the
// next start.
func (s *server) Close() {
	if c, ok := s.Mounts.Chat.(interface{ Close() }); ok {
		c.Close() // the chat's background turns first: they use the control plane
	}
	s.Manager.Close()
}

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
	if s.Mounts.Events != nil {
		events := auth
		if s.Mounts.EventsAuth != nil {
			events = s.Mounts.EventsAuth
		}
		mux.Handle("/api/events", events(s.Mounts.Events))
	}
	for pattern, h := range map[string]http.Handler{
		"/api/confirmations": s.Mounts.Confirmations,
		"/searches":          s.Mounts.Searches,
		"/searches/":         s.Mounts.Searches,
		"/flags":             s.Mounts.Flags,
		"/api/chat":          s.Mounts.Chat,
		"/api/chat/metrics":  s.Mounts.Chat,
		"/runs":              s.Mounts.Searches,
		"/debates":           s.Mounts.Debates,
		"/debates/":          s.Mounts.Debates,
		"/companion/":        s.Mounts.Companion,
	} {
		if h != nil {
			mux.Handle(pattern, auth(h))
		}
	}
	if s.Mounts.Console != nil {
		mux.Handle("/", s.Mounts.Console) // the least specific pattern: every other route wins
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
