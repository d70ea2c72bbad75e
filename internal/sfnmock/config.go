// Package sfnmock reads AWS Step Functions Local's mock configuration
// (MockConfigFile.json, given to `veredicto serve` with --mock-config or
// SFN_MOCK_CONFIG) and answers the Tasks of a test case from it.
//
// The format is Step Functions Local's, as AWS documents it
// (https://docs.aws.amazon.com/step-functions/latest/dg/sfn-local-mock-cfg-file.html):
//
//	{"StateMachines": {"<machine name>": {"TestCases": {"<test case>": {"<state>": "<mocked response>"}}}},
//	 "MockedResponses": {"<mocked response>": {"0": {"Return": <any JSON>},
//	                                           "1-2": {"Throw": {"Error": "…", "Cause": "…"}}}}}
//
// StartExecution on "<state machine ARN>#<test case>" runs the test case:
// the n-th invocation of a mocked state (counted from 0 over the
// execution, its retries included) is answered by the mocked response's
// key that covers n ("n", or an inclusive range "a-b"), a Return as the
// Task's result, a Throw as its error; an invocation no key covers fails
// the execution with States.Runtime. States the test case does not name
// run as they would without it.
//
// A file is checked whole when it is loaded: every problem is named with
// the file and the JSON path of the field at fault. Two things Step
// Functions Local would only find at run time are refused then too: a
// test case naming a mocked response that does not exist, and two keys of
// one mocked response covering the same invocation. A mocked response
// with gaps, or with no keys at all, is accepted, as Step Functions Local
// accepts it: the invocation it lacks fails when it comes.
package sfnmock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/veredicto/veredicto/internal/asl"
)

// EnvVar names the environment variable Step Functions Local reads the
// mock configuration's path from; `veredicto serve` reads it too.
const EnvVar = "SFN_MOCK_CONFIG"

// Config is a loaded, valid mock configuration. It is immutable and safe
// for concurrent use.
type Config struct {
	// File is the path it was read from.
	File string
	// machines: state machine name → test case → state → mocked response.
	machines  map[string]map[string]map[string]string
	responses map[string]*response
}

// response is one mocked response: its answers by invocation, in order.
type response struct {
	name    string
	answers []answer
}

// answer is what the invocations from first to last (inclusive) get.
type answer struct {
	key         string // as written: "0", "1-2"
	first, last int
	ret         json.RawMessage // a Return
	throw       *asl.StatesError
}

// ConfigError is one problem of a mock configuration file: where (a JSON
// path such as $.MockedResponses.MockedLambdaRetry["1-2"].Throw.Error) and
// what.
type ConfigError struct {
	File    string
	Path    string
	Problem string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("mock config %s: %s: %s", e.File, e.Path, e.Problem)
}

// Load reads and checks the mock configuration at path. Its error names
// the file; a file with problems returns them all (each a *ConfigError,
// errors.Join'ed, in the order they occur in the file).
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mock config: %w", err)
	}
	return Parse(path, data)
}

// Parse checks a mock configuration read from file.
func Parse(file string, data []byte) (*Config, error) {
	if err := syntax(file, data); err != nil {
		return nil, err
	}
	p := &parser{file: file, declared: map[string]bool{}, cfg: &Config{File: file, machines: map[string]map[string]map[string]string{}, responses: map[string]*response{}}}
	p.root(data)
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return p.cfg, nil
}

// syntax refuses a file that is not one JSON document, naming the line
// and column where it goes wrong.
func syntax(file string, data []byte) error {
	var v any
	err := json.Unmarshal(data, &v)
	var se *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		line, col := position(data, se.Offset-1) // Offset is past the byte at fault
		return &ConfigError{File: file, Path: "$", Problem: fmt.Sprintf("not valid JSON at line %d, column %d: %v", line, col, se)}
	default:
		return &ConfigError{File: file, Path: "$", Problem: "not valid JSON: " + err.Error()}
	}
}

// position is the line and column (from 1) of the byte at offset.
func position(data []byte, offset int64) (line, col int) {
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// member is one member of a JSON object, its value undecoded.
type member struct {
	key string
	val json.RawMessage
}

type parser struct {
	file     string
	cfg      *Config
	errs     []error
	declared map[string]bool // the names MockedResponses gives, valid or not
}

func (p *parser) fail(path, format string, args ...any) {
	p.errs = append(p.errs, &ConfigError{File: p.file, Path: path, Problem: fmt.Sprintf(format, args...)})
}

// object reads the members of the object at path, in order; a value that
// is not an object, or a key given twice, is a problem (ok false for the
// former).
func (p *parser) object(path string, raw json.RawMessage, what string) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		p.fail(path, "must be an object (%s), not %s", what, kindOf(raw))
		return nil, false
	}
	var out []member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			p.fail(path, "not valid JSON: %v", err)
			return out, false
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			p.fail(path, "not valid JSON: %v", err)
			return out, false
		}
		if seen[key] {
			p.fail(at(path, key), "given twice (JSON keeps only one of them)")
			continue
		}
		seen[key] = true
		out = append(out, member{key, v})
	}
	return out, true
}

func (p *parser) root(data []byte) {
	members, ok := p.object("$", data, "with StateMachines and MockedResponses")
	if !ok {
		return
	}
	var machines, responses json.RawMessage
	for _, m := range members {
		switch m.key {
		case "StateMachines":
			machines = m.val
		case "MockedResponses":
			responses = m.val
		default:
			p.fail(at("$", m.key), "unknown field: a mock configuration has StateMachines and MockedResponses")
		}
	}
	if responses == nil {
		p.fail("$", "MockedResponses is missing")
	} else {
		p.mockedResponses(responses)
	}
	if machines == nil {
		p.fail("$", "StateMachines is missing")
	} else {
		p.stateMachines(machines)
	}
	// Problems in document order, whichever section was read first.
	sort.SliceStable(p.errs, func(i, j int) bool {
		return sectionOf(p.errs[i]) < sectionOf(p.errs[j])
	})
}

// sectionOf orders the problems: the root's, StateMachines', then
// MockedResponses' (the order of the documented examples).
func sectionOf(err error) int {
	var ce *ConfigError
	if !errors.As(err, &ce) {
		return 0
	}
	switch {
	case strings.HasPrefix(ce.Path, "$.StateMachines"):
		return 1
	case strings.HasPrefix(ce.Path, "$.MockedResponses"):
		return 2
	}
	return 0
}

func (p *parser) stateMachines(raw json.RawMessage) {
	const path = "$.StateMachines"
	machines, _ := p.object(path, raw, "state machine names to their TestCases")
	for _, m := range machines {
		mpath := at(path, m.key)
		fields, ok := p.object(mpath, m.val, "with TestCases")
		if !ok {
			continue
		}
		cases := map[string]map[string]string{}
		found := false
		for _, f := range fields {
			if f.key != "TestCases" {
				p.fail(at(mpath, f.key), "unknown field: a state machine's mock configuration has TestCases only")
				continue
			}
			found = true
			tcs, _ := p.object(at(mpath, "TestCases"), f.val, "test case names to their states")
			for _, tc := range tcs {
				cases[tc.key] = p.testCase(at(at(mpath, "TestCases"), tc.key), tc.val)
			}
		}
		if !found {
			p.fail(mpath, "TestCases is missing")
		}
		p.cfg.machines[m.key] = cases
	}
}

func (p *parser) testCase(path string, raw json.RawMessage) map[string]string {
	states, _ := p.object(path, raw, "state names to mocked response names")
	out := map[string]string{}
	for _, st := range states {
		spath := at(path, st.key)
		var name string
		if err := json.Unmarshal(st.val, &name); err != nil {
			p.fail(spath, "must be the name of a mocked response (a string), not %s", kindOf(st.val))
			continue
		}
		if !p.declared[name] {
			p.fail(spath, "names the mocked response %q, which MockedResponses does not define", name)
			continue
		}
		out[st.key] = name
	}
	return out
}

func (p *parser) mockedResponses(raw json.RawMessage) {
	const path = "$.MockedResponses"
	responses, _ := p.object(path, raw, "mocked response names to their answers by invocation")
	for _, r := range responses {
		p.declared[r.key] = true
		if resp := p.response(at(path, r.key), r.key, r.val); resp != nil {
			p.cfg.responses[r.key] = resp
		}
	}
}

// invocations is a key of a mocked response: "n" or an inclusive range
// "a-b" of invocations counted from 0.
var invocations = regexp.MustCompile(`^([0-9]+)(?:-([0-9]+))?$`)

func (p *parser) response(path, name string, raw json.RawMessage) *response {
	keys, ok := p.object(path, raw, `invocation numbers ("0", "1-2") to a Return or a Throw`)
	if !ok {
		return nil
	}
	resp := &response{name: name}
	for _, k := range keys {
		kpath := at(path, k.key)
		first, last, err := parseKey(k.key)
		if err != nil {
			p.fail(kpath, "%v", err)
			continue
		}
		a, ok := p.answer(kpath, k.val)
		if !ok {
			continue
		}
		a.key, a.first, a.last = k.key, first, last
		resp.answers = append(resp.answers, a)
	}
	sort.Slice(resp.answers, func(i, j int) bool { return resp.answers[i].first < resp.answers[j].first })
	for i := 1; i < len(resp.answers); i++ {
		prev, cur := resp.answers[i-1], resp.answers[i]
		if cur.first <= prev.last {
			p.fail(at(path, cur.key), "invocation %d is also answered by %q: each invocation has one answer", cur.first, prev.key)
		}
	}
	return resp
}

func parseKey(key string) (first, last int, err error) {
	m := invocations.FindStringSubmatch(key)
	if m == nil {
		return 0, 0, fmt.Errorf(`not an invocation number: keys are a number from 0 ("0", "3") or an inclusive range ("1-2")`)
	}
	if first, err = strconv.Atoi(m[1]); err != nil {
		return 0, 0, fmt.Errorf("invocation number out of range: %v", err)
	}
	last = first
	if m[2] != "" {
		if last, err = strconv.Atoi(m[2]); err != nil {
			return 0, 0, fmt.Errorf("invocation number out of range: %v", err)
		}
		if last < first {
			return 0, 0, fmt.Errorf("the range ends (%d) before it starts (%d)", last, first)
		}
	}
	return first, last, nil
}

func (p *parser) answer(path string, raw json.RawMessage) (answer, bool) {
	fields, ok := p.object(path, raw, "with one field, Return or Throw")
	if !ok {
		return answer{}, false
	}
	var a answer
	given := 0
	for _, f := range fields {
		switch f.key {
		case "Return":
			given++
			a.ret = f.val
		case "Throw":
			given++
			a.throw, ok = p.throw(at(path, "Throw"), f.val)
			if !ok {
				return answer{}, false
			}
		default:
			p.fail(at(path, f.key), "unknown field: an answer is a Return or a Throw")
			return answer{}, false
		}
	}
	if given != 1 {
		p.fail(path, "must contain exactly one of Return and Throw")
		return answer{}, false
	}
	return a, true
}

func (p *parser) throw(path string, raw json.RawMessage) (*asl.StatesError, bool) {
	fields, ok := p.object(path, raw, "with Error and Cause")
	if !ok {
		return nil, false
	}
	var se asl.StatesError
	var hasError, hasCause bool
	for _, f := range fields {
		var s string
		if f.key != "Error" && f.key != "Cause" {
			p.fail(at(path, f.key), "unknown field: a Throw has Error and Cause")
			ok = false
			continue
		}
		if err := json.Unmarshal(f.val, &s); err != nil {
			p.fail(at(path, f.key), "must be a string, not %s", kindOf(f.val))
			ok = false
			continue
		}
		if f.key == "Error" {
			se.Name, hasError = s, true
		} else {
			se.Cause, hasCause = s, true
		}
	}
	switch {
	case ok && !hasError:
		p.fail(path, "Error is missing: it is the error name Retry and Catch match")
		ok = false
	case ok && se.Name == "":
		p.fail(at(path, "Error"), "must not be empty: it is the error name Retry and Catch match")
		ok = false
	case ok && !hasCause:
		p.fail(path, "Cause is missing")
		ok = false
	}
	return &se, ok
}

// at is the JSON path of key's value in the object at path.
func at(path, key string) string {
	if plainKey.MatchString(key) {
		return path + "." + key
	}
	q, _ := json.Marshal(key)
	return path + "[" + string(q) + "]"
}

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// kindOf names the kind of a JSON value, for messages.
func kindOf(raw json.RawMessage) string {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
