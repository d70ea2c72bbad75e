package asl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
)

type statusError int

func (e statusError) Error() string { return "status " + strconv.Itoa(int(e)) }

// errorNameCase is a handler error and the errorType the Go Lambda runtime
// gives it.
type errorNameCase struct {
	name string
	err  error
	want string
}

func errorNameCases() []errorNameCase {
	return []errorNameCase{
		{"InvokeResponse_Error value", messages.InvokeResponse_Error{Type: "Declared", Message: "m"}, "Declared"},
		{"InvokeResponse_Error pointer", &messages.InvokeResponse_Error{Type: "DeclaredPtr", Message: "m"}, "InvokeResponse_Error"},
		{"pointer type", &InvalidInputError{Field: "jd"}, "InvalidInputError"},
		{"struct value type", TransientError{}, "TransientError"},
		{"non-struct type", statusError(429), "statusError"},
		{"wrapped", fmt.Errorf("load jd: %w", &InvalidInputError{Field: "jd"}), "wrapError"},
		{"wrapped InvokeResponse_Error value", fmt.Errorf("call: %w", messages.InvokeResponse_Error{Type: "Declared"}), "wrapError"},
		{"joined", errors.Join(TransientError{}, &InvalidInputError{}), "joinError"},
		{"errors.New", errors.New("plain"), "errorString"},
	}
}

const runtimeHelperEnv = "VEREDICTO_ASL_LAMBDA_RUNTIME_HELPER"

// TestErrorNameAgreesWithLambdaRuntime runs a real Go Lambda (lambda.Start,
// the Runtime API loop a provided.al2023 function runs) in a child process
// against a local Runtime API, collects the errorType it reports for each
// error, and checks that ErrorName and the engine's TaskFailed name agree.
func TestErrorNameAgreesWithLambdaRuntime(t *testing.T) {
	cases := errorNameCases()
	if os.Getenv(runtimeHelperEnv) == "1" {
		lambda.Start(func(_ context.Context, in struct{ Case int }) (struct{}, error) {
			return struct{}{}, cases[in.Case].err
		})
		return // not reached: lambda.Start exits when the Runtime API stops serving
	}

	runtimeNames := invokeThroughLambdaRuntime(t, len(cases))
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := runtimeNames[i]; got != tc.want {
				t.Errorf("aws-lambda-go errorType = %q, want %q (did the runtime change its naming?)", got, tc.want)
			}
			if got := ErrorName(tc.err); got != runtimeNames[i] {
				t.Errorf("ErrorName(%T) = %q, the Lambda runtime says %q", tc.err, got, runtimeNames[i])
			}
			reg := NewRegistry()
			reg.Register("Fn", func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, tc.err })
			res := run(t, reg, `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"${FnArn}","End":true}}}`, `{}`)
			if res.Status != StatusFailed || res.Error != runtimeNames[i] {
				t.Errorf("engine: got %s %q, want FAILED %q", res.Status, res.Error, runtimeNames[i])
			}
		})
	}
}

// invokeThroughLambdaRuntime serves n invocations ({"Case": i}) from a local
// Runtime API to this test binary re-run as a Lambda function, and returns
// the errorType the runtime posted for each.
func invokeThroughLambdaRuntime(t *testing.T, n int) []string {
	t.Helper()
	var (
		mu     sync.Mutex
		next   int
		posted = make([]string, n)
	)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		i := next
		next++
		mu.Unlock()
		if i >= n {
			http.Error(w, "no more invocations", http.StatusGone) // ends the function process
			return
		}
		w.Header().Set("Lambda-Runtime-Aws-Request-Id", strconv.Itoa(i))
		w.Header().Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(time.Minute).UnixMilli(), 10))
		fmt.Fprintf(w, `{"Case":%d}`, i)
	})
	record := func(w http.ResponseWriter, r *http.Request, name string) {
		i, err := strconv.Atoi(r.PathValue("id"))
		if err != nil || i < 0 || i >= n {
			http.Error(w, "unknown request id", http.StatusBadRequest)
			return
		}
		mu.Lock()
		posted[i] = name
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/error", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			ErrorType string `json:"errorType"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		record(w, r, body.ErrorType)
	})
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", func(w http.ResponseWriter, r *http.Request) {
		record(w, r, "(succeeded)")
	})
	srv := httptest.NewServer(mux) // binds 127.0.0.1
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestErrorNameAgreesWithLambdaRuntime$", "-test.count=1")
	cmd.Env = append(os.Environ(), runtimeHelperEnv+"=1", "AWS_LAMBDA_RUNTIME_API="+strings.TrimPrefix(srv.URL, "http://"))
	out, _ := cmd.CombinedOutput() // the function exits non-zero once the Runtime API stops serving
	mu.Lock()
	defer mu.Unlock()
	for i, name := range posted {
		if name == "" {
			t.Fatalf("the Lambda runtime reported nothing for case %d; its output:\n%s", i, out)
		}
	}
	return posted
}
