package asl

// TestState's hooks into a run (StartOptions.Test): what Step Functions'
// TestState API reports of the one state it tests at its DEBUG level, and
// the mocked outcome it may replace that state's work with. Only the
// execution's own states (the root scope) report and are mocked: the
// states inside a tested Map's or Parallel's processors never run when a
// mock stands for them.

// TestHooks are a TestState run's hooks.
type TestHooks struct {
	// Inspect receives each value between the processing steps of a state,
	// named as TestState's inspectionData names them: "afterInputPath",
	// "afterParameters", "afterArguments", "result",
	// "afterResultSelector", "afterResultPath", "afterItemsPath",
	// "afterItemSelector", "afterItemBatcher", "maxConcurrency",
	// "toleratedFailureCount", "toleratedFailurePercentage". Values are
	// plain JSON values, never to be changed.
	Inspect func(step string, v any)
	// Mock, when set, stands for the work of a Task (its handler), a Map
	// (its iterations) or a Parallel (its branches): the result it
	// returns, or its error.
	Mock *TestMock
	// ItemReaderData, when set, is what a Distributed Map's ItemReader
	// reads, as its source holds it (TestState's mapItemReaderData): the
	// object's text, or a listing's items as a JSON array.
	ItemReaderData []byte
}

// TestMock is a mocked outcome.
type TestMock struct {
	Result any          // the state's result (when Err is nil)
	Err    *StatesError // the state's failure
	// MapIterationFailureCount, for a Map, is how many of its iterations
	// failed: beyond its tolerance the Map fails with
	// States.ExceedToleratedFailureThreshold.
	MapIterationFailureCount int
}

// inspect reports a step of a root-scope state to TestState.
func (r *stateRun) inspect(step string, v any) {
	if t := r.x.test; t != nil && t.Inspect != nil && r.fr == rootFrame {
		t.Inspect(step, deepResolve(v))
	}
}

// mocked returns the mocked outcome of a root-scope state's work, if any.
func (r *stateRun) mocked() (*TestMock, bool) {
	if t := r.x.test; t != nil && t.Mock != nil && r.fr == rootFrame {
		return t.Mock, true
	}
	return nil, false
}

// mockedFanout ends a Map or Parallel state with its mock: the mocked
// error, States.ExceedToleratedFailureThreshold when more mocked Map
// iterations failed than tolerated, else the mocked result.
func (r *stateRun) mockedFanout(input any, m *TestMock, tolerance MapRunSettings, isMap bool) (any, error) {
	st := r.st
	failed := "ParallelStateFailed"
	if isMap {
		failed = "MapStateFailed"
	}
	fail := func(se *StatesError) error {
		r.x.emit(Event{Type: failed, State: st.Name, Scope: r.fr.scope(), Error: se.Name, Cause: se.Cause})
		return se
	}
	if m.Err != nil {
		return nil, fail(m.Err)
	}
	if isMap && m.MapIterationFailureCount > 0 {
		total := int64(0)
		if a, ok := m.Result.([]any); ok {
			total = int64(len(a))
		}
		if exceeded(tolerance, int64(m.MapIterationFailureCount), total, true) {
			return nil, fail(newError(ErrExceedToleratedFailure, "%s", causeExceeded))
		}
	}
	r.inspect("result", m.Result)
	return r.finish(input, m.Result)
}

// mockedTask ends a Task with its mock, as its handler's outcome would.
func (r *stateRun) mockedTask(input any, m *TestMock) (any, error) {
	st := r.st
	if m.Err != nil {
		r.x.emit(Event{Type: "TaskFailed", State: st.Name, Scope: r.fr.scope(), Resource: st.Resource, Error: m.Err.Name, Cause: m.Err.Cause})
		return nil, m.Err
	}
	r.x.emitState(evTaskSucceeded, st, r.fr, m.Result)
	r.inspect("result", m.Result)
	return r.finish(input, m.Result)
}

// testedMapRun reports a Distributed Map's settings to TestState and, when
// its work is mocked, ends it with the mock (no map run opens).
func (r *stateRun) testedMapRun(input any, s MapRunSettings) (any, bool, error) {
	r.inspect("maxConcurrency", int64(s.MaxConcurrency))
	if s.ToleratedFailureCount >= 0 {
		r.inspect("toleratedFailureCount", s.ToleratedFailureCount)
	}
	if s.ToleratedFailurePercentage >= 0 {
		r.inspect("toleratedFailurePercentage", s.ToleratedFailurePercentage)
	}
	m, ok := r.mocked()
	if !ok {
		return nil, false, nil
	}
	out, err := r.mockedFanout(input, m, s, true)
	return out, true, err
}
