package catalog_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/llm"
)

// standardRetry is the project's one retry policy, which every Task of every
// definition carries: the typed TransientError (rate limits, server errors,
// storage outages, surviving the client's own retries) and the Lambda
// service's own transient failures, retried with full-jitter backoff.
var standardRetry = retrier{
	ErrorEquals: []string{"TransientError", "Lambda.ServiceException", "Lambda.AWSLambdaException",
		"Lambda.SdkClientException", "Lambda.TooManyRequestsException", "Sandbox.Timedout"},
	IntervalSeconds: 2, MaxAttempts: 3, BackoffRate: 2, MaxDelaySeconds: 30, JitterStrategy: "FULL",
}

// vocabulary is every error name an ErrorEquals may use besides the
// service's own prefixes: the root package's kinds and those the packages
// declare as veredicto.Named.
func vocabulary() []string {
	return slices.Concat(veredicto.Names(), llm.Names())
}

var servicePrefixes = []string{"States.", "Lambda.", "Sandbox."}

type retrier struct {
	ErrorEquals     []string `json:"ErrorEquals"`
	IntervalSeconds float64  `json:"IntervalSeconds"`
	MaxAttempts     int      `json:"MaxAttempts"`
	BackoffRate     float64  `json:"BackoffRate"`
	MaxDelaySeconds float64  `json:"MaxDelaySeconds"`
	JitterStrategy  string   `json:"JitterStrategy"`
}

type catcher struct {
	ErrorEquals []string `json:"ErrorEquals"`
	Next        string   `json:"Next"`
}

type state struct {
	name          string
	Type          string          `json:"Type"`
	Resource      string          `json:"Resource"`
	Parameters    json.RawMessage `json:"Parameters"`
	Retry         []retrier       `json:"Retry"`
	Catch         []catcher       `json:"Catch"`
	ItemProcessor *machine        `json:"ItemProcessor"`
	Iterator      *machine        `json:"Iterator"`
	Branches      []machine       `json:"Branches"`
	inMap         bool
}

type machine struct {
	States map[string]state `json:"States"`
}

// resource is the function a Task invokes: its Resource, or the
// FunctionName of the lambda:invoke integration.
func (s state) resource() string {
	if !strings.HasPrefix(s.Resource, "arn:aws:states:::lambda:invoke") {
		return s.Resource
	}
	var p struct {
		FunctionName string `json:"FunctionName"`
	}
	_ = json.Unmarshal(s.Parameters, &p)
	return p.FunctionName
}

var functionArn = regexp.MustCompile(`^\$\{(\w+Function)Arn\}$`)

func boundFunction(s state) (string, bool) {
	m := functionArn.FindStringSubmatch(s.resource())
	if m == nil {
		return "", false
	}
	return m[1], true
}

func definitionFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "statemachines", "*.asl.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no statemachines/*.asl.json (err %v)", err)
	}
	var out []string
	for _, f := range files {
		out = append(out, filepath.Base(f))
	}
	return out
}

// states returns every state of a definition, nested ones included, sorted
// by name.
func states(t *testing.T, file string) []state {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "statemachines", file))
	if err != nil {
		t.Fatal(err)
	}
	var m machine
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var out []state
	var walk func(m machine, inMap bool)
	walk = func(m machine, inMap bool) {
		for name, s := range m.States {
			s.name, s.inMap = name, inMap
			out = append(out, s)
			for _, sub := range []*machine{s.ItemProcessor, s.Iterator} {
				if sub != nil {
					walk(*sub, true)
				}
			}
			for _, br := range s.Branches {
				walk(br, inMap)
			}
		}
	}
	walk(m, false)
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func tasks(t *testing.T, file string) []state {
	t.Helper()
	var out []state
	for _, s := range states(t, file) {
		if s.Type == "Task" {
			out = append(out, s)
		}
	}
	return out
}

// TestEveryTaskCarriesTheStandardRetry, and inside a Map a Catch, so one
// candidate's failure never fails the others.
func TestEveryTaskCarriesTheStandardRetry(t *testing.T) {
	for _, file := range definitionFiles(t) {
		for _, task := range tasks(t, file) {
			if !slices.ContainsFunc(task.Retry, func(r retrier) bool { return reflect.DeepEqual(r, standardRetry) }) {
				t.Errorf("%s: Task %s lacks the standard Retry %+v (has %+v)", file, task.name, standardRetry, task.Retry)
			}
			catchesAll := slices.ContainsFunc(task.Catch, func(c catcher) bool { return slices.Contains(c.ErrorEquals, "States.ALL") })
			if task.inMap && !catchesAll {
				t.Errorf("%s: Task %s runs inside a Map without a States.ALL Catch: one failure would fail every item", file, task.name)
			}
		}
	}
}

// TestErrorEqualsNamesExist: every name in any Retry or Catch is a service
// name (States.*, Lambda.*, Sandbox.*) or one of the project's error kinds,
// so a typo cannot make a retry silently never fire.
func TestErrorEqualsNamesExist(t *testing.T) {
	known := vocabulary()
	check := func(file, where string, names []string) {
		for _, n := range names {
			if !slices.Contains(known, n) && !slices.ContainsFunc(servicePrefixes, func(p string) bool { return strings.HasPrefix(n, p) }) {
				t.Errorf("%s: %s matches %q, which is no error name of the vocabulary %v", file, where, n, known)
			}
		}
	}
	for _, file := range definitionFiles(t) {
		for _, s := range states(t, file) {
			for i, r := range s.Retry {
				check(file, s.name+".Retry["+itoa(i)+"]", r.ErrorEquals)
			}
			for i, c := range s.Catch {
				check(file, s.name+".Catch["+itoa(i)+"]", c.ErrorEquals)
			}
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
