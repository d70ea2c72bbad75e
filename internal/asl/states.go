package asl

import (
	"context"
	"time"
)

func (r *stateRun) pass(input any) (any, error) {
	eff, err := r.effectiveInput(input)
	if err != nil {
		return nil, err
	}
	result := eff
	switch {
	case r.st.hasResult:
		result = r.st.Result
		r.resultSize = jsonSize(result)
		r.inspect("result", result)
	case r.st.Parameters != nil:
		// bounded, not measured: checkOutput measures the output when the
		// bound does not prove it fits
		r.resultSize = r.st.Parameters.bound(selectBound(r.st.InputPath, r.inSize), sizeUnknown)
	default:
		r.resultSize = selectBound(r.st.InputPath, r.inSize)
	}
	return r.finish(input, result)
}

func (r *stateRun) succeed(input any) (any, error) {
	v, err := r.applyInputPath(input)
	if err != nil {
		return nil, err
	}
	return r.applyOutputPath(v)
}

func (r *stateRun) choice(input any) (any, string, error) {
	v, err := r.applyInputPath(input)
	if err != nil {
		return nil, "", err
	}
	sc := r.scope(v)
	next := ""
	assign := r.st.Assign // the state's Assign goes with the Default
	for _, rule := range r.st.Choices {
		ok, err := rule.match(sc)
		if err != nil {
			return nil, "", err
		}
		if ok {
			next, assign = rule.Next, rule.assign
			break
		}
	}
	if next == "" {
		next = r.st.Default
	}
	if next == "" {
		return nil, "", newError(ErrNoChoiceMatched, "no Choice rule of state %q matched the input and it has no Default", r.st.Name)
	}
	commit, err := r.jsonPathAssign(assign, v)
	if err != nil {
		return nil, "", err
	}
	out, err := r.applyOutputPath(v)
	if err != nil {
		return nil, "", err
	}
	if err := commit(); err != nil {
		return nil, "", err
	}
	r.outSize = selectBound(r.st.OutputPath, selectBound(r.st.InputPath, r.inSize))
	return out, next, nil
}

func (r *stateRun) wait(ctx context.Context, input any) (any, error) {
	v, err := r.applyInputPath(input)
	if err != nil {
		return nil, err
	}
	st := r.st
	var until time.Time
	now := r.x.engine.now()
	began := now
	if d := r.x.durable; d != nil && d.WaitStart != nil {
		if t, ok := d.WaitStart(Call{Scope: r.fr.scope(), State: st.Name}); ok {
			began = t // a resumed Wait sleeps only for what was left
		}
	}
	switch {
	case st.jsonata && (st.ja.Seconds != nil || st.ja.Timestamp != nil):
		until, err = r.jsonataWaitUntil(ctx, input, began)
		if err != nil {
			return nil, err
		}
	case st.hasSeconds:
		until = began.Add(time.Duration(st.Seconds) * time.Second)
	case st.hasTimestamp:
		until = st.Timestamp
	case st.SecondsPath != nil:
		raw, ok := r.scope(v).lookup(st.SecondsPath)
		n, isInt := asInt(raw)
		switch {
		case !ok:
			return nil, newError(ErrRuntime, "The SecondsPath parameter does not reference an input value: %s", st.SecondsPath.raw)
		case !isInt:
			return nil, newError(ErrRuntime, "The SecondsPath parameter cannot be parsed as a long value: %s == %s", st.SecondsPath.raw, plainText(raw))
		case n < 0:
			return nil, newError(ErrRuntime, "The SecondsPath parameter references a negative value: %s == %d", st.SecondsPath.raw, n)
		}
		until = began.Add(time.Duration(n) * time.Second)
	case st.TimestampPath != nil:
		raw, ok := r.scope(v).lookup(st.TimestampPath)
		s, isStr := raw.(string)
		ts, perr := time.Parse(time.RFC3339Nano, s)
		if !ok || !isStr || perr != nil {
			return nil, newError(ErrRuntime, "state %q: TimestampPath %q must select an RFC3339 timestamp, got %s", st.Name, st.TimestampPath.raw, describe(raw, ok))
		}
		until = ts
	}
	if d := until.Sub(now); r.x.maxWait > 0 && d > r.x.maxWait {
		return nil, newError(ErrTimeout, "state %q would wait %s, longer than the %s allowed", st.Name, d.Round(time.Second), r.x.maxWait)
	}
	if st.jsonata {
		if d := until.Sub(now); d > 0 {
			if err := r.sleepOrPark(ctx, d, until); err != nil {
				return nil, err
			}
		}
		return r.jsonataOutput(r.jsonataEnv(ctx, input, nil), st.ja.Output, st.Assign, input)
	}
	commit, err := r.jsonPathAssign(st.Assign, v)
	if err != nil {
		return nil, err
	}
	if d := until.Sub(now); d > 0 {
		if err := r.sleepOrPark(ctx, d, until); err != nil {
			return nil, err
		}
	}
	out, err := r.applyOutputPath(v)
	if err != nil {
		return nil, err
	}
	return out, commit()
}

// plainText prints a value for a cause: a string as itself, anything else
// as JSON.
func plainText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := marshalJSON(v)
	if err != nil {
		return typeName(v)
	}
	return string(b)
}

func describe(v any, found bool) string {
	if !found {
		return "nothing"
	}
	b, err := marshalJSON(v)
	if err != nil || len(b) > 80 {
		return typeName(v)
	}
	return string(b)
}

func (r *stateRun) fail(input any) error {
	st := r.st
	name, cause := st.Error, st.Cause
	sc := r.scope(input)
	if st.ErrorPath != nil {
		v, err := st.ErrorPath.eval(sc)
		if err != nil {
			return err
		}
		s, ok := v.(string)
		if !ok {
			return newError(ErrRuntime, "state %q: ErrorPath must produce a string, got %s", st.Name, typeName(v))
		}
		name = s
	}
	if st.CausePath != nil {
		v, err := st.CausePath.eval(sc)
		if err != nil {
			return err
		}
		s, ok := v.(string)
		if !ok {
			return newError(ErrRuntime, "state %q: CausePath must produce a string, got %s", st.Name, typeName(v))
		}
		cause = s
	}
	return &StatesError{Name: name, Cause: cause}
}
