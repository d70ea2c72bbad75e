package lambdaapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/smithy-go"

	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/poll"
)

type TransientError struct{}

func (TransientError) Error() string { return "the model did not answer" }

type event struct {
	Tenant string `json:"tenant"`
	N      int    `json:"n"`
}

// testFunctions are the functions of the handler under test; ran counts
// the invocations of Count, release lets Block's return.
type testFunctions struct {
	ran     atomic.Int32
	release chan struct{}
}

func (tf *testFunctions) config() Config {
	return Config{Region: "us-east-1", Account: "000000000000", Functions: map[string]any{
		"Echo": func(ctx context.Context, in event) (map[string]any, error) {
			lc, _ := lambdacontext.FromContext(ctx)
			return map[string]any{"n": in.N, "tenant": in.Tenant, "arn": lc.InvokedFunctionArn}, nil
		},
		"Fail":  func(context.Context, event) (event, error) { return event{}, TransientError{} },
		"Panic": func(context.Context, event) (event, error) { panic("boom") },
		"Count": func(context.Context, event) (event, error) { tf.ran.Add(1); return event{}, nil },
		"Block": func(context.Context, event) (event, error) { <-tf.release; return event{}, nil },
	}, TenantFunctions: map[string]bool{"Count": true}}
}

// serve is h on a loopback server whose requests act as p (the
// Authenticator's part: the tests of serve sign them for real).
func serve(t *testing.T, h *Handler, p *auth.Principal) *lambda.Client {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle(Route, h)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p != nil {
			r = r.WithContext(auth.WithPrincipal(r.Context(), *p))
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return lambda.New(lambda.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Retryer: aws.NopRetryer{},
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")})
}

var (
	operator = &auth.Principal{Name: "ana", Operator: true, Via: auth.ViaSigV4}
	acme     = &auth.Principal{Name: "person@acme", Tenant: "acme", Via: auth.ViaSigV4}
)

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode() + ": " + ae.ErrorMessage()
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

func TestInvoke(t *testing.T) {
	ctx := context.Background()
	tf := &testFunctions{}
	h := New(tf.config())
	defer h.Close()
	c := serve(t, h, operator)
	tests := []struct {
		name, function, qualifier, payload string
		wantOut, wantFunctionError         string
		wantErr                            string // code: message prefix
	}{
		{"by name", "Echo", "", `{"n":1,"tenant":"acme"}`, `{"arn":"arn:aws:lambda:us-east-1:000000000000:function:Echo","n":1,"tenant":"acme"}`, "", ""},
		{"by ARN, $LATEST", "arn:aws:lambda:us-east-1:000000000000:function:Echo", "$LATEST", `{"n":2}`, `{"arn":"arn:aws:lambda:us-east-1:000000000000:function:Echo:$LATEST","n":2,"tenant":""}`, "", ""},
		{"empty payload", "Echo", "", ``, `{"arn":"arn:aws:lambda:us-east-1:000000000000:function:Echo","n":0,"tenant":""}`, "", ""},
		{"function error", "Fail", "", `{}`, `{"errorMessage":"the model did not answer","errorType":"TransientError"}`, "Unhandled", ""},
		{"panic", "Panic", "", `{}`, `{"errorMessage":"boom","errorType":"string"}`, "Unhandled", ""},
		{"undecodable event", "Echo", "", `{"n":"one"}`, "", "Unhandled", ""},
		{"unknown", "Nope", "", `{}`, "", "", "ResourceNotFoundException: Function not found: arn:aws:lambda:us-east-1:000000000000:function:Nope"},
		{"another account", "arn:aws:lambda:us-east-1:123456789012:function:Echo", "", `{}`, "", "", "ResourceNotFoundException: Function not found: arn:aws:lambda:us-east-1:123456789012:function:Echo"},
		{"a version", "Echo", "3", `{}`, "", "", "ResourceNotFoundException: Function not found: arn:aws:lambda:us-east-1:000000000000:function:Echo:3"},
		{"not JSON", "Echo", "", `{"n":`, "", "", "InvalidRequestContentException: Could not parse request body into json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &lambda.InvokeInput{FunctionName: aws.String(tt.function), Payload: []byte(tt.payload)}
			if tt.qualifier != "" {
				in.Qualifier = aws.String(tt.qualifier)
			}
			out, err := c.Invoke(ctx, in)
			if tt.wantErr != "" {
				if got := apiCode(err); !strings.HasPrefix(got, tt.wantErr) {
					t.Fatalf("error %q, want %q", got, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.StatusCode != 200 || aws.ToString(out.ExecutedVersion) != "$LATEST" || aws.ToString(out.FunctionError) != tt.wantFunctionError {
				t.Errorf("status %d, version %s, function error %q; want 200, $LATEST, %q", out.StatusCode, aws.ToString(out.ExecutedVersion), aws.ToString(out.FunctionError), tt.wantFunctionError)
			}
			if tt.wantOut != "" && string(out.Payload) != tt.wantOut {
				t.Errorf("payload %s, want %s", out.Payload, tt.wantOut)
			}
		})
	}
	var nf *types.ResourceNotFoundException
	if _, err := c.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("Nope")}); !errors.As(err, &nf) {
		t.Errorf("an unknown function is %T, want *types.ResourceNotFoundException", err)
	}
}

func TestInvocationTypes(t *testing.T) {
	ctx := context.Background()
	tf := &testFunctions{release: make(chan struct{})}
	cfg := tf.config()
	cfg.MaxEvents = 1
	h := New(cfg)
	c := serve(t, h, operator)

	out, err := c.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("Count"), InvocationType: types.InvocationTypeDryRun})
	if err != nil || out.StatusCode != http.StatusNoContent || tf.ran.Load() != 0 {
		t.Errorf("DryRun: %v, status %v, ran %d; want 204 and no run", err, out, tf.ran.Load())
	}
	out, err = c.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("Count"), InvocationType: types.InvocationTypeEvent, Payload: []byte(`{}`)})
	if err != nil || out.StatusCode != http.StatusAccepted {
		t.Fatalf("Event: %v, %v; want 202", err, out)
	}
	poll.Until(t, 10*time.Second, func() bool { return tf.ran.Load() == 1 }, "the Event invocation to run")

	// One Event at a time: a second one while Block runs is refused.
	if _, err := c.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("Block"), InvocationType: types.InvocationTypeEvent}); err != nil {
		t.Fatal(err)
	}
	_, err = c.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("Count"), InvocationType: types.InvocationTypeEvent})
	if got := apiCode(err); !strings.HasPrefix(got, "TooManyRequestsException") {
		t.Errorf("a second Event while one runs: %q, want TooManyRequestsException", got)
	}
	big := `{"n":1,"pad":"` + strings.Repeat("x", MaxEventPayload) + `"}`
	_, err = c.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("Count"), InvocationType: types.InvocationTypeEvent, Payload: []byte(big)})
	if got := apiCode(err); !strings.HasPrefix(got, "RequestTooLargeException") {
		t.Errorf("an Event over 256 KiB: %q, want RequestTooLargeException", got)
	}
	close(tf.release)
	h.Close() // waits for Block
}

func TestTenantKeys(t *testing.T) {
	ctx := context.Background()
	h := New((&testFunctions{}).config())
	defer h.Close()
	c := serve(t, h, acme)
	api := func(tenant string) string {
		return `{"version":"2.0","requestContext":{"authorizer":{"jwt":{"claims":{"sub":"u","custom:tenant":"` + tenant + `"}}}}}`
	}
	tests := []struct {
		name, payload string
		allowed       bool
	}{
		{"its tenant", `{"tenant":"acme","n":1}`, true},
		{"an API event of its tenant", api("acme"), true},
		{"another tenant", `{"tenant":"other"}`, false},
		{"an API event of another tenant", api("other"), false},
		{"no tenant", `{"n":1}`, false},
		{"not an object", `[{"tenant":"acme"}]`, false},
		{"a tenant that is not a string", `{"tenant":["acme"]}`, false},
		{"the tenant twice", `{"tenant":"acme","tenant":"other"}`, false},
		{"the tenant twice, case apart", `{"tenant":"acme","Tenant":"other"}`, false},
		{"a member twice deeper", `{"tenant":"acme","x":{"a":1,"A":2}}`, false},
		{"a member twice, Unicode case apart", `{"tenant":"acme","step":"a","ſtep":"b"}`, false},
		{"two tenants that disagree", `{"tenant":"acme","requestContext":{"authorizer":{"jwt":{"claims":{"custom:tenant":"other"}}}}}`, false},
		{"its tenant in a Task's input", `{"execution":"x","input":{"tenant":"acme","search_id":"s"}}`, true},
		{"another tenant deeper", `{"tenant":"acme","flow":{"tenant":"other"}}`, false},
		{"a tenant object", `{"flow":{"tenant":{"id":"acme"}}}`, false},
	}
	// A function that is not a tenant's to invoke (an event source's)
	// is refused whatever its event says.
	_, err := c.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("Echo"), Payload: []byte(`{"tenant":"acme","n":1}`)})
	if got := apiCode(err); !strings.HasPrefix(got, "AccessDeniedException") || !strings.Contains(got, "an event source") {
		t.Errorf("a tenant invokes an event source's function: %q, want AccessDeniedException", got)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("Count"), Payload: []byte(tt.payload)})
			switch got := apiCode(err); {
			case tt.allowed && err != nil:
				t.Errorf("refused: %s", got)
			case !tt.allowed && !strings.HasPrefix(got, "AccessDeniedException: User: person@acme is not authorized to perform: lambda:InvokeFunction on resource: arn:aws:lambda:us-east-1:000000000000:function:Count because"):
				t.Errorf("got %q, want AccessDeniedException", got)
			}
		})
	}
}

func TestUnsigned(t *testing.T) {
	h := New((&testFunctions{}).config())
	defer h.Close()
	c := serve(t, h, nil)
	_, err := c.Invoke(context.Background(), &lambda.InvokeInput{FunctionName: aws.String("Echo")})
	if got := apiCode(err); !strings.HasPrefix(got, "MissingAuthenticationTokenException") {
		t.Errorf("got %q, want MissingAuthenticationTokenException", got)
	}
}
