package control

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/veredicto/veredicto/internal/asl"
)

// testRun is what a TestState run reports through its hooks.
type testRun struct {
	*asl.TestHooks
	mu      sync.Mutex
	steps   map[string]any
	numbers map[string]any
}

// The validation messages are Step Functions' own (recorded by
// LocalStack's snapshots of AWS's answers).
const (
	msgMapParallelNeedMock = "TestState API does not support Map or Parallel states. Supported state types include: [Task, Wait, Pass, Succeed, Fail, Choice]"
	msgRoleForTask         = "RoleArn must be specified when testing a Task state"
	msgRevealWithMock      = "TestState does not support RevealSecrets when a mock is specified."
	msgMockOneOf           = "A test mock should have only one of the following fields: [result, errorOutput]."
	msgMockNotJSON         = "Mocked result must be valid JSON"
	msgMockArray           = "Mocked result must be an array."
	msgMockObject          = "Mocked result must be a JSON object."
	msgMockBranches        = "Mocked result must contain the same number of items as number of Parallel branches."
	msgFailureCountNoMock  = "TestState does not support MapIterationFailureCount when a mock is not specified."
	msgFailureCountOver    = "Map iteration failure count must be less than or equal to the number of Map iterations"
)

// testHooks checks the request's inspection level, mock and state
// configuration against the state of type typ, and builds the run's hooks.
func testHooks(req TestStateRequest, st map[string]any, typ string) (*testRun, error) {
	switch req.InspectionLevel {
	case "", InspectInfo, InspectDebug, InspectTrace:
	default:
		return nil, errorf(CodeValidation, "1 validation error detected: Value '%s' at 'inspectionLevel' failed to satisfy constraint: Member must satisfy enum value set: [INFO, DEBUG, TRACE]", req.InspectionLevel)
	}
	run := &testRun{TestHooks: &asl.TestHooks{}, steps: map[string]any{}, numbers: map[string]any{}}
	run.Inspect = run.record
	cfg := req.Config
	if cfg == nil {
		cfg = &TestStateConfig{}
	}
	if cfg.MapItemReaderData != nil {
		run.ItemReaderData = []byte(*cfg.MapItemReaderData)
	}
	if cfg.RetrierRetryCount != nil && *cfg.RetrierRetryCount < 0 {
		return nil, errorf(CodeValidation, "1 validation error detected: Value '%d' at 'stateConfiguration.retrierRetryCount' failed to satisfy constraint: Member must have value greater than or equal to 0", *cfg.RetrierRetryCount)
	}
	mock := req.Mock
	if mock == nil {
		switch {
		case typ == "Map" || typ == "Parallel":
			return nil, errorf(CodeInvalidDefinition, "%s", msgMapParallelNeedMock)
		case typ == "Task" && req.RoleARN == "":
			return nil, errorf(CodeValidation, "%s", msgRoleForTask)
		case cfg.MapIterationFailureCount != nil:
			return nil, errorf(CodeValidation, "%s", msgFailureCountNoMock)
		case req.Context != "":
			return nil, errorf(CodeValidation, "TestState does not support Context when a mock is not specified.")
		}
		return run, nil
	}
	switch {
	case typ != "Task" && typ != "Map" && typ != "Parallel":
		return nil, errorf(CodeValidation, "State type '%s' is not supported when a mock is specified", typ)
	case req.RevealSecrets:
		return nil, errorf(CodeValidation, "%s", msgRevealWithMock)
	case mock.Result != nil && mock.ErrorOutput != nil:
		return nil, errorf(CodeValidation, "%s", msgMockOneOf)
	case mock.Result == nil && mock.ErrorOutput == nil:
		return nil, errorf(CodeValidation, "A test mock should have one of the following fields: [result, errorOutput].")
	}
	switch mock.FieldValidationMode {
	case "", "STRICT", "PRESENT", "NONE":
	default:
		return nil, errorf(CodeValidation, "1 validation error detected: Value '%s' at 'mock.fieldValidationMode' failed to satisfy constraint: Member must satisfy enum value set: [STRICT, PRESENT, NONE]", mock.FieldValidationMode)
	}
	m := &asl.TestMock{}
	run.Mock = m
	if mock.ErrorOutput != nil {
		m.Err = &asl.StatesError{Name: mock.ErrorOutput.Error, Cause: mock.ErrorOutput.Cause}
		if cfg.ErrorCausedByState != "" {
			if typ != "Map" && typ != "Parallel" {
				return nil, errorf(CodeValidation, "errorCausedByState is only used with a Map or Parallel state")
			}
			if !holdsState(st, cfg.ErrorCausedByState) {
				return nil, errorf(CodeValidation, "State '%s' is not a state of the %s state under test (errorCausedByState)", cfg.ErrorCausedByState, typ)
			}
		}
	} else {
		v, err := asl.ParseValue([]byte(*mock.Result))
		if err != nil {
			return nil, errorf(CodeValidation, "%s", msgMockNotJSON)
		}
		m.Result = v
		list, isList := v.([]any)
		_, writes := st["ResultWriter"]
		switch {
		case typ == "Map" && writes:
			if _, ok := v.(map[string]any); !ok {
				return nil, errorf(CodeValidation, "%s", msgMockObject)
			}
		case typ == "Map" || typ == "Parallel":
			if !isList {
				return nil, errorf(CodeValidation, "%s", msgMockArray)
			}
		}
		if branches, _ := st["Branches"].([]any); typ == "Parallel" && len(branches) != len(list) {
			return nil, errorf(CodeValidation, "%s", msgMockBranches)
		}
		if n := cfg.MapIterationFailureCount; n != nil {
			if isList && *n > len(list) {
				return nil, errorf(CodeValidation, "%s", msgFailureCountOver)
			}
			m.MapIterationFailureCount = *n
		}
	}
	return run, nil
}

// holdsState reports whether the Map or Parallel state st holds a state
// called name.
func holdsState(st map[string]any, name string) bool {
	for _, m := range nestedMachines(st) {
		if findState(m, name) != nil {
			return true
		}
	}
	return false
}

// record is the run's Inspect hook.
func (t *testRun) record(step string, v any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch step {
	case "maxConcurrency", "toleratedFailureCount", "toleratedFailurePercentage":
		t.numbers[step] = v
	default:
		t.steps[step] = v
	}
}

// inspection is the inspectionData of a run that ended as assigned says.
func (t *testRun) inspection(req TestStateRequest, typ string, assigned map[string]string, details *ErrorDetails) *Inspection {
	t.mu.Lock()
	defer t.mu.Unlock()
	in := &Inspection{Data: map[string]json.RawMessage{}, Numbers: t.numbers}
	compact := func(text string) json.RawMessage {
		v, err := asl.ParseValue([]byte(text))
		if err != nil {
			return json.RawMessage(text)
		}
		b, _ := json.Marshal(v)
		return b
	}
	in.Data["input"] = compact(req.Input)
	steps := t.steps
	if _, ok := steps["result"]; ok && typ == "Pass" {
		// a Pass with a Result reports no input processing, as AWS does
		delete(steps, "afterInputPath")
		delete(steps, "afterParameters")
	}
	if typ == "Fail" {
		in.Data["afterInputPath"] = in.Data["input"]
	}
	for step, v := range steps {
		if b, err := json.Marshal(v); err == nil {
			in.Data[step] = b
		}
	}
	if vars := variablesAfter(req.Variables, assigned); vars != nil {
		in.Data["variables"] = vars
	}
	if details.CatchIndex != nil || details.RetryIndex != nil {
		in.ErrorDetails = details
	}
	return in
}

// variablesAfter is the variables a state sees after it ran: those given,
// with what it assigned ("nil" when there are none).
func variablesAfter(given string, assigned map[string]string) json.RawMessage {
	vars := map[string]json.RawMessage{}
	if given != "" {
		json.Unmarshal([]byte(given), &vars)
	}
	for k, v := range assigned {
		vars[k] = json.RawMessage(v)
	}
	if len(vars) == 0 {
		return nil
	}
	b, _ := json.Marshal(vars)
	return b
}

// testContext checks a request's context object as Step Functions does
// and returns it.
func testContext(req TestStateRequest, st map[string]any) (map[string]any, error) {
	c, err := jsonObject(req.Context, "Context object")
	if c == nil || err != nil {
		return c, err
	}
	invalid := func(format string, args ...any) error {
		return errorf(CodeValidation, "Invalid Context object provided: "+format, args...)
	}
	res, _ := st["Resource"].(string)
	pattern := strings.HasSuffix(res, ".waitForTaskToken") || strings.Contains(res, ".sync")
	allowed := map[string]map[string]bool{
		"Execution":    set("Id", "Input", "Name", "RoleArn", "StartTime", "RedriveCount", "RedriveTime"),
		"State":        set("Name", "EnteredTime", "RetryCount"),
		"StateMachine": set("Id", "Name"),
		"Task":         set("Token"),
	}
	for _, k := range slices.Sorted(maps.Keys(c)) {
		fields, known := allowed[k]
		switch {
		case k == "Map":
			return nil, invalid("'Map' field is not supported when mocking a Context object")
		case !known:
			return nil, invalid("Field '%s' is not allowed", k)
		case k == "Task" && !pattern:
			return nil, invalid("Context object contains 'Task' when state is not a Task state with a '.sync' or '.waitForTaskToken' service integration pattern")
		}
		member, ok := c[k].(map[string]any)
		if !ok {
			return nil, invalid("%s must be an object", k)
		}
		for _, f := range slices.Sorted(maps.Keys(member)) {
			if !fields[f] {
				return nil, invalid("Field '%s' is not allowed", f)
			}
			if (f == "Id" || f == "Name") && member[f] != nil {
				if _, isStr := member[f].(string); !isStr {
					return nil, invalid("%s.%s must be a string", k, f)
				}
			}
		}
	}
	return c, nil
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// httpTrace is TRACE's request and response of an HTTP Task (a mocked
// one: the engine sends no HTTP request).
func httpTrace(st map[string]any, t *testRun, out TestResult) (req, resp map[string]any) {
	if res, _ := st["Resource"].(string); res != "arn:aws:states:::http:invoke" {
		return nil, nil
	}
	t.mu.Lock()
	args, _ := t.steps["afterArguments"].(map[string]any)
	if args == nil {
		args, _ = t.steps["afterParameters"].(map[string]any)
	}
	result, _ := t.steps["result"].(map[string]any)
	t.mu.Unlock()
	if args == nil {
		return nil, nil
	}
	endpoint, _ := args["ApiEndpoint"].(string)
	if q, ok := args["QueryParameters"].(map[string]any); ok && len(q) > 0 {
		vals := url.Values{}
		for k, v := range q {
			vals.Set(k, fmt.Sprint(v))
		}
		endpoint += "?" + vals.Encode()
	}
	method, _ := args["Method"].(string)
	req = map[string]any{"protocol": "https", "method": method, "url": endpoint, "headers": headerText(args["Headers"]), "body": bodyText(args["RequestBody"])}
	if result != nil {
		resp = map[string]any{"protocol": "https", "statusCode": fmt.Sprint(result["StatusCode"]), "statusMessage": fmt.Sprint(result["StatusText"]),
			"headers": headerText(result["Headers"]), "body": bodyText(result["ResponseBody"])}
	}
	return req, resp
}

// headerText writes headers one "Name: value" a line, sorted.
func headerText(v any) string {
	h, _ := v.(map[string]any)
	lines := make([]string, 0, len(h))
	for k, val := range h {
		lines = append(lines, k+": "+fmt.Sprint(val))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func bodyText(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
