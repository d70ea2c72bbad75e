package control

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/sfnmock"
)

// chargeTwice charges (a DynamoDB call no handler serves), asks for a
// decision (a real task token) and charges again while the answer says so.
const chargeTwice = `{"StartAt":"Charge","States":{
  "Charge":{"Type":"Task","Resource":"arn:aws:states:::dynamodb:updateItem","Parameters":{"TableName":"t"},"ResultPath":"$.charge","Next":"Ask"},
  "Ask":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
         "Parameters":{"FunctionName":"NotifyFunction","Payload":{"token.$":"$$.Task.Token"}},"ResultPath":"$.answer","Next":"Again"},
  "Again":{"Type":"Choice","Choices":[{"Variable":"$.answer.again","BooleanEquals":true,"Next":"Charge"}],"Default":"Done"},
  "Done":{"Type":"Pass","End":true}}}`

const chargeMocks = `{"StateMachines":{"Charger":{"TestCases":{"Twice":{"Charge":"Counted"}}}},
  "MockedResponses":{"Counted":{"0":{"Return":{"n":0}},"1":{"Return":{"n":1}}}}}`

// mockFixture is a fixture whose managers have chargeMocks and serve no
// service integration but the mocked ones.
func mockFixture(t *testing.T) *fixture {
	t.Helper()
	cfg, err := sfnmock.Parse("chargeMocks.json", []byte(chargeMocks))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture()
	f.mocks = cfg
	f.reg.SetExternal(func(resource, _ string) (asl.Handler, error) {
		return func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return nil, &asl.StatesError{Name: asl.ErrRuntime, Cause: resource + " is not served here"}
		}, nil
	})
	return f
}

// A start on "ARN#TestCase" runs the test case: its mocked state answers
// from the mock, its other states run; the execution is the machine's, and
// after a restart its mocked state goes on with the next answer.
func TestTestCaseRunsAndResumesWithItsAnswers(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := mockFixture(t)
	m := f.open(t, dir)
	if _, err := m.CreateStateMachine(ctx, "Charger", chargeTwice, "", ""); err != nil {
		t.Fatal(err)
	}
	x, err := m.StartExecution(ctx, StateMachineARN("Charger")+"#Twice", "c1", `{"tenant":"acme"}`)
	if err != nil {
		t.Fatal(err)
	}
	if x.ARN != ExecutionARN("Charger", "c1") || x.StateMachineARN != StateMachineARN("Charger") {
		t.Errorf("execution %s of %s, want the machine's own ARNs", x.ARN, x.StateMachineARN)
	}
	tok := f.token(t)
	m.Close()

	m = f.open(t, dir)
	defer m.Close()
	if err := m.SendTaskSuccess(ctx, tok, `{"again":true}`); err != nil {
		t.Fatal(err)
	}
	// The resumed execution may hand its waiting task's token to the
	// handler again (a notification resent after a restart): the second
	// Ask's token is the next other one.
	next := f.token(t)
	for next == tok {
		next = f.token(t)
	}
	if err := m.SendTaskSuccess(ctx, next, `{"again":false}`); err != nil {
		t.Fatal(err)
	}
	got := waitClosed(t, m, x.ARN)
	if want := `{"answer":{"again":false},"charge":{"n":1},"tenant":"acme"}`; got.Status != asl.StatusSucceeded || string(got.Output) != want {
		t.Errorf("got %s %s (%s %s), want SUCCEEDED %s", got.Status, got.Output, got.Error, got.Cause, want)
	}
}

// A test case the configuration lacks, or any test case without one, is
// StateMachineDoesNotExist for the whole ARN, as we take Step Functions
// Local to answer (not verified against a recording); so is a mocked
// start of a machine that does not exist.
func TestUnknownTestCase(t *testing.T) {
	ctx := context.Background()
	for _, withMocks := range []bool{true, false} {
		f := mockFixture(t)
		if !withMocks {
			f.mocks = nil
		}
		m := f.open(t, t.TempDir())
		if _, err := m.CreateStateMachine(ctx, "Charger", chargeTwice, "", ""); err != nil {
			t.Fatal(err)
		}
		for _, arn := range []string{StateMachineARN("Charger") + "#Nope", StateMachineARN("Charger") + "#", StateMachineARN("Missing") + "#Twice"} {
			_, err := m.StartExecution(ctx, arn, "", `{}`)
			var ce *Error
			if !errors.As(err, &ce) || ce.Code != CodeStateMachineDoesNotExist {
				t.Errorf("mocks %v, start on %s: %v, want %s", withMocks, arn, err, CodeStateMachineDoesNotExist)
			}
		}
		_, err := m.StartExecution(ctx, StateMachineARN("Charger")+"#Nope", "", `{}`)
		if err == nil || !strings.Contains(err.Error(), "'"+StateMachineARN("Charger")+"#Nope'") {
			t.Errorf("the refusal %v does not name the ARN as given", err)
		}
		m.Close()
	}
}

// An Express machine runs a test case too, StartSyncExecution answering
// with the mocked output.
func TestTestCaseOfAnExpressMachine(t *testing.T) {
	ctx := context.Background()
	m := mockFixture(t).open(t, t.TempDir())
	defer m.Close()
	def := `{"StartAt":"Charge","States":{"Charge":{"Type":"Task","Resource":"arn:aws:states:::dynamodb:updateItem","Parameters":{"TableName":"t"},"End":true}}}`
	if _, err := m.CreateStateMachine(ctx, "Charger", def, "", "EXPRESS"); err != nil {
		t.Fatal(err)
	}
	x, err := m.StartSyncExecution(ctx, StateMachineARN("Charger")+"#Twice", "", `{}`)
	if err != nil || x.Status != asl.StatusSucceeded || string(x.Output) != `{"n":0}` {
		t.Errorf("got %+v, %v; want SUCCEEDED {\"n\":0}", x, err)
	}
	x, err = m.StartSyncExecution(ctx, StateMachineARN("Charger"), "", `{}`)
	if err != nil || x.Status != asl.StatusFailed || x.Error != asl.ErrRuntime {
		t.Errorf("unmocked: got %+v, %v; want FAILED States.Runtime", x, err)
	}
}
