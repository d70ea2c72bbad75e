package asl

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"
)

// StateMachine is a parsed, validated state machine (or a Parallel branch or
// Map item processor, which have the same shape).
type StateMachine struct {
	Comment        string
	StartAt        string
	TimeoutSeconds int64
	States         map[string]*State
	order          []string // state names in definition order
	assigns        bool     // some state of this machine (not nested ones) assigns variables
	pure           bool     // no state of this machine (nested ones included) waits (see markPure)
	// jsonata: some state of the machine (nested ones included) is a
	// JSONata one, which reads plain values only (Execution.plain): the
	// execution's input is then parsed without lazy values.
	jsonata bool
	// drawsAnew: see replayable.
	drawsAnew bool
	// unsupported: see Unsupported.
	unsupported []string

	// checkedWith is the last registry every static Task binding of the
	// machine was found in. Handlers are only ever added or replaced, so
	// the machine stays bound there and Start need not walk it again.
	checkedWith atomic.Pointer[Registry]
}

// State is one parsed state. Only the fields of its Type are set.
type State struct {
	Name string
	Type string
	Next string
	End  bool

	// entered and exited number the state's StateEntered and StateExited
	// history events (evOther for a type the validator refuses).
	entered, exited evType

	// Query language and variables.
	jsonata   bool        // the state uses JSONata
	Assign    *assignment // the state's own Assign
	assigned  []string    // every variable name the state assigns (its Assign, choice rules, catchers)
	ja        *jsonataFields
	jaContext bool // some expression reads $states.context

	InputPath      optPath
	OutputPath     optPath
	ResultPath     optPath
	Parameters     *template
	ResultSelector *template
	Result         any
	hasResult      bool

	// Task
	Resource           string
	TimeoutSeconds     int64
	TimeoutSecondsPath *path
	// HeartbeatSeconds (or HeartbeatSecondsPath) bounds the wait between
	// a .waitForTaskToken task's heartbeats (SendTaskHeartbeat).
	HeartbeatSecondsPath *path
	HeartbeatSeconds     int64
	Retry                []*retrier
	Catch                []*catcher

	// Choice
	Choices []*choiceRule
	Default string

	// Wait
	Seconds       int64
	hasSeconds    bool
	SecondsPath   *path
	Timestamp     time.Time
	hasTimestamp  bool
	TimestampPath *path

	// Fail
	Error     string
	Cause     string
	ErrorPath *template
	CausePath *template

	// Parallel
	Branches []*StateMachine

	// Map
	Processor          *StateMachine
	ItemsPath          *path
	ItemSelector       *template
	MaxConcurrency     int64
	MaxConcurrencyPath *path
	dist               *distributed // a DISTRIBUTED Map's (distributed.go)
}

type retrier struct {
	ErrorEquals     []string
	IntervalSeconds float64
	MaxAttempts     int
	BackoffRate     float64
	MaxDelaySeconds float64
	JitterFull      bool
}

type catcher struct {
	ErrorEquals []string
	ResultPath  optPath
	Next        string
	Assign      *assignment
	Output      *jvalue // JSONata
	index       int     // position in Catch, for causes
}

// DefinitionError reports everything wrong with a definition at load time.
type DefinitionError struct {
	Problems []string
}

func (e *DefinitionError) Error() string {
	return "invalid state machine definition:\n  - " + strings.Join(e.Problems, "\n  - ")
}

// Parse parses and validates an ASL definition (JSONPath query language).
// Every problem found is reported, each naming its state.
func Parse(data []byte) (*StateMachine, error) {
	raw, err := parseJSON(data)
	if err != nil {
		return nil, &DefinitionError{Problems: []string{fmt.Sprintf("not valid JSON: %v", err)}}
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, &DefinitionError{Problems: []string{fmt.Sprintf("the definition must be a JSON object, got %s", typeName(raw))}}
	}
	v := &validator{}
	sm := v.machine(m, "", true)
	if len(v.problems) == 0 {
		v.checkScopes(sm, map[string]string{}, "")
	}
	if len(v.problems) > 0 {
		return nil, &DefinitionError{Problems: v.problems}
	}
	markPure(sm)
	sm.jsonata = usesJSONata(sm)
	sm.drawsAnew = drawsAnew(data)
	sm.unsupported = v.unsupported
	walkStates(sm, func(st *State) {
		if st.dist != nil { // a child execution's machine, run on its own
			st.Processor.jsonata = usesJSONata(st.Processor)
			st.Processor.drawsAnew = sm.drawsAnew
		}
	})
	return sm, nil
}

// Unsupported names what the definition uses that this engine validates
// but cannot run, each with its state ("" when it runs all of it): a valid
// definition, which "veredicto states validate" accepts with a warning.
func (sm *StateMachine) Unsupported() []string { return sm.unsupported }

// nondeterministic name what a definition may read that a replay would
// read anew, not from the history: random values, the clock, a state's
// entry time (its StateEntered is recorded again when replayed).
var nondeterministic = [][]byte{[]byte("States.UUID"), []byte("$uuid"), []byte("$random"), []byte("$now"), []byte("$millis"), []byte("EnteredTime")}

// drawsAnew reports whether a definition's text names any of
// nondeterministic: conservatively, wherever it appears.
func drawsAnew(definition []byte) bool {
	return slices.ContainsFunc(nondeterministic, func(s []byte) bool { return bytes.Contains(definition, s) })
}

// replayable reports whether a replay of an execution of sm computes the
// values it computed the first time: Task results come from the history,
// every other value from them and the input, unless the definition draws
// on randomness or the clock (drawsAnew). Only then may an execution park
// (park.go): resuming it replays it. After a restart every execution is
// replayed, as before parking existed.
func (sm *StateMachine) replayable() bool { return !sm.drawsAnew }

// usesJSONata reports whether some state of sm, nested ones included, is a
// JSONata one.
func usesJSONata(sm *StateMachine) bool {
	for _, st := range sm.States {
		if st.jsonata || (st.Processor != nil && usesJSONata(st.Processor)) || slices.ContainsFunc(st.Branches, usesJSONata) {
			return true
		}
	}
	return false
}

// markPure sets pure on every machine (nested ones included) whose states
// never wait: Pass, Choice, Succeed and Fail, and Map and Parallel states
// whose own machines are pure. A Map whose items are pure gains nothing by
// running them concurrently (they only compute, for microseconds): see
// mapState.
func markPure(sm *StateMachine) bool {
	pure := true
	for _, name := range sm.order {
		st := sm.States[name]
		switch st.Type {
		case "Pass", "Choice", "Succeed", "Fail":
		case "Map":
			pure = markPure(st.Processor) && st.dist == nil && pure
		case "Parallel":
			for _, b := range st.Branches {
				pure = markPure(b) && pure
			}
		default:
			pure = false
		}
	}
	sm.pure = pure
	return pure
}

// MaxNestingDepth bounds how deep Parallel branches and Map item processors
// may nest inside each other (a Map inside a Parallel branch is depth 2).
// Step Functions bounds a definition only by its size (1 MiB); the engine
// refuses deeper nesting at load time so that the goroutines and history of
// one execution stay bounded. Veredicto's workflows nest one level today.
const MaxNestingDepth = 8

type validator struct {
	topJSONata bool // the machine's QueryLanguage is JSONata
	problems   []string
	// unsupported names what a valid definition uses that this engine
	// cannot run (StateMachine.Unsupported).
	unsupported []string
	depth       int  // nesting of the machine being validated (0: top level)
	tooDeep     bool // the nesting problem has been reported
}

// nested validates a Parallel branch or a Map item processor one level
// deeper than the current machine.
func (v *validator) nested(m map[string]any, prefix string) *StateMachine {
	v.depth++
	defer func() { v.depth-- }()
	if v.depth > MaxNestingDepth {
		if !v.tooDeep {
			v.tooDeep = true
			v.addf("%sParallel and Map states nest more than %d levels deep, over the engine's limit", prefix, MaxNestingDepth)
		}
		return &StateMachine{States: map[string]*State{}}
	}
	return v.machine(m, prefix, false)
}

func (v *validator) addf(format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf(format, args...))
}

var (
	machineFields = set("Comment", "StartAt", "States", "Version", "TimeoutSeconds", "QueryLanguage")
	branchFields  = set("Comment", "StartAt", "States", "ProcessorConfig")
	commonFields  = set("Type", "Comment", "QueryLanguage")
	stateFields   = map[string]map[string]bool{
		"Pass":     set("Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters", "Result", "Assign"),
		"Task":     set("Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters", "ResultSelector", "Resource", "TimeoutSeconds", "TimeoutSecondsPath", "HeartbeatSeconds", "HeartbeatSecondsPath", "Retry", "Catch", "Credentials", "Assign"),
		"Choice":   set("InputPath", "OutputPath", "Choices", "Default", "Assign"),
		"Wait":     set("Next", "End", "InputPath", "OutputPath", "Seconds", "SecondsPath", "Timestamp", "TimestampPath", "Assign"),
		"Succeed":  set("InputPath", "OutputPath"),
		"Fail":     set("Error", "ErrorPath", "Cause", "CausePath"),
		"Parallel": set("Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters", "ResultSelector", "Branches", "Retry", "Catch", "Assign"),
		"Map":      set("Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters", "ItemSelector", "ResultSelector", "ItemsPath", "ItemProcessor", "Iterator", "MaxConcurrency", "MaxConcurrencyPath", "Retry", "Catch", "ItemReader", "ResultWriter", "ItemBatcher", "ToleratedFailurePercentage", "ToleratedFailureCount", "ToleratedFailurePercentagePath", "ToleratedFailureCountPath", "Label", "Assign"),
	}
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// machine validates a top-level machine (top=true) or a branch/processor.
// prefix locates nested machines in messages ("state \"Fan\" branch 1: ").
func (v *validator) machine(m map[string]any, prefix string, top bool) *StateMachine {
	allowed := branchFields
	if top {
		allowed = machineFields
	}
	for _, k := range sortedKeys(m) {
		if !allowed[k] {
			v.addf("%sunknown top-level field %q", prefix, k)
		}
	}
	if ql, ok := m["QueryLanguage"]; ok && top {
		if ql != langJSONata && ql != langJSONPath {
			v.addf("%sQueryLanguage must be \"JSONPath\" or \"JSONata\", got %v", prefix, ql)
		}
		v.topJSONata = ql == langJSONata
	}
	sm := &StateMachine{States: map[string]*State{}}
	sm.Comment, _ = m["Comment"].(string)
	if top {
		if t, ok := m["TimeoutSeconds"]; ok {
			n, ok := asInt(t)
			if !ok || n <= 0 {
				v.addf("%sTimeoutSeconds must be a positive integer", prefix)
			}
			sm.TimeoutSeconds = n
		}
	}
	start, ok := m["StartAt"].(string)
	if !ok || start == "" {
		v.addf("%sStartAt is missing or not a string", prefix)
	}
	sm.StartAt = start
	states, ok := m["States"].(map[string]any)
	if !ok || len(states) == 0 {
		v.addf("%sStates is missing or empty", prefix)
		return sm
	}
	sm.order = sortedKeys(states)
	for _, name := range sm.order {
		where := fmt.Sprintf("%sstate %q", prefix, name)
		if len(name) > 80 {
			v.addf("%s: state names are limited to 80 characters", where)
		}
		sd, ok := states[name].(map[string]any)
		if !ok {
			v.addf("%s: must be an object", where)
			continue
		}
		if st := v.state(name, sd, where); st != nil {
			sm.States[name] = st
		}
	}
	if start != "" && states[start] == nil {
		v.addf("%sStartAt %q names no state", prefix, start)
	}
	v.transitions(sm, prefix)
	return sm
}

// transitions checks that every transition target exists and every state
// is reachable from StartAt.
func (v *validator) transitions(sm *StateMachine, prefix string) {
	targets := func(st *State) []string {
		var t []string
		if st.Next != "" {
			t = append(t, st.Next)
		}
		for _, c := range st.Choices {
			t = append(t, c.Next)
		}
		if st.Default != "" {
			t = append(t, st.Default)
		}
		for _, c := range st.Catch {
			t = append(t, c.Next)
		}
		return t
	}
	for _, name := range sm.order {
		st := sm.States[name]
		if st == nil {
			continue
		}
		for _, t := range targets(st) {
			if _, ok := sm.States[t]; !ok && t != "" {
				v.addf("%sstate %q: transition to %q, which is not a state of this machine (a branch or item processor cannot leave its own States)", prefix, name, t)
			}
		}
	}
	if _, ok := sm.States[sm.StartAt]; !ok {
		return
	}
	seen := map[string]bool{sm.StartAt: true}
	queue := []string{sm.StartAt}
	for len(queue) > 0 {
		st := sm.States[queue[0]]
		queue = queue[1:]
		if st == nil {
			continue
		}
		for _, t := range targets(st) {
			if !seen[t] {
				seen[t] = true
				queue = append(queue, t)
			}
		}
	}
	for _, name := range sm.order {
		if !seen[name] && sm.States[name] != nil {
			v.addf("%sstate %q is unreachable from StartAt %q", prefix, name, sm.StartAt)
		}
	}
}

func (v *validator) state(name string, m map[string]any, where string) *State {
	typ, _ := m["Type"].(string)
	fields, ok := stateFields[typ]
	if !ok {
		if typ == "" {
			v.addf("%s: Type is missing", where)
		} else {
			v.addf("%s: unknown Type %q (want Pass, Task, Choice, Wait, Succeed, Fail, Parallel or Map)", where, typ)
		}
		return nil
	}
	isJSONata := v.topJSONata
	if ql, ok := m["QueryLanguage"]; ok {
		switch {
		case ql == langJSONata:
			isJSONata = true
		case ql != langJSONPath:
			v.addf("%s: QueryLanguage must be \"JSONPath\" or \"JSONata\", got %v", where, ql)
		case v.topJSONata:
			v.addf("%s: 'QueryLanguage' can not be 'JSONPath' if set to 'JSONata' for whole state machine", where)
		default:
			isJSONata = false
		}
	}
	if isJSONata {
		fields = jsonataStateFields[typ]
	}
	for _, k := range sortedKeys(m) {
		if !fields[k] && !commonFields[k] {
			switch {
			case isJSONata && jsonPathOnly[k]:
				v.addf("%s: field %q: the QueryLanguage is set to 'JSONata', but field '%s' is only supported for the 'JSONPath' QueryLanguage (use Arguments, Output, Items or a {%% %%} expression)", where, k, k)
			case !isJSONata && jsonataOnly[k]:
				v.addf("%s: field %q: the QueryLanguage is set to 'JSONPath', but field '%s' is only supported for the 'JSONata' QueryLanguage", where, k, k)
			default:
				v.addf("%s: field %q is not allowed in a %s state", where, k, typ)
			}
		}
	}
	st := &State{Name: name, Type: typ, jsonata: isJSONata}
	st.entered, st.exited, _ = stateEvents(typ)
	if isJSONata {
		v.jsonataState(st, m, where)
		st.assigned = collectAssigned(st)
		st.jaContext = needsContext(st)
		return st
	}

	v.transition(st, m, where)

	st.InputPath = v.optPath(m, "InputPath", where, false)
	st.OutputPath = v.optPath(m, "OutputPath", where, false)
	st.ResultPath = v.optPath(m, "ResultPath", where, true)
	if p, ok := m["Parameters"]; ok && typ != "Map" {
		st.Parameters = v.template(p, where+": Parameters")
	}
	if p, ok := m["ResultSelector"]; ok {
		if _, isObj := p.(map[string]any); !isObj {
			v.addf("%s: ResultSelector must be an object", where)
		}
		st.ResultSelector = v.template(p, where+": ResultSelector")
	}
	if r, ok := m["Result"]; ok {
		st.Result, st.hasResult = r, true
	}
	if typ == "Task" || typ == "Parallel" || typ == "Map" {
		st.Retry = v.retriers(m["Retry"], where)
		st.Catch = v.catchers(m["Catch"], where)
	}
	if a, ok := m["Assign"]; ok {
		st.Assign = v.assignment(a, where+": Assign", false)
	}

	switch typ {
	case "Task":
		v.task(st, m, where)
	case "Choice":
		v.choice(st, m, where)
	case "Wait":
		v.wait(st, m, where)
	case "Fail":
		v.fail(st, m, where)
	case "Parallel":
		v.branches(st, m, where)
	case "Map":
		v.mapState(st, m, where)
	}
	st.assigned = collectAssigned(st)
	return st
}

// branches loads a Parallel state's Branches, each a nested machine.
func (v *validator) branches(st *State, m map[string]any, where string) {
	branches, ok := m["Branches"].([]any)
	if !ok || len(branches) == 0 {
		v.addf("%s: Branches must be a non-empty array", where)
	}
	for i, b := range branches {
		bm, ok := b.(map[string]any)
		if !ok {
			v.addf("%s: branch %d must be an object", where, i+1)
			continue
		}
		st.Branches = append(st.Branches, v.nested(bm, fmt.Sprintf("%s branch %d: ", where, i+1)))
	}
}

// collectAssigned lists the variables a state may assign.
func collectAssigned(st *State) []string {
	var names []string
	add := func(a *assignment) {
		if a != nil {
			names = append(names, a.names...)
		}
	}
	add(st.Assign)
	for _, r := range st.Choices {
		add(r.assign)
	}
	for _, c := range st.Catch {
		add(c.Assign)
	}
	return names
}

func (v *validator) optPath(m map[string]any, field, where string, reference bool) optPath {
	raw, ok := m[field]
	if !ok {
		return optPath{p: rootPath}
	}
	if raw == nil {
		return optPath{null: true}
	}
	s, ok := raw.(string)
	if !ok {
		v.addf("%s: %s must be a string or null", where, field)
		return optPath{p: rootPath}
	}
	p := v.path(s, where+": "+field)
	if p == nil {
		return optPath{p: rootPath}
	}
	if reference {
		if p.context {
			v.addf("%s: %s %q cannot point into the context object", where, field, s)
		} else if p.variable != "" {
			v.addf("%s: %s %q: variables cannot be used in %s", where, field, s, field)
		} else if err := p.mustReference(); err != nil {
			v.addf("%s: %s: %v", where, field, err)
		}
	}
	return optPath{p: p}
}

func (v *validator) path(s, where string) *path {
	p, err := compilePath(s)
	if err != nil {
		v.addf("%s: %v", where, err)
		return nil
	}
	return p
}

func (v *validator) template(raw any, where string) *template {
	t, err := compileTemplate(raw, where)
	if err != nil {
		v.addf("%v", err)
		return nil
	}
	return t
}

func (v *validator) task(st *State, m map[string]any, where string) {
	res, ok := m["Resource"].(string)
	if !ok || res == "" {
		v.addf("%s: Resource must be a non-empty string", where)
	}
	st.Resource = res
	if t, ok := m["TimeoutSeconds"]; ok {
		n, ok := asInt(t)
		if !ok || n <= 0 {
			v.addf("%s: TimeoutSeconds must be a positive integer", where)
		}
		st.TimeoutSeconds = n
	}
	if t, ok := m["TimeoutSecondsPath"]; ok {
		if _, dup := m["TimeoutSeconds"]; dup {
			v.addf("%s: TimeoutSeconds and TimeoutSecondsPath are mutually exclusive", where)
		}
		st.TimeoutSecondsPath = v.refPath(t, where+": TimeoutSecondsPath")
	}
	if t, ok := m["HeartbeatSeconds"]; ok {
		n, ok := asInt(t)
		if !ok || n <= 0 {
			v.addf("%s: HeartbeatSeconds must be a positive integer", where)
		}
		st.HeartbeatSeconds = n
		if st.TimeoutSeconds > 0 && n >= st.TimeoutSeconds {
			v.addf("%s: HeartbeatSeconds must be smaller than TimeoutSeconds", where)
		}
	}
	if t, ok := m["HeartbeatSecondsPath"]; ok {
		if _, dup := m["HeartbeatSeconds"]; dup {
			v.addf("%s: HeartbeatSeconds and HeartbeatSecondsPath are mutually exclusive", where)
		}
		st.HeartbeatSecondsPath = v.refPath(t, where+": HeartbeatSecondsPath")
	}
}

func (v *validator) refPath(raw any, where string) *path {
	s, ok := raw.(string)
	if !ok {
		v.addf("%s: must be a path string", where)
		return nil
	}
	p := v.path(s, where)
	if p != nil {
		if err := p.mustReference(); err != nil {
			v.addf("%s: %v", where, err)
			return nil
		}
	}
	return p
}

func (v *validator) choice(st *State, m map[string]any, where string) {
	choices, ok := m["Choices"].([]any)
	if !ok || len(choices) == 0 {
		v.addf("%s: Choices must be a non-empty array", where)
	}
	for i, c := range choices {
		cm, ok := c.(map[string]any)
		if !ok {
			v.addf("%s: choice rule %d must be an object", where, i+1)
			continue
		}
		r, err := parseChoiceRule(cm, true, fmt.Sprintf("%s: choice rule %d", where, i+1))
		if err != nil {
			v.addf("%v", err)
			continue
		}
		st.Choices = append(st.Choices, r)
	}
	if d, ok := m["Default"]; ok {
		s, ok := d.(string)
		if !ok || s == "" {
			v.addf("%s: Default must be a state name", where)
		}
		st.Default = s
	}
}

func (v *validator) wait(st *State, m map[string]any, where string) {
	n := 0
	if s, ok := m["Seconds"]; ok {
		n++
		sec, ok := asInt(s)
		if !ok || sec < 0 {
			v.addf("%s: Seconds must be a non-negative integer", where)
		}
		st.Seconds, st.hasSeconds = sec, true
	}
	if s, ok := m["SecondsPath"]; ok {
		n++
		st.SecondsPath = v.refPath(s, where+": SecondsPath")
	}
	if s, ok := m["Timestamp"]; ok {
		n++
		str, _ := s.(string)
		ts, err := time.Parse(time.RFC3339Nano, str)
		if err != nil {
			v.addf("%s: Timestamp %v is not an RFC3339 timestamp", where, s)
		}
		st.Timestamp, st.hasTimestamp = ts, true
	}
	if s, ok := m["TimestampPath"]; ok {
		n++
		st.TimestampPath = v.refPath(s, where+": TimestampPath")
	}
	if n != 1 {
		v.addf("%s: a Wait state needs exactly one of Seconds, SecondsPath, Timestamp, TimestampPath (has %d)", where, n)
	}
}

func (v *validator) fail(st *State, m map[string]any, where string) {
	pair := func(lit, dyn string) (string, *template) {
		l, hasL := m[lit]
		d, hasD := m[dyn]
		if hasL && hasD {
			v.addf("%s: %s and %s are mutually exclusive", where, lit, dyn)
		}
		var s string
		if hasL {
			var ok bool
			if s, ok = l.(string); !ok {
				v.addf("%s: %s must be a string", where, lit)
			}
		}
		var t *template
		if hasD {
			ds, ok := d.(string)
			if !ok {
				v.addf("%s: %s must be a path or intrinsic function string", where, dyn)
				return s, nil
			}
			var err error
			t, err = compileDynamic(ds)
			if err != nil {
				v.addf("%s: %s: %v", where, dyn, err)
			}
		}
		return s, t
	}
	st.Error, st.ErrorPath = pair("Error", "ErrorPath")
	st.Cause, st.CausePath = pair("Cause", "CausePath")
}

func (v *validator) mapState(st *State, m map[string]any, where string) {
	v.mapProcessor(st, m, where)
	if p, ok := m["ItemsPath"]; ok {
		st.ItemsPath = v.refPath(p, where+": ItemsPath")
	}
	sel, hasSel := m["ItemSelector"]
	params, hasParams := m["Parameters"]
	if hasSel && hasParams {
		v.addf("%s: ItemSelector and the legacy Parameters are mutually exclusive", where)
	}
	if hasParams {
		sel, hasSel = params, true
	}
	if hasSel {
		st.ItemSelector = v.template(sel, where+": ItemSelector")
	}
	if c, ok := m["MaxConcurrency"]; ok {
		n, ok := asInt(c)
		if !ok || n < 0 {
			v.addf("%s: MaxConcurrency must be a non-negative integer", where)
		}
		st.MaxConcurrency = n
	}
	if c, ok := m["MaxConcurrencyPath"]; ok {
		if _, dup := m["MaxConcurrency"]; dup {
			v.addf("%s: MaxConcurrency and MaxConcurrencyPath are mutually exclusive", where)
		}
		st.MaxConcurrencyPath = v.refPath(c, where+": MaxConcurrencyPath")
	}
}

// mapProcessor loads a Map state's item processor (both query languages)
// and, for a DISTRIBUTED one, what Distributed mode adds.
func (v *validator) mapProcessor(st *State, m map[string]any, where string) {
	proc, hasProc := m["ItemProcessor"]
	iter, hasIter := m["Iterator"]
	switch {
	case hasProc && hasIter:
		v.addf("%s: ItemProcessor and Iterator are mutually exclusive", where)
	case !hasProc && !hasIter:
		v.addf("%s: a Map state needs ItemProcessor (or the legacy Iterator)", where)
	}
	body := proc
	if !hasProc {
		body = iter
	}
	mode := "INLINE"
	if bm, ok := body.(map[string]any); ok {
		var execType string
		mode, execType = v.processorMode(bm, where+" item processor")
		st.Processor = v.nested(bm, where+" item processor: ")
		if mode == "DISTRIBUTED" {
			v.distributedMap(st, m, bm, execType, where)
		}
	} else if hasProc || hasIter {
		v.addf("%s: ItemProcessor must be an object", where)
	}
	if mode != "DISTRIBUTED" {
		for _, f := range distributedOnly {
			if _, ok := m[f]; ok {
				v.addf("%s: field %q is only supported by a Map in DISTRIBUTED mode (ItemProcessor's ProcessorConfig Mode)", where, f)
			}
		}
	}
}

// errorHandlers walks a Retry or Catch array: each element must be an
// object with only the allowed fields; f gets it with its location and
// whether it is the last one (where States.ALL must stand).
func (v *validator) errorHandlers(raw any, where, field string, allowed map[string]bool, f func(m map[string]any, w string, last bool)) {
	if raw == nil {
		return
	}
	list, ok := raw.([]any)
	if !ok {
		v.addf("%s: %s must be an array", where, field)
		return
	}
	for i, e := range list {
		w := fmt.Sprintf("%s: %s[%d]", where, field, i)
		m, ok := e.(map[string]any)
		if !ok {
			v.addf("%s must be an object", w)
			continue
		}
		for _, k := range sortedKeys(m) {
			if !allowed[k] {
				v.addf("%s: unknown field %q", w, k)
			}
		}
		f(m, w, i == len(list)-1)
	}
}

var (
	retrierFields = set("ErrorEquals", "IntervalSeconds", "MaxAttempts", "BackoffRate", "MaxDelaySeconds", "JitterStrategy", "Comment")
	catcherFields = set("ErrorEquals", "ResultPath", "Next", "Comment", "Assign")
)

func (v *validator) retriers(raw any, where string) []*retrier {
	var out []*retrier
	v.errorHandlers(raw, where, "Retry", retrierFields, func(m map[string]any, w string, last bool) {
		r := &retrier{IntervalSeconds: 1, MaxAttempts: 3, BackoffRate: 2}
		r.ErrorEquals = v.errorEquals(m["ErrorEquals"], w, last)
		if x, ok := m["IntervalSeconds"]; ok {
			n, ok := asInt(x)
			if !ok || n < 1 || n > 99999999 {
				v.addf("%s: IntervalSeconds must be an integer from 1 to 99999999", w)
			}
			r.IntervalSeconds = float64(n)
		}
		if x, ok := m["MaxAttempts"]; ok {
			n, ok := asInt(x)
			if !ok || n < 0 || n > 99999999 {
				v.addf("%s: MaxAttempts must be an integer from 0 to 99999999", w)
			}
			r.MaxAttempts = int(n)
		}
		if x, ok := m["BackoffRate"]; ok {
			f, ok := asFloat(x)
			if !ok || f < 1 {
				v.addf("%s: BackoffRate must be a number >= 1.0", w)
			}
			r.BackoffRate = f
		}
		if x, ok := m["MaxDelaySeconds"]; ok {
			n, ok := asInt(x)
			if !ok || n < 1 || n > 31622400 {
				v.addf("%s: MaxDelaySeconds must be an integer from 1 to 31622400", w)
			}
			r.MaxDelaySeconds = float64(n)
		}
		if x, ok := m["JitterStrategy"]; ok {
			switch x {
			case "FULL":
				r.JitterFull = true
			case "NONE":
			default:
				v.addf("%s: JitterStrategy must be FULL or NONE", w)
			}
		}
		out = append(out, r)
	})
	return out
}

func (v *validator) catchers(raw any, where string) []*catcher {
	var out []*catcher
	v.errorHandlers(raw, where, "Catch", catcherFields, func(m map[string]any, w string, last bool) {
		c := &catcher{}
		c.ErrorEquals = v.errorEquals(m["ErrorEquals"], w, last)
		c.ResultPath = v.optPath(m, "ResultPath", w, true)
		if a, ok := m["Assign"]; ok {
			c.Assign = v.assignment(a, w+": Assign", false)
		}
		next, ok := m["Next"].(string)
		if !ok || next == "" {
			v.addf("%s: Next must be a state name", w)
		}
		c.Next = next
		out = append(out, c)
	})
	return out
}

func (v *validator) errorEquals(raw any, where string, last bool) []string {
	list, ok := raw.([]any)
	if !ok || len(list) == 0 {
		v.addf("%s: ErrorEquals must be a non-empty array of error names", where)
		return nil
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok || s == "" {
			v.addf("%s: ErrorEquals entries must be non-empty strings", where)
			continue
		}
		if s == ErrAll && (len(list) != 1 || !last) {
			v.addf("%s: States.ALL must appear alone and in the last retrier or catcher", where)
		}
		out = append(out, s)
	}
	return out
}

// asInt accepts an integral JSON number.
func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return int64(x), true
		}
	}
	return 0, false
}

func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}
