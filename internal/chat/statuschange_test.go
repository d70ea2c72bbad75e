package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/smithy-go"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/eventlog"
	"github.com/veredicto/veredicto/internal/labels"
	"github.com/veredicto/veredicto/internal/labels/labelstest"
	"github.com/veredicto/veredicto/internal/stream"
)

// statusEvent is an EventBridge "Step Functions Execution Status Change"
// event, shaped as Step Functions sends it, for the execution arn of the
// given tenant.
func statusEvent(t *testing.T, id, arn, tenant, status, output, errName string) StatusChangeEvent {
	t.Helper()
	detail := map[string]any{
		"executionArn": arn, "stateMachineArn": stream.MachineOf(arn), "name": arn[strings.LastIndex(arn, ":")+1:],
		"status": status, "startDate": 1767225600000, "stopDate": nil, "redriveCount": 0, "redriveDate": nil,
		"redriveStatus": "NOT_REDRIVABLE", "redriveStatusReason": "Execution is RUNNING and cannot be redriven",
		"input": fmt.Sprintf(`{"tenant":%q,"search_id":"cfo-2026"}`, tenant), "inputDetails": map[string]bool{"included": true},
		"output": nil, "outputDetails": nil, "error": nil, "cause": nil,
	}
	if status != "RUNNING" {
		detail["stopDate"] = 1767225900000
		detail["redriveStatus"], detail["redriveStatusReason"] = "REDRIVABLE", ""
	}
	if output != "" {
		detail["output"], detail["outputDetails"] = output, map[string]bool{"included": true}
	}
	if errName != "" {
		detail["error"], detail["cause"] = errName, "the text of the failure, which may quote a CV"
	}
	b, err := json.Marshal(detail)
	if err != nil {
		t.Fatal(err)
	}
	return StatusChangeEvent{Version: "0", ID: id, DetailType: StatusChangeDetailType, Source: "aws.states", Account: "000000000000",
		Time: "2026-01-01T00:05:00Z", Region: "us-east-1", Resources: []string{arn}, Detail: b}
}

// awsLinks is ChatLinkFunction's Links on the rig's stores: nothing
// follows, nothing describes executions.
func awsLinks(r *rig, logs *bytes.Buffer) *Links {
	logger := r.svc.Logger
	if logs != nil {
		logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return &Links{Store: r.svc.Store, Events: r.events, Log: r.events, Logger: logger}
}

// linkedSearch runs a turn of chat that starts search cfo-2026 with the
// rig's chat keeping links (not followed, as on AWS) and returns its
// execution's ARN.
func linkedSearch(t *testing.T, r *rig, chatID string) string {
	t.Helper()
	if r.svc.Links == nil {
		withLinks(r, fakeExecutions{tenant: "acme"})
	}
	r.svc.Model = startSearch("cfo-2026")
	r.turn(t, chatID, "Lanza la evaluación de la búsqueda cfo-2026")
	arn := execARN("x-cfo-2026")
	if open, err := r.svc.Links.Open(context.Background(), "acme", chatID); err != nil || len(open) != 1 || open[0].Execution != arn {
		t.Fatalf("links of %s: %+v %v; want the search's", chatID, open, err)
	}
	return arn
}

// linkedEvents are the events of chat's stream marked linked.
func linkedEvents(t *testing.T, r *rig, chatID string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, e := range r.eventsOf(t, chatID) {
		if linkedOf(e) != nil {
			out = append(out, e)
		}
	}
	return out
}

// TestStatusChangeSaysTheEndInTheChat is the AWS side of issue 32: the
// execution's start (RUNNING) is a progress step of the conversation and
// its end is said in the words serve's follower uses, once however often
// EventBridge delivers it; the link is then ended, and a late event says
// nothing more.
func TestStatusChangeSaysTheEndInTheChat(t *testing.T) {
	r := newRig(t, nil, Options{})
	arn := linkedSearch(t, r, "c1")
	l := awsLinks(r, nil)
	ctx := context.Background()

	running := statusEvent(t, "ev-1", arn, "acme", "RUNNING", "", "")
	for range 2 {
		res, err := l.HandleStatusChange(ctx, running)
		if err != nil || res.Linked != 1 {
			t.Fatalf("RUNNING: %+v %v", res, err)
		}
	}
	evs := linkedEvents(t, r, "c1")
	if len(evs) != 1 || evs[0]["type"] != eventlog.TypeExecutionStep {
		t.Fatalf("after RUNNING twice the conversation holds %s; want one step", types(evs))
	}
	if st := evs[0]["step"].(map[string]any); st["content"] != "Ejecución inicia" || st["agent"] != "execution" || st["action"] != "started" {
		t.Errorf("the start step %v", st)
	}

	done := statusEvent(t, "ev-2", arn, "acme", "SUCCEEDED", `{"tenant":"acme","metrics":{"candidates":5,"escalation_rate":0.4}}`, "")
	for i := range 3 {
		res, err := l.HandleStatusChange(ctx, done)
		want := 0
		if i == 0 {
			want = 1
		}
		if err != nil || res.Linked != 1 || res.Said != want {
			t.Fatalf("SUCCEEDED delivery %d: %+v %v; want 1 said the first time, 0 after", i+1, res, err)
		}
	}
	if res, err := l.HandleStatusChange(ctx, statusEvent(t, "ev-3", arn, "acme", "RUNNING", "", "")); err != nil || res.Said != 0 {
		t.Errorf("a RUNNING after the end (a redrive): %+v %v; want nothing said", res, err)
	}
	var ends []map[string]any
	for _, e := range linkedEvents(t, r, "c1") {
		if e["type"] == TypeLinkedFinished {
			ends = append(ends, e)
		}
	}
	if len(ends) != 1 {
		t.Fatalf("the end is on the conversation's stream %d times, want once", len(ends))
	}
	msg, _ := ends[0]["message"].(string)
	if want := "Búsqueda cfo-2026 (desde el turno 1): terminó con escalamiento (2 de 5 candidatos al consultor senior). Informe: /searches/cfo-2026/summary"; msg != want {
		t.Errorf("end message %q\nwant %q", msg, want)
	}
	labelstest.Check(t, "the chat's end message", msg)
	if ends[0]["outcome"] != OutcomeEscalated || ends[0]["turn"] != float64(1) || linkedOf(ends[0])["execution"] != arn {
		t.Errorf("end %v", ends[0])
	}
	if open, _ := r.svc.Links.Open(ctx, "acme", "c1"); len(open) != 0 {
		t.Errorf("still open after its end: %+v", open)
	}
}

// TestStatusChangeEndsInSpanish: every way an execution ends is said as
// serve says it, with the error's name (never its cause) when it failed.
func TestStatusChangeEndsInSpanish(t *testing.T) {
	for _, tc := range []struct {
		status, output, errName, outcome, message string
	}{
		{"SUCCEEDED", `{"metrics":{"candidates":3,"escalation_rate":0}}`, "", OutcomeSucceeded,
			"Búsqueda cfo-2026 (desde el turno 1): terminó (3 candidatos evaluados). Informe: /searches/cfo-2026/summary"},
		{"SUCCEEDED", "", "", OutcomeSucceeded, "Búsqueda cfo-2026 (desde el turno 1): terminó. Informe: /searches/cfo-2026/summary"},
		{"FAILED", "", "TransientError", OutcomeFailed, "Búsqueda cfo-2026 (desde el turno 1): falló (error: TransientError). Estado: /searches/cfo-2026"},
		{"TIMED_OUT", "", "States.Timeout", OutcomeTimedOut, "Búsqueda cfo-2026 (desde el turno 1): se detuvo por tiempo agotado. Estado: /searches/cfo-2026"},
		{"ABORTED", "", "", OutcomeAborted, "Búsqueda cfo-2026 (desde el turno 1): se detuvo antes de terminar. Estado: /searches/cfo-2026"},
	} {
		t.Run(tc.status+tc.output, func(t *testing.T) {
			r := newRig(t, nil, Options{})
			arn := linkedSearch(t, r, "c1")
			if _, err := awsLinks(r, nil).HandleStatusChange(context.Background(), statusEvent(t, "ev-9", arn, "acme", tc.status, tc.output, tc.errName)); err != nil {
				t.Fatal(err)
			}
			evs := linkedEvents(t, r, "c1")
			if len(evs) != 1 || evs[0]["type"] != TypeLinkedFinished {
				t.Fatalf("the conversation holds %s; want the end", types(evs))
			}
			if evs[0]["message"] != tc.message || evs[0]["outcome"] != tc.outcome || evs[0]["status"] != tc.status {
				t.Errorf("end %v\nwant message %q, outcome %s", evs[0], tc.message, tc.outcome)
			}
			labelstest.Check(t, "the end message", tc.message)
			if strings.Contains(fmt.Sprint(evs[0]), "CV") {
				t.Error("the failure's cause reached the conversation")
			}
		})
	}
}

// TestStatusChangeDeliveredTwiceAtOnce: two Lambda instances handling the
// same event at the same time say the end once.
func TestStatusChangeDeliveredTwiceAtOnce(t *testing.T) {
	r := newRig(t, nil, Options{})
	arn := linkedSearch(t, r, "c1")
	ev := statusEvent(t, "ev-2", arn, "acme", "FAILED", "", "States.TaskFailed")
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := awsLinks(r, nil).HandleStatusChange(context.Background(), ev); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if evs := linkedEvents(t, r, "c1"); len(evs) != 1 {
		t.Errorf("the conversation holds %s; want the end once", types(evs))
	}
}

// TestStatusChangeFindsOnlyTheTenantsLinks: an execution whose input names
// another tenant, one no conversation started, and one whose input names
// no tenant say nothing anywhere, and none is an error.
func TestStatusChangeFindsOnlyTheTenantsLinks(t *testing.T) {
	r := newRig(t, nil, Options{})
	arn := linkedSearch(t, r, "c1")
	var logs bytes.Buffer
	l := awsLinks(r, &logs)
	ctx := context.Background()
	for name, ev := range map[string]StatusChangeEvent{
		"another tenant": statusEvent(t, "ev-1", arn, "zeta", "SUCCEEDED", "{}", ""),
		"not linked":     statusEvent(t, "ev-2", execARN("x-other"), "acme", "SUCCEEDED", "{}", ""),
		"no tenant":      statusEvent(t, "ev-3", arn, "", "SUCCEEDED", "{}", ""),
	} {
		res, err := l.HandleStatusChange(ctx, ev)
		if err != nil || res.Linked != 0 || res.Said != 0 {
			t.Errorf("%s: %+v %v; want nothing linked, no error", name, res, err)
		}
	}
	if evs := linkedEvents(t, r, "c1"); len(evs) != 0 {
		t.Errorf("acme's conversation holds %s; want nothing", types(evs))
	}
	if evs, _ := r.events.Read(ctx, "zeta", StreamName("c1"), 0, 10); len(evs) != 0 {
		t.Errorf("zeta's conversation c1 got %d events", len(evs))
	}
	if !strings.Contains(logs.String(), "level=DEBUG msg=\"no conversation follows this execution\"") || strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("logs:\n%s\nwant debug lines only", logs.String())
	}
}

// TestStatusChangeSetsADamagedLinkAside: a link record that cannot be read
// is named in the log and skipped; the other conversations linked to the
// execution still hear its end.
func TestStatusChangeSetsADamagedLinkAside(t *testing.T) {
	r := newRig(t, nil, Options{})
	arn := linkedSearch(t, r, "c1")
	linkedSearch(t, r, "c2")
	ctx := context.Background()
	damaged := Link{ID: LinkID("acme", "c3", arn), Tenant: "acme", ChatID: "c3", Execution: arn}
	for key, value := range map[string]string{linkKey(damaged): `{"id":`, linkedKey(damaged): damaged.ID} {
		if _, err := r.svc.Store.PutIfAbsent(ctx, key, []byte(value)); err != nil {
			t.Fatal(err)
		}
	}
	var logs bytes.Buffer
	res, err := awsLinks(r, &logs).HandleStatusChange(ctx, statusEvent(t, "ev-1", arn, "acme", "ABORTED", "", ""))
	if err != nil || res.Linked != 2 || res.Said != 2 {
		t.Fatalf("%+v %v; want the two readable links said", res, err)
	}
	if !strings.Contains(logs.String(), "a damaged chat link is set aside") || !strings.Contains(logs.String(), linkKey(damaged)) {
		t.Errorf("logs:\n%s\nwant the damaged link named", logs.String())
	}
	for _, c := range []string{"c1", "c2"} {
		if evs := linkedEvents(t, r, c); len(evs) != 1 || evs[0]["outcome"] != OutcomeAborted {
			t.Errorf("%s holds %s; want the end", c, types(evs))
		}
	}
}

// TestStatusChangeThatCannotBeRead is dropped and logged, never retried:
// it would fail the same way again.
func TestStatusChangeThatCannotBeRead(t *testing.T) {
	r := newRig(t, nil, Options{})
	var logs bytes.Buffer
	for _, detail := range []string{`"not an object"`, `{"status":"SUCCEEDED"}`, ``} {
		res, err := awsLinks(r, &logs).HandleStatusChange(context.Background(), StatusChangeEvent{ID: "ev-x", Detail: json.RawMessage(detail)})
		if err != nil || res != (StatusChangeResult{}) {
			t.Errorf("detail %s: %+v %v; want nothing done, no error", detail, res, err)
		}
	}
	if n := strings.Count(logs.String(), "cannot be read is dropped"); n != 3 {
		t.Errorf("logs:\n%s\nwant each dropped event logged", logs.String())
	}
}

// TestStatusChangeProgressIsBounded: a link that has MaxLinkedSteps steps
// in the conversation gets one saying where the rest is, then none.
func TestStatusChangeProgressIsBounded(t *testing.T) {
	r := newRig(t, nil, Options{})
	arn := linkedSearch(t, r, "c1")
	l := awsLinks(r, nil)
	ctx := context.Background()
	open, _ := r.svc.Links.Open(ctx, "acme", "c1")
	steps := 0
	for i := range MaxLinkedSteps {
		st := stream.Step{ID: fmt.Sprintf("h%d", i+2), Agent: "Gem1Function", Action: "finished", Content: "Gem1Function termina", Metadata: map[string]any{}}
		if err := l.copyStep(ctx, open[0], st, fmt.Sprintf("x%s:%d", open[0].ID, i+2), int64(i+2), &steps); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		if _, err := l.HandleStatusChange(ctx, statusEvent(t, fmt.Sprintf("ev-%d", i), arn, "acme", "RUNNING", "", "")); err != nil {
			t.Fatal(err)
		}
	}
	evs := linkedEvents(t, r, "c1")
	if len(evs) != MaxLinkedSteps+1 || evs[MaxLinkedSteps]["step"].(map[string]any)["action"] != "more" {
		t.Errorf("%d linked events, the last %v; want %d steps and the one that says where the rest is", len(evs), evs[len(evs)-1], MaxLinkedSteps)
	}
}

// TestStatusChangeStoreFailureIsRetried: a throttled store is a
// TransientError (Lambda delivers the event again).
func TestStatusChangeStoreFailureIsRetried(t *testing.T) {
	r := newRig(t, nil, Options{})
	arn := linkedSearch(t, r, "c1")
	l := awsLinks(r, nil)
	l.Store = throttledKV{r.svc.Store}
	_, err := l.HandleStatusChange(context.Background(), statusEvent(t, "ev-1", arn, "acme", "SUCCEEDED", "{}", ""))
	if name := veredicto.ErrorName(err); name != "TransientError" {
		t.Errorf("error %v named %q, want TransientError", err, name)
	}
}

type throttledKV struct{ KV }

func (throttledKV) List(context.Context, string) ([]string, error) {
	return nil, fmt.Errorf("query: %w", &smithy.GenericAPIError{Code: "ThrottlingException", Message: "slow down"})
}

// TestRoomForgetsLinksPastTheirAge: a link older than MaxAge (an end
// EventBridge never delivered) takes no room in the conversation.
func TestRoomForgetsLinksPastTheirAge(t *testing.T) {
	r := newRig(t, nil, Options{})
	linkedSearch(t, r, "c1")
	l := r.svc.Links
	l.MaxPerChat = 1
	ctx := context.Background()
	var te *ToolError
	if err := l.Room(ctx, "acme", "c1"); !errors.As(err, &te) {
		t.Fatalf("room with one open link of one allowed: %v", err)
	}
	l.Now = func() time.Time { return time.Now().Add(DefaultLinkAge + time.Minute) }
	if err := l.Room(ctx, "acme", "c1"); err != nil {
		t.Errorf("room once the link is past its age: %v", err)
	}
}

// TestSampleStatusChangeDecodes: the events/ samples are the event Step
// Functions sends, every field of their detail known.
func TestSampleStatusChangeDecodes(t *testing.T) {
	for _, name := range []string{"chatlink-running.json", "chatlink-succeeded.json"} {
		b, err := os.ReadFile("../../events/" + name)
		if err != nil {
			t.Fatal(err)
		}
		var ev StatusChangeEvent
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(ev.Detail))
		dec.DisallowUnknownFields()
		var ch StatusChange
		if err := dec.Decode(&ch); err != nil || ev.DetailType != StatusChangeDetailType || ev.Source != "aws.states" || ch.tenant() == "" {
			t.Errorf("%s: %+v %v", name, ch, err)
		}
	}
}

// TestAnEndBeforeTheLinkIsSaidOnceTheLinkIsKept: on AWS an execution that
// ends within a moment of its start may have its status change delivered
// before the turn keeps the link (nobody to tell then). Keeping the link
// describes the execution: an ended one has its end said at once, and the
// late delivery says nothing more; a running one is left to its status
// changes; a failed description keeps the link for them.
func TestAnEndBeforeTheLinkIsSaidOnceTheLinkIsKept(t *testing.T) {
	failed := statusEvent(t, "ev-9", execARN("x-cfo-2026"), "acme", "FAILED", "", "States.TaskFailed")
	var asFailed StatusChange
	if err := json.Unmarshal(failed.Detail, &asFailed); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		describe func(context.Context, string) (StatusChange, error)
		saidNow  bool
	}{
		{"ended", func(context.Context, string) (StatusChange, error) { return asFailed, nil }, true},
		{"running", func(_ context.Context, arn string) (StatusChange, error) {
			return StatusChange{ExecutionARN: arn, Status: "RUNNING"}, nil
		}, false},
		{"description failed", func(context.Context, string) (StatusChange, error) {
			return StatusChange{}, errors.New("ThrottlingException")
		}, false},
		{"description throttled once", func() func(context.Context, string) (StatusChange, error) {
			throttled := false
			return func(context.Context, string) (StatusChange, error) {
				if !throttled {
					throttled = true
					return StatusChange{}, errors.New("ThrottlingException")
				}
				return asFailed, nil
			}
		}(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, nil, Options{})
			var asked []string
			// As on AWS: kept, never followed; Executions only names the
			// rig's execution by its ARN, as Step Functions' start does.
			r.svc.Links = &Links{Store: r.svc.Store, Events: r.events, Log: r.events, Logger: r.svc.Logger,
				Executions: fakeExecutions{tenant: "acme"},
				Describe: func(ctx context.Context, arn string) (StatusChange, error) {
					asked = append(asked, arn)
					return tc.describe(ctx, arn)
				}}
			r.svc.Model = startSearch("cfo-2026")
			r.turn(t, "c1", "Lanza la evaluación de la búsqueda cfo-2026")
			if len(asked) == 0 || asked[0] != execARN("x-cfo-2026") || len(asked) > catchUpTries {
				t.Fatalf("described %q; want the linked execution, at most %d times", asked, catchUpTries)
			}
			ends := func() []string {
				var out []string
				for _, e := range linkedEvents(t, r, "c1") {
					if e["type"] == TypeLinkedFinished {
						out = append(out, e["message"].(string))
					}
				}
				return out
			}
			want := "Búsqueda cfo-2026 (desde el turno 1): falló (error: States.TaskFailed). Estado: /searches/cfo-2026"
			open, err := r.svc.Links.Open(context.Background(), "acme", "c1")
			if err != nil {
				t.Fatal(err)
			}
			if got := ends(); tc.saidNow != (len(got) == 1) || (tc.saidNow && got[0] != want) || tc.saidNow != (len(open) == 0) {
				t.Fatalf("after the turn: ends %q, %d links open; said now: %v", got, len(open), tc.saidNow)
			}
			// EventBridge's delivery of the end, late or not: said once.
			res, err := awsLinks(r, nil).HandleStatusChange(context.Background(), failed)
			if err != nil || res.Linked != 1 || (res.Said == 1) == tc.saidNow {
				t.Errorf("the delivered end: %+v %v", res, err)
			}
			if got := ends(); len(got) != 1 || got[0] != want {
				t.Errorf("the conversation says the end %q; want once %q", got, want)
			}
		})
	}
}

// TestATurnSaysTheEndsNobodySaid: on AWS an end can go unsaid — its
// status change came when the link's index could not be written, or
// before the link existed while describing it failed. The conversation's
// next turn describes its open links older than RecheckAfter and says
// those ends before it answers; a young link is not described (its status
// change may be on its way); an execution Step Functions no longer knows,
// or one running past MaxAge, is no longer followed, as serve's follower
// lets it go — as is one past MaxAge that no description reaches.
func TestATurnSaysTheEndsNobodySaid(t *testing.T) {
	failed := statusEvent(t, "ev-9", execARN("x-cfo-2026"), "acme", "FAILED", "", "States.TaskFailed")
	var asFailed StatusChange
	if err := json.Unmarshal(failed.Detail, &asFailed); err != nil {
		t.Fatal(err)
	}
	running := StatusChange{ExecutionARN: execARN("x-cfo-2026"), Status: "RUNNING"}
	gone := &smithy.GenericAPIError{Code: "ExecutionDoesNotExist", Message: "Execution Does Not Exist"}
	for _, tc := range []struct {
		name    string
		later   time.Duration // when the second turn runs
		now     StatusChange  // what describing says then
		err     error
		asked   bool
		message string // the end said, "" for none
	}{
		{"ended, never said", 2 * time.Minute, asFailed, nil, true,
			"Búsqueda cfo-2026 (desde el turno 1): falló (error: States.TaskFailed). Estado: /searches/cfo-2026"},
		{"too young to ask", 10 * time.Second, asFailed, nil, false, ""},
		{"still running", 2 * time.Minute, running, nil, true, ""},
		{"running past its age", DefaultLinkAge + time.Hour, running, nil, true,
			"Búsqueda cfo-2026 (desde el turno 1): " + labels.Of(labels.LinkedOutcome, OutcomeUnfollowed) + ". Estado: /searches/cfo-2026"},
		{"no longer known", 91 * 24 * time.Hour, StatusChange{}, gone, true,
			"Búsqueda cfo-2026 (desde el turno 1): " + labels.Of(labels.LinkedOutcome, OutcomeUnfollowed) + ". Estado: /searches/cfo-2026"},
		{"description fails", 2 * time.Minute, StatusChange{}, errors.New("ThrottlingException"), true, ""},
		{"past its age, no description reaches it", DefaultLinkAge + time.Hour, StatusChange{}, errors.New("AccessDeniedException"), true,
			"Búsqueda cfo-2026 (desde el turno 1): " + labels.Of(labels.LinkedOutcome, OutcomeUnfollowed) + ". Estado: /searches/cfo-2026"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, nil, Options{})
			linkedAt := time.Now()
			clock := linkedAt
			var asked int
			describeNow := func(context.Context, string) (StatusChange, error) { return running, nil }
			r.svc.Links = &Links{Store: r.svc.Store, Events: r.events, Log: r.events, Logger: r.svc.Logger,
				Executions: fakeExecutions{tenant: "acme"}, Now: func() time.Time { return clock },
				Describe: func(ctx context.Context, arn string) (StatusChange, error) {
					asked++
					return describeNow(ctx, arn)
				}}
			r.svc.Model = startSearch("cfo-2026")
			r.turn(t, "c1", "Lanza la evaluación de la búsqueda cfo-2026")
			if asked != 1 {
				t.Fatalf("keeping the link described the execution %d times, want once (it was running)", asked)
			}
			// The end EventBridge delivered is lost; the person asks.
			asked, clock = 0, linkedAt.Add(tc.later)
			describeNow = func(context.Context, string) (StatusChange, error) { return tc.now, tc.err }
			r.svc.Model = &scripted{answer: func(int, Prompt) Reply { return Reply{Content: "Sigue su curso."} }}
			r.turn(t, "c1", "¿Cómo va la búsqueda cfo-2026?")
			if (asked == 1) != tc.asked || asked > 1 {
				t.Fatalf("the second turn described the execution %d times; want asked: %v", asked, tc.asked)
			}
			evs := r.eventsOf(t, "c1")
			var ends []string
			endAt, answerAt := -1, -1
			for i, e := range evs {
				if e["type"] == TypeLinkedFinished {
					ends, endAt = append(ends, e["message"].(string)), i
				}
				if e["type"] == TypeTextDelta && answerAt < 0 && strings.Contains(fmt.Sprint(e["delta"]), "Sigue") {
					answerAt = i
				}
			}
			if tc.message == "" {
				if len(ends) != 0 {
					t.Fatalf("ends said %q; want none", ends)
				}
				open, err := r.svc.Links.Open(context.Background(), "acme", "c1")
				if err != nil || len(open) != 1 {
					t.Errorf("links open after the turn: %d %v; want the one still followed", len(open), err)
				}
				return
			}
			if len(ends) != 1 || ends[0] != tc.message {
				t.Fatalf("ends said %q; want once %q", ends, tc.message)
			}
			if answerAt < 0 || endAt > answerAt {
				t.Errorf("the end (event %d) comes after the answer (event %d); it is said first", endAt, answerAt)
			}
			if open, _ := r.svc.Links.Open(context.Background(), "acme", "c1"); len(open) != 0 {
				t.Errorf("still open after its end was said: %+v", open)
			}
			// A late delivery of the end says nothing more.
			if res, err := awsLinks(r, nil).HandleStatusChange(context.Background(), failed); err != nil || res.Said != 0 {
				t.Errorf("the late end: %+v %v; want nothing said", res, err)
			}
		})
	}
}

// TestStatusChangeWithoutItsInputOrOutput: EventBridge leaves out an
// execution's input and output over its size bound. ChatLinkFunction
// describes the execution then: the input names the tenant whose
// conversations follow it, the output whether it escalated. Without a way
// to describe it, nothing is said, and the log says why.
func TestStatusChangeWithoutItsInputOrOutput(t *testing.T) {
	r := newRig(t, nil, Options{})
	arn := linkedSearch(t, r, "c1")
	ev := statusEvent(t, "ev-2", arn, "acme", "SUCCEEDED", "", "")
	var detail map[string]any
	if err := json.Unmarshal(ev.Detail, &detail); err != nil {
		t.Fatal(err)
	}
	detail["input"], detail["inputDetails"] = nil, map[string]bool{"included": false}
	detail["output"], detail["outputDetails"] = nil, map[string]bool{"included": false}
	ev.Detail, _ = json.Marshal(detail)

	var logs bytes.Buffer
	l := awsLinks(r, &logs)
	if res, err := l.HandleStatusChange(context.Background(), ev); err != nil || res.Linked != 0 || res.Said != 0 {
		t.Fatalf("without Describe: %+v %v; want nothing said", res, err)
	}
	if !strings.Contains(logs.String(), "left out the execution's input") {
		t.Errorf("the log does not say why nothing was said:\n%s", logs.String())
	}

	input := `{"tenant":"acme","search_id":"cfo-2026"}`
	output := `{"tenant":"acme","metrics":{"candidates":5,"escalation_rate":0.4}}`
	l.Describe = func(context.Context, string) (StatusChange, error) {
		return StatusChange{}, errors.New("ThrottlingException")
	}
	if _, err := l.HandleStatusChange(context.Background(), ev); err == nil {
		t.Fatal("a failed description is no error: the end would be lost instead of delivered again")
	}
	l.Describe = func(_ context.Context, a string) (StatusChange, error) {
		return StatusChange{ExecutionARN: a, Status: "SUCCEEDED", Input: &input, Output: &output}, nil
	}
	res, err := l.HandleStatusChange(context.Background(), ev)
	if err != nil || res.Linked != 1 || res.Said != 1 {
		t.Fatalf("with Describe: %+v %v; want the end said", res, err)
	}
	evs := linkedEvents(t, r, "c1")
	msg, _ := evs[len(evs)-1]["message"].(string)
	if want := "Búsqueda cfo-2026 (desde el turno 1): terminó con escalamiento (2 de 5 candidatos al consultor senior). Informe: /searches/cfo-2026/summary"; msg != want {
		t.Errorf("end %q\nwant %q", msg, want)
	}

	// An execution no conversation follows (most) is not described for
	// its output: nobody would hear it.
	described := 0
	l.Describe = func(context.Context, string) (StatusChange, error) {
		described++
		return StatusChange{}, errors.New("not to be asked")
	}
	other := statusEvent(t, "ev-3", execARN("x-otra"), "acme", "SUCCEEDED", "", "")
	if res, err := l.HandleStatusChange(context.Background(), other); err != nil || res.Linked != 0 || described != 0 {
		t.Errorf("an unfollowed execution without its output: %+v %v, described %d times; want none", res, err, described)
	}
}
