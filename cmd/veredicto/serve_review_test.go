package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/confirm"
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
		req, _ := http.NewRequestWithContext(ctx, method, base+"/api/confirmations", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	client := sfn.New(sfn.Options{Region: "us-east-1", BaseEndpoint: aws.String(base),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")})
	in, _ := json.Marshal(search.StartInput{Tenant: "acme", SearchID: "demo-cfo-andina", InputPrefix: "searches/acme/demo-cfo-andina/",
		ReportPrefix: "reports/acme/demo-cfo-andina", Review: &search.ReviewOptions{Wait: true, TimeoutSeconds: 600}})
	x, err := client.StartExecution(ctx, &sfn.StartExecutionInput{Name: aws.String("review-1"), Input: aws.String(string(in)),
		StateMachineArn: aws.String("arn:aws:states:us-east-1:000000000000:stateMachine:ExecutiveSearchStateMachine")})
	if err != nil {
		t.Fatal(err)
	}

	var pending struct{ Confirmations []confirm.View }
	for i := 0; i < 300 && len(pending.Confirmations) == 0; i++ { // bounded at 30 s
		st, body := call("GET", "")
		if st != http.StatusOK || json.Unmarshal([]byte(body), &pending) != nil {
			t.Fatalf("GET /api/confirmations: %d %s", st, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(pending.Confirmations) != 1 || pending.Confirmations[0].ToolName != "senior_review" || pending.Confirmations[0].Execution != aws.ToString(x.ExecutionArn) {
		t.Fatalf("pending %+v, want the senior review of %s", pending.Confirmations, aws.ToString(x.ExecutionArn))
	}
	id := pending.Confirmations[0].ID
	if st, body := call("POST", `{"id":"`+id+`","approved":false,"comment":"sin evidencia de la refinanciación"}`); st != http.StatusOK {
		t.Fatalf("POST: %d %s", st, body)
	}
	status := "RUNNING"
	for i := 0; i < 300 && status == "RUNNING"; i++ {
		d, err := client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: x.ExecutionArn})
		if err != nil {
			t.Fatal(err)
		}
		status = string(d.Status)
		time.Sleep(100 * time.Millisecond)
	}
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
}
