package debateapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/httpapi"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/starter"
	store "github.com/veredicto/veredicto/internal/store/file"
)

type fakeDebateStarter struct{ started []string }

func (f *fakeDebateStarter) Start(_ context.Context, name string, _ []byte) (starter.Execution, error) {
	for _, s := range f.started {
		if s == name {
			return starter.Execution{Name: name}, nil
		}
	}
	f.started = append(f.started, name)
	return starter.Execution{Name: name, Started: true}, nil
}

func (f *fakeDebateStarter) Describe(_ context.Context, name string) (starter.Status, error) {
	for _, s := range f.started {
		if s == name {
			return starter.Status{Name: name, Status: "RUNNING"}, nil
		}
	}
	return starter.Status{}, &veredicto.NotFoundError{What: "execution " + name}
}

type noReports struct{}

func (noReports) Get(_ context.Context, key string) ([]byte, error) {
	return nil, &veredicto.NotFoundError{What: "blob " + key}
}

func TestDebatesRoutes(t *testing.T) {
	st := &fakeDebateStarter{}
	d := httpapi.New(nil, &Routes{Starter: st, Logs: store.NewMemory(), Reports: noReports{}})
	good := `{"debate_id": "d-1", "question": {"question": "¿Avanzamos con c-005?", "options": ["a", "b"], "participants": [{"id": "cfo", "brief": "x"}]}}`
	tests := []struct {
		name, method, path, tenant, body string
		status                           int
		contains                         string
	}{
		{"no tenant", "POST", "/debates", "", good, http.StatusUnauthorized, "no credentials"},
		{"unknown field", "POST", "/debates", "acme", `{"debate_id": "d-1", "extra": 1}`, http.StatusBadRequest, "extra"},
		{"bad question", "POST", "/debates", "acme", `{"debate_id": "d-1", "question": {"question": "x", "options": ["a"]}}`, http.StatusBadRequest, "options"},
		{"bad id", "POST", "/debates", "acme", strings.Replace(good, "d-1", "d 1", 1), http.StatusBadRequest, "debate_id"},
		{"started", "POST", "/debates", "acme", good, http.StatusAccepted, `"status": "RUNNING"`},
		{"read", "GET", "/debates/d-1", "acme", "", http.StatusOK, `"status": "RUNNING"`},
		{"another tenant", "GET", "/debates/d-1", "globex", "", http.StatusNotFound, "\"debate d-1 not found\""},
		{"no report yet", "GET", "/debates/d-1/report", "acme", "", http.StatusNotFound, "debate d-1 has no report: it does not exist or has not finished"},
		{"wrong method", "DELETE", "/debates/d-1", "acme", "", http.StatusMethodNotAllowed, "DELETE is not allowed on /debates/d-1; use GET, HEAD"},
		{"no route", "GET", "/debates/d-1/nope", "acme", "", http.StatusNotFound, "route GET /debates/d-1/nope not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body))
			if tt.tenant != "" {
				r = r.WithContext(auth.WithPrincipal(r.Context(), auth.Principal{Name: "ana", Tenant: tt.tenant, Via: auth.ViaJWT}))
			}
			w := httptest.NewRecorder()
			d.ServeHTTP(w, r)
			if w.Code != tt.status || !strings.Contains(w.Body.String(), tt.contains) {
				t.Errorf("%d %s, want %d containing %q", w.Code, w.Body.String(), tt.status, tt.contains)
			}
		})
	}
}
