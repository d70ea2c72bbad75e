package searchapi

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/veredicto/veredicto"
)

type fakeRuns struct {
	execs     map[string][]types.ExecutionListItem // machine → executions, newest first
	inputs    map[string]string                    // execution → input
	described []string
	listed    int
}

func (f *fakeRuns) ListExecutions(_ context.Context, in *sfn.ListExecutionsInput, _ ...func(*sfn.Options)) (*sfn.ListExecutionsOutput, error) {
	f.listed++
	list, ok := f.execs[aws.ToString(in.StateMachineArn)]
	if !ok {
		return nil, errors.New("StateMachineDoesNotExist")
	}
	if int(in.MaxResults) < len(list) {
		list = list[:in.MaxResults]
	}
	return &sfn.ListExecutionsOutput{Executions: list}, nil
}

func (f *fakeRuns) DescribeExecution(_ context.Context, in *sfn.DescribeExecutionInput, _ ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error) {
	arn := aws.ToString(in.ExecutionArn)
	f.described = append(f.described, arn)
	return &sfn.DescribeExecutionOutput{ExecutionArn: in.ExecutionArn, Input: aws.String(f.inputs[arn])}, nil
}

func TestSFNRunsListsTheTenantsRunsOnly(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	const debate = "arn:aws:states:eu-west-1:1:stateMachine:DebateStateMachine-Xy12"
	const companion = "arn:aws:states:eu-west-1:1:stateMachine:CareerCompanionStateMachine-Ab34"
	item := func(machine, name string, start time.Time, stop *time.Time, status types.ExecutionStatus) types.ExecutionListItem {
		arn := strings.Replace(machine, ":stateMachine:", ":execution:", 1) + ":" + name
		return types.ExecutionListItem{ExecutionArn: aws.String(arn), Name: aws.String(name), StartDate: &start, StopDate: stop, Status: status}
	}
	stop := t0.Add(90 * time.Second)
	f := &fakeRuns{execs: map[string][]types.ExecutionListItem{
		debate: {item(debate, "d2", t0.Add(time.Hour), nil, types.ExecutionStatusRunning), item(debate, "d1", t0, &stop, types.ExecutionStatusSucceeded)},
		companion: {item(companion, "c1", t0.Add(30*time.Minute), nil, types.ExecutionStatusRunning),
			item(companion, "nobody", t0, nil, types.ExecutionStatusFailed)},
	}, inputs: map[string]string{}}
	for _, list := range f.execs {
		for _, e := range list {
			f.inputs[aws.ToString(e.ExecutionArn)] = `{"tenant":"acme"}`
		}
	}
	f.inputs[aws.ToString(f.execs[debate][0].ExecutionArn)] = `{"tenant":"beta"}`
	f.inputs[aws.ToString(f.execs[companion][1].ExecutionArn)] = `not json`
	runs := &SFNRuns{Client: f, Machines: []string{debate, companion}, Now: func() time.Time { return t0.Add(2 * time.Hour) }}

	got, err := runs.ListRuns(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range got {
		ids = append(ids, r.Kind+"/"+r.ID+"/"+r.Status)
	}
	if strings.Join(ids, " ") != "career-companion/c1/RUNNING debate/d1/SUCCEEDED" {
		t.Errorf("acme's runs = %v, want its companion run then its finished debate, newest first", ids)
	}
	if got[0].DurationSeconds != 5400 || got[1].DurationSeconds != 90 || got[1].StoppedAt == "" {
		t.Errorf("durations %v and %v (stopped %q), want 5400 (running) and 90", got[0].DurationSeconds, got[1].DurationSeconds, got[1].StoppedAt)
	}
	// The tenant of an execution is read once.
	n := len(f.described)
	if n != 4 {
		t.Errorf("%d executions described, want 4", n)
	}
	beta, err := runs.ListRuns(context.Background(), "beta")
	if err != nil || len(beta) != 1 || beta[0].ID != "d2" {
		t.Errorf("beta's runs = %+v, %v; want its one debate", beta, err)
	}
	if len(f.described) != n {
		t.Errorf("a second listing described %d executions again", len(f.described)-n)
	}
	if _, err := (&SFNRuns{Client: f, Machines: []string{"arn:aws:states:eu-west-1:1:stateMachine:Gone"}}).ListRuns(context.Background(), "acme"); err == nil {
		t.Error("a machine that cannot be listed gave no error")
	}
}

func TestSFNRunsDescribesABoundedNumberPerListing(t *testing.T) {
	const m = "arn:aws:states:eu-west-1:1:stateMachine:DebateStateMachine"
	f := &fakeRuns{execs: map[string][]types.ExecutionListItem{}, inputs: map[string]string{}}
	start := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	for i := 0; i < MaxDescribedPerList+10; i++ {
		name := "d" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		arn := "arn:aws:states:eu-west-1:1:execution:DebateStateMachine:" + name
		f.execs[m] = append(f.execs[m], types.ExecutionListItem{ExecutionArn: aws.String(arn), Name: aws.String(name), StartDate: &start, Status: types.ExecutionStatusRunning})
		f.inputs[arn] = `{"tenant":"acme"}`
	}
	runs := &SFNRuns{Client: f, Machines: []string{m}}
	first, _ := runs.ListRuns(context.Background(), "acme")
	if len(f.described) != MaxDescribedPerList || len(first) != MaxDescribedPerList {
		t.Errorf("first listing described %d and listed %d, want %d each", len(f.described), len(first), MaxDescribedPerList)
	}
	second, _ := runs.ListRuns(context.Background(), "acme")
	if len(second) != MaxDescribedPerList+10 {
		t.Errorf("second listing %d runs, want all %d", len(second), MaxDescribedPerList+10)
	}
}

func TestKindOf(t *testing.T) {
	for in, want := range map[string]string{"CompanionStateMachine": "companion", "GatesDemoStateMachine": "gates-demo",
		"ExecutiveSearchStateMachine": "executive-search", "debate": "debate", "DebateStateMachine-Xy12Ab": "debate",
		"CareerCompanionStateMachine": "career-companion"} {
		if got := KindOf(in); got != want {
			t.Errorf("KindOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// Every tenant's console polls GET /runs: a machine is listed at most once
// per ListFresh, and a failed listing is a TransientError (503, retried).
func TestSFNRunsReusesAFreshListing(t *testing.T) {
	const m = "arn:aws:states:eu-west-1:1:stateMachine:DebateStateMachine"
	f := &fakeRuns{execs: map[string][]types.ExecutionListItem{m: nil}, inputs: map[string]string{}}
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	runs := &SFNRuns{Client: f, Machines: []string{m}, Now: func() time.Time { return now }}
	for _, tenant := range []string{"acme", "beta", "acme"} {
		if _, err := runs.ListRuns(context.Background(), tenant); err != nil {
			t.Fatal(err)
		}
	}
	if f.listed != 1 {
		t.Errorf("ListExecutions called %d times within %v, want 1", f.listed, ListFresh)
	}
	now = now.Add(ListFresh)
	runs.ListRuns(context.Background(), "acme")
	if f.listed != 2 {
		t.Errorf("ListExecutions called %d times after %v, want 2", f.listed, ListFresh)
	}
	gone := &SFNRuns{Client: f, Machines: []string{"arn:aws:states:eu-west-1:1:stateMachine:Gone"}}
	if _, err := gone.ListRuns(context.Background(), "acme"); veredicto.ErrorName(err) != veredicto.NameTransient {
		t.Errorf("failed listing: %v (%s), want a TransientError", err, veredicto.ErrorName(err))
	}
}
