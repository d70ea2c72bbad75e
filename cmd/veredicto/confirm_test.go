package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/confirm"
	fileconfirm "github.com/veredicto/veredicto/internal/confirm/file"
	"github.com/veredicto/veredicto/internal/eventlog"
	fileeventlog "github.com/veredicto/veredicto/internal/eventlog/file"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/httpapi/apitest"
	"github.com/veredicto/veredicto/internal/httpapi/confirmapi"
)

// sfnPeer answers SendTaskSuccess / SendTaskFailure over the AWS JSON 1.0
// protocol, as "veredicto serve" does, for the tokens it holds.
type sfnPeer struct {
	mu      sync.Mutex
	waiting map[string]bool
	got     []string // "Operation token output-or-error"
	down    bool
}

func (p *sfnPeer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AWSStepFunctions.")
	var in struct {
		TaskToken string `json:"taskToken"`
		Output    string `json:"output"`
		Error     string `json:"error"`
	}
	b, _ := io.ReadAll(r.Body)
	json.Unmarshal(b, &in)
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	if !p.waiting[in.TaskToken] {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"__type":"com.amazonaws.swf.service.v2.model#TaskTimedOut","message":"Task Timed Out"}`)
		return
	}
	delete(p.waiting, in.TaskToken)
	p.got = append(p.got, op+" "+in.TaskToken+" "+in.Output+in.Error)
	io.WriteString(w, `{}`)
}

// confirmationsAPI is the server's confirmation service on the HTTP API,
// behind the local token check, delivering to peer: what "veredicto serve
// --data data" answers on POST /api/confirmations, recorded under data as
// the running server.
func confirmationsAPI(t *testing.T, data string, peer *sfnPeer) *httptest.Server {
	t.Helper()
	key, err := auth.LoadOrCreateKey(data)
	if err != nil {
		t.Fatal(err)
	}
	tasksSrv := httptest.NewServer(peer)
	t.Cleanup(tasksSrv.Close)
	svc := &confirm.Service{Store: fileconfirm.Local(data), Events: fileeventlog.Local(data),
		Tasks: apitest.SFN(tasksSrv.URL, auth.Key{AccessKeyID: "x", SecretAccessKey: "x"}), Logger: slog.New(slog.DiscardHandler)}
	authn := &httpapi.Authenticator{Tokens: app.LocalTokens(key), SigV4: &auth.SigV4{Keys: auth.OpenKeys(data), Region: app.DefaultRegion}}
	srv := httptest.NewServer(authn.Wrap(httpapi.New(slog.New(slog.DiscardHandler), confirmapi.Routes{Service: svc})))
	t.Cleanup(srv.Close)
	if err := app.WriteEndpoint(data, srv.URL); err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestConfirmCLI decides through the running server's confirmation
// service: each decision records the person (local:$USER, the subject of
// the token the CLI signs), never a name the command line gives.
func TestConfirmCLI(t *testing.T) {
	t.Setenv("USER", "ana")
	data := t.TempDir()
	peer := &sfnPeer{waiting: map[string]bool{"tok-a": true, "tok-r": true, "tok-d": true, "tok-k": true}}
	confirmationsAPI(t, data, peer)
	svc := &confirm.Service{Store: fileconfirm.Local(data), Events: fileeventlog.Local(data)}
	ids := map[string]string{}
	for _, tok := range []string{"tok-a", "tok-r", "tok-d", "tok-gone", "tok-k"} {
		undoable := false
		resp, err := svc.Confirm(t.Context(), confirm.Request{TaskToken: tok, ToolName: "senior_review", Category: "decision",
			Sensitivity: "high", Undoable: &undoable, Preview: json.RawMessage(`{"candidate":"c-004"}`),
			Execution: "arn:aws:states:us-east-1:000000000000:execution:ExecutiveSearch:s-1"})
		if err != nil {
			t.Fatal(err)
		}
		ids[tok] = resp.ID
	}

	code, out, errOut := runCLI(t, "", "confirm", "list", "--data", data)
	if code != exitOK || strings.Count(out, "Revisión del consultor senior") != 5 || !strings.Contains(out, "candidate: c-004") {
		t.Fatalf("list: exit %d\n%s%s", code, out, errOut)
	}
	if strings.Contains(out, "tok-") {
		t.Errorf("list shows task tokens:\n%s", out)
	}

	steps := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
	}{
		{"only the ids", []string{"confirm", "list", "--ids"}, exitOK, ids["tok-r"] + "\n"},
		{"an empty JSON list is an array", []string{"confirm", "list", "--json", "--tenant", "nobody"}, exitOK, "[]\n"},
		{"ids or JSON", []string{"confirm", "list", "--json", "--ids"}, exitUsage, "not both"},
		{"approve", []string{"confirm", "approve", ids["tok-a"], "--comment", "ok"}, exitOK, "aprobada"},
		{"approve again", []string{"confirm", "approve", ids["tok-a"]}, exitFailed, "already approved by local:ana"},
		{"no name from the command line", []string{"confirm", "approve", ids["tok-a"], "--by", "ceo"}, exitUsage, "flag provided but not defined: -by"},
		{"reject", []string{"confirm", "reject", ids["tok-r"], "--comment", "no"}, exitOK, "rechazada"},
		{"unknown", []string{"confirm", "approve", confirm.IDFor("default", "nope")}, exitFailed, "not found"},
		{"another tenant's", []string{"confirm", "approve", ids["tok-d"], "--tenant", "globex"}, exitFailed, "not found"},
		{"a missing --tenant is hinted", []string{"confirm", "approve", ids["tok-d"], "--tenant", "globex"}, exitFailed, "open confirmations are held by default: add --tenant"},
		{"an empty list hints too", []string{"confirm", "list", "--tenant", "globex"}, exitOK, "(tenant globex; open confirmations are held by default: add --tenant)"},
		{"workflow stopped waiting", []string{"confirm", "approve", ids["tok-gone"]}, exitFailed, "expired"},
		{"no id", []string{"confirm", "approve"}, exitUsage, "want 1 argument"},
		{"unknown action", []string{"confirm", "maybe"}, exitUsage, "Usage"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			args := append(st.args, "--data", data)
			code, out, errOut := runCLI(t, "", args...)
			if code != st.wantCode || !strings.Contains(out+errOut, st.wantOut) {
				t.Errorf("exit %d\nstdout %s\nstderr %s\nwant %d containing %q", code, out, errOut, st.wantCode, st.wantOut)
			}
		})
	}

	t.Run("signed with a person's access key", func(t *testing.T) {
		k := keyFor(t, data, auth.KeySpec{Name: "luis", Tenant: "default"})
		t.Setenv("AWS_ACCESS_KEY_ID", k.AccessKeyID)
		t.Setenv("AWS_SECRET_ACCESS_KEY", k.SecretAccessKey)
		if code, out, errs := runCLI(t, "", "confirm", "approve", ids["tok-k"], "--data", data); code != exitOK {
			t.Fatalf("exit %d %s %s", code, out, errs)
		}
		if rec, err := fileconfirm.Local(data).Get(t.Context(), "default", ids["tok-k"]); err != nil || rec.Decision == nil || rec.Decision.DecidedBy != "luis" {
			t.Errorf("decision %+v %v, want decided by the key's name, luis", rec.Decision, err)
		}
	})

	t.Run("server down, then up", func(t *testing.T) {
		peer.mu.Lock()
		peer.down = true
		peer.mu.Unlock()
		code, _, errOut := runCLI(t, "", "confirm", "approve", ids["tok-d"], "--data", data)
		if code != exitFailed || !strings.Contains(errOut, "decision recorded, not yet delivered") {
			t.Fatalf("exit %d, stderr %s", code, errOut)
		}
		peer.mu.Lock()
		peer.down = false
		peer.mu.Unlock()
		// The lease of the failed attempt was released: retry at once.
		if code, out, errOut := runCLI(t, "", "confirm", "approve", ids["tok-d"], "--data", data); code != exitOK {
			t.Fatalf("retry: exit %d %s %s", code, out, errOut)
		}
	})

	peer.mu.Lock()
	defer peer.mu.Unlock()
	if len(peer.got) != 4 {
		t.Fatalf("server received %d deliveries, want 4: %v", len(peer.got), peer.got)
	}
	if !strings.HasPrefix(peer.got[0], "SendTaskSuccess tok-a ") || !strings.Contains(peer.got[0], `"approved":true`) || !strings.Contains(peer.got[0], `"comment":"ok"`) {
		t.Errorf("approve sent %s", peer.got[0])
	}
	if peer.got[1] != "SendTaskFailure tok-r ConfirmationRejected" {
		t.Errorf("reject sent %s", peer.got[1])
	}
	evs, _ := fileeventlog.Local(data).Read(t.Context(), "default", "arn:aws:states:us-east-1:000000000000:execution:ExecutiveSearch:s-1", 0, 100)
	var statuses []string
	for _, e := range evs {
		if e.Type == eventlog.TypeConfirmationResolved {
			var d struct {
				ID     string `json:"id"`
				Status string `json:"status"`
			}
			json.Unmarshal(e.Data, &d)
			statuses = append(statuses, d.ID+" "+d.Status)
		}
	}
	// Each decision once, as soon as it is recorded (the outage does not
	// repeat it); the late one is followed by its expiry.
	want := []string{ids["tok-a"] + " approved", ids["tok-r"] + " rejected", ids["tok-gone"] + " approved",
		ids["tok-gone"] + " expired", ids["tok-k"] + " approved", ids["tok-d"] + " approved"}
	if strings.Join(statuses, "\n") != strings.Join(want, "\n") {
		t.Errorf("confirmation-resolved events:\n%s\nwant:\n%s", strings.Join(statuses, "\n"), strings.Join(want, "\n"))
	}
}

// TestConfirmWithoutAServer: with no server on --data, the decision is
// recorded there under the OS user and waits for the server to deliver
// it; a server recorded under --data that no longer answers records
// nothing and says so.
func TestConfirmWithoutAServer(t *testing.T) {
	t.Setenv("USER", "luis")
	data := t.TempDir()
	svc := &confirm.Service{Store: fileconfirm.Local(data), Events: fileeventlog.Local(data)}
	undoable := false
	ask := func(tok string) string {
		resp, err := svc.Confirm(t.Context(), confirm.Request{TaskToken: tok, ToolName: "senior_review", Category: "decision",
			Sensitivity: "high", Undoable: &undoable, Preview: json.RawMessage(`{}`),
			Execution: "arn:aws:states:us-east-1:000000000000:execution:ExecutiveSearch:s-1"})
		if err != nil {
			t.Fatal(err)
		}
		return resp.ID
	}
	id := ask("tok-1")
	code, _, errs := runCLI(t, "", "confirm", "approve", id, "--data", data)
	if code != exitFailed || !strings.Contains(errs, "no server is running on") || !strings.Contains(errs, "The decision is recorded") {
		t.Fatalf("approve without a server: exit %d %s", code, errs)
	}
	rec, err := svc.Store.Get(t.Context(), "default", id)
	if err != nil || rec.Status != confirm.StatusResolving || rec.Decision == nil || rec.Decision.DecidedBy != "local:luis" {
		t.Fatalf("record %+v %v, want resolving, decided by local:luis", rec, err)
	}

	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	if err := app.WriteEndpoint(data, gone.URL); err != nil {
		t.Fatal(err)
	}
	other := ask("tok-2")
	code, _, errs = runCLI(t, "", "confirm", "reject", other, "--data", data)
	if code != exitFailed || !strings.Contains(errs, "did not answer") || !strings.Contains(errs, "nothing was recorded") {
		t.Fatalf("reject with a dead server: exit %d %s", code, errs)
	}
	if rec, _ := svc.Store.Get(t.Context(), "default", other); rec.Status != confirm.StatusPending {
		t.Errorf("a decision the server never received was recorded: %+v", rec)
	}
	app.RemoveEndpoint(data, gone.URL)
	if _, ok := app.ReadEndpoint(data); ok {
		t.Error("the record outlived its server's removal")
	}
}
