package asl

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Workflow variables (Assign, $name), as "Passing data between states with
// variables" documents them:
//
//   - every expression of a state's Assign is evaluated with the values the
//     variables had when the state was entered, then all are assigned at
//     once; the new values are visible from the next state on;
//   - a machine's States form one workflow-local scope; a Parallel branch or
//     a Map iteration runs in a scope of its own that reads the outer scopes
//     and is dropped when the branch or iteration ends, so nothing leaks out
//     but through output; a Catch of a Parallel or Map state assigns in the
//     scope the state belongs to;
//   - a name assigned in an inner scope may not be assigned in an outer one
//     (checked when the definition loads);
//   - a variable holds at most 256 KiB, one Assign at most 256 KiB in all,
//     and an execution's variables at most 10 MiB.

// Variable size limits (bytes of the JSON encoding).
const (
	MaxVariableBytes       = 256 * 1024
	MaxAssignBytes         = 256 * 1024
	MaxExecutionVarBytes   = 10 * 1024 * 1024
	maxVariableNameLength  = 80
	reservedStatesVariable = "states"
)

// varScope is one workflow-local scope of variables. Lookups walk out to the
// enclosing scopes; assignments land in this one.
type varScope struct {
	parent *varScope
	total  *varTotal

	mu   sync.RWMutex
	vals map[string]any
	size map[string]int
}

// varTotal counts the bytes of every variable an execution holds.
type varTotal struct {
	mu    sync.Mutex
	bytes int
}

func newVarScope(parent *varScope) *varScope {
	vs := &varScope{parent: parent}
	if parent != nil {
		vs.total = parent.total
	} else {
		vs.total = &varTotal{}
	}
	return vs
}

// get returns the value of $name as seen from this scope.
func (vs *varScope) get(name string) (any, bool) {
	for s := vs; s != nil; s = s.parent {
		s.mu.RLock()
		v, ok := s.vals[name]
		s.mu.RUnlock()
		if ok {
			return v, true
		}
	}
	return nil, false
}

// inner returns the scope a Parallel branch or Map iteration running sm
// works in. A machine none of whose states assigns a variable only reads
// the outer scopes, so it shares this one and costs no allocation.
// The second result ends the scope.
func (vs *varScope) inner(sm *StateMachine) (*varScope, func()) {
	if !sm.assigns {
		return vs, noRelease
	}
	s := newVarScope(vs)
	return s, s.release
}

func noRelease() {}

// release gives back the bytes a finished inner scope held.
func (vs *varScope) release() {
	vs.mu.Lock()
	n := 0
	for _, s := range vs.size {
		n += s
	}
	vs.vals, vs.size = nil, nil
	vs.mu.Unlock()
	vs.total.mu.Lock()
	vs.total.bytes -= n
	vs.total.mu.Unlock()
}

// assign stores the evaluated values of one Assign field, after checking the
// size limits; nothing is assigned when one is exceeded.
func (vs *varScope) assign(vals map[string]any) error {
	if len(vals) == 0 {
		return nil
	}
	sizes := make(map[string]int, len(vals))
	sum := 0
	for _, k := range sortedKeys(vals) {
		n := jsonSize(vals[k])
		if n > MaxVariableBytes {
			return newError(ErrDataLimitExceeded, "The variable '%s' has a size of %d bytes, exceeding the maximum of %d bytes for a single variable.", k, n, MaxVariableBytes)
		}
		sizes[k] = n
		sum += n
	}
	if sum > MaxAssignBytes {
		return newError(ErrDataLimitExceeded, "The variables assigned in one Assign field have a combined size of %d bytes, exceeding the maximum of %d bytes.", sum, MaxAssignBytes)
	}
	vs.mu.Lock()
	defer vs.mu.Unlock()
	delta := 0
	for k, n := range sizes {
		delta += n - vs.size[k]
	}
	vs.total.mu.Lock()
	if vs.total.bytes+delta > MaxExecutionVarBytes {
		vs.total.mu.Unlock()
		return newError(ErrDataLimitExceeded, "The variables of the execution would have a total size of %d bytes, exceeding the maximum of %d bytes.", vs.total.bytes+delta, MaxExecutionVarBytes)
	}
	vs.total.bytes += delta
	vs.total.mu.Unlock()
	if vs.vals == nil {
		vs.vals = make(map[string]any, len(vals))
		vs.size = make(map[string]int, len(vals))
	}
	for k, v := range vals {
		vs.vals[k] = v
		vs.size[k] = sizes[k]
	}
	return nil
}

// snapshot returns every variable visible from this scope (inner scopes
// shadow nothing: names are unique across nested scopes), for JSONata
// bindings.
func (vs *varScope) snapshot(into map[string]any) {
	for s := vs; s != nil; s = s.parent {
		s.mu.RLock()
		for k, v := range s.vals {
			if _, ok := into[k]; !ok {
				into[k] = v
			}
		}
		s.mu.RUnlock()
	}
}

// validVariableName applies "Variable name syntax": a Unicode identifier
// (ID_Start then ID_Continue characters) of at most 80 characters.
func validVariableName(name string) error {
	if name == "" {
		return fmt.Errorf("a variable name must not be empty")
	}
	if utf8.RuneCountInString(name) > maxVariableNameLength {
		return fmt.Errorf("variable name %q is longer than %d characters", name, maxVariableNameLength)
	}
	for i, r := range name {
		if i == 0 {
			if !isIDStart(r) {
				return fmt.Errorf("variable name %q must start with a letter (Unicode ID_Start)", name)
			}
			continue
		}
		if !isIDContinue(r) {
			return fmt.Errorf("variable name %q may contain only letters, digits and underscores (Unicode ID_Continue)", name)
		}
	}
	return nil
}

func isIDStart(r rune) bool {
	return unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Other_ID_Start, r)
}

func isIDContinue(r rune) bool {
	return isIDStart(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) || unicode.IsDigit(r) ||
		unicode.Is(unicode.Pc, r) || unicode.Is(unicode.Other_ID_Continue, r)
}

// assignNames lists the variable names an Assign object sets.
func assignNames(m map[string]any) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, strings.TrimSuffix(k, ".$"))
	}
	sort.Strings(names)
	return names
}

// checkScopes enforces "a variable assigned in an inner scope cannot have
// the same name as one assigned in an outer scope".
func (v *validator) checkScopes(sm *StateMachine, outer map[string]string, prefix string) {
	mine := map[string]string{}
	for _, name := range sm.order {
		st := sm.States[name]
		if st == nil {
			continue
		}
		for _, n := range st.assigned {
			if _, ok := mine[n]; !ok {
				mine[n] = name
			}
		}
	}
	sm.assigns = len(mine) > 0
	for _, n := range sortedKeys(anyMap(mine)) {
		if where, ok := outer[n]; ok {
			v.addf("%sstate %q: Assign: variable %q is already assigned in an outer scope (state %q); a Parallel branch or Map iteration cannot assign it", prefix, mine[n], n, where)
		}
	}
	inner := make(map[string]string, len(outer)+len(mine))
	for k, w := range outer {
		inner[k] = w
	}
	for k, w := range mine {
		if _, ok := inner[k]; !ok {
			inner[k] = w
		}
	}
	for _, name := range sm.order {
		st := sm.States[name]
		if st == nil {
			continue
		}
		for i, b := range st.Branches {
			v.checkScopes(b, inner, fmt.Sprintf("%sstate %q branch %d: ", prefix, name, i+1))
		}
		if st.Processor != nil {
			scope := inner
			if st.dist != nil {
				scope = map[string]string{} // a child execution: none of the Map's variables are its own
			}
			v.checkScopes(st.Processor, scope, fmt.Sprintf("%sstate %q item processor: ", prefix, name))
		}
	}
}

func anyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// assign makes a state's assignments and keeps them for its StateExited
// event, which lists them as Step Functions' history does
// (assignedVariables: each value as JSON text).
func (r *stateRun) assign(vals map[string]any) error {
	if err := r.vars.assign(vals); err != nil {
		return err
	}
	if len(vals) == 0 {
		return nil
	}
	if r.assigned == nil {
		r.assigned = make(map[string]string, len(vals))
	}
	for k, v := range vals {
		b, err := marshalJSON(v)
		if err != nil {
			return newError(ErrRuntime, "variable %q cannot be encoded as JSON: %v", k, err)
		}
		r.assigned[k] = string(b)
	}
	return nil
}
