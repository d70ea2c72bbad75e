package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/eventlog/file"
	fileeventlog "github.com/veredicto/veredicto/internal/eventlog/file"
)

const smARN = "arn:aws:states:us-east-1:123456789012:stateMachine:veredicto-executive-search"

// fakeSFN holds executions (ARN → input) and one history, served in pages.
type fakeSFN struct {
	mu      sync.Mutex
	inputs  map[string]string
	history []types.HistoryEvent
	calls   int
}

func (f *fakeSFN) DescribeExecution(_ context.Context, in *sfn.DescribeExecutionInput, _ ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error) {
	input, ok := f.inputs[*in.ExecutionArn]
	if !ok {
		return nil, &types.ExecutionDoesNotExist{Message: aws.String("Execution Does Not Exist")}
	}
	return &sfn.DescribeExecutionOutput{ExecutionArn: in.ExecutionArn, Input: aws.String(input)}, nil
}

func (f *fakeSFN) GetExecutionHistory(_ context.Context, in *sfn.GetExecutionHistoryInput, _ ...func(*sfn.Options)) (*sfn.GetExecutionHistoryOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	start := 0
	if in.NextToken != nil {
		fmt.Sscan(*in.NextToken, &start)
	}
	end := min(len(f.history), start+3) // small pages: pagination is exercised
	out := &sfn.GetExecutionHistoryOutput{Events: f.history[start:end]}
	if end < len(f.history) {
		out.NextToken = aws.String(fmt.Sprint(end))
	}
	return out, nil
}

func hev(id, prev int64, typ types.HistoryEventType, fill func(*types.HistoryEvent)) types.HistoryEvent {
	h := types.HistoryEvent{Id: id, PreviousEventId: prev, Type: typ, Timestamp: aws.Time(time.Unix(1795435200+id, 0))}
	if fill != nil {
		fill(&h)
	}
	return h
}

func awsHistory(done bool) []types.HistoryEvent {
	h := []types.HistoryEvent{
		hev(1, 0, types.HistoryEventTypeExecutionStarted, nil),
		hev(2, 1, types.HistoryEventTypeTaskStateEntered, func(h *types.HistoryEvent) {
			h.StateEnteredEventDetails = &types.StateEnteredEventDetails{Name: aws.String("GEM1"), Input: aws.String(`{"cv":"Jane Doe"}`)}
		}),
		hev(3, 2, types.HistoryEventTypeTaskScheduled, func(h *types.HistoryEvent) {
			h.TaskScheduledEventDetails = &types.TaskScheduledEventDetails{Resource: aws.String("invoke"), ResourceType: aws.String("lambda"),
				Parameters: aws.String(`{"FunctionName":"arn:aws:lambda:us-east-1:123456789012:function:veredicto-Gem1Function-X","Payload":{}}`)}
		}),
		hev(4, 3, types.HistoryEventTypeTaskFailed, func(h *types.HistoryEvent) {
			h.TaskFailedEventDetails = &types.TaskFailedEventDetails{Error: aws.String("TransientError"), Cause: aws.String("Jane's CV timed out")}
		}),
		hev(5, 4, types.HistoryEventTypeTaskScheduled, func(h *types.HistoryEvent) {
			h.TaskScheduledEventDetails = &types.TaskScheduledEventDetails{Resource: aws.String("invoke"), ResourceType: aws.String("lambda"),
				Parameters: aws.String(`{"FunctionName":"arn:aws:lambda:us-east-1:123456789012:function:veredicto-Gem1Function-X"}`)}
		}),
		hev(6, 5, types.HistoryEventTypeTaskSucceeded, func(h *types.HistoryEvent) {
			h.TaskSucceededEventDetails = &types.TaskSucceededEventDetails{Output: aws.String(`{"Payload":{"score":71,"passed":true,"notes":"Jane"}}`)}
		}),
		hev(7, 6, types.HistoryEventTypeTaskStateExited, func(h *types.HistoryEvent) {
			h.StateExitedEventDetails = &types.StateExitedEventDetails{Name: aws.String("GEM1")}
		}),
	}
	if done {
		h = append(h, hev(8, 7, types.HistoryEventTypeExecutionSucceeded, func(h *types.HistoryEvent) {
			h.ExecutionSucceededEventDetails = &types.ExecutionSucceededEventDetails{Output: aws.String(`{"decision":"APROBADO"}`)}
		}))
	}
	return h
}

func TestExecutionsResolve(t *testing.T) {
	exec := strings.Replace(smARN, ":stateMachine:", ":execution:", 1) + ":acme-s-1"
	api := &fakeSFN{inputs: map[string]string{exec: `{"tenant":"acme","search_id":"s-1"}`,
		strings.Replace(smARN, ":stateMachine:", ":execution:", 1) + ":no-tenant": `{}`}}
	e := &Executions{API: api, StateMachines: []string{smARN}}
	tests := []struct {
		name, tenant, ref, want string
	}{
		{"by ARN", "acme", exec, exec},
		{"by name", "acme", "acme-s-1", exec},
		{"another tenant's", "globex", exec, ""},
		{"missing", "acme", "acme-s-2", ""},
		{"another machine", "acme", strings.Replace(exec, "veredicto-executive-search", "other", 1), ""},
		{"input without tenant is nobody's", "default", "no-tenant", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.ResolveExecution(t.Context(), tt.tenant, tt.ref)
			if tt.want == "" {
				var nf *veredicto.NotFoundError
				if !errors.As(err, &nf) {
					t.Errorf("got %q, %v; want NotFoundError", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestExecutionsMirrorHistory(t *testing.T) {
	ctx := t.Context()
	exec := strings.Replace(smARN, ":stateMachine:", ":execution:", 1) + ":acme-s-1"
	api := &fakeSFN{inputs: map[string]string{exec: `{"tenant":"acme"}`}, history: awsHistory(false)}
	log := file.New(t.TempDir())
	now := time.Unix(0, 0)
	newExecutions := func() *Executions {
		return &Executions{API: api, Recorder: &Recorder{Log: log}, Log: log, StateMachines: []string{smARN}, Now: func() time.Time { return now }}
	}
	e := newExecutions()
	if err := e.Refresh(ctx, "acme", exec); err != nil {
		t.Fatal(err)
	}
	calls := api.calls
	if err := e.Refresh(ctx, "acme", exec); err != nil || api.calls != calls {
		t.Errorf("a refresh within MinInterval read the history (%d calls, want %d), %v", api.calls, calls, err)
	}
	// The execution ends; a fresh Lambda instance mirrors only what is new.
	api.mu.Lock()
	api.history = awsHistory(true)
	api.mu.Unlock()
	now = now.Add(time.Minute)
	if err := newExecutions().Refresh(ctx, "acme", exec); err != nil {
		t.Fatal(err)
	}
	evs, err := log.Read(ctx, "acme", exec, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		var d struct {
			Step   Step   `json:"step"`
			Status string `json:"status"`
		}
		json.Unmarshal(ev.Data, &d)
		if strings.Contains(string(ev.Data), "Jane") {
			t.Errorf("document text in %s", ev.Data)
		}
		got = append(got, strings.TrimSpace(d.Step.Content+" "+d.Status))
	}
	want := []string{
		"Ejecución inicia",
		"GEM1 inicia",
		"veredicto-Gem1Function-X falla: TransientError",
		"veredicto-Gem1Function-X reintenta (intento 2)",
		"veredicto-Gem1Function-X termina",
		"Ejecución termina con éxito",
		"SUCCEEDED",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stream:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var step struct {
		Step Step `json:"step"`
	}
	json.Unmarshal(evs[4].Data, &step)
	if step.Step.Metadata["Payload.score"] != 71.0 || step.Step.Metadata["Payload.passed"] != true {
		t.Errorf("finished step metadata = %v, want the score and gate", step.Step.Metadata)
	}
	// Ended: no more history reads.
	calls = api.calls
	pages := (len(api.history) + 2) / 3
	now = now.Add(time.Hour)
	e2 := newExecutions()
	e2.Refresh(ctx, "acme", exec)
	now = now.Add(time.Hour)
	e2.Refresh(ctx, "acme", exec)
	if api.calls > calls+pages {
		t.Errorf("%d history pages read after the end, want at most one read (%d pages) per instance", api.calls-calls, pages)
	}
}

// TestResolveThenRefresh is what the stream's handler does for an
// execution on AWS: resolve the name, refresh the log from the history,
// read it.
func TestResolveThenRefresh(t *testing.T) {
	exec := strings.Replace(smARN, ":stateMachine:", ":execution:", 1) + ":acme-s-1"
	api := &fakeSFN{inputs: map[string]string{exec: `{"tenant":"acme"}`}, history: awsHistory(true)}
	log := fileeventlog.New(t.TempDir())
	e := &Executions{API: api, StateMachines: []string{smARN}, Log: log, Recorder: &Recorder{Log: log}}
	stream, err := e.ResolveExecution(t.Context(), "acme", "acme-s-1")
	if err != nil || stream != exec {
		t.Fatalf("resolve: %q %v", stream, err)
	}
	if err := e.Refresh(t.Context(), "acme", stream); err != nil {
		t.Fatal(err)
	}
	evs, err := log.Read(t.Context(), "acme", stream, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 7 || !evs[6].Finished() {
		t.Errorf("got %d events, want 7 ending with finish", len(evs))
	}
}

// TestFromSFNMapIterations: every MapIteration event of a Step Functions
// history, aborted ones included, names its Map state and item index.
func TestFromSFNMapIterations(t *testing.T) {
	details := &types.MapIterationEventDetails{Name: aws.String("Each"), Index: 3}
	h := []types.HistoryEvent{
		hev(1, 0, types.HistoryEventTypeMapIterationStarted, func(h *types.HistoryEvent) { h.MapIterationStartedEventDetails = details }),
		hev(2, 1, types.HistoryEventTypeMapIterationFailed, func(h *types.HistoryEvent) { h.MapIterationFailedEventDetails = details }),
		hev(3, 1, types.HistoryEventTypeMapIterationAborted, func(h *types.HistoryEvent) { h.MapIterationAbortedEventDetails = details }),
	}
	for _, ev := range FromSFN(h) {
		if ev.State != "Each" || ev.Index == nil || *ev.Index != 3 {
			t.Errorf("%s: state %q, index %v", ev.Type, ev.State, ev.Index)
		}
	}
}
