package lambdaapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/veredicto/veredicto/internal/asl"
)

// fakeEndpoint is a small Lambda endpoint on loopback, as `sam local
// start-lambda` would be (SAM CLI needs Docker, which is absent here): it
// knows the functions Hello (echoes its event under "hello") and Broken
// (fails as a Python function does), and records what it was asked.
type fakeEndpoint struct {
	url   string
	mu    sync.Mutex
	calls []string // "name?Qualifier payload"
}

func startFakeEndpoint(t *testing.T) *fakeEndpoint {
	t.Helper()
	f := &fakeEndpoint{}
	mux := http.NewServeMux()
	mux.HandleFunc(Route, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.calls = append(f.calls, r.PathValue("name")+"?"+r.URL.Query().Get("Qualifier")+" "+string(body))
		f.mu.Unlock()
		switch r.PathValue("name") {
		case "Hello":
			w.Write([]byte(`{"hello":` + string(body) + `}`))
		case "Broken":
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			w.Write([]byte(`{"errorMessage":"division by zero","errorType":"ZeroDivisionError","stackTrace":[]}`))
		default:
			w.Header().Set("X-Amzn-ErrorType", "ResourceNotFoundException")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"Type":"User","message":"Function not found: ` + r.PathValue("name") + `"}`))
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

func (f *fakeEndpoint) called() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func TestRemoteHandler(t *testing.T) {
	ctx := context.Background()
	ep := startFakeEndpoint(t)
	r := NewRemote(ep.url, "us-east-1", nil)
	tests := []struct {
		name         string
		fn           Function
		out, errName string
		cause        string
	}{
		{"answer", Function{Name: "Hello", Region: "us-west-2", Account: "123456789012"}, `{"hello":{"a":1}}`, "", ""},
		{"qualified", Function{Name: "Hello", Qualifier: "live"}, `{"hello":{"a":1}}`, "", ""},
		{"function error", Function{Name: "Broken"}, "", "ZeroDivisionError", `{"errorMessage":"division by zero","errorType":"ZeroDivisionError","stackTrace":[]}`},
		{"unknown", Function{Name: "Gone"}, "", "Lambda.ResourceNotFoundException", "Function not found: Gone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := r.Handler(tt.fn)(ctx, json.RawMessage(`{"a":1}`))
			var se *asl.StatesError
			switch {
			case tt.errName == "" && (err != nil || string(out) != tt.out):
				t.Errorf("got %s, %v; want %s", out, err, tt.out)
			case tt.errName != "" && (!errors.As(err, &se) || se.Name != tt.errName || se.Cause != tt.cause):
				t.Errorf("got %v, want %s: %s", err, tt.errName, tt.cause)
			}
		})
	}
	if got := strings.Join(ep.called(), "|"); got != `Hello? {"a":1}|Hello?live {"a":1}|Broken? {"a":1}|Gone? {"a":1}` {
		t.Errorf("the endpoint was asked %s", got)
	}
	down := NewRemote("http://127.0.0.1:1", "us-east-1", nil)
	_, err := down.Handler(Function{Name: "Hello"})(ctx, json.RawMessage(`{}`))
	var se *asl.StatesError
	if !errors.As(err, &se) || se.Name != "Lambda.SdkClientException" || !strings.Contains(se.Cause, "127.0.0.1:1") {
		t.Errorf("an endpoint not listening: %v, want Lambda.SdkClientException naming it", err)
	}
}
