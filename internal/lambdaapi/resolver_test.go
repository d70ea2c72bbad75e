package lambdaapi

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/asl"
)

// On the engine, a Task whose function is not the project's calls the
// Lambda endpoint (directly by ARN, or through lambda:invoke, whose result
// is the invocation's response); one that is the project's, named by its
// ARN, runs in-process; a function error is caught as in Step Functions.
func TestTasksReachTheLambdaEndpoint(t *testing.T) {
	ep := startFakeEndpoint(t)
	reg := asl.NewRegistry()
	reg.Register("Gem1Function", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`"local"`), nil
	})
	res := &Resolver{Local: func(name string) (asl.Handler, bool) { return reg.Lookup(name) }, Remote: NewRemote(ep.url, "us-east-1", nil),
		Region: "us-east-1", Account: "000000000000"}
	reg.SetExternal(res.External)
	def := `{"StartAt":"Direct","States":{
	  "Direct":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:Hello","ResultPath":"$.direct","Next":"Invoke"},
	  "Invoke":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"Hello","Payload":{"x":1}},"ResultSelector":{"p.$":"$.Payload","s.$":"$.StatusCode"},"ResultPath":"$.invoke","Next":"Ours"},
	  "Ours":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:000000000000:function:Gem1Function","ResultPath":"$.ours","Next":"Broken"},
	  "Broken":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:Broken","Catch":[{"ErrorEquals":["ZeroDivisionError"],"ResultPath":"$.caught","Next":"Done"}],"End":true},
	  "Done":{"Type":"Pass","End":true}}}`
	sm, err := asl.Parse([]byte(def))
	if err != nil {
		t.Fatal(err)
	}
	out, err := asl.New(reg).Run(context.Background(), sm, json.RawMessage(`{"a":1}`), asl.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":1,"caught":{"Cause":"{\"errorMessage\":\"division by zero\",\"errorType\":\"ZeroDivisionError\",\"stackTrace\":[]}","Error":"ZeroDivisionError"},` +
		`"direct":{"hello":{"a":1}},"invoke":{"p":{"hello":{"x":1}},"s":200},"ours":"local"}`
	if out.Status != asl.StatusSucceeded || string(out.Output) != want {
		t.Errorf("got %s %s (%s %s)\nwant %s", out.Status, out.Output, out.Error, out.Cause, want)
	}
}

func TestResolverWithoutAnEndpoint(t *testing.T) {
	local := func(name string) (asl.Handler, bool) { return nil, false }
	for _, mocking := range []bool{false, true} {
		r := &Resolver{Local: local, Mocking: mocking, Region: "us-east-1", Account: "000000000000"}
		tests := []struct {
			resource, binding string
			want              error // the kind of refusal, nil for unbound
		}{
			{"arn:aws:lambda:us-east-1:123456789012:function:Hello", "arn:aws:lambda:us-east-1:123456789012:function:Hello", &NoLambdaEndpointError{}},
			{"arn:aws:states:::lambda:invoke", "Hello", &NoLambdaEndpointError{}},
			{"arn:aws:states:::sqs:sendMessage", "arn:aws:states:::sqs:sendMessage", &UnservedIntegrationError{}},
			{"arn:aws:states:::states:startExecution.sync:2", "arn:aws:states:::states:startExecution.sync:2", &UnservedIntegrationError{}},
			{"${NopeFunctionArn}", "NopeFunction", nil},
			{"arn:aws:states:::lambda:invoke", "${NopeFunctionArn}", nil},
			{"Nope", "Nope", nil},
		}
		for _, tt := range tests {
			h, err := r.External(tt.resource, tt.binding)
			if tt.want == nil {
				if h != nil || err != nil {
					t.Errorf("mocking %v, %s %s: got %v, %v; want unbound", mocking, tt.resource, tt.binding, h != nil, err)
				}
				continue
			}
			if mocking {
				// accepted: a test case may mock it; unmocked, it ends the run
				if h == nil || err != nil {
					t.Fatalf("mocking, %s: got %v, %v; want a handler", tt.resource, h != nil, err)
				}
				_, err = h(context.Background(), nil)
				var se *asl.StatesError
				if !errors.As(err, &se) || se.Name != asl.ErrRuntime || !strings.Contains(se.Cause, "--mock-config") {
					t.Errorf("mocking, %s: the handler fails with %v, want States.Runtime saying what to give", tt.resource, err)
				}
				continue
			}
			if h != nil || err == nil || !errorsAsType(err, tt.want) || !strings.Contains(err.Error(), "--mock-config") {
				t.Errorf("%s: got %v, %v; want a %T saying what to give", tt.resource, h != nil, err, tt.want)
			}
		}
	}
}

func errorsAsType(err, like error) bool {
	switch like.(type) {
	case *NoLambdaEndpointError:
		var e *NoLambdaEndpointError
		return errors.As(err, &e) && strings.Contains(e.Error(), "--lambda-endpoint")
	case *UnservedIntegrationError:
		var e *UnservedIntegrationError
		return errors.As(err, &e)
	}
	return false
}
