package sfnapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/veredicto/veredicto/internal/control"
	"github.com/veredicto/veredicto/internal/httpapi/apitest"
	"github.com/veredicto/veredicto/internal/poll"
	"github.com/veredicto/veredicto/internal/sfnapi"
)

// waitingMap is a Distributed Map whose children each wait for a token.
const waitingMap = `{"StartAt":"Each","States":{"Each":{"Type":"Map","ItemsPath":"$.items","MaxConcurrency":1,"Label":"Waits",
  "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},
    "StartAt":"Ask","States":{"Ask":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
      "Parameters":{"FunctionName":"NotifyFunction","Payload":{"token.$":"$$.Task.Token"}},"End":true}}},
  "End":true}}}`

// TestMapRuns: the map run operations answer as Step Functions does, for
// the operator and the run's tenant only; UpdateMapRun's concurrency
// applies at once.
func TestMapRuns(t *testing.T) {
	ctx := context.Background()
	tokens := make(chan string, 16)
	mgr, err := control.Open(ctx, control.Config{Dir: t.TempDir(), Data: t.TempDir(), Registry: registry(tokens)})
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Close()
	srv := apitest.Serve(t, sfnapi.New(mgr, sfnapi.Options{}), nil)
	op, acme, bravo := srv.SFN(srv.Operator(t)), srv.SFN(srv.Tenant(t, "acme")), srv.SFN(srv.Tenant(t, "bravo"))
	p := &peer{client: op, mgr: mgr, tokens: tokens}
	smARN := p.create(t, "Fan", waitingMap)
	x, err := acme.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smARN), Name: aws.String("f1"), Input: aws.String(`{"items":[1,2,3]}`)})
	if err != nil {
		t.Fatal(err)
	}
	first := p.token(t)

	runs, err := acme.ListMapRuns(ctx, &sfn.ListMapRunsInput{ExecutionArn: x.ExecutionArn})
	if err != nil || len(runs.MapRuns) != 1 {
		t.Fatalf("ListMapRuns: %v, %v", runs, err)
	}
	run := runs.MapRuns[0]
	if !strings.Contains(aws.ToString(run.MapRunArn), ":mapRun:Fan/Waits:") || aws.ToString(run.StateMachineArn) != control.StateMachineARN("Fan/Waits") {
		t.Errorf("map run %s of %s", aws.ToString(run.MapRunArn), aws.ToString(run.StateMachineArn))
	}
	d, err := acme.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: run.MapRunArn})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != types.MapRunStatusRunning || d.MaxConcurrency != 1 || d.ExecutionCounts.Running != 1 || d.ItemCounts.Running != 1 || d.StopDate != nil {
		t.Errorf("DescribeMapRun: %s, concurrency %d, counts %+v %+v", d.Status, d.MaxConcurrency, *d.ExecutionCounts, *d.ItemCounts)
	}
	if _, err := bravo.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: run.MapRunArn}); code(err) != control.CodeResourceNotFound {
		t.Errorf("bravo describes acme's map run: %v", err)
	}
	if _, err := bravo.ListExecutions(ctx, &sfn.ListExecutionsInput{MapRunArn: run.MapRunArn}); code(err) != control.CodeResourceNotFound {
		t.Errorf("bravo lists acme's map run: %v", err)
	}
	if _, err := op.ListExecutions(ctx, &sfn.ListExecutionsInput{MapRunArn: run.MapRunArn, StateMachineArn: aws.String(smARN)}); code(err) != control.CodeValidation {
		t.Errorf("both ARNs: %v", err)
	}
	if _, err := op.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: aws.String(smARN)}); code(err) != control.CodeInvalidArn {
		t.Errorf("a machine's ARN: %v", err)
	}

	// Three children at once from now on: the two waiting start.
	if _, err := acme.UpdateMapRun(ctx, &sfn.UpdateMapRunInput{MapRunArn: run.MapRunArn, MaxConcurrency: aws.Int32(3), ToleratedFailureCount: aws.Int64(2)}); err != nil {
		t.Fatal(err)
	}
	rest := []string{p.token(t), p.token(t)}
	kids, err := acme.ListExecutions(ctx, &sfn.ListExecutionsInput{MapRunArn: run.MapRunArn})
	if err != nil || len(kids.Executions) != 3 {
		t.Fatalf("children: %v, %v", kids, err)
	}
	for _, k := range kids.Executions {
		if aws.ToString(k.MapRunArn) != aws.ToString(run.MapRunArn) || !strings.Contains(aws.ToString(k.ExecutionArn), ":execution:Fan/Waits:") {
			t.Errorf("child %s of %s", aws.ToString(k.ExecutionArn), aws.ToString(k.MapRunArn))
		}
	}
	for _, tok := range append(rest, first) {
		if _, err := op.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tok), Output: aws.String(`"done"`)}); err != nil {
			t.Fatal(err)
		}
	}
	out := closed(t, acme, aws.ToString(x.ExecutionArn))
	if out.Status != types.ExecutionStatusSucceeded || aws.ToString(out.Output) != `["done","done","done"]` {
		t.Fatalf("parent: %s %s", out.Status, aws.ToString(out.Output))
	}
	var d2 *sfn.DescribeMapRunOutput
	poll.Until(t, 10*time.Second, func() bool {
		d2, err = acme.DescribeMapRun(ctx, &sfn.DescribeMapRunInput{MapRunArn: run.MapRunArn})
		return err == nil && d2.Status == types.MapRunStatusSucceeded
	}, "the map run succeeds")
	if d2.ItemCounts.Succeeded != 3 || d2.ItemCounts.Total != 3 || d2.ExecutionCounts.Total != 3 || d2.ToleratedFailureCount != 2 || d2.MaxConcurrency != 3 || d2.StopDate == nil {
		t.Errorf("ended: %+v %+v, tolerated %d, concurrency %d", *d2.ItemCounts, *d2.ExecutionCounts, d2.ToleratedFailureCount, d2.MaxConcurrency)
	}
	if _, err := op.UpdateMapRun(ctx, &sfn.UpdateMapRunInput{MapRunArn: run.MapRunArn, MaxConcurrency: aws.Int32(5)}); code(err) != control.CodeValidation {
		t.Errorf("an ended map run updated: %v", err)
	}
	kid, err := acme.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: kids.Executions[0].ExecutionArn})
	if err != nil || aws.ToString(kid.MapRunArn) != aws.ToString(run.MapRunArn) {
		t.Errorf("a child describes map run %s (%v)", aws.ToString(kid.MapRunArn), err)
	}
	started := ""
	for _, ev := range history(t, acme, aws.ToString(x.ExecutionArn)) {
		if ev.Type == types.HistoryEventTypeMapRunStarted && ev.MapRunStartedEventDetails != nil {
			started = aws.ToString(ev.MapRunStartedEventDetails.MapRunArn)
		}
	}
	if started != aws.ToString(run.MapRunArn) {
		t.Errorf("MapRunStarted names %q", started)
	}
}
