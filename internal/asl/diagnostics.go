package asl

import (
	"errors"
	"strconv"
	"strings"
)

// Diagnostic is one finding about a definition, in the shape of Step
// Functions' ValidateStateMachineDefinition diagnostics.
type Diagnostic struct {
	// Severity is SeverityError for what Step Functions refuses, and
	// SeverityWarning for what it accepts but this engine cannot run.
	Severity string
	// Code is one of Step Functions' diagnostic codes
	// (SCHEMA_VALIDATION_FAILED, MISSING_TRANSITION_TARGET…), or
	// CodeUnsupportedLocally.
	Code    string
	Message string
	// Location is where in the definition, as Step Functions writes it
	// ("/States/Ask/Resource"); "" for the definition as a whole.
	Location string
}

// Diagnostic severities and the codes Diagnose gives.
const (
	SeverityError   = "ERROR"
	SeverityWarning = "WARNING"

	CodeInvalidJSON        = "INVALID_JSON_DESCRIPTION"
	CodeSchema             = "SCHEMA_VALIDATION_FAILED"
	CodeInvalidResource    = "INVALID_RESOURCE"
	CodeMissingTarget      = "MISSING_TRANSITION_TARGET"
	CodeTooDeeplyNested    = "TOO_DEEPLY_NESTED"
	CodeInvalidStateName   = "INVALID_STATE_NAME"
	CodeUnsupportedLocally = "UNSUPPORTED_LOCALLY"
)

// Diagnose validates a definition as Parse does and reports every problem
// as a diagnostic with its location: an error for what Step Functions
// refuses; a warning for what it accepts and this engine does not run (a
// feature the engine lacks, a Task resource no handler of e serves). With
// express, the Task resources an Express workflow cannot use (activities,
// .sync and .waitForTaskToken integrations) are errors too.
func (e *Engine) Diagnose(data []byte, express bool) []Diagnostic {
	sm, err := Parse(data)
	var de *DefinitionError
	if errors.As(err, &de) {
		out := make([]Diagnostic, 0, len(de.Problems))
		for _, p := range de.Problems {
			out = append(out, diagnose(p))
		}
		return out
	}
	if err != nil {
		return []Diagnostic{{Severity: SeverityError, Code: CodeSchema, Message: err.Error()}}
	}
	var out []Diagnostic
	for _, u := range sm.Unsupported() { // valid, and not run here
		loc, _ := locate(u)
		out = append(out, Diagnostic{Severity: SeverityWarning, Code: CodeUnsupportedLocally, Location: loc, Message: u + ": valid, but this engine cannot run it"})
	}
	walkStatesAt(sm, "", func(st *State, loc string) {
		if st.Type != "Task" {
			return
		}
		loc += "/Resource"
		activity := IsActivityARN(st.Resource)
		if express {
			for _, bad := range []struct {
				yes  bool
				what string
			}{
				{activity, "activities"},
				{strings.HasSuffix(st.Resource, waitForTaskToken), "the .waitForTaskToken integration pattern"},
				{strings.HasSuffix(st.Resource, ".sync") || strings.Contains(st.Resource, ".sync:"), "the .sync integration pattern"},
			} {
				if bad.yes {
					out = append(out, Diagnostic{Severity: SeverityError, Code: CodeSchema, Location: loc,
						Message: "state " + strconv.Quote(st.Name) + ": an Express state machine does not support " + bad.what})
				}
			}
		}
		if activity && e.activities != nil {
			return
		}
		if name, ok := staticBinding(st); ok {
			if h, why := e.registry.resolve(strings.TrimSuffix(st.Resource, waitForTaskToken), name); h == nil {
				out = append(out, Diagnostic{Severity: SeverityWarning, Code: CodeUnsupportedLocally, Location: loc,
					Message: (&UnboundError{State: st.Name, Resource: st.Resource, Binding: name, Reason: why}).Error() + ": valid, but this server cannot run it"})
			}
		}
	})
	return out
}

// walkStatesAt is walkStates with each state's location.
func walkStatesAt(sm *StateMachine, at string, fn func(st *State, loc string)) {
	for _, name := range sm.order {
		st := sm.States[name]
		loc := at + "/States/" + name
		fn(st, loc)
		for i, b := range st.Branches {
			walkStatesAt(b, loc+"/Branches/"+strconv.Itoa(i), fn)
		}
		if st.Processor != nil {
			walkStatesAt(st.Processor, loc+"/ItemProcessor", fn)
		}
	}
}

// diagnose turns one of Parse's problems into a diagnostic: its location
// read off the problem's prefix (`state "Fan" branch 2: state "Ask":
// Resource …`), its code off what it says.
func diagnose(problem string) Diagnostic {
	loc, rest := locate(problem)
	d := Diagnostic{Severity: SeverityError, Code: CodeSchema, Message: problem, Location: loc}
	switch {
	case strings.HasPrefix(problem, "not valid JSON"):
		d.Code = CodeInvalidJSON
	case strings.Contains(rest, "transition to"):
		d.Code = CodeMissingTarget
		d.Location += "/Next"
	case strings.HasPrefix(rest, "StartAt ") && strings.Contains(rest, "names no state"):
		d.Code = CodeMissingTarget
	case strings.Contains(rest, "levels deep"):
		d.Code = CodeTooDeeplyNested
	case strings.HasPrefix(rest, "Resource "):
		d.Code = CodeInvalidResource
	case strings.Contains(rest, "state names are limited"):
		d.Code = CodeInvalidStateName
	}
	return d
}

// fields are the definition fields a problem may start with.
var fields = func() map[string]bool {
	m := set("StartAt", "States", "TimeoutSeconds", "QueryLanguage", "Comment", "Version", "ProcessorConfig", "Type",
		"Arguments", "Output", "Items", "Condition", "Label")
	for _, fs := range stateFields {
		for f := range fs {
			m[f] = true
		}
	}
	return m
}()

// locate reads the location a problem starts with and returns it and the
// rest of the problem.
func locate(problem string) (loc, rest string) {
	s := problem
	for {
		q, ok := strings.CutPrefix(s, "state ")
		if !ok {
			break
		}
		quoted, err := strconv.QuotedPrefix(q)
		if err != nil {
			break
		}
		name, _ := strconv.Unquote(quoted)
		loc += "/States/" + name
		s = q[len(quoted):]
		if after, ok := strings.CutPrefix(s, " branch "); ok {
			num, tail, _ := strings.Cut(after, ": ")
			if n, err := strconv.Atoi(num); err == nil {
				loc += "/Branches/" + strconv.Itoa(n-1)
			}
			s = tail
			continue
		}
		if after, ok := strings.CutPrefix(s, " item processor: "); ok {
			loc += "/ItemProcessor"
			s = after
			continue
		}
		s = strings.TrimPrefix(strings.TrimPrefix(s, ":"), " ")
		break
	}
	if after, ok := strings.CutPrefix(s, "field "); ok {
		if quoted, err := strconv.QuotedPrefix(after); err == nil {
			f, _ := strconv.Unquote(quoted)
			return loc + "/" + f, s
		}
	}
	if after, ok := strings.CutPrefix(s, "unknown top-level field "); ok {
		if quoted, err := strconv.QuotedPrefix(after); err == nil {
			f, _ := strconv.Unquote(quoted)
			return loc + "/" + f, s
		}
	}
	if after, ok := strings.CutPrefix(s, "choice rule "); ok {
		num, _, _ := strings.Cut(after, " ")
		num, _, _ = strings.Cut(num, ":")
		if n, err := strconv.Atoi(num); err == nil {
			return loc + "/Choices/" + strconv.Itoa(n-1), s
		}
	}
	word := s
	if i := strings.IndexAny(s, " :"); i >= 0 {
		word = s[:i]
	}
	if fields[word] {
		loc += "/" + word
	}
	return loc, s
}
