package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"os"
	"time"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/sfnmock"
)

const serveUsage = `Usage: veredicto serve [--addr 127.0.0.1:8080] [--data DIR] [--template FILE]
                       [--region us-east-1] [--public-host NAME]... [--cors-origin URL]
                       [--audience veredicto] [--max-token-ttl 24h]
                       [--mock-config FILE] [--lambda-endpoint URL] [--pprof ADDR]

Runs the local control plane: the Step Functions API (AWS JSON 1.0, POST /
with X-Amz-Target: AWSStepFunctions.<Operation>) for the AWS CLI and the sfn
client, with durable executions kept under DIR/sfn that resume after a
restart. Every AWS::Serverless::StateMachine of the template is registered
as arn:aws:states:us-east-1:000000000000:stateMachine:<LogicalId>. Task
resources bind to the project's functions by name, as in "states run"; the
functions use the local adapters under DIR (inputs, reports, context).

The Step Functions API is signed, as AWS's is: every request must carry a
Signature Version 4 made with a key of this server ("veredicto credentials
--tenant T" or "--operator" prints one). A tenant's key starts executions
and sees and acts on that tenant's executions only; an operator's manages
state machines and sees every tenant.

Any state machine can be tested here, as with AWS Step Functions Local.
--mock-config FILE (or SFN_MOCK_CONFIG) reads Step Functions Local's mock
configuration: StartExecution on "<state machine ARN>#<test case>" runs
that test case, whose mocked Task states answer from the file (Lambda,
DynamoDB, SQS, SNS, EventBridge, any service integration) while the others
run. A Task whose Lambda function is not one of the project's invokes it on
--lambda-endpoint URL (sam local start-lambda's, for example); without
either, such a state machine is refused at create, saying so. The
project's functions answer the Lambda Invoke API on this address ("aws
lambda invoke --endpoint-url", signed like the Step Functions API; a
tenant's key with its own tenant in the event). See examples/mock-config.

It also serves the project's HTTP API with the same routes as on AWS
(/searches…, /flags, /debates…, /companion/applications…), the
confirmations (GET/POST /api/confirmations), the event stream (GET
/api/events?execution=…, Server-Sent Events) and the delegation chat (POST
/api/chat, GET /api/chat/metrics; a conversation's stream is GET
/api/events?chat=…). Those need a bearer token ("veredicto token --tenant T
--data DIR") or a request signed with a tenant's key. GET /healthz answers
200 while the server runs. The web console is at / (open
http://127.0.0.1:8080/ and paste such a token).

Only requests whose Host names the listen address (127.0.0.1, localhost,
[::1] on loopback) or a --public-host are answered; others get 421. No
cross-origin reads are allowed unless --cors-origin names the origin.

Uploads take the AWS path: a READY marker written under
DIR/inputs/searches/<tenant>/<search_id>/ is notified to a durable local
queue (DIR/queue/inputs) consumed by TriggerFunction's handler, with a
dead-letter queue after 5 receives ("veredicto queue -h").

  eval "$(veredicto credentials --operator --data DIR)"
  aws stepfunctions --endpoint-url http://127.0.0.1:8080 list-state-machines

Flags:
`

type serveConfig struct {
	app.ServerConfig
	corsOrigin string
	pprof      string
}

func parseServe(args []string, stderr io.Writer, getenv func(string) string) (serveConfig, error) {
	cfg := serveConfig{}
	var hosts stringList
	fs := subcommandFlags("serve", serveUsage, stderr)
	fs.StringVar(&cfg.Addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.StringVar(&cfg.Data, "data", app.DefaultDataDir, "folder holding executions, the local buckets, the context store and the keys")
	fs.StringVar(&cfg.Template, "template", "", "a SAM template whose state machines are registered at start (default: the project's own, embedded)")
	fs.StringVar(&cfg.Region, "region", app.DefaultRegion, "the region SigV4 signatures must be scoped to")
	fs.Var(&hosts, "public-host", "another host name the server answers as (repeatable)")
	fs.StringVar(&cfg.corsOrigin, "cors-origin", "", "an origin (https://host[:port]) allowed to call the APIs from a browser")
	fs.StringVar(&cfg.Audience, "audience", app.LocalAudience, "the aud claim bearer tokens must carry")
	fs.DurationVar(&cfg.MaxTokenTTL, "max-token-ttl", app.MaxLocalTokenTTL, "the longest lifetime of a bearer token accepted")
	fs.StringVar(&cfg.MockConfig, "mock-config", getenv(sfnmock.EnvVar), "a Step Functions Local mock configuration (MockConfigFile.json) whose test cases StartExecution runs on ARN#TestCase (default $"+sfnmock.EnvVar+")")
	fs.StringVar(&cfg.LambdaEndpoint, "lambda-endpoint", "", "a Lambda endpoint (sam local start-lambda's) for the functions Tasks name that are not the project's")
	fs.StringVar(&cfg.pprof, "pprof", "", "an address (127.0.0.1:6060) to serve Go's profiles on (net/http/pprof), unauthenticated: loopback only")
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return cfg, err
	}
	if len(positional) > 0 {
		fs.Usage()
		return cfg, fmt.Errorf("unexpected argument %q", positional[0])
	}
	cfg.PublicHosts = hosts
	if cfg.MaxTokenTTL <= 0 {
		return cfg, fmt.Errorf("--max-token-ttl must be positive")
	}
	if cfg.corsOrigin != "" {
		if err := httpapi.CheckOrigin(cfg.corsOrigin); err != nil {
			return cfg, fmt.Errorf("--cors-origin: %w", err)
		}
	}
	if cfg.pprof != "" {
		if host, _, err := net.SplitHostPort(cfg.pprof); err != nil || !isLoopback(host) {
			return cfg, fmt.Errorf("--pprof %q: want a loopback address and port, such as 127.0.0.1:6060 (the profiles are not authenticated)", cfg.pprof)
		}
	}
	if cfg.LambdaEndpoint != "" {
		if u, err := url.Parse(cfg.LambdaEndpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return cfg, fmt.Errorf("--lambda-endpoint %q: want an http:// or https:// URL, such as http://127.0.0.1:3001 (sam local start-lambda's)", cfg.LambdaEndpoint)
		}
	}
	return cfg, nil
}

func (m *Main) runServe(ctx context.Context, args []string) int {
	cfg, err := parseServe(args, m.Stderr, os.Getenv)
	if err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		fmt.Fprintf(m.Stderr, "veredicto serve: %v\n", err)
		return exitUsage
	}
	cfg.Logger = slog.New(slog.NewTextHandler(m.Stderr, nil))
	if cfg.LLM, err = app.ChooseLLM("", "", os.Getenv); err != nil {
		fmt.Fprintf(m.Stderr, "veredicto serve: %v\n", err)
		return exitUsage
	}
	// Listen first: the server's own address is the Step Functions endpoint
	// its starter and its confirmations call, as they call AWS's.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		fmt.Fprintf(m.Stderr, "veredicto serve: %v\n", err)
		return exitUsage
	}
	defer ln.Close()
	cfg.Addr = ln.Addr().String()
	cfg.Self = "http://" + cfg.Addr
	srv, err := app.NewServer(ctx, cfg.ServerConfig)
	if err != nil {
		fmt.Fprintf(m.Stderr, "veredicto serve: %v\n", err)
		return exitUsage
	}
	defer srv.Close()
	// The commands run on the same --data (confirm, chat) find the server here.
	if err := app.WriteEndpoint(cfg.Data, cfg.Self); err != nil {
		cfg.Logger.Warn("could not record the server's address under --data; confirm needs --endpoint", "error", err.Error())
	} else {
		defer app.RemoveEndpoint(cfg.Data, cfg.Self)
	}
	cfg.Logger.Info("serving", "addr", cfg.Addr, "data", cfg.Data, "llm", srv.Notice)
	if cfg.MockConfig != "" {
		cfg.Logger.Info("mock configuration loaded: StartExecution on <state machine ARN>#<test case> runs a test case", "mock_config", cfg.MockConfig)
	}
	if cfg.pprof != "" {
		go servePprof(cfg.pprof, cfg.Logger)
	}
	handler := srv.Handler
	if cfg.corsOrigin != "" {
		handler = httpapi.CORS(cfg.corsOrigin, handler)
	}
	// No WriteTimeout: event streams are long-lived (the stream handler sets
	// a deadline per write itself).
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	// The queue's consumer starts executions through the server itself, so
	// it runs once the server is listening, and stops before it closes.
	stop := srv.Start(ctx)
	defer stop()
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

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// servePprof serves Go's profiles (CPU, heap, goroutines, mutexes) on
// their own loopback listener, apart from the authenticated API: for
// measuring the server under load (make bench-starts).
func servePprof(addr string, logger *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	logger.Info("serving Go's profiles", "addr", addr)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		logger.Error("the profiles' listener stopped", "addr", addr, "error", err.Error())
	}
}
