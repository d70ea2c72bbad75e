package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fileconfirm "github.com/veredicto/veredicto/internal/confirm/file"
	"github.com/veredicto/veredicto/internal/intake"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/smithy-go"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/poll"
	"github.com/veredicto/veredicto/internal/search"
)

// TestServeSeniorReview runs the senior review as on AWS: an execution of
// ExecutiveSearchStateMachine started through the server's Step Functions
// API with review.wait waits on its .waitForTaskToken Task; the tenant's
// consultant finds it with GET /api/confirmations and rejects it with
// POST; the execution resumes and the report records the consultant, the
// time and the comment.
func TestServeSeniorReview(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	live := startLive(ctx, t)
	base := live.base
	_, reports, _ := app.LocalLayout(live.data)
	tok := live.token(t, "acme", "consultora-ana")
	call := func(method, body string) (int, string) {
		t.Helper()
		return live.call(ctx, t, method, "/api/confirmations", tok, body)
	}

	client := tenantSFN(t, base, live.data, "acme")
	in, _ := json.Marshal(search.StartInput{Tenant: "acme", SearchID: "demo-cfo-andina", InputPrefix: "searches/acme/demo-cfo-andina/",
		ReportPrefix: "reports/acme/demo-cfo-andina", Review: &search.ReviewOptions{Wait: true, TimeoutSeconds: 600}})
	x, err := client.StartExecution(ctx, &sfn.StartExecutionInput{Name: aws.String("review-1"), Input: aws.String(string(in)),
		StateMachineArn: aws.String("arn:aws:states:us-east-1:000000000000:stateMachine:ExecutiveSearchStateMachine")})
	if err != nil {
		t.Fatal(err)
	}

	var pending struct{ Confirmations []confirm.View }
	poll.Within(30*time.Second, func() bool { // the check below says what is pending
		st, body := call("GET", "")
		if st != http.StatusOK || json.Unmarshal([]byte(body), &pending) != nil {
			t.Fatalf("GET /api/confirmations: %d %s", st, body)
		}
		return len(pending.Confirmations) > 0
	})
	if len(pending.Confirmations) != 1 || pending.Confirmations[0].ToolName != "senior_review" || pending.Confirmations[0].Execution != aws.ToString(x.ExecutionArn) {
		t.Fatalf("pending %+v, want the senior review of %s", pending.Confirmations, aws.ToString(x.ExecutionArn))
	}
	id := pending.Confirmations[0].ID

	// The attack of the security review: read the waiting task's token from
	// the history and answer it directly with a forged decider. Refused
	// for the tenant and for an operator alike: a person's decision goes
	// through the confirmations, which record who took it.
	// The confirmation exists from LookupReview on (it records the question
	// without a token); the waiting Task is scheduled just after it.
	var token string
	poll.Until(t, 30*time.Second, func() bool {
		for _, ev := range historyOf(t, client, aws.ToString(x.ExecutionArn)) {
			if d := ev.TaskScheduledEventDetails; d != nil && strings.Contains(aws.ToString(d.Parameters), "task_token") {
				var params struct {
					Payload struct {
						Token string `json:"task_token"`
					}
				}
				json.Unmarshal([]byte(aws.ToString(d.Parameters)), &params)
				token = params.Payload.Token
			}
		}
		return token != ""
	}, "a task token in the history")
	forged := aws.String(`{"approved":true,"decided_by":"ceo@acme (forged)"}`)
	for who, c := range map[string]*sfn.Client{"tenant": client, "operator": operatorSFN(t, base, live.data)} {
		_, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: forged})
		var ae smithy.APIError
		if !errors.As(err, &ae) || ae.ErrorCode() != "InvalidToken" {
			t.Errorf("forged SendTaskSuccess as the %s: %v, want InvalidToken", who, err)
		}
	}

	if st, body := call("POST", `{"id":"`+id+`","approved":false,"comment":"sin evidencia de la refinanciación"}`); st != http.StatusOK {
		t.Fatalf("POST: %d %s", st, body)
	}
	status := "RUNNING"
	poll.Within(30*time.Second, func() bool { // the check below names the status
		d, err := client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: x.ExecutionArn})
		if err != nil {
			t.Fatal(err)
		}
		status = string(d.Status)
		return status != "RUNNING"
	})
	if status != "SUCCEEDED" {
		t.Fatalf("execution %s, want SUCCEEDED", status)
	}
	var rep search.Report
	if err := json.Unmarshal(mustRead(t, filepath.Join(reports, "reports", "acme", "demo-cfo-andina", "c-005", "report.json")), &rep); err != nil {
		t.Fatal(err)
	}
	if r := rep.Review; rep.Decision != search.DecisionDiscardedByConsultant || r == nil || r.ID != id || r.DecidedBy != "consultora-ana" || r.Comment != "sin evidencia de la refinanciación" || r.DecidedAt == nil {
		t.Errorf("c-005: %s, review %+v; want DESCARTADO_POR_CONSULTOR by consultora-ana with the comment and time", rep.Decision, rep.Review)
	}
	// The report and the record it cites agree: who, what, when.
	rec, err := fileconfirm.Local(live.data).Get(ctx, "acme", id)
	if err != nil {
		t.Fatal(err)
	}
	if d := rec.Decision; rec.Status != confirm.StatusRejected || d == nil || d.DecidedBy != rep.Review.DecidedBy || d.Approved ||
		!d.DecidedAt.Equal(*rep.Review.DecidedAt) || d.Comment != rep.Review.Comment {
		t.Errorf("record %s %+v disagrees with the report's review %+v", rec.Status, rec.Decision, rep.Review)
	}

	// The execution's audit record, found by its ARN, verifies; it holds
	// the authenticated consultant's decision on the preview she was
	// shown; and a replay writes the same reports.
	arn := aws.ToString(x.ExecutionArn)
	if code, out, errs := runCLI(t, "", "audit", "verify", arn, "--data", live.data); code != exitOK {
		t.Fatalf("audit verify %s: exit %d\n%s%s", arn, code, out, errs)
	}
	human := findEntry(t, filepath.Join(reports, "audit", "acme", "review-1"), "candidate/c-005", audit.KindHuman)
	var hd audit.HumanDecision
	json.Unmarshal(human.Data, &hd)
	if hd.Principal != "consultora-ana" || hd.Status != "rejected" || hd.Confirmation != id || hd.Preview != confirm.PreviewHash(rec.Preview) {
		t.Errorf("the recorded human decision %+v; want consultora-ana's rejection of %s on preview %s", hd, id, confirm.PreviewHash(rec.Preview))
	}
	replay := t.TempDir()
	if code, out, errs := runCLI(t, "", "replay", arn, "--data", live.data, "--out", replay); code != exitOK || strings.Contains(out, "DIFFERS") {
		t.Errorf("replay %s: exit %d\n%s%s", arn, code, out, errs)
	}
}

// TestServeReviewFromTheHTTPAPI is the consultant's path end to end over
// HTTP only: POST /searches asks for the review to wait, the escalated
// candidate shows up in GET /api/confirmations, the consultant approves it,
// and GET /searches/{id} then shows the search finished with the human
// decision.
func TestServeReviewFromTheHTTPAPI(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	live := startLive(ctx, t)
	tok := live.token(t, "acme", "consultor-luis")
	call := func(method, path, body string) (int, string) {
		t.Helper()
		return live.call(ctx, t, method, path, tok, body)
	}
	if st, body := call("POST", "/searches", `{"search_id":"demo-cfo-andina","review":{"wait":true,"timeout_seconds":600}}`); st != http.StatusAccepted {
		t.Fatalf("start: %d %s", st, body)
	}
	var pending []struct {
		ID       string `json:"id"`
		ToolName string `json:"toolName"`
	}
	poll.Within(90*time.Second, func() bool { // the check below says what is pending
		_, body := call("GET", "/api/confirmations", "")
		var list struct {
			Confirmations []struct {
				ID       string `json:"id"`
				ToolName string `json:"toolName"`
			} `json:"confirmations"`
		}
		if err := json.Unmarshal([]byte(body), &list); err != nil {
			t.Fatalf("list: %v: %s", err, body)
		}
		pending = list.Confirmations
		return len(pending) > 0
	})
	if len(pending) != 1 || pending[0].ToolName != "senior_review" {
		t.Fatalf("pending confirmations %+v, want the senior review of c-005", pending)
	}
	if _, body := call("GET", "/searches/demo-cfo-andina", ""); !strings.Contains(body, `"status": "RUNNING"`) {
		t.Fatalf("while the review waits the search must be running: %s", body)
	}
	if st, body := call("POST", "/api/confirmations", `{"id":"`+pending[0].ID+`","approved":true,"comment":"referencias verificadas"}`); st != http.StatusOK {
		t.Fatalf("approve: %d %s", st, body)
	}
	var state intake.SearchState
	poll.Within(90*time.Second, func() bool { // the check below names the status
		_, body := call("GET", "/searches/demo-cfo-andina", "")
		json.Unmarshal([]byte(body), &state)
		return state.Status != "RUNNING"
	})
	if state.Status != "SUCCEEDED" {
		t.Fatalf("search %s after the approval, want SUCCEEDED", state.Status)
	}
	decision := ""
	for _, c := range state.Candidates {
		if c.CandidateID == "c-005" {
			decision = c.Decision
		}
	}
	if decision != search.DecisionApprovedByConsultant {
		t.Errorf("c-005 decision %q, want %s", decision, search.DecisionApprovedByConsultant)
	}
}
