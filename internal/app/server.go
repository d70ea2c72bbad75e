package app

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	fileconfirm "github.com/veredicto/veredicto/internal/confirm/file"
	fileeventlog "github.com/veredicto/veredicto/internal/eventlog/file"
	"github.com/veredicto/veredicto/internal/sdkhttp"
	"github.com/veredicto/veredicto/statemachines"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/awslabs/goformation/v7"
	"github.com/awslabs/goformation/v7/cloudformation"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/app/companionapiapp"
	"github.com/veredicto/veredicto/internal/app/searchapp"
	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/chat"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/console"
	"github.com/veredicto/veredicto/internal/control"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/httpapi/chatapi"
	"github.com/veredicto/veredicto/internal/httpapi/companionapi"
	"github.com/veredicto/veredicto/internal/httpapi/confirmapi"
	"github.com/veredicto/veredicto/internal/httpapi/eventsapi"
	"github.com/veredicto/veredicto/internal/httpapi/flagsapi"
	"github.com/veredicto/veredicto/internal/httpapi/searchapi"
	"github.com/veredicto/veredicto/internal/lambdaapi"
	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/internal/quarantine"
	"github.com/veredicto/veredicto/internal/queue"
	"github.com/veredicto/veredicto/internal/sfnapi"
	"github.com/veredicto/veredicto/internal/starter"
	"github.com/veredicto/veredicto/internal/stream"
	streamengine "github.com/veredicto/veredicto/internal/stream/engine"
)

// Template logical ids of the state machines the local server's own
// services start through its Step Functions API.
const (
	ExecutiveSearchMachine = "ExecutiveSearchStateMachine" // the S3 trigger, POST /searches
	DebateMachine          = "DebateStateMachine"          // POST /debates, the chat's debate agent
	CareerCompanionMachine = "CareerCompanionStateMachine" // POST /companion/applications, the chat's companion agent
)

// DefaultDataDir is the data folder every command uses by default.
const DefaultDataDir = ".veredicto-local"

// DefaultRegion is the region of the local server's ARNs, the only one its
// SigV4 scopes accept unless told otherwise.
const DefaultRegion = "us-east-1"

// Service principals: the local server's own callers of its Step Functions
// API, each signing with a key of its own, so every execution and decision
// names who asked for it.
const (
	PrincipalQueue         = "queue"         // the inputs queue's consumer and POST /searches (operator scope)
	PrincipalAPI           = "api"           // POST /debates and /companion/applications (operator scope)
	PrincipalConfirmations = "confirmations" // delivers decisions to waiting tasks (operator scope)
	PrincipalChat          = "chat"          // the chat's agents (the conversation's tenant)
	PrincipalLambda        = "lambda"        // veredicto lambda invoke (operator scope)
)

// ServerConfig configures the local server ("veredicto serve").
type ServerConfig struct {
	// Data is the data folder (DefaultDataDir when empty).
	Data string
	// Self is the server's own endpoint (http://127.0.0.1:8080): its
	// services call its Step Functions API there, as they call AWS's.
	Self string
	// Addr is the listen address; PublicHosts more names the server
	// answers as (Host). Only those Host values are answered.
	Addr        string
	PublicHosts []string
	// Region is the SigV4 region accepted (DefaultRegion when empty).
	Region string
	// Audience is the aud local tokens must carry (LocalAudience when
	// empty); MaxTokenTTL the longest lifetime accepted
	// (MaxLocalTokenTTL when zero).
	Audience    string
	MaxTokenTTL time.Duration
	// Template is the path of a SAM template whose state machines are
	// registered; "" registers the project's own, embedded in the binary
	// (veredicto.Template), so the server works from any directory.
	Template string
	// LLM is the model client (nil: the offline baselines).
	LLM    *llm.OpenAI
	Logger *slog.Logger
	// OnHistory and OnStatus are the control plane's hooks
	// (control.Config); OnHistory defaults to recording the event stream.
	OnHistory func(tenant, executionARN string, ev asl.Event)
	OnStatus  func(control.Status)
	// Queue configures the local inputs queue (zero: its defaults).
	Queue queue.Config
	// Functions binds more Task resources than the catalog's, by name
	// (tests bind their own handlers).
	Functions map[string]asl.Handler
	// ChatModel and ChatOptions replace the chat's model and options (tests
	// script them; nil reads the environment).
	ChatModel   chat.Model
	ChatOptions *chat.Options
	// MockConfig is the path of an AWS Step Functions Local mock
	// configuration (serve --mock-config): StartExecution on
	// "<state machine ARN>#<test case>" runs its test cases.
	MockConfig string
	// LambdaEndpoint is a Lambda endpoint (serve --lambda-endpoint, such
	// as sam local start-lambda's) that the Tasks whose functions are not
	// the project's invoke.
	LambdaEndpoint string
}

// Server is the local control plane and every service of the project on
// one machine: what "veredicto serve" runs.
type Server struct {
	Manager *control.Manager
	// Handler is every route (the Step Functions API, the project's API,
	// the stream, the console) behind the authentication middleware.
	Handler http.Handler
	// Routes is the route table, for tests and docs.
	Routes *httpapi.Mux
	// Inputs is the local inputs queue (READY uploads).
	Inputs *InputsQueue
	// Chat serves the delegation chat; its turns run in the background.
	Chat          *chatapi.Routes
	Confirmations *confirm.Service
	Keys          *auth.Keys
	// Lambda serves the Lambda Invoke API for the project's functions.
	Lambda *lambdaapi.Handler
	// Notice says which LLM and chat model run, for the start-up line.
	Notice string

	cfg    ServerConfig
	logger *slog.Logger

	agentsMu sync.Mutex
	agents   map[string]map[string]string // agentsFor's cache

	spool *stream.Spool // the event stream's writer (nil with ServerConfig.OnHistory)
}

// NewServer assembles the local server under cfg.Data: the project's
// functions bound to the local adapters, the confirmations and the event
// log, the control plane feeding the log, the HTTP surface behind the
// authentication middleware, and the inputs queue. Its services reach the
// control plane through the real sfn client on cfg.Self, signed with their
// own keys: the one code path they have on AWS.
func NewServer(ctx context.Context, cfg ServerConfig) (*Server, error) {
	cfg.Data = cmp.Or(cfg.Data, DefaultDataDir)
	cfg.Region = cmp.Or(cfg.Region, DefaultRegion)
	cfg.Audience = cmp.Or(cfg.Audience, LocalAudience)
	cfg.MaxTokenTTL = cmp.Or(cfg.MaxTokenTTL, MaxLocalTokenTTL)
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	s := &Server{cfg: cfg, logger: logger, Keys: auth.OpenKeys(cfg.Data)}
	signed := func(spec auth.KeySpec) *sfn.Client { return s.sfnClient(spec) }
	operator := func(name string) auth.KeySpec { return auth.KeySpec{Name: name, Operator: true, Service: true} }
	// Every service key exists before the first request needs it.
	for _, name := range []string{PrincipalQueue, PrincipalAPI, PrincipalConfirmations} {
		if _, err := s.Keys.Ensure(operator(name)); err != nil {
			return nil, fmt.Errorf("access keys: %w", err)
		}
	}

	analyst, notice := searchapp.Analyst(cfg.LLM)
	events := fileeventlog.Local(cfg.Data)
	events.Quarantine = quarantine.Beside(events.Dir(), logger)
	// The services start their workflows through this server's Step
	// Functions API, as on AWS; the queue consumer logs through logger:
	// one log format.
	a := AssembleLocal(Local{Dir: cfg.Data, Analyst: analyst, LLM: cfg.LLM, Events: events, Logger: logger,
		Searches: starter.NewCheckedSFN(signed(operator(PrincipalQueue)), control.StateMachineARN(ExecutiveSearchMachine)),
		Debates:  starter.NewSFN(signed(operator(PrincipalAPI)), control.StateMachineARN(DebateMachine))})
	decisions := fileconfirm.Local(cfg.Data)
	decisions.Quarantine = quarantine.New(cfg.Data, "confirmations", logger)
	s.Confirmations = &confirm.Service{Store: decisions, Events: events, Tasks: signed(operator(PrincipalConfirmations)), Logger: logger}
	companionStarter := starter.NewSFN(signed(operator(PrincipalAPI)), control.StateMachineARN(CareerCompanionMachine))
	companionAPI := companionapiapp.API(a.Companion, func(ctx context.Context, name string, input []byte) error {
		_, err := companionStarter.Start(ctx, name, input)
		return err
	})
	reg := catalog.Registry(&a.Services, catalog.All())
	reg.Register(ConfirmFunction, catalog.EngineHandler(s.Confirmations.Confirm))
	for name, h := range cfg.Functions {
		reg.Register(name, h)
	}
	mocks, err := loadMocks(cfg.MockConfig)
	if err != nil {
		return nil, err
	}
	serveExternalTasks(reg, cfg.LambdaEndpoint, mocks != nil, logger)
	functions, err := lambdaFunctions(a, s.Confirmations)
	if err != nil {
		return nil, err
	}

	onHistory := cfg.OnHistory
	if onHistory == nil {
		// The stream is written apart from the executions, in rounds
		// (stream.Spool): not a write and an fsync per history event.
		s.spool = &stream.Spool{Recorder: &stream.Recorder{Log: events, AgentsFor: s.agentsFor}, Log: events, Logger: logger}
		onHistory = streamengine.Adapt(s.spool.Hook())
	}
	onHistory = expiringConfirmations(onHistory, s.Confirmations, logger)
	ctlCfg := control.Config{Dir: ControlDir(cfg.Data), Data: cfg.Data, Registry: reg, Logger: logger,
		OnHistory: onHistory, OnStatus: cfg.OnStatus, ExecutionLog: sfnapi.NewLogs(LogsDir(cfg.Data), 0, logger).Write}
	if mocks != nil {
		ctlCfg.Mocks = mocks
	}
	mgr, err := control.Open(ctx, ctlCfg)
	if err != nil {
		s.closeSpool()
		return nil, err
	}
	s.Manager = mgr
	if err := registerTemplate(mgr, cfg.Template, logger); err != nil {
		mgr.Close()
		s.closeSpool()
		return nil, err
	}

	key, err := auth.LoadOrCreateKey(cfg.Data)
	if err != nil {
		mgr.Close()
		s.closeSpool()
		return nil, fmt.Errorf("auth key: %w", err)
	}
	chatService, chatNotice, err := s.localChatService(a, events)
	if err != nil {
		mgr.Close()
		s.closeSpool()
		return nil, err
	}
	s.Chat = &chatapi.Routes{Service: chatService, Async: true, Logger: logger}
	s.Notice = notice + "; " + chatNotice
	// Turns a killed server left unfinished are closed before any new one
	// runs: no queue runs them again here.
	if n, err := chatService.CloseInterrupted(ctx); err != nil {
		logger.Warn("close the chat turns an earlier run left unfinished", "error", err)
	} else if n > 0 {
		logger.Info("closed chat turns an earlier run left unfinished", "count", n)
	}
	if s.Inputs, err = OpenInputsQueue(cfg.Data, cfg.Queue, a.Intake.HandleSQS, logger); err != nil {
		mgr.Close()
		s.closeSpool()
		return nil, err
	}

	s.Lambda = lambdaapi.New(lambdaapi.Config{Functions: functions, TenantFunctions: tenantFunctions(), Region: control.Region, Account: control.Account, Logger: logger})
	s.Routes = httpapi.New(logger,
		searchapi.Routes{Searches: a.Intake, Runs: localRuns{mgr}}, // GET /runs lists every workflow's runs, not only searches
		flagsapi.Routes{Judge: a.Judge},
		companionapi.Routes{API: companionAPI},
		a.Debates,
		confirmapi.Routes{Service: s.Confirmations},
		s.Chat,
		&eventsapi.Routes{Log: events, Watch: events, Resolve: executions{mgr}, Logger: logger},
		httpapi.Route("POST /{$}", sfnapi.New(mgr, sfnapi.Options{Logger: logger, Guard: s.confirmationGuard})),
		httpapi.Route(httpapi.LambdaInvokeRoute, s.Lambda),
		httpapi.SiteRoutes(console.Handler(console.LocalConfig)))
	tokens := LocalTokens(key)
	tokens.Policy.Audience, tokens.Policy.MaxLifetime = []string{cfg.Audience}, cfg.MaxTokenTTL
	hosts := auth.NewHostPolicy(cfg.Addr, cfg.PublicHosts...)
	authn := &httpapi.Authenticator{Hosts: &hosts, SigV4: &auth.SigV4{Keys: s.Keys, Region: cfg.Region}, Tokens: tokens,
		QueryToken: []string{"/api/events"}, Logger: logger}
	s.Handler = authn.Wrap(s.Routes)
	return s, nil
}

// sfnClient is a Step Functions client on the server's own endpoint that
// signs with the key of spec (for a tenant-less, non-operator spec: the key
// of the tenant the request's context acts for).
func (s *Server) sfnClient(spec auth.KeySpec) *sfn.Client {
	return sfn.New(sfn.Options{Region: s.cfg.Region, BaseEndpoint: aws.String(s.cfg.Self), HTTPClient: sdkhttp.New(),
		Credentials: &auth.Credentials{Keys: s.Keys, Spec: spec}})
}

// Start runs what works in the background once the server listens: the
// delivery of decisions recorded before a restart, the inputs queue, the
// chat's weekly recalibration and the following of the workflows
// conversations started.
// The returned function stops them.
func (s *Server) Start(ctx context.Context) (stop func()) {
	// Its own tasks still wait after a restart (the control plane keeps
	// their tokens): decisions recorded before it are delivered now.
	go redeliverDecisions(ctx, s.Confirmations, s.logger)
	qctx, cancel := context.WithCancel(ctx)
	done := s.Inputs.Run(qctx)
	// The chat's weekly recalibration (on AWS: the EventBridge schedule).
	weekly := make(chan struct{})
	go func() { defer close(weekly); recalibrate(qctx, s.Chat.Service, s.logger) }()
	// The workflows conversations started and had not ended: followed
	// again, so they report back to their chats.
	links := func() {}
	if l := s.Chat.Service.Links; l != nil {
		links = l.Start(qctx)
	}
	return func() { cancel(); <-done; <-weekly; links() }
}

// Close stops the running executions where they are; they resume at the
// next start.
func (s *Server) Close() {
	s.Chat.Close() // the chat's background turns first: they use the control plane
	if s.Lambda != nil {
		s.Lambda.Close() // its Event invocations, which may start executions
	}
	s.Manager.Close()
	s.closeSpool() // after the executions: what they recorded last is written
}

func (s *Server) closeSpool() {
	if s.spool != nil {
		s.spool.Close()
	}
}

// registerTemplate registers the state machines of the template at path,
// or of the embedded project template when path is "". A template named
// but missing is an error that names it: a server without its state
// machines would take starts it cannot run.
func registerTemplate(mgr *control.Manager, path string, logger *slog.Logger) error {
	defs, err := templateMachines(path)
	if err != nil {
		return err
	}
	template := path
	if template == "" {
		template = "the embedded template.yaml"
	}
	ids := make([]string, 0, len(defs))
	for id := range defs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if _, err := mgr.RegisterStateMachine(id, string(defs[id])); err != nil {
			return fmt.Errorf("%s: %w", template, err)
		}
	}
	return nil
}

// templateParse serializes goformation's parses (see templateMachines).
var templateParse sync.Mutex

// templateMachines reads the definitions of the template's
// AWS::Serverless::StateMachine resources by logical id: of the template at
// path, DefinitionUri relative to it, or, for "", of the embedded
// template with the embedded definitions. ${XxxArn} placeholders are left
// for the engine, which binds them by name to the catalog.
func templateMachines(path string) (map[string][]byte, error) {
	// goformation registers its YAML tag resolvers in a package-level
	// map on every parse: two servers built at once in one process (tests,
	// an embedder) raced on it. One parse at a time.
	templateParse.Lock()
	defer templateParse.Unlock()
	var tmpl *cloudformation.Template
	var err error
	read := func(uri string) ([]byte, error) { return os.ReadFile(filepath.Join(filepath.Dir(path), uri)) }
	if path == "" {
		tmpl, err = goformation.ParseYAML(veredicto.Template)
		read = func(uri string) ([]byte, error) {
			if def, ok := statemachines.File(uri); ok {
				return def, nil
			}
			return nil, fmt.Errorf("%s is not a definition of statemachines/", uri)
		}
		path = "template.yaml (embedded)"
	} else {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("--template: %w", err)
		}
		tmpl, err = goformation.Open(path)
	}
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
		def, err := read(uri)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, id, err)
		}
		out[id] = def
	}
	return out, nil
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
func redeliverDecisions(ctx context.Context, svc *confirm.Service, logger *slog.Logger) {
	store, ok := svc.Store.(interface{ Tenants() ([]string, error) })
	if !ok {
		return
	}
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
func (s *Server) agentsFor(executionARN string) map[string]string {
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

// confirmationGuard keeps a person's decision with the confirmation
// service: SendTaskSuccess or SendTaskFailure on the token of a task that
// waits on ConfirmFunction is refused (InvalidToken) for every caller but
// that service, which records the authenticated decider first. A forged
// {"approved": true, "decided_by": …} never reaches a workflow.
func (s *Server) confirmationGuard(ctx context.Context, p auth.Principal, token string) error {
	if p.Service && p.Name == PrincipalConfirmations {
		return nil
	}
	arn, ok := control.TokenExecution(token)
	if !ok {
		return nil // malformed: the operation says so
	}
	state, err := s.Manager.TokenState(ctx, token)
	if err != nil {
		return nil // not waiting: the operation says so
	}
	if s.agentsFor(arn)[state] == ConfirmFunction {
		return &control.Error{Code: control.CodeInvalidToken, Message: "Invalid Token: 'this task waits for a person's decision: " +
			"resolve it through the confirmations (POST /api/confirmations, veredicto confirm), which record who decided'"}
	}
	return nil
}

// ConfirmFunction is the function of the tasks that wait for a person.
const ConfirmFunction = "ConfirmFunction"

// maxAgentMaps bounds the per-machine agent maps agentsFor keeps.
const maxAgentMaps = 256
