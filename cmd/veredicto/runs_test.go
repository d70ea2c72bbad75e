package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/veredicto/veredicto/internal/intake"
	"github.com/veredicto/veredicto/internal/poll"
)

// TestServeListsEveryWorkflowsRuns: GET /runs lists a tenant's search once,
// with its decisions, and its runs of other state machines generically
// (kind from the machine's name); another tenant's runs never show.
func TestServeListsEveryWorkflowsRuns(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	live := startLive(ctx, t)
	acme, zeta := live.token(t, "acme", "ana"), live.token(t, "zeta", "zoe")
	if st, body := live.call(ctx, t, "POST", "/searches", acme, `{"search_id":"demo-cfo-andina"}`); st != http.StatusAccepted {
		t.Fatalf("start: %d %s", st, body)
	}
	input, err := os.ReadFile(filepath.Join("..", "..", "examples", "states", "gates_demo.input.json"))
	if err != nil {
		t.Fatal(err)
	}
	var in map[string]any
	if err := json.Unmarshal(input, &in); err != nil {
		t.Fatal(err)
	}
	client := operatorSFN(t, live.base, live.data)
	for _, tenant := range []string{"acme", "zeta"} {
		in["tenant"] = tenant
		b, _ := json.Marshal(in)
		if _, err := client.StartExecution(ctx, &sfn.StartExecutionInput{Name: aws.String("gates-" + tenant), Input: aws.String(string(b)),
			StateMachineArn: aws.String("arn:aws:states:us-east-1:000000000000:stateMachine:GatesDemoStateMachine")}); err != nil {
			t.Fatal(err)
		}
	}
	var runs struct{ Runs []intake.Run }
	poll.Within(30*time.Second, func() bool { // the checks below say what did not finish
		_, body := live.call(ctx, t, "GET", "/runs", acme, "")
		if err := json.Unmarshal([]byte(body), &runs); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		done := len(runs.Runs) > 0
		for _, r := range runs.Runs {
			done = done && r.Status != "RUNNING" && r.Status != "PENDING"
		}
		return done
	})
	kinds := map[string]intake.Run{}
	for _, r := range runs.Runs {
		if _, dup := kinds[r.Kind]; dup {
			t.Errorf("kind %s listed twice: %+v", r.Kind, runs.Runs)
		}
		kinds[r.Kind] = r
	}
	if s := kinds["search"]; len(runs.Runs) != 2 || s.ID != "demo-cfo-andina" || s.Status != "SUCCEEDED" || len(s.Decisions) == 0 {
		t.Errorf("acme runs %+v, want the search (with decisions) and the gates demo", runs.Runs)
	}
	if g := kinds["gates-demo"]; g.ID != "gates-acme" || g.Status != "SUCCEEDED" || g.StartedAt == "" || g.Execution == "" {
		t.Errorf("gates demo run %+v", g)
	}
	_, body := live.call(ctx, t, "GET", "/runs", zeta, "")
	json.Unmarshal([]byte(body), &runs)
	if len(runs.Runs) != 1 || runs.Runs[0].ID != "gates-zeta" {
		t.Errorf("zeta runs %+v, want only its gates demo", runs.Runs)
	}
}
