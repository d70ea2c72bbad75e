package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/labels"
	"github.com/veredicto/veredicto/internal/poll"
	"github.com/veredicto/veredicto/internal/search"
)

// lockedBuffer is a bytes.Buffer several goroutines write.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// pendingCLI lists the pending confirmations of data with "confirm list
// --json", as a consultant in another shell would, until one appears; with
// waiting, until a run waits for it (its resolver is named).
func pendingCLI(t *testing.T, data string, waiting bool) confirm.View {
	t.Helper()
	var found confirm.View
	poll.Until(t, 30*time.Second, func() bool {
		code, stdout, stderr := runCLI(t, "", "confirm", "list", "--data", data, "--json")
		if code != exitOK {
			t.Fatalf("confirm list: exit %d\n%s", code, stderr)
		}
		var list []confirm.View
		if err := json.Unmarshal([]byte(stdout), &list); err != nil {
			t.Fatalf("confirm list --json: %v\n%s", err, stdout)
		}
		if len(list) > 0 && (!waiting || list[0].Resolver != "") {
			found = list[0]
			return true
		}
		return false
	}, "a pending confirmation")
	return found
}

func readReport(t *testing.T, out, id string) search.Report {
	t.Helper()
	var rep search.Report
	b := mustRead(t, filepath.Join(out, id, "report.json"))
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestSearchRunReviewWaitsForConfirm: "search run --review" waits for the
// senior consultant; "confirm approve|reject" from another shell (a second
// Main, sharing only --data) decides, the waiting run receives the
// decision and the report records it.
func TestSearchRunReviewWaitsForConfirm(t *testing.T) {
	t.Setenv("USER", "ana") // confirm records the OS user
	tests := []struct {
		action, want string
	}{
		{"approve", search.DecisionApprovedByConsultant},
		{"reject", search.DecisionDiscardedByConsultant},
	}
	for _, tt := range tests {
		t.Run(tt.action, func(t *testing.T) {
			out, data := t.TempDir(), t.TempDir()
			var stdout, stderr lockedBuffer
			run := &Main{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}
			ctx, cancel := context.WithCancel(context.Background())
			done, finished := make(chan int, 1), make(chan struct{})
			go func() {
				defer close(finished)
				done <- run.Run(ctx, []string{"search", "run", "../../examples/search-demo", "--out", out,
					"--llm", "offline", "--data", data, "--review", "--review-timeout", "10m"})
			}()
			t.Cleanup(func() { cancel(); <-finished }) // a failed test stops the run before its folders go
			c := pendingCLI(t, data, true)
			var preview struct {
				CandidateID string `json:"candidate_id"`
			}
			if err := json.Unmarshal(c.Preview, &preview); err != nil || c.ToolName != "senior_review" || preview.CandidateID != "c-005" {
				t.Fatalf("pending %s %s (%v), want c-005's senior review", c.ToolName, c.Preview, err)
			}
			code, cout, cerr := runCLI(t, "", "confirm", tt.action, c.ID, "--comment", "llamé a dos referencias", "--data", data)
			if code != exitOK || !strings.Contains(cout, "entregada a la ejecución que la esperaba") {
				t.Errorf("confirm %s: exit %d, stdout %q, stderr %q; want the delivery confirmed", tt.action, code, cout, cerr)
			}
			if code := <-done; code != exitOK {
				t.Fatalf("search run: exit %d\n%s", code, stderr.String())
			}
			if !strings.Contains(stdout.String(), "c-005        "+labels.Of(labels.Decision, tt.want)) {
				t.Errorf("search run stdout lacks c-005 %s:\n%s", tt.want, stdout.String())
			}
			rep := readReport(t, out, "c-005")
			if rep.Decision != tt.want || rep.Review == nil || rep.Review.DecidedBy != "local:ana" || rep.Review.Comment != "llamé a dos referencias" || rep.Review.ID != c.ID {
				t.Errorf("c-005 report: %s, review %+v; want %s by local:ana with the comment", rep.Decision, rep.Review, tt.want)
			}
			if code, again, _ := runCLI(t, "", "confirm", tt.action, c.ID, "--data", data); code != exitFailed {
				t.Errorf("a second decision: exit %d, %q; want 1", code, again)
			}
		})
	}
}

// TestSearchRunUnattendedReview: without --review the run does not wait:
// c-005 stays escalated with a pending review; a decision taken afterwards
// says it is recorded for the next run, and the next run applies it.
func TestSearchRunUnattendedReview(t *testing.T) {
	t.Setenv("USER", "ana") // confirm records the OS user
	out, data := t.TempDir(), t.TempDir()
	args := []string{"search", "run", "../../examples/search-demo", "--out", out, "--llm", "offline", "--data", data}
	code, stdout, stderr := runCLI(t, "", args...)
	if code != exitOK || !strings.Contains(stdout, "c-005        "+labels.Of(labels.Decision, search.DecisionEscalated)) || !strings.Contains(stdout, "está pendiente") {
		t.Fatalf("first run: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	decisions := func(progress string) []string {
		var lines []string
		for _, l := range strings.Split(progress, "\n") {
			if strings.HasPrefix(l, "c-005 ") && strings.Contains(l, "→") {
				lines = append(lines, l)
			}
		}
		return lines
	}
	if d := decisions(stdout + stderr); len(d) != 1 {
		t.Errorf("first run: c-005's decision printed as %q, want once (the pending review changes nothing)", d)
	}
	rep := readReport(t, out, "c-005")
	if rep.Review == nil || rep.Review.Status != search.ReviewPending {
		t.Fatalf("c-005 review %+v, want pending", rep.Review)
	}
	c := pendingCLI(t, data, false)
	if c.ID != rep.Review.ID {
		t.Errorf("listed %s, report names %s", c.ID, rep.Review.ID)
	}
	code, cout, cerr := runCLI(t, "", "confirm", "approve", c.ID, "--comment", "ok", "--data", data)
	if code != exitOK || !strings.Contains(cout, "Ninguna ejecución la esperaba: la próxima ejecución de la búsqueda la aplica") {
		t.Errorf("confirm approve: exit %d, stdout %q, stderr %q", code, cout, cerr)
	}
	code, stdout, stderr = runCLI(t, "", args...)
	if code != exitOK || !strings.Contains(stdout, "c-005        "+labels.Of(labels.Decision, search.DecisionApprovedByConsultant)) {
		t.Fatalf("re-run: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if d := decisions(stdout + stderr); len(d) != 2 || !strings.Contains(d[1], labels.Of(labels.Decision, search.DecisionApprovedByConsultant)) {
		t.Errorf("re-run: c-005's decisions printed as %q, want the protocol's, then the consultant's", d)
	}
	if rep := readReport(t, out, "c-005"); rep.Review == nil || rep.Review.DecidedBy != "local:ana" || rep.Review.Comment != "ok" {
		t.Errorf("re-run: c-005 review %+v, want ana's approval", rep.Review)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
