package asl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/asl/asltest"
)

func mustParse(t *testing.T, def string) *StateMachine {
	t.Helper()
	sm, err := Parse([]byte(def))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return sm
}

func run(t *testing.T, reg *Registry, def, input string) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := New(reg).Run(ctx, mustParse(t, def), json.RawMessage(input), StartOptions{Name: "test"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func TestParseReportsProblemsByState(t *testing.T) {
	tests := []struct {
		name string
		def  string
		want []string
	}{
		{"not json", `{"StartAt":`, []string{"not valid JSON"}},
		{"unknown type", `{"StartAt":"A","States":{"A":{"Type":"Passs","End":true}}}`, []string{`state "A": unknown Type "Passs"`}},
		{"missing next", `{"StartAt":"A","States":{"A":{"Type":"Pass"}}}`, []string{`state "A": needs Next or "End": true`}},
		{"next and end", `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"A","End":true}}}`, []string{`state "A": has both Next and End`}},
		{"dangling next", `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"}}}`, []string{`state "A": transition to "B", which is not a state`}},
		{"unreachable", `{"StartAt":"A","States":{"A":{"Type":"Succeed"},"B":{"Type":"Succeed"}}}`, []string{`state "B" is unreachable from StartAt "A"`}},
		{"bad start", `{"StartAt":"X","States":{"A":{"Type":"Succeed"}}}`, []string{`StartAt "X" names no state`}},
		{"bad path", `{"StartAt":"A","States":{"A":{"Type":"Pass","InputPath":"$.a[","End":true}}}`, []string{`state "A": InputPath: path "$.a["`}},
		{"path without dollar", `{"StartAt":"A","States":{"A":{"Type":"Pass","OutputPath":"a.b","End":true}}}`, []string{`must start with $`}},
		{"result path not reference", `{"StartAt":"A","States":{"A":{"Type":"Pass","ResultPath":"$.a[*]","End":true}}}`, []string{`ResultPath: path "$.a[*]" must be a reference path`}},
		{"jsonpath field in jsonata state", `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","InputPath":"$.a","End":true}}}`, []string{`state "A": field "InputPath": the QueryLanguage is set to 'JSONata', but field 'InputPath' is only supported for the 'JSONPath' QueryLanguage`}},
		{"dollar key in jsonata assign", `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"x.$":"$.a"},"End":true}}}`, []string{`state "A": Assign: field "x.$": keys ending in .$ are JSONPath`}},
		{"undefined reserved name", `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","Output":"{% $states.inptu %}","End":true}}}`, []string{`state "A": Output: $states.inptu is not defined`}},
		{"result outside task", `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","Output":"{% $states.result %}","End":true}}}`, []string{`state "A": Output: $states.result is not accessible`}},
		{"jsonpath state in jsonata machine", `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","QueryLanguage":"JSONPath","End":true}}}`, []string{`state "A": 'QueryLanguage' can not be 'JSONPath' if set to 'JSONata' for whole state machine`}},
		{"bad jsonata syntax", `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","Output":{"a":"{% 1 + %}"},"End":true}}}`, []string{`state "A": Output.a: invalid JSONata expression`}},
		{"spaces outside jsonata marks", `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","Output":" {% 1 %}","End":true}}}`, []string{`state "A": Output: a JSONata expression must start with {%`}},
		{"output in jsonpath state", `{"StartAt":"A","States":{"A":{"Type":"Pass","Output":{},"End":true}}}`, []string{`state "A": field "Output": the QueryLanguage is set to 'JSONPath', but field 'Output' is only supported for the 'JSONata' QueryLanguage`}},
		{"assign in succeed", `{"StartAt":"A","States":{"A":{"Type":"Succeed","Assign":{"x":1}}}}`, []string{`state "A": field "Assign" is not allowed in a Succeed state`}},
		{"context object in jsonata", `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","Output":"{% $$.Execution.Id %}","End":true}}}`, []string{`state "A": Output: Reference to '$$' is not supported`}},
		{"query language on an item processor", `{"StartAt":"M","States":{"M":{"Type":"Map","ItemProcessor":{"QueryLanguage":"JSONata","StartAt":"I","States":{"I":{"Type":"Pass","End":true}}},"End":true}}}`, []string{`state "M" item processor: unknown top-level field "QueryLanguage"`}},
		{"context object in jsonata, not in its strings", `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Pass","Output":"{% 'costs $$ and $states.x' & $$ %}","End":true}}}`, []string{`state "A": Output: Reference to '$$' is not supported`}},
		{"bad variable name", `{"StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"1x":1},"End":true}}}`, []string{`state "A": Assign: variable name "1x" must start with a letter`}},
		{"variable in result path", `{"StartAt":"A","States":{"A":{"Type":"Pass","ResultPath":"$x","End":true}}}`, []string{`state "A": ResultPath "$x": variables cannot be used in ResultPath`}},
		{"inner scope reassigns outer variable", `{"StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"x":1},"Next":"P"},"P":{"Type":"Parallel","Branches":[{"StartAt":"B","States":{"B":{"Type":"Pass","Assign":{"x":2},"End":true}}}],"End":true}}}`, []string{`state "P" branch 1: state "B": Assign: variable "x" is already assigned in an outer scope`}},
		{"unknown field", `{"StartAt":"A","States":{"A":{"Type":"Pass","Nxt":"A","End":true}}}`, []string{`state "A": field "Nxt" is not allowed in a Pass state`}},
		{"map without processor", `{"StartAt":"M","States":{"M":{"Type":"Map","End":true}}}`, []string{`state "M": a Map state needs ItemProcessor`}},
		{"wait two fields", `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":1,"SecondsPath":"$.s","End":true}}}`, []string{`state "W": a Wait state needs exactly one of`}},
		{"all not last", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"x","Catch":[{"ErrorEquals":["States.ALL"],"Next":"E"},{"ErrorEquals":["X"],"Next":"E"}],"End":true},"E":{"Type":"Succeed"}}}`, []string{`States.ALL must appear alone and in the last`}},
		{"branch leaves its machine", `{"StartAt":"P","States":{"P":{"Type":"Parallel","Branches":[{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"Out"}}}],"Next":"Out"},"Out":{"Type":"Succeed"}}}`, []string{`state "P" branch 1: state "A": transition to "Out"`}},
		{"bad intrinsic", `{"StartAt":"A","States":{"A":{"Type":"Pass","Parameters":{"x.$":"States.Nope(1)"},"End":true}}}`, []string{`field "x.$"`}},
		{"choice without operator", `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.a","Next":"D"}]},"D":{"Type":"Succeed"}}}`, []string{`state "C": choice rule 1`}},
		{"several problems at once", `{"StartAt":"A","States":{"A":{"Type":"Pass"},"B":{"Type":"Nope"}}}`, []string{`state "A": needs Next`, `state "B": unknown Type`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.def))
			if err == nil {
				t.Fatal("Parse: got nil error, want a definition error")
			}
			var de *DefinitionError
			if !errors.As(err, &de) {
				t.Fatalf("got %T, want *DefinitionError", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not mention %q", err, w)
				}
			}
		})
	}
}

type InvalidInputError struct{ Field string }

func (e *InvalidInputError) Error() string { return "invalid " + e.Field }

type TransientError struct{}

func (TransientError) Error() string { return "try again" }

func TestTypedHandlerErrorIsCaughtByName(t *testing.T) {
	reg := NewRegistry()
	reg.Register("CheckFunction", func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return nil, &InvalidInputError{Field: "jd.md"}
	})
	def := `{"StartAt":"T","States":{
	  "T":{"Type":"Task","Resource":"${CheckFunctionArn}","Catch":[{"ErrorEquals":["InvalidInputError"],"ResultPath":"$.err","Next":"Caught"}],"End":true},
	  "Caught":{"Type":"Pass","End":true}}}`
	res := run(t, reg, def, `{"k":1}`)
	if res.Status != StatusSucceeded {
		t.Fatalf("status %s: %s %s", res.Status, res.Error, res.Cause)
	}
	var out struct {
		K   int
		Err struct{ Error, Cause string }
	}
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatal(err)
	}
	if out.K != 1 || out.Err.Error != "InvalidInputError" {
		t.Errorf("output %s: want k=1 and Error InvalidInputError", res.Output)
	}
	var cause struct{ ErrorMessage, ErrorType string }
	if err := json.Unmarshal([]byte(out.Err.Cause), &cause); err != nil || cause.ErrorMessage != "invalid jd.md" || cause.ErrorType != "InvalidInputError" {
		t.Errorf("cause %q: want Lambda's {errorMessage, errorType} JSON", out.Err.Cause)
	}
}

func TestUnboundResourceFailsBeforeStarting(t *testing.T) {
	sm := mustParse(t, `{"StartAt":"P","States":{"P":{"Type":"Parallel","Branches":[{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"${Gem9FunctionArn}","End":true}}}],"End":true}}}`)
	_, err := New(NewRegistry()).Start(context.Background(), sm, json.RawMessage(`{}`), StartOptions{})
	var ue *UnboundError
	if !errors.As(err, &ue) {
		t.Fatalf("Start: got %v, want *UnboundError", err)
	}
	if ue.State != "T" || ue.Binding != "Gem9Function" {
		t.Errorf("got state %q binding %q, want T and Gem9Function", ue.State, ue.Binding)
	}
}

func TestLambdaInvokeIntegrationWrapsPayload(t *testing.T) {
	reg := NewRegistry()
	reg.Register("EchoFunction", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) { return in, nil })
	def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",
	  "Parameters":{"FunctionName":"${EchoFunctionArn}","Payload":{"x.$":"$.x"}},"ResultSelector":{"p.$":"$.Payload","code.$":"$.StatusCode"},"End":true}}}`
	res := run(t, reg, def, `{"x":"hola"}`)
	if got, want := string(res.Output), `{"code":200,"p":{"x":"hola"}}`; got != want {
		t.Errorf("output %s, want %s", got, want)
	}
}

func TestWaitForTaskTokenResumesOnSendTaskSuccessAndFailure(t *testing.T) {
	for _, succeed := range []bool{true, false} {
		t.Run(fmt.Sprint("succeed=", succeed), func(t *testing.T) {
			tokens := make(chan string, 1)
			reg := NewRegistry()
			reg.Register("AskFunction", tokenHandler(tokens))
			def := `{"StartAt":"Ask","States":{"Ask":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
			  "Parameters":{"FunctionName":"${AskFunctionArn}","Payload":{"Token.$":"$$.Task.Token"}},"ResultPath":"$.answer",
			  "Catch":[{"ErrorEquals":["Rejected"],"ResultPath":"$.rejection","Next":"No"}],"End":true},
			  "No":{"Type":"Pass","End":true}}}`
			eng := New(reg)
			x, err := eng.Start(context.Background(), mustParse(t, def), json.RawMessage(`{"q":1}`), StartOptions{})
			if err != nil {
				t.Fatal(err)
			}
			tok := <-tokens
			if len(tok) < 32 {
				t.Fatalf("token %q too short", tok)
			}
			if succeed {
				err = eng.SendTaskSuccess(tok, json.RawMessage(`{"ok":true}`))
			} else {
				err = eng.SendTaskFailure(tok, "Rejected", "the user said no")
			}
			if err != nil {
				t.Fatal(err)
			}
			res, err := x.Wait(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			want := `{"answer":{"ok":true},"q":1}`
			if !succeed {
				want = `{"q":1,"rejection":{"Cause":"the user said no","Error":"Rejected"}}`
			}
			if string(res.Output) != want {
				t.Errorf("output %s, want %s", res.Output, want)
			}
			var tt *TaskTimedOut
			if err := eng.SendTaskSuccess(tok, json.RawMessage(`{}`)); !errors.As(err, &tt) {
				t.Errorf("second SendTaskSuccess: got %v, want *TaskTimedOut", err)
			}
		})
	}
}

func TestMapHonoursMaxConcurrencyAndKeepsItemOrder(t *testing.T) {
	var cur, peak atomic.Int32
	reg := NewRegistry()
	reg.Register("SlowFunction", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		n := cur.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(15 * time.Millisecond) // the point: a call long enough for the iterations to overlap
		cur.Add(-1)
		return in, nil
	})
	def := `{"StartAt":"M","States":{"M":{"Type":"Map","MaxConcurrency":3,"ItemProcessor":{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"${SlowFunctionArn}","End":true}}},"End":true}}}`
	res := run(t, reg, def, `[9,8,7,6,5,4,3,2,1,0]`)
	if got, want := string(res.Output), `[9,8,7,6,5,4,3,2,1,0]`; got != want {
		t.Errorf("output %s, want %s", got, want)
	}
	if p := peak.Load(); p != 3 {
		t.Errorf("peak concurrency %d, want 3", p)
	}
}

func TestHistoryOrderAndTransitions(t *testing.T) {
	def := `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"},"B":{"Type":"Map","ItemsPath":"$.xs","ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}},"ResultPath":"$.ys","Next":"C"},"C":{"Type":"Succeed"}}}`
	res := run(t, NewRegistry(), def, `{"xs":[1]}`)
	var types []string
	for i, e := range res.History() {
		if e.ID != i+1 {
			t.Errorf("event %d has id %d", i, e.ID)
		}
		if i > 0 && e.Timestamp.Before(res.History()[i-1].Timestamp) {
			t.Errorf("event %d goes back in time", e.ID)
		}
		types = append(types, e.Type)
	}
	want := []string{"ExecutionStarted", "PassStateEntered", "PassStateExited", "MapStateEntered", "MapStateStarted",
		"MapIterationStarted", "PassStateEntered", "PassStateExited", "MapIterationSucceeded", "MapStateSucceeded",
		"MapStateExited", "SucceedStateEntered", "SucceedStateExited", "ExecutionSucceeded"}
	if strings.Join(types, ",") != strings.Join(want, ",") {
		t.Errorf("history\n got  %v\n want %v", types, want)
	}
	if res.Transitions != 4 {
		t.Errorf("transitions %d, want 4 (A, B, I, C)", res.Transitions)
	}
	if res.History()[6].Scope != "B/item[0]" {
		t.Errorf("inner state scope %q, want B/item[0]", res.History()[6].Scope)
	}
}

func TestPayloadOverLimitFailsWithDataLimitExceeded(t *testing.T) {
	reg := NewRegistry()
	reg.Register("BigFunction", func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.Marshal(strings.Repeat("x", MaxPayloadBytes))
	})
	def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"${BigFunctionArn}","Catch":[{"ErrorEquals":["States.ALL"],"Next":"S"}],"End":true},"S":{"Type":"Succeed"}}}`
	res := run(t, reg, def, `{}`)
	if res.Status != StatusFailed || res.Error != ErrDataLimitExceeded {
		t.Errorf("got %s %s, want FAILED States.DataLimitExceeded (not caught by States.ALL)", res.Status, res.Error)
	}
}

func TestExecutionTimeoutSeconds(t *testing.T) {
	clk := asltest.NewClock(clockStart)
	x, err := New(NewRegistry(), WithClock(clk)).Start(context.Background(), mustParse(t, `{"TimeoutSeconds":1,"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":30,"End":true}}}`), json.RawMessage(`{}`), StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	awaitTimers(t, clk, time.Second, 30*time.Second) // the execution's deadline, the Wait's end
	clk.Advance(time.Second)
	res, err := x.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusTimedOut || res.Error != ErrTimeout {
		t.Errorf("got %s %s, want TIMED_OUT States.Timeout", res.Status, res.Error)
	}
}

// A handler that gives up once its Task's TimeoutSeconds has run out,
// naming its failure as it likes (a Lambda's TransientError whose cause
// is the lost deadline), has timed out: Step Functions stopped waiting at
// the deadline, so the Task fails with States.Timeout, which a Retry for
// TransientError does not repeat.
func TestTaskFailingAfterItsTimeoutTimedOut(t *testing.T) {
	reg := NewRegistry()
	calls := 0
	reg.Register("SlowFunction", func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		calls++
		<-ctx.Done()
		return nil, &StatesError{Name: "TransientError", Cause: "llm: " + ctx.Err().Error()}
	})
	def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"${SlowFunctionArn}","TimeoutSeconds":1,
	  "Retry":[{"ErrorEquals":["TransientError"],"MaxAttempts":3}],"End":true}}}`
	clk := asltest.NewClock(clockStart)
	x, err := New(reg, WithClock(clk)).Start(context.Background(), mustParse(t, def), json.RawMessage(`{}`), StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	awaitTimers(t, clk, time.Second)
	clk.Advance(time.Second)
	res, err := x.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusFailed || res.Error != ErrTimeout || calls != 1 {
		t.Errorf("got %s %s (%s) after %d calls, want FAILED States.Timeout after one", res.Status, res.Error, res.Cause, calls)
	}
}

// With MaxWait, a Wait that would outlast it fails at once with
// States.Timeout, however its time is given; a shorter one waits.
func TestMaxWaitBoundsWaits(t *testing.T) {
	tests := []struct {
		name, wait string
		fails      bool
	}{
		{"seconds", `"Seconds":99999999`, true},
		{"seconds path", `"SecondsPath":"$.s"`, true},
		{"timestamp", `"Timestamp":"9999-12-31T23:59:59Z"`, true},
		{"jsonata", `"QueryLanguage":"JSONata","Seconds":"{% $states.input.s %}"`, true},
		{"within the bound", `"Seconds":0`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sm := mustParse(t, `{"StartAt":"W","States":{"W":{"Type":"Wait",`+tt.wait+`,"End":true}}}`)
			res, err := New(NewRegistry()).Run(context.Background(), sm, json.RawMessage(`{"s":99999999}`), StartOptions{MaxWait: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if tt.fails && (res.Status != StatusFailed || res.Error != ErrTimeout || !strings.Contains(res.Cause, `"W"`)) {
				t.Errorf("got %s %s (%s), want FAILED States.Timeout naming W", res.Status, res.Error, res.Cause)
			}
			if !tt.fails && res.Status != StatusSucceeded {
				t.Errorf("got %s %s, want SUCCEEDED", res.Status, res.Error)
			}
		})
	}
}

func TestStopAbortsExecution(t *testing.T) {
	x, err := New(NewRegistry()).Start(context.Background(), mustParse(t, `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":30,"End":true}}}`), nil, StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	x.Stop()
	res, err := x.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusAborted {
		t.Errorf("status %s, want ABORTED", res.Status)
	}
}

func TestHandlerPanicBecomesTaskError(t *testing.T) {
	reg := NewRegistry()
	reg.Register("BoomFunction", func(context.Context, json.RawMessage) (json.RawMessage, error) { panic("boom") })
	res := run(t, reg, `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"${BoomFunctionArn}","End":true}}}`, `{}`)
	if res.Status != StatusFailed || !strings.Contains(res.Cause, "boom") {
		t.Errorf("got %s %s %s, want a failure naming the panic", res.Status, res.Error, res.Cause)
	}
}

func TestRetryCountInContextAndAttempts(t *testing.T) {
	var mu sync.Mutex
	var seen []int
	reg := NewRegistry()
	reg.Register("FlakyFunction", func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
		var v struct{ Retry int }
		_ = json.Unmarshal(in, &v)
		ti, _ := TaskFromContext(ctx)
		mu.Lock()
		seen = append(seen, ti.Attempt)
		mu.Unlock()
		if v.Retry < 2 {
			return nil, TransientError{}
		}
		return in, nil
	})
	def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"${FlakyFunctionArn}","Parameters":{"Retry.$":"$$.State.RetryCount"},
	  "Retry":[{"ErrorEquals":["Other"],"MaxAttempts":5},{"ErrorEquals":["TransientError"],"IntervalSeconds":1,"BackoffRate":1,"MaxDelaySeconds":1,"JitterStrategy":"FULL","MaxAttempts":2}],"End":true}}}`
	res := runAdvancing(t, reg, def, `{}`)
	if string(res.Output) != `{"Retry":2}` {
		t.Errorf("output %s %s %s, want {\"Retry\":2}", res.Output, res.Error, res.Cause)
	}
	if fmt.Sprint(seen) != "[1 2 3]" {
		t.Errorf("attempts %v, want [1 2 3]", seen)
	}
}

func TestJSONSizeMatchesEncoding(t *testing.T) {
	values := []any{nil, true, false, "", "a\"b\\c\n\t\x01é€😀\u2028<>&", int64(-12345), 3.25, 1e21, 0.000001,
		map[string]any{"a": []any{int64(1), "x", nil}, "b\n": map[string]any{}}, []any{}}
	for _, v := range values {
		b, err := marshalJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonSize(v); got != len(b) {
			t.Errorf("jsonSize(%#v) = %d, want %d (%s)", v, got, len(b), b)
		}
	}
}

func TestMalformedHandlerOutputFailsTheTask(t *testing.T) {
	// ojg alone panics on this document; the engine must report it.
	reg := NewRegistry()
	reg.Register("Fn", func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"a":{"b":},"":true}`), nil
	})
	res := run(t, reg, `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"${FnArn}","End":true}}}`, `{}`)
	if res.Status != StatusFailed || res.Error != ErrRuntime || !strings.Contains(res.Cause, "returned invalid JSON") {
		t.Errorf("got %s %s %q, want FAILED %s naming invalid JSON", res.Status, res.Error, res.Cause, ErrRuntime)
	}
}
