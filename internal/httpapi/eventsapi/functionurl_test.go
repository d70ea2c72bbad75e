package eventsapi_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	dynamoeventlog "github.com/veredicto/veredicto/internal/eventlog/dynamo"
	fileeventlog "github.com/veredicto/veredicto/internal/eventlog/file"
	"github.com/veredicto/veredicto/internal/httpapi/eventsapi"

	"github.com/aws/aws-lambda-go/events"

	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/dynalite"
	"github.com/veredicto/veredicto/internal/eventlog"
	"github.com/veredicto/veredicto/internal/httpapi"
)

func TestMain(m *testing.M) {
	code := m.Run()
	dynalite.Stop()
	os.Exit(code)
}

// issuer is an httptest JWKS endpoint with one RSA key.
type issuer struct {
	key *rsa.PrivateKey
	srv *httptest.Server
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is := &issuer{key: k}
	is.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{
			"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256",
			"n": base64.RawURLEncoding.EncodeToString(k.N.Bytes()),
			"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(k.E)).Bytes()),
		}}})
	}))
	t.Cleanup(is.srv.Close)
	return is
}

func (is *issuer) token(t *testing.T, tenant string) string {
	t.Helper()
	seg := func(v any) string { b, _ := json.Marshal(v); return base64.RawURLEncoding.EncodeToString(b) }
	in := seg(map[string]string{"alg": "RS256", "kid": "k1"}) + "." +
		seg(map[string]any{"iss": "https://issuer", "custom:tenant": tenant, "exp": time.Now().Add(time.Hour).Unix()})
	sum := sha256.Sum256([]byte(in))
	sig, err := rsa.SignPKCS1v15(rand.Reader, is.key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return in + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// TestFunctionURLStreamsFromDynamoDB is the AWS path end to end, but for
// the Lambda service: a Function URL request with a JWKS-verified token,
// the stream read from DynamoDB (dynalite) since Last-Event-ID.
func TestFunctionURLStreamsFromDynamoDB(t *testing.T) {
	client := dynalite.Client(t)
	dynalite.CreateTable(t, client, dynamoeventlog.TableSchema("events-url"))
	log := dynamoeventlog.New(client, "events-url")
	for i := 1; i <= 4; i++ {
		typ := eventlog.TypeExecutionStep
		if i == 4 {
			typ = eventlog.TypeFinish
		}
		ev, _ := eventlog.New(typ, "", map[string]int{"n": i})
		if _, err := log.Append(t.Context(), "acme", arn, ev); err != nil {
			t.Fatal(err)
		}
	}
	is := newIssuer(t)
	v := &auth.JWKS{URL: is.srv.URL, Client: is.srv.Client(), Policy: auth.Policy{Issuer: "https://issuer"}}
	h := httpapi.FunctionURL(eventsapi.EventStream(&eventsapi.Routes{Log: log, Poll: 10 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}, v, slog.New(slog.DiscardHandler)))

	req := func(query string, headers map[string]string) *events.LambdaFunctionURLRequest {
		r := &events.LambdaFunctionURLRequest{RawPath: "/", RawQueryString: query, Headers: headers}
		r.RequestContext.HTTP.Method = "GET"
		r.RequestContext.DomainName = "abc.lambda-url.us-east-1.on.aws"
		return r
	}
	tests := []struct {
		name       string
		req        *events.LambdaFunctionURLRequest
		wantStatus int
		wantIDs    string
	}{
		{"bearer, from the start", req("execution="+arn, map[string]string{"authorization": "Bearer " + is.token(t, "acme")}), 200, "1,2,3,4"},
		{"query token, resumed", req("execution="+arn+"&access_token="+is.token(t, "acme"), map[string]string{"last-event-id": "2"}), 200, "3,4"},
		{"another tenant", req("execution="+arn, map[string]string{"authorization": "Bearer " + is.token(t, "globex")}), 404, ""},
		{"no token", req("execution="+arn, nil), 401, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := h(t.Context(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Close()
			if resp.StatusCode != tt.wantStatus {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d %s, want %d", resp.StatusCode, b, tt.wantStatus)
			}
			if tt.wantStatus != 200 {
				return
			}
			if ct := resp.Headers["Content-Type"]; ct != "text/event-stream" {
				t.Errorf("Content-Type = %q", ct)
			}
			msgs := make(chan sseMsg, 10)
			go readSSE(resp.Body, msgs, nil)
			var ids []string
			for m := range msgs {
				ids = append(ids, m.id)
			}
			if got := strings.Join(ids, ","); got != tt.wantIDs {
				t.Errorf("ids = %s, want %s", got, tt.wantIDs)
			}
		})
	}

	t.Run("ends before the invocation deadline", func(t *testing.T) {
		ev, _ := eventlog.New(eventlog.TypeExecutionStep, "", map[string]int{})
		if _, err := log.Append(t.Context(), "acme", arn+"-open", ev); err != nil {
			t.Fatal(err)
		}
		// Reserve leaves the stream one second of the invocation: the
		// handler must end then rather than wait for a finish that never
		// comes.
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		h := httpapi.FunctionURL(eventsapi.EventStream(&eventsapi.Routes{Log: log, Poll: 10 * time.Millisecond, Reserve: time.Hour - time.Second}, v, slog.New(slog.DiscardHandler)))
		resp, err := h(ctx, req("execution="+arn+"-open", map[string]string{"authorization": "Bearer " + is.token(t, "acme")}))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body) // returns only if the handler ends the stream
		if err != nil || !strings.Contains(string(b), "id: 1\n") {
			t.Errorf("body %q, %v", b, err)
		}
	})
}

// TestSampleEvent serves events/stream.json (a Function URL request that
// resumes after event 3) with a real token in place of the sample's.
func TestSampleEvent(t *testing.T) {
	b, err := os.ReadFile("../../../events/stream.json")
	if err != nil {
		t.Fatal(err)
	}
	var req events.LambdaFunctionURLRequest
	if err := json.Unmarshal(b, &req); err != nil {
		t.Fatal(err)
	}
	exec := req.QueryStringParameters["execution"]
	log := fileeventlog.New(t.TempDir())
	for i := 1; i <= 5; i++ {
		typ := eventlog.TypeExecutionStep
		if i == 5 {
			typ = eventlog.TypeFinish
		}
		ev, _ := eventlog.New(typ, "", map[string]int{"n": i})
		if _, err := log.Append(t.Context(), "default", exec, ev); err != nil {
			t.Fatal(err)
		}
	}
	is := newIssuer(t)
	req.Headers["authorization"] = "Bearer " + is.token(t, "default")
	v := &auth.JWKS{URL: is.srv.URL, Client: is.srv.Client()}
	h := httpapi.FunctionURL(eventsapi.EventStream(&eventsapi.Routes{Log: log, Logger: slog.New(slog.DiscardHandler)}, v, slog.New(slog.DiscardHandler)))
	resp, err := h(t.Context(), &req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d, %v", resp.StatusCode, err)
	}
	msgs := make(chan sseMsg, 10)
	go readSSE(resp.Body, msgs, nil)
	var ids []string
	for m := range msgs {
		ids = append(ids, m.id)
	}
	if got := strings.Join(ids, ","); got != "4,5" {
		t.Errorf("ids = %s, want 4,5 (after the sample's Last-Event-ID 3)", got)
	}
}
