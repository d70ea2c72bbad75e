package starter

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/veredicto/veredicto"
)

const smARN = "arn:aws:states:us-east-1:123456789012:stateMachine:ExecutiveSearch"

// fakeSFN speaks the Step Functions AWS JSON 1.0 protocol for
// StartExecution and DescribeExecution, with the service's name rules.
type fakeSFN struct {
	mu      sync.Mutex
	started map[string]string // name → input
	calls   int
	// throttle answers every call with ThrottlingException.
	throttle bool
}

func (f *fakeSFN) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	var body map[string]string
	json.NewDecoder(r.Body).Decode(&body)
	fail := func(code int, typ, msg string) {
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(map[string]string{"__type": typ, "message": msg})
	}
	if f.throttle {
		fail(400, "ThrottlingException", "Rate exceeded")
		return
	}
	switch r.Header.Get("X-Amz-Target") {
	case "AWSStepFunctions.StartExecution":
		if body["stateMachineArn"] != smARN {
			fail(400, "StateMachineDoesNotExist", "no such state machine")
			return
		}
		name := body["name"]
		if prev, ok := f.started[name]; ok {
			if prev == body["input"] {
				// Idempotent: same name and input return the same execution.
				json.NewEncoder(w).Encode(map[string]any{"executionArn": "arn:aws:states:us-east-1:123456789012:execution:ExecutiveSearch:" + name, "startDate": 1.7e9})
				return
			}
			fail(400, "ExecutionAlreadyExists", "Execution Already Exists: "+name)
			return
		}
		f.started[name] = body["input"]
		json.NewEncoder(w).Encode(map[string]any{"executionArn": "arn:aws:states:us-east-1:123456789012:execution:ExecutiveSearch:" + name, "startDate": 1.7e9})
	case "AWSStepFunctions.DescribeExecution":
		arn := body["executionArn"]
		name := arn[strings.LastIndex(arn, ":")+1:]
		if _, ok := f.started[name]; !ok || !strings.HasPrefix(arn, "arn:aws:states:us-east-1:123456789012:execution:ExecutiveSearch:") {
			fail(400, "ExecutionDoesNotExist", "Execution Does Not Exist: "+arn)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"executionArn": arn, "stateMachineArn": smARN, "name": name, "status": "RUNNING", "startDate": 1.7e9})
	default:
		fail(400, "UnknownOperationException", r.Header.Get("X-Amz-Target"))
	}
}

func newSFN(t *testing.T) (*SFN, *fakeSFN) {
	t.Helper()
	f := &fakeSFN{started: map[string]string{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	client := sfn.New(sfn.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(srv.URL),
		Credentials:      credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
		RetryMaxAttempts: 1,
	})
	return NewSFN(client, smARN), f
}

func TestSFNStartIsIdempotentByName(t *testing.T) {
	s, f := newSFN(t)
	ctx := context.Background()
	name := ExecutionName("acme", "cfo-2026")
	first, err := s.Start(ctx, name, []byte(`{"search_id":"cfo-2026"}`))
	if err != nil || !first.Started {
		t.Fatalf("first start: %+v %v", first, err)
	}
	// A duplicate with a different input (e.g. another event time) is
	// refused by Step Functions; the starter reports the existing execution.
	second, err := s.Start(ctx, name, []byte(`{"search_id":"cfo-2026","x":1}`))
	if err != nil || second.Started || second.ARN != first.ARN {
		t.Fatalf("duplicate start: %+v %v (first %+v)", second, err, first)
	}
	if len(f.started) != 1 {
		t.Errorf("%d executions, want 1", len(f.started))
	}
	st, err := s.Describe(ctx, name)
	if err != nil || st.Status != "RUNNING" || st.Name != name || st.ARN != first.ARN {
		t.Errorf("describe: %+v %v; want RUNNING, its name and the ARN its start gave (%s)", st, err, first.ARN)
	}
	var nf *veredicto.NotFoundError
	if _, err := s.Describe(ctx, "nope"); !errors.As(err, &nf) {
		t.Errorf("describe unknown: %v, want NotFoundError", err)
	}
}

func TestExecutionName(t *testing.T) {
	if got := ExecutionName("acme", "cfo-2026"); got != "acme--cfo-2026" {
		t.Errorf("plain name = %q", got)
	}
	a, b := ExecutionName("acme", "búsqueda 1"), ExecutionName("acme", "búsqueda_1")
	if a == b {
		t.Errorf("rewritten names collide: %q", a)
	}
	// A tenant may hold "--"; its names must not meet another tenant's.
	if a, b := ExecutionName("x--y", "z"), ExecutionName("x", "y--z"); a == b {
		t.Errorf("tenants x--y and x share the execution %q", a)
	}
	// A plain name cannot take a hashed one: "acme.io" is rewritten and
	// hashed, and "acme_io" with a search named like that hash's tail
	// must not land on it.
	hashed := ExecutionName("acme.io", "x")
	tail := hashed[len("acme_io--x-"):]
	if squat := ExecutionName("acme_io", "x-"+tail); squat == hashed {
		t.Errorf("tenants acme.io and acme_io share the execution %q", hashed)
	}
	long := ExecutionName("tenant", strings.Repeat("x", 200))
	if len(long) > 80 || !regexpOK(long) {
		t.Errorf("long name %q (%d chars)", long, len(long))
	}
}

func regexpOK(s string) bool { return !unsafeName.MatchString(s) }

// TestSFNOutageIsTransient: a Step Functions failure worth retrying
// (throttling that outlasted the client's retries) is a TransientError, so
// the trigger's event is retried and the API answers 503; a call that can
// never succeed keeps its own error.
func TestSFNOutageIsTransient(t *testing.T) {
	s, f := newSFN(t)
	ctx := context.Background()
	f.throttle = true
	_, startErr := s.Start(ctx, "acme--s-1", []byte(`{}`))
	_, descErr := s.Describe(ctx, "acme--s-1")
	f.throttle = false
	_, missingSM := NewSFN(s.client, smARN+"-gone").Start(ctx, "acme--s-1", []byte(`{}`))
	tests := []struct {
		name      string
		err       error
		transient bool
	}{
		{"throttled start", startErr, true},
		{"throttled describe", descErr, true},
		{"no such state machine", missingSM, false},
	}
	for _, tt := range tests {
		if got := veredicto.ErrorName(tt.err) == veredicto.NameTransient; tt.err == nil || got != tt.transient {
			t.Errorf("%s: %v transient %v, want %v", tt.name, tt.err, got, tt.transient)
		}
	}
}

// TestUnconfiguredNamesTheVariable: a function deployed without the state
// machine it starts fails every call naming the setting to add.
func TestUnconfiguredNamesTheVariable(t *testing.T) {
	u := Unconfigured{Variable: "DEBATE_STATE_MACHINE_ARN"}
	_, serr := u.Start(context.Background(), "n", nil)
	_, derr := u.Describe(context.Background(), "n")
	for _, err := range []error{serr, derr} {
		if err == nil || err.Error() != "configuration: DEBATE_STATE_MACHINE_ARN is not set for this function" {
			t.Errorf("got %v, want the variable named", err)
		}
	}
}
