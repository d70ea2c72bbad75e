package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	dynamoconfirm "github.com/veredicto/veredicto/internal/confirm/dynamo"
	fileconfirm "github.com/veredicto/veredicto/internal/confirm/file"
	dynamoeventlog "github.com/veredicto/veredicto/internal/eventlog/dynamo"
	fileeventlog "github.com/veredicto/veredicto/internal/eventlog/file"

	"github.com/veredicto/veredicto/internal/httpapi"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/catalog/function"
	"github.com/veredicto/veredicto/internal/catalog/peoplefn"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/stream"
)

// peopleConfig is what the confirmation and stream functions read besides
// Config: EVENTS_TABLE always; the stream's JWT settings and state machines.
type peopleConfig struct {
	EventsTable   string   // EVENTS_TABLE
	JWTIssuer     string   // JWT_ISSUER (stream)
	JWTAudience   []string // JWT_AUDIENCE, comma-separated (stream; required: the tokens' aud)
	JWKSURL       string   // JWKS_URL (stream; default JWT_ISSUER + /.well-known/jwks.json)
	StateMachines []string // STATE_MACHINE_ARNS, comma-separated (stream)
}

func peopleConfigFromEnv(getenv func(string) string, stream bool) (peopleConfig, error) {
	c := peopleConfig{EventsTable: getenv("EVENTS_TABLE"), JWTIssuer: getenv("JWT_ISSUER"),
		JWTAudience: lambdaenv.SplitList(getenv("JWT_AUDIENCE")), JWKSURL: getenv("JWKS_URL"), StateMachines: lambdaenv.SplitList(getenv("STATE_MACHINE_ARNS"))}
	if c.EventsTable == "" {
		return c, fmt.Errorf("configuration: EVENTS_TABLE is not set")
	}
	if stream {
		if c.JWTIssuer == "" || len(c.JWTAudience) == 0 || len(c.StateMachines) == 0 {
			// No audience would accept any token the issuer signs for
			// another application.
			return c, fmt.Errorf("configuration: JWT_ISSUER, JWT_AUDIENCE and STATE_MACHINE_ARNS must be set")
		}
		if c.JWKSURL == "" {
			c.JWKSURL = strings.TrimSuffix(c.JWTIssuer, "/") + "/.well-known/jwks.json"
		}
	}
	return c, nil
}

func confirmService(cfg lambdaenv.Config, pc peopleConfig, ac aws.Config, withTasks bool) *confirm.Service {
	ddb := dynamodb.NewFromConfig(ac)
	var tasks confirm.TaskSender
	if withTasks {
		tasks = sfn.NewFromConfig(ac)
	}
	return &confirm.Service{Store: dynamoconfirm.New(ddb, cfg.ContextTable), Events: dynamoeventlog.New(ddb, pc.EventsTable), Tasks: tasks}
}

// StartPeople runs one of the functions that put a person in the loop
// (function.KindPeople): ConfirmFunction, the .waitForTaskToken task that
// stores a pending confirmation; ConfirmationsFunction, GET and POST
// /api/confirmations on the HTTP API (JWT authorizer); StreamFunction, the
// execution's events as Server-Sent Events on a Function URL with
// InvokeMode RESPONSE_STREAM, JWTs checked against the issuer's JWKS,
// events read from DynamoDB and the execution's history mirrored into them.
func StartPeople(logicalID string) {
	lambdaenv.Start(logicalID, function.KindPeople, peoplefn.Functions, func(_ context.Context, cfg lambdaenv.Config, ac aws.Config) (any, error) {
		switch logicalID {
		case "ConfirmFunction":
			pc, err := peopleConfigFromEnv(os.Getenv, false)
			if err != nil {
				return nil, err
			}
			// Creating a confirmation never resumes a task: no sfn client.
			return &peoplefn.Services{Confirm: confirmService(cfg, pc, ac, false)}, nil
		case "ConfirmationsFunction":
			pc, err := peopleConfigFromEnv(os.Getenv, false)
			if err != nil {
				return nil, err
			}
			return &peoplefn.Services{API: httpapi.NewGateway(httpapi.Routes{Confirmations: confirmService(cfg, pc, ac, true)}, cfg.TenantClaim)}, nil
		case "StreamFunction":
			pc, err := peopleConfigFromEnv(os.Getenv, true)
			if err != nil {
				return nil, err
			}
			log := dynamoeventlog.New(dynamodb.NewFromConfig(ac), pc.EventsTable)
			execs := &stream.Executions{API: sfn.NewFromConfig(ac), Recorder: &stream.Recorder{Log: log}, Log: log, StateMachines: pc.StateMachines}
			verify := &auth.JWKS{URL: pc.JWKSURL, Policy: auth.Policy{Issuer: pc.JWTIssuer, Audience: pc.JWTAudience, TenantClaim: cfg.TenantClaim}}
			h := peoplefn.Stream(
				eventStream(&httpapi.Events{Log: log, Resolve: execs, Refresh: execs}, verify))
			return &peoplefn.Services{Stream: &h}, nil
		}
		return nil, fmt.Errorf("%s is not a %s function", logicalID, function.KindPeople)
	})
}

// eventStream serves the event stream on a streaming Function URL (AuthType
// NONE): the tokens are verified here, by v, as the bearer header or, for
// browsers' EventSource, ?access_token=.
func eventStream(h *httpapi.Events, v auth.Verifier) func(context.Context, *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLStreamingResponse, error) {
	return httpapi.FunctionURL(httpapi.EventStream(h, v, slog.Default()))
}

// localPeople assembles the people functions on this machine under dir,
// with the layout "veredicto serve --data dir" uses: confirmations and
// events under dir, decisions delivered through the Step Functions API of
// the server running on dir, stream tokens signed with dir's local key. It
// returns the confirmations service that resolves them too.
func localPeople(dir string) (catalog.Services, *confirm.Service) {
	log := fileeventlog.Local(dir)
	tasks := ServiceSFN(dir, "", PrincipalConfirmations)
	svc := &confirm.Service{Store: fileconfirm.Local(dir), Events: log}
	resolving := &confirm.Service{Store: svc.Store, Events: log, Tasks: tasks}
	sse := peoplefn.Stream(
		eventStream(&httpapi.Events{Log: log}, localKey{dir: dir}))
	return catalog.Services{Confirm: svc, Stream: &sse}, resolving
}

// localKey verifies tokens signed with the local HS256 key under dir
// ("veredicto token"), read when the first token arrives.
type localKey struct{ dir string }

func (k localKey) Verify(ctx context.Context, token string) (auth.Claims, error) {
	key, err := auth.LoadOrCreateKey(k.dir)
	if err != nil {
		return auth.Claims{}, fmt.Errorf("local signing key: %w", err)
	}
	return LocalTokens(key).Verify(ctx, token)
}

// LocalIssuer is the iss claim of the tokens "veredicto token" signs;
// LocalAudience their aud.
const (
	LocalIssuer   = "veredicto-local"
	LocalAudience = "veredicto"
)

// MaxLocalTokenTTL is the longest a local token may live, the longest
// "veredicto token --ttl" issues.
const MaxLocalTokenTTL = 24 * time.Hour

// SignLocalToken signs a token the server running on data accepts, for
// tenant, naming subject, valid for ttl (at most MaxLocalTokenTTL).
func SignLocalToken(data, tenant, subject string, ttl time.Duration) (string, error) {
	if ttl <= 0 || ttl > MaxLocalTokenTTL {
		return "", fmt.Errorf("a token lives at most %s", MaxLocalTokenTTL)
	}
	key, err := auth.LoadOrCreateKey(data)
	if err != nil {
		return "", err
	}
	now := time.Now()
	return auth.SignHS256(key, auth.Claims{Subject: subject, Tenant: tenant, Issuer: LocalIssuer, Audience: []string{LocalAudience},
		IssuedAt: now, ExpiresAt: now.Add(ttl)}, auth.DefaultTenantClaim)
}

// LocalTokens verifies the local server's tokens: HS256 with key, issuer
// LocalIssuer, audience LocalAudience, at most MaxLocalTokenTTL long.
func LocalTokens(key []byte) *auth.HS256 {
	return &auth.HS256{Key: key, Policy: auth.Policy{Issuer: LocalIssuer, Audience: []string{LocalAudience}, MaxLifetime: MaxLocalTokenTTL}}
}
