package asl

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"
)

// The conformance corpus (testdata/conformance at the repository root) holds
// definitions, inputs and expected outputs written from the AWS Step
// Functions documentation. The same files are run through the npm engine
// aws-local-stepfunctions by scripts/crosscheck.mjs; where that engine
// disagrees with the documentation the case says why in "node_disagrees".

type conformanceCase struct {
	Description   string          `json:"description"`
	Source        string          `json:"source"`
	Definition    json.RawMessage `json:"definition"`
	Input         json.RawMessage `json:"input"`
	Expect        caseExpect      `json:"expect"`
	NodeDisagrees string          `json:"node_disagrees"`
}

type caseExpect struct {
	Output json.RawMessage `json:"output"`
	Error  string          `json:"error"`
	Cause  *string         `json:"cause"`
}

// declared is an error with an exact ASL name and cause, as the corpus's
// Fail and Flaky functions need.
func declared(name, cause string) error { return &StatesError{Name: name, Cause: cause} }

func stateNameFrom(ctx context.Context) string {
	ti, _ := TaskFromContext(ctx)
	return ti.State
}

// corpusRegistry binds the corpus's test functions. Flaky counts invocations
// per state name, so each execution needs its own registry.
func corpusRegistry() *Registry {
	reg := NewRegistry()
	reg.Register("EchoFunction", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		return in, nil
	})
	reg.Register("AddFunction", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		var v struct{ A, B json.Number }
		if err := json.Unmarshal(in, &v); err != nil {
			return nil, err
		}
		a, _ := v.A.Int64()
		b, _ := v.B.Int64()
		return json.RawMessage(fmt.Sprint(a + b)), nil
	})
	reg.Register("FailFunction", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		var v struct{ Error, Cause string }
		if err := json.Unmarshal(in, &v); err != nil {
			return nil, err
		}
		return nil, declared(v.Error, v.Cause)
	})
	var mu sync.Mutex
	calls := map[string]int{}
	reg.Register("FlakyFunction", func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
		var v struct {
			FailTimes int    `json:"failTimes"`
			Error     string `json:"error"`
			State     string `json:"state"`
		}
		if err := json.Unmarshal(in, &v); err != nil {
			return nil, err
		}
		key := stateNameFrom(ctx)
		mu.Lock()
		calls[key]++
		n := calls[key]
		mu.Unlock()
		if n <= v.FailTimes {
			return nil, declared(v.Error, "flaky")
		}
		return json.RawMessage(fmt.Sprintf(`{"attempts":%d}`, n)), nil
	})
	reg.Register("SleepFunction", func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
		var v struct{ Ms int }
		if err := json.Unmarshal(in, &v); err != nil {
			return nil, err
		}
		select {
		case <-time.After(time.Duration(v.Ms) * time.Millisecond):
			return in, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	return reg
}

// corpusCase is one file of the conformance corpus.
type corpusCase struct {
	name string
	conformanceCase
}

// corpus reads the conformance corpus, in file name order.
func corpus(t *testing.T) []corpusCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "conformance", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no conformance cases found in testdata/conformance")
	}
	sort.Strings(files)
	out := make([]corpusCase, len(files))
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[i].name = filepath.Base(f)
		if err := json.Unmarshal(data, &out[i].conformanceCase); err != nil {
			t.Fatalf("%s: %v", out[i].name, err)
		}
	}
	return out
}

func TestConformance(t *testing.T) {
	for _, cc := range corpus(t) {
		c := cc.conformanceCase
		t.Run(cc.name, func(t *testing.T) {
			t.Parallel()
			sm, err := Parse(c.Definition)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := New(corpusRegistry()).Run(ctx, sm, c.Input, StartOptions{Name: "conformance"})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if c.Expect.Error != "" {
				if res.Status == StatusSucceeded {
					t.Fatalf("%s\nwant error %s, got success with output %s", c.Description, c.Expect.Error, res.Output)
				}
				if res.Error != c.Expect.Error {
					t.Errorf("%s\nerror: got %s (%s), want %s", c.Description, res.Error, res.Cause, c.Expect.Error)
				}
				if c.Expect.Cause != nil && res.Cause != *c.Expect.Cause {
					t.Errorf("%s\ncause: got %q, want %q", c.Description, res.Cause, *c.Expect.Cause)
				}
				return
			}
			if res.Status != StatusSucceeded {
				t.Fatalf("%s\nwant success, got %s: %s: %s", c.Description, res.Status, res.Error, res.Cause)
			}
			var got, want any
			if err := json.Unmarshal(res.Output, &got); err != nil {
				t.Fatalf("output %s: %v", res.Output, err)
			}
			if err := json.Unmarshal(c.Expect.Output, &want); err != nil {
				t.Fatalf("expected output: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s\noutput:\n got  %s\n want %s", c.Description, res.Output, c.Expect.Output)
			}
		})
	}
}
