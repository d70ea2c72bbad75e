package asl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// scriptedMock answers each mocked state from its list, in order.
type scriptedMock struct {
	mu      sync.Mutex
	answers map[string][]any // json.RawMessage or error
	used    map[string]int
}

func (m *scriptedMock) Mocks(state string) bool { _, ok := m.answers[state]; return ok }

func (m *scriptedMock) Next(state string) (json.RawMessage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.used == nil {
		m.used = map[string]int{}
	}
	n := m.used[state]
	m.used[state]++
	if n >= len(m.answers[state]) {
		return nil, &StatesError{Name: ErrRuntime, Cause: fmt.Sprintf("no answer %d for %s", n, state)}
	}
	switch a := m.answers[state][n].(type) {
	case error:
		return nil, a
	default:
		return a.(json.RawMessage), nil
	}
}

// A mocked state calls no handler (none need be registered for its
// resource), takes its answers in order across its retries, and a
// lambda:invoke's answer is its whole result; unmocked states run their
// handlers.
func TestMockAnswersTasksInPlaceOfTheirServices(t *testing.T) {
	reg := NewRegistry()
	reg.Register("EchoFunction", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) { return in, nil })
	def := `{"StartAt":"L","States":{
	  "L":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"arn:aws:lambda:us-east-1:123456789012:function:Elsewhere","Payload.$":"$"},
	       "Retry":[{"ErrorEquals":["Lambda.TimeoutException"],"IntervalSeconds":1,"MaxAttempts":3}],"ResultSelector":{"body.$":"$.Payload.body"},"ResultPath":"$.lambda","Next":"Q"},
	  "Q":{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage.waitForTaskToken","Parameters":{"QueueUrl":"q","MessageBody":{"token.$":"$$.Task.Token"}},"ResultPath":"$.sqs","Next":"E"},
	  "E":{"Type":"Task","Resource":"${EchoFunctionArn}","End":true}}}`
	throw := &StatesError{Name: "Lambda.TimeoutException", Cause: "Lambda timed out."}
	mock := &scriptedMock{answers: map[string][]any{
		"L": {throw, throw, json.RawMessage(`{"StatusCode":200,"Payload":{"body":"hi"}}`)},
		"Q": {json.RawMessage(`{"MessageId":"m-1"}`)},
	}}
	res := runAdvancingWith(t, reg, def, `{"a":1}`, StartOptions{Name: "mocked", Mock: mock})
	if res.Status != StatusSucceeded {
		t.Fatalf("got %s %s %s, want SUCCEEDED", res.Status, res.Error, res.Cause)
	}
	if want := `{"a":1,"lambda":{"body":"hi"},"sqs":{"MessageId":"m-1"}}`; string(res.Output) != want {
		t.Errorf("output %s, want %s", res.Output, want)
	}
	if mock.used["L"] != 3 || mock.used["Q"] != 1 {
		t.Errorf("answers used %v, want L 3 times and Q once", mock.used)
	}
}

// A Throw is the attempt's error, caught like a service's; an attempt the
// mock has no answer for ends the execution with States.Runtime, which no
// Retry or Catch takes.
func TestMockErrors(t *testing.T) {
	def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::dynamodb:putItem","Parameters":{"TableName":"t"},
	  "Retry":[{"ErrorEquals":["States.ALL"],"IntervalSeconds":1,"MaxAttempts":1}],
	  "Catch":[{"ErrorEquals":["States.ALL"],"Next":"Caught"}],"End":true},"Caught":{"Type":"Pass","End":true}}}`
	tests := []struct {
		name      string
		answers   []any
		status    string
		errorName string
	}{
		{"thrown twice, caught", []any{&StatesError{Name: "DynamoDB.ConditionalCheckFailedException", Cause: "c"}, &StatesError{Name: "DynamoDB.ConditionalCheckFailedException", Cause: "c"}}, StatusSucceeded, ""},
		{"no answer for the retry", []any{&StatesError{Name: "DynamoDB.ConditionalCheckFailedException", Cause: "c"}}, StatusFailed, ErrRuntime},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runAdvancingWith(t, NewRegistry(), def, `{}`, StartOptions{Mock: &scriptedMock{answers: map[string][]any{"T": tt.answers}}})
			if res.Status != tt.status || res.Error != tt.errorName {
				t.Errorf("got %s %q (%s), want %s %q", res.Status, res.Error, res.Cause, tt.status, tt.errorName)
			}
		})
	}
}

// Without a mock, an unregistered resource is what the registry's
// External makes of it: a handler, or the reason it has none, which
// Check reports.
func TestExternalServesUnregisteredResources(t *testing.T) {
	reg := NewRegistry()
	unserved := errors.New("give --lambda-endpoint")
	reg.SetExternal(func(resource, binding string) (Handler, error) {
		switch {
		case strings.HasSuffix(binding, ":function:Far"):
			return func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
				return json.RawMessage(`{"far":true}`), nil
			}, nil
		case strings.HasPrefix(binding, "arn:aws:lambda:"):
			return nil, unserved
		}
		return nil, nil
	})
	eng := New(reg)
	far := mustParse(t, `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:1:function:Far","End":true}}}`)
	if err := eng.Check(far); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if res := run(t, reg, `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:1:function:Far","End":true}}}`, `{}`); string(res.Output) != `{"far":true}` {
		t.Errorf("output %s (%s %s), want the external handler's", res.Output, res.Error, res.Cause)
	}
	near := mustParse(t, `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:1:function:Near","End":true}}}`)
	var ue *UnboundError
	if err := eng.Check(near); !errors.As(err, &ue) || !errors.Is(err, unserved) {
		t.Errorf("Check = %v, want an UnboundError with the External's reason", err)
	}
	typo := mustParse(t, `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"${NopeFunctionArn}","End":true}}}`)
	if err := eng.Check(typo); !errors.As(err, &ue) || ue.Reason != nil {
		t.Errorf("Check = %v, want an UnboundError without a reason", err)
	}
}

// An activity's Task is answered by its worker, never by a mock: a test
// case that mocks one ends the execution as Step Functions Local does.
func TestMockOfAnActivityFails(t *testing.T) {
	def := `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:us-east-1:123456789012:activity:resize","End":true}}}`
	queued := false
	eng := New(NewRegistry(), WithActivities(func(context.Context, json.RawMessage) (json.RawMessage, error) { queued = true; return nil, nil }, nil))
	mock := &scriptedMock{answers: map[string][]any{"A": {json.RawMessage(`{}`)}}}
	res, err := eng.Run(context.Background(), mustParse(t, def), json.RawMessage(`{}`), StartOptions{Mock: mock})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusFailed || res.Error != ErrRuntime || !strings.Contains(res.Cause, "Activity state cannot be mocked") || queued {
		t.Errorf("got %s %s %q (queued %v), want FAILED States.Runtime, no task queued", res.Status, res.Error, res.Cause, queued)
	}
}
