package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/veredicto/veredicto/internal/confirm"
	fileconfirm "github.com/veredicto/veredicto/internal/confirm/file"
	"github.com/veredicto/veredicto/internal/eventlog"
	fileeventlog "github.com/veredicto/veredicto/internal/eventlog/file"
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

func TestConfirmCLI(t *testing.T) {
	data := t.TempDir()
	peer := &sfnPeer{waiting: map[string]bool{"tok-a": true, "tok-r": true, "tok-d": true}}
	srv := httptest.NewServer(peer)
	defer srv.Close()
	svc := &confirm.Service{Store: fileconfirm.Local(data), Events: fileeventlog.Local(data)}
	ids := map[string]string{}
	for _, tok := range []string{"tok-a", "tok-r", "tok-d", "tok-gone"} {
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
	if code != exitOK || strings.Count(out, "senior_review") != 4 || !strings.Contains(out, `{"candidate":"c-004"}`) {
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
		{"approve", []string{"confirm", "approve", ids["tok-a"], "--comment", "ok", "--by", "ana"}, exitOK, "approved"},
		{"approve again", []string{"confirm", "approve", ids["tok-a"], "--by", "ana"}, exitFailed, "already approved by ana"},
		{"reject", []string{"confirm", "reject", ids["tok-r"], "--comment", "no"}, exitOK, "rejected"},
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
			args := append(st.args, "--data", data, "--endpoint", srv.URL)
			code, out, errOut := runCLI(t, "", args...)
			if code != st.wantCode || !strings.Contains(out+errOut, st.wantOut) {
				t.Errorf("exit %d\nstdout %s\nstderr %s\nwant %d containing %q", code, out, errOut, st.wantCode, st.wantOut)
			}
		})
	}

	t.Run("server down, then up", func(t *testing.T) {
		peer.mu.Lock()
		peer.down = true
		peer.mu.Unlock()
		code, _, errOut := runCLI(t, "", "confirm", "approve", ids["tok-d"], "--data", data, "--endpoint", srv.URL, "--by", "ana")
		if code != exitFailed || !strings.Contains(errOut, "decision is recorded") {
			t.Fatalf("exit %d, stderr %s", code, errOut)
		}
		peer.mu.Lock()
		peer.down = false
		peer.mu.Unlock()
		// The lease of the failed attempt was released: retry at once.
		if code, out, errOut := runCLI(t, "", "confirm", "approve", ids["tok-d"], "--data", data, "--endpoint", srv.URL, "--by", "ana"); code != exitOK {
			t.Fatalf("retry: exit %d %s %s", code, out, errOut)
		}
	})

	peer.mu.Lock()
	defer peer.mu.Unlock()
	if len(peer.got) != 3 {
		t.Fatalf("server received %d deliveries, want 3: %v", len(peer.got), peer.got)
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
		ids["tok-gone"] + " expired", ids["tok-d"] + " approved"}
	if strings.Join(statuses, "\n") != strings.Join(want, "\n") {
		t.Errorf("confirmation-resolved events:\n%s\nwant:\n%s", strings.Join(statuses, "\n"), strings.Join(want, "\n"))
	}
}

// TestConfirmFindsTheServeEndpoint: without --endpoint, confirm delivers
// to the server that recorded its address under the same --data, whatever
// port it listens on.
func TestConfirmFindsTheServeEndpoint(t *testing.T) {
	data := t.TempDir()
	peer := &sfnPeer{waiting: map[string]bool{"tok-1": true}}
	srv := httptest.NewServer(peer)
	defer srv.Close()
	if err := writeServeEndpoint(data, srv.URL); err != nil {
		t.Fatal(err)
	}
	svc := &confirm.Service{Store: fileconfirm.Local(data), Events: fileeventlog.Local(data)}
	undoable := false
	resp, err := svc.Confirm(t.Context(), confirm.Request{TaskToken: "tok-1", ToolName: "senior_review", Category: "decision",
		Sensitivity: "high", Undoable: &undoable, Preview: json.RawMessage(`{}`),
		Execution: "arn:aws:states:us-east-1:000000000000:execution:ExecutiveSearch:s-1"})
	if err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runCLI(t, "", "confirm", "approve", resp.ID, "--data", data, "--by", "ana"); code != exitOK {
		t.Fatalf("approve: exit %d %s %s", code, out, errs)
	}
	peer.mu.Lock()
	defer peer.mu.Unlock()
	if len(peer.got) != 1 || !strings.HasPrefix(peer.got[0], "SendTaskSuccess tok-1") {
		t.Errorf("the server recorded under --data received %v", peer.got)
	}
	removeServeEndpoint(data, srv.URL)
	if _, ok := readServeEndpoint(data); ok {
		t.Error("the record outlived its server's removal")
	}
}
