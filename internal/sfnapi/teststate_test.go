package sfnapi_test

import (
	"context"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"
)

// inspected decodes inspectionData's JSON texts.
func inspected(t *testing.T, d *types.InspectionData) map[string]any {
	t.Helper()
	out := map[string]any{}
	if d == nil {
		return out
	}
	for k, s := range map[string]*string{"input": d.Input, "afterInputPath": d.AfterInputPath, "afterParameters": d.AfterParameters, "afterArguments": d.AfterArguments,
		"result": d.Result, "afterResultSelector": d.AfterResultSelector, "afterResultPath": d.AfterResultPath, "variables": d.Variables,
		"afterItemsPath": d.AfterItemsPath, "afterItemSelector": d.AfterItemSelector} {
		if s == nil {
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(*s), &v); err != nil {
			t.Fatalf("%s is not JSON: %q", k, *s)
		}
		out[k] = v
	}
	return out
}

func keysOf(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, " ")
}

func jsonValue(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestTestStateInspects: at DEBUG and TRACE, TestState reports the values
// between a state's processing steps, member for member as AWS reports
// them for each state type (LocalStack's snapshots of AWS's answers).
func TestTestStateInspects(t *testing.T) {
	p := newPeer(t)
	ctx := context.Background()
	io := `{"initialData":{"fieldFromInput":"value from input","otherField":"other"},"unrelatedData":{"someOtherField":1234}}`
	tests := []struct {
		name, def, input string
		keys             string
		want             map[string]string // members to check exactly
		next             string
	}{
		{"pass with parameters", `{"Type":"Pass","InputPath":"$.initialData","Parameters":{"staticValue":"some value","inputValue.$":"$.fieldFromInput"},"ResultPath":"$.modifiedData","End":true}`, io,
			"afterInputPath afterParameters afterResultPath afterResultSelector input",
			map[string]string{"afterParameters": `{"staticValue":"some value","inputValue":"value from input"}`, "afterInputPath": `{"fieldFromInput":"value from input","otherField":"other"}`}, ""},
		{"pass with a result", `{"Type":"Pass","Result":{"resultKey":"result value"},"End":true}`, `{"Value":"HelloWorld"}`,
			"afterResultPath afterResultSelector input result", map[string]string{"result": `{"resultKey":"result value"}`}, ""},
		{"fail", `{"Type":"Fail","Error":"SomeFailure","Cause":"c"}`, `{"Value":"HelloWorld"}`, "afterInputPath input", map[string]string{"afterInputPath": `{"Value":"HelloWorld"}`}, ""},
		{"choice", `{"Type":"Choice","Choices":[{"Variable":"$.value","NumericGreaterThanEquals":20,"Next":"ValueInTwenties"}],"Default":"Other"}`, `{"type":"Private","value":22}`,
			"afterInputPath input", nil, "ValueInTwenties"},
		{"task", `{"Type":"Task","Resource":"${EchoFunctionArn}","Parameters":{"echo.$":"$.v"},"ResultSelector":{"got.$":"$.echo"},"ResultPath":"$.r","End":true}`, `{"v":7}`,
			"afterInputPath afterParameters afterResultPath afterResultSelector input result",
			map[string]string{"result": `{"echo":7}`, "afterResultSelector": `{"got":7}`, "afterResultPath": `{"v":7,"r":{"got":7}}`}, ""},
	}
	for _, level := range []types.InspectionLevel{types.InspectionLevelDebug, types.InspectionLevelTrace} {
		for _, tt := range tests {
			t.Run(string(level)+" "+tt.name, func(t *testing.T) {
				out, err := p.client.TestState(ctx, &sfn.TestStateInput{Definition: aws.String(tt.def), Input: aws.String(tt.input), RoleArn: aws.String(role), InspectionLevel: level})
				if err != nil {
					t.Fatal(err)
				}
				got := inspected(t, out.InspectionData)
				if keysOf(got) != tt.keys {
					t.Errorf("inspectionData members %q, want %q", keysOf(got), tt.keys)
				}
				for k, w := range tt.want {
					if !reflect.DeepEqual(got[k], jsonValue(t, w)) {
						t.Errorf("%s = %v, want %s", k, got[k], w)
					}
				}
				if aws.ToString(out.NextState) != tt.next {
					t.Errorf("next %q, want %q", aws.ToString(out.NextState), tt.next)
				}
			})
		}
	}
	info, err := p.client.TestState(ctx, &sfn.TestStateInput{Definition: aws.String(tests[0].def), Input: aws.String(io)})
	if err != nil || info.InspectionData != nil {
		t.Errorf("INFO reports no inspectionData: %+v %v", info.InspectionData, err)
	}
}

// TestTestStateVariablesAndStateName: the variables a state sees are
// given, the variables after it are reported; a state is picked by name
// from a whole machine, whose QueryLanguage it keeps.
func TestTestStateVariablesAndStateName(t *testing.T) {
	p := newPeer(t)
	ctx := context.Background()
	machine := `{"QueryLanguage":"JSONata","StartAt":"First","States":{
	  "First":{"Type":"Pass","Next":"Use"},
	  "Use":{"Type":"Pass","Output":{"greeting":"{% $hello & ' ' & $states.input.name %}"},"Assign":{"count":"{% $count + 1 %}"},"Next":"Done"},
	  "Done":{"Type":"Succeed"}}}`
	out, err := p.client.TestState(ctx, &sfn.TestStateInput{Definition: aws.String(machine), StateName: aws.String("Use"), Input: aws.String(`{"name":"Ada"}`),
		Variables: aws.String(`{"hello":"hi","count":41}`), InspectionLevel: types.InspectionLevelDebug})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(out.Output) != `{"greeting":"hi Ada"}` || aws.ToString(out.NextState) != "Done" {
		t.Errorf("output %s next %s", aws.ToString(out.Output), aws.ToString(out.NextState))
	}
	if got := inspected(t, out.InspectionData)["variables"]; !reflect.DeepEqual(got, jsonValue(t, `{"hello":"hi","count":42}`)) {
		t.Errorf("variables after the state %v", got)
	}
	_, err = p.client.TestState(ctx, &sfn.TestStateInput{Definition: aws.String(machine), StateName: aws.String("Nope")})
	var ae smithy.APIError
	if !errorsAs(err, &ae) || ae.ErrorCode() != "ValidationException" || ae.ErrorMessage() != "State not found in definition" {
		t.Errorf("a missing state: %v", err)
	}
}

func errorsAs(err error, ae *smithy.APIError) bool {
	if err == nil {
		return false
	}
	e, ok := err.(interface{ Unwrap() error })
	for ok {
		if a, isAPI := e.(smithy.APIError); isAPI {
			*ae = a
			return true
		}
		next := e.Unwrap()
		if a, isAPI := next.(smithy.APIError); isAPI {
			*ae = a
			return true
		}
		e, ok = next.(interface{ Unwrap() error })
	}
	return false
}

// TestTestStateMocks: a mock stands for a Task's, Map's or Parallel's
// work; its error meets the state's Retry (RETRIABLE until
// retrierRetryCount uses the attempts up) and Catch, named in
// errorDetails; a Map's mocked failed iterations meet its tolerance.
func TestTestStateMocks(t *testing.T) {
	p := newPeer(t)
	ctx := context.Background()
	task := `{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Arguments":{"FunctionName":"foo","Payload":"bar"},"QueryLanguage":"JSONata",
	  "Retry":[{"ErrorEquals":["MockException"],"IntervalSeconds":1,"BackoffRate":2,"MaxAttempts":5}],
	  "Catch":[{"ErrorEquals":["Other"],"Next":"Other"},{"ErrorEquals":["MockException"],"Next":"HandleMockError"}],"End":true}`
	mockErr := &types.MockInput{ErrorOutput: &types.MockErrorOutput{Error: aws.String("MockException"), Cause: aws.String("Mock the cause of the error.")}}
	retry := func(n int32) *types.TestStateConfiguration {
		return &types.TestStateConfiguration{RetrierRetryCount: aws.Int32(n)}
	}
	// Below the attempts: RETRIABLE, with the retrier and its next interval.
	out, err := p.client.TestState(ctx, &sfn.TestStateInput{Definition: aws.String(task), Mock: mockErr, StateConfiguration: retry(4), InspectionLevel: types.InspectionLevelDebug})
	if err != nil {
		t.Fatal(err)
	}
	d := out.InspectionData
	if out.Status != types.TestExecutionStatusRetriable || d == nil || d.ErrorDetails == nil || aws.ToInt32(d.ErrorDetails.RetryIndex) != 0 || aws.ToInt32(d.ErrorDetails.RetryBackoffIntervalSeconds) != 16 {
		t.Errorf("retriable: %s %+v", out.Status, d)
	}
	if got := inspected(t, d)["afterArguments"]; !reflect.DeepEqual(got, jsonValue(t, `{"FunctionName":"foo","Payload":"bar"}`)) {
		t.Errorf("afterArguments %v", got)
	}
	// The attempts used up: caught by the second catcher.
	out, err = p.client.TestState(ctx, &sfn.TestStateInput{Definition: aws.String(task), Mock: mockErr, StateConfiguration: retry(5), InspectionLevel: types.InspectionLevelDebug})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != types.TestExecutionStatusCaughtError || aws.ToString(out.NextState) != "HandleMockError" || aws.ToString(out.Error) != "MockException" ||
		out.InspectionData.ErrorDetails == nil || aws.ToInt32(out.InspectionData.ErrorDetails.CatchIndex) != 1 {
		t.Errorf("caught: %s %s %s %+v", out.Status, aws.ToString(out.NextState), aws.ToString(out.Error), out.InspectionData.ErrorDetails)
	}
	// A mocked result, no role needed, no handler bound.
	out, err = p.client.TestState(ctx, &sfn.TestStateInput{Definition: aws.String(task), Mock: &types.MockInput{Result: aws.String(`{"Payload":"ok"}`)}})
	if err != nil || out.Status != types.TestExecutionStatusSucceeded || aws.ToString(out.Output) != `{"Payload":"ok"}` {
		t.Errorf("mocked result: %v %+v", err, out)
	}

	mapDef := `{"Type":"Map","ItemsPath":"$.Values","ToleratedFailureCount":1,"MaxConcurrency":2,
	  "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},
	  "Catch":[{"ErrorEquals":["States.ALL"],"Next":"HandleThreshold"}],"End":true}`
	for _, tt := range []struct {
		failed int32
		status types.TestExecutionStatus
	}{{1, types.TestExecutionStatusSucceeded}, {2, types.TestExecutionStatusCaughtError}} {
		out, err := p.client.TestState(ctx, &sfn.TestStateInput{Definition: aws.String(mapDef), Input: aws.String(`{"Values":["first","second","third"]}`),
			Mock: &types.MockInput{Result: aws.String(`[1,1,1]`)}, StateConfiguration: &types.TestStateConfiguration{MapIterationFailureCount: aws.Int32(tt.failed)},
			InspectionLevel: types.InspectionLevelDebug})
		if err != nil {
			t.Fatal(err)
		}
		if out.Status != tt.status || aws.ToInt32(out.InspectionData.MaxConcurrency) != 2 || aws.ToInt32(out.InspectionData.ToleratedFailureCount) != 1 {
			t.Errorf("%d failed: %s %s, inspection %+v", tt.failed, out.Status, aws.ToString(out.Error), out.InspectionData)
		}
		if tt.status == types.TestExecutionStatusCaughtError && aws.ToString(out.Error) != "States.ExceedToleratedFailureThreshold" {
			t.Errorf("error %s", aws.ToString(out.Error))
		}
		if got := inspected(t, out.InspectionData)["afterItemsPath"]; !reflect.DeepEqual(got, jsonValue(t, `["first","second","third"]`)) {
			t.Errorf("afterItemsPath %v", got)
		}
	}

	// A context object stands for the execution's.
	ctxTask := `{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","Payload":{"from.$":"$$.Execution.Input.values"}},"End":true}`
	out, err = p.client.TestState(ctx, &sfn.TestStateInput{Definition: aws.String(ctxTask), Mock: &types.MockInput{Result: aws.String(`{}`)},
		Context: aws.String(`{"Execution":{"Input":{"values":["charizard"]}}}`), InspectionLevel: types.InspectionLevelDebug})
	if err != nil {
		t.Fatal(err)
	}
	if got := inspected(t, out.InspectionData)["afterParameters"]; !reflect.DeepEqual(got, jsonValue(t, `{"FunctionName":"f","Payload":{"from":["charizard"]}}`)) {
		t.Errorf("afterParameters with a context %v", got)
	}

	// TRACE of a mocked HTTP Task: its request and response.
	httpTask := `{"Type":"Task","Resource":"arn:aws:states:::http:invoke","Parameters":{"ApiEndpoint":"https://example.com/approval","Method":"POST","Headers":{"X-Team":"hr"},"RequestBody":{"cost":10}},"End":true}`
	out, err = p.client.TestState(ctx, &sfn.TestStateInput{Definition: aws.String(httpTask), InspectionLevel: types.InspectionLevelTrace,
		Mock: &types.MockInput{Result: aws.String(`{"StatusCode":200,"StatusText":"OK","Headers":{"Content-Type":"application/json"},"ResponseBody":{"approved":true}}`)}})
	if err != nil {
		t.Fatal(err)
	}
	rq, rs := out.InspectionData.Request, out.InspectionData.Response
	if rq == nil || aws.ToString(rq.Method) != "POST" || aws.ToString(rq.Url) != "https://example.com/approval" || aws.ToString(rq.Body) != `{"cost":10}` || aws.ToString(rq.Headers) != "X-Team: hr" ||
		rs == nil || aws.ToString(rs.StatusCode) != "200" || aws.ToString(rs.Body) != `{"approved":true}` {
		t.Errorf("trace: %+v %+v", rq, rs)
	}
}

// TestTestStateRefuses: what Step Functions refuses, with its messages.
func TestTestStateRefuses(t *testing.T) {
	p := newPeer(t)
	ctx := context.Background()
	mapDef := `{"Type":"Map","ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}`
	parallel := `{"Type":"Parallel","Branches":[{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}},{"StartAt":"B","States":{"B":{"Type":"Pass","End":true}}}],"End":true}`
	task := `{"Type":"Task","Resource":"${EchoFunctionArn}","End":true}`
	result := func(s string) *types.MockInput { return &types.MockInput{Result: aws.String(s)} }
	tests := []struct {
		name string
		in   sfn.TestStateInput
		code string
		msg  string
	}{
		{"a map without a mock", sfn.TestStateInput{Definition: aws.String(mapDef)}, "InvalidDefinition",
			"TestState API does not support Map or Parallel states. Supported state types include: [Task, Wait, Pass, Succeed, Fail, Choice]"},
		{"a task without a role", sfn.TestStateInput{Definition: aws.String(task)}, "ValidationException", "RoleArn must be specified when testing a Task state"},
		{"a mocked pass", sfn.TestStateInput{Definition: aws.String(`{"Type":"Pass","End":true}`), Mock: result(`{}`)}, "ValidationException", "State type 'Pass' is not supported when a mock is specified"},
		{"both result and error", sfn.TestStateInput{Definition: aws.String(task), Mock: &types.MockInput{Result: aws.String(`{}`), ErrorOutput: &types.MockErrorOutput{Error: aws.String("E")}}},
			"ValidationException", "A test mock should have only one of the following fields: [result, errorOutput]."},
		{"reveal secrets with a mock", sfn.TestStateInput{Definition: aws.String(task), Mock: result(`{}`), RevealSecrets: true}, "ValidationException", "TestState does not support RevealSecrets when a mock is specified."},
		{"a map's mock not an array", sfn.TestStateInput{Definition: aws.String(mapDef), Mock: result(`{}`)}, "ValidationException", "Mocked result must be an array."},
		{"a parallel's mock of another size", sfn.TestStateInput{Definition: aws.String(parallel), Mock: result(`[1]`)}, "ValidationException",
			"Mocked result must contain the same number of items as number of Parallel branches."},
		{"failures without a mock", sfn.TestStateInput{Definition: aws.String(task), RoleArn: aws.String(role), StateConfiguration: &types.TestStateConfiguration{MapIterationFailureCount: aws.Int32(1)}},
			"ValidationException", "TestState does not support MapIterationFailureCount when a mock is not specified."},
		{"more failures than iterations", sfn.TestStateInput{Definition: aws.String(mapDef), Mock: result(`[1]`), StateConfiguration: &types.TestStateConfiguration{MapIterationFailureCount: aws.Int32(2)}},
			"ValidationException", "Map iteration failure count must be less than or equal to the number of Map iterations"},
		{"a context with Map", sfn.TestStateInput{Definition: aws.String(task), Mock: result(`{}`), Context: aws.String(`{"Map":{}}`)}, "ValidationException",
			"Invalid Context object provided: 'Map' field is not supported when mocking a Context object"},
		{"a context with another field", sfn.TestStateInput{Definition: aws.String(task), Mock: result(`{}`), Context: aws.String(`{"Execution":{"pokemon":1}}`)}, "ValidationException",
			"Invalid Context object provided: Field 'pokemon' is not allowed"},
		{"an execution id not a string", sfn.TestStateInput{Definition: aws.String(task), Mock: result(`{}`), Context: aws.String(`{"Execution":{"Id":1}}`)}, "ValidationException",
			"Invalid Context object provided: Execution.Id must be a string"},
		{"a task token outside a callback", sfn.TestStateInput{Definition: aws.String(task), Mock: result(`{}`), Context: aws.String(`{"Task":{"Token":"t"}}`)}, "ValidationException",
			"Invalid Context object provided: Context object contains 'Task' when state is not a Task state with a '.sync' or '.waitForTaskToken' service integration pattern"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			_, err := p.client.TestState(ctx, &in)
			var ae smithy.APIError
			if !errorsAs(err, &ae) || ae.ErrorCode() != tt.code || ae.ErrorMessage() != tt.msg {
				t.Errorf("got %v, want %s: %s", err, tt.code, tt.msg)
			}
		})
	}
}

// TestTestStateOverTheRawProtocol: the members reach the server as the
// API's JSON names them, whatever client sends them.
func TestTestStateOverTheRawProtocol(t *testing.T) {
	p := newPeer(t)
	status, body := p.post(t, "AWSStepFunctions.TestState", `{"definition":"{\"Type\":\"Pass\",\"Parameters\":{\"v.$\":\"$x\"},\"End\":true}",
	  "input":"{}","inspectionLevel":"DEBUG","variables":"{\"x\":1}","revealSecrets":false}`)
	data, _ := body["inspectionData"].(map[string]any)
	if status != 200 || body["output"] != `{"v":1}` || data["afterParameters"] != `{"v":1}` || data["variables"] != `{"x":1}` {
		t.Errorf("HTTP %d: %v", status, body)
	}
}

// TestTestStateMapItemsNotAnArray replays what was recorded on AWS
// (LocalStack snapshot test_state/test_state_context_object.snapshot.json,
// test_state_map_context_object): a Map whose ItemsPath selects an object
// from the context fails with States.Runtime naming the path with one
// "$", without the state prefix an execution adds, and inspects the
// input only; a path to an array succeeds.
func TestTestStateMapItemsNotAnArray(t *testing.T) {
	p := newPeer(t)
	ctx := context.Background()
	const context = `{"Execution":{"Id":"arn:aws:states:::execution:MyStateMachine:execution-name-12345",` +
		`"Input":{"input-value":0,"message":"test data","values":["charizard","pikachu","bulbasaur"]},` +
		`"Name":"execution-name-12345","RoleArn":"arn:aws:iam:::role/StepFunctionsRole","StartTime":"2025-01-15T10:30:00.000Z"},` +
		`"State":{"EnteredTime":"2025-01-15T10:30:01.500Z","Name":"MyTaskState","RetryCount":0},` +
		`"StateMachine":{"Id":"arn:aws:states:::stateMachine:MyStateMachine","Name":"MyStateMachine"}}`
	for _, tt := range []struct {
		itemsPath, cause string
	}{
		{"$$", `Reference path "$" must point to array.`},
		{"$$.Execution.Input", `Reference path "$.Execution.Input" must point to array.`},
		{"$$.Execution.Input.values", ""},
	} {
		def := `{"Type":"Map","ItemsPath":"` + tt.itemsPath + `","MaxConcurrency":1,"ItemProcessor":{"StartAt":"HandleItem","States":{"HandleItem":{"Type":"Pass","End":true}}},"End":true}`
		out, err := p.client.TestState(ctx, &sfn.TestStateInput{Definition: aws.String(def), Input: aws.String(`["fire", "electricity", "grass"]`),
			InspectionLevel: types.InspectionLevelTrace, Context: aws.String(context), Mock: &types.MockInput{Result: aws.String(`["CHARIZARD", "PIKACHU", "BULBASAUR"]`)}})
		if err != nil {
			t.Fatalf("%s: %v", tt.itemsPath, err)
		}
		if tt.cause == "" {
			if out.Status != types.TestExecutionStatusSucceeded {
				t.Errorf("%s: %s %s %s", tt.itemsPath, out.Status, aws.ToString(out.Error), aws.ToString(out.Cause))
			}
			continue
		}
		if out.Status != types.TestExecutionStatusFailed || aws.ToString(out.Error) != "States.Runtime" || aws.ToString(out.Cause) != tt.cause {
			t.Errorf("%s: %s %s %q\nwant FAILED States.Runtime %q", tt.itemsPath, out.Status, aws.ToString(out.Error), aws.ToString(out.Cause), tt.cause)
		}
		if got := keysOf(inspected(t, out.InspectionData)); got != "afterInputPath input" {
			t.Errorf("%s: inspectionData members %q, want afterInputPath input", tt.itemsPath, got)
		}
	}
}

// TestTestStateMatchesErrorsAsTheEngine: a mocked heartbeat timeout is a
// timeout to TestState's Retry and Catch as to the engine's: not a
// States.TaskFailed, caught by States.Timeout.
func TestTestStateMatchesErrorsAsTheEngine(t *testing.T) {
	p := newPeer(t)
	task := `{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Arguments":{"FunctionName":"foo"},"QueryLanguage":"JSONata",
	  "Retry":[{"ErrorEquals":["States.TaskFailed"],"MaxAttempts":2}],
	  "Catch":[{"ErrorEquals":["States.TaskFailed"],"Next":"Failed"},{"ErrorEquals":["States.Timeout"],"Next":"Late"}],"End":true}`
	out, err := p.client.TestState(context.Background(), &sfn.TestStateInput{Definition: aws.String(task),
		Mock: &types.MockInput{ErrorOutput: &types.MockErrorOutput{Error: aws.String("States.HeartbeatTimeout")}}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != types.TestExecutionStatusCaughtError || aws.ToString(out.NextState) != "Late" {
		t.Errorf("a mocked States.HeartbeatTimeout: %s, next %q; want caught by States.Timeout (Late)", out.Status, aws.ToString(out.NextState))
	}
}
