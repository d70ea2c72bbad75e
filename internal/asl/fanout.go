package asl

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// inlineMapConcurrency is how many iterations an inline Map with
// MaxConcurrency 0 runs at once (Step Functions' inline-mode ceiling).
const inlineMapConcurrency = 40

func (r *stateRun) parallel(ctx context.Context, input any) (any, error) {
	st := r.st
	eff, err := r.effectiveInput(input)
	if err != nil {
		return nil, err
	}
	r.x.emit(Event{Type: "ParallelStateStarted", State: st.Name, Scope: r.fr.scope(), Length: intPtr(len(st.Branches))})
	if m, ok := r.mocked(); ok {
		return r.mockedFanout(input, m, MapRunSettings{ToleratedFailureCount: -1, ToleratedFailurePercentage: -1}, false)
	}
	results := make([]any, len(st.Branches))
	g, bctx := errgroup.WithContext(ctx)
	for i, b := range st.Branches {
		g.Go(func() error {
			vs, release := r.vars.inner(b)
			defer release()
			out, err := r.x.runMachine(bctx, b, eff, r.fr.child(st.Name, i, true), vs)
			if err != nil {
				return err
			}
			results[i] = out
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		se := toStatesError(err)
		r.x.emit(Event{Type: "ParallelStateFailed", State: st.Name, Scope: r.fr.scope(), Error: se.Name, Cause: se.Cause})
		return nil, se
	}
	r.x.emit(Event{Type: "ParallelStateSucceeded", State: st.Name, Scope: r.fr.scope()})
	return r.finish(input, results)
}

func (r *stateRun) mapState(ctx context.Context, input any) (any, error) {
	st := r.st
	if st.dist != nil {
		return r.distributedMap(ctx, input)
	}
	var (
		eff   any
		items []any
		limit = int(st.MaxConcurrency)
		err   error
	)
	if st.jsonata {
		eff = input
		items, limit, err = r.jsonataMapItems(ctx, input)
	} else {
		eff, items, limit, err = r.jsonPathMapItems(input)
	}
	if err != nil {
		return nil, r.mapFailedEarly(err)
	}
	if r.x.test != nil {
		r.inspect("maxConcurrency", int64(limit))
	}
	if limit <= 0 || limit > inlineMapConcurrency {
		limit = min(inlineMapConcurrency, max(limit, 0))
		if limit == 0 {
			limit = inlineMapConcurrency
		}
	}
	limit = min(limit, max(len(items), 1))
	if st.Processor.pure {
		// Items that only compute take microseconds each: run at once, they
		// would add nothing but goroutines contending for the history. One
		// after the other, in index order, is one of the interleavings a
		// concurrent run allows.
		limit = 1
	}

	// Item inputs are computed up front so a selector error fails the state
	// before any iteration runs, and bounded (or else measured) once, so
	// that the item's states carry a bound on their payloads (size.go): an
	// item is no larger than the array it is in, which is no larger than
	// the effective input.
	effBound, itemBound := sizeUnknown, sizeUnknown
	if !st.jsonata {
		effBound = selectBound(st.InputPath, r.inSize)
		itemBound = effBound
		if st.ItemsPath != nil {
			itemBound = selectBound(optPath{p: st.ItemsPath}, effBound)
		}
	}
	// vals holds each item's input, then, once the item is done, its
	// output: the Map's result.
	vals := make([]any, len(items))
	sizes := make([]int, len(items))
	r.stateCtx = r.stateContext() // $$.State is the same for every item
	defer func() { r.stateCtx = nil }()
	ir := *r // the selector's view of each item in turn
	var item mapItem
	ir.mapItem = &item
	for i, it := range items {
		item = mapItem{index: i, value: it}
		v, bound := it, itemBound
		switch {
		case st.jsonata && st.ja.ItemSelector != nil:
			sel, err := st.ja.ItemSelector.eval(ir.jsonataEnv(ctx, input, nil), "ItemSelector")
			if err != nil {
				return nil, r.mapFailedEarly(err)
			}
			v, bound = sel, sizeUnknown
		case !st.jsonata && st.ItemSelector != nil:
			sel, err := st.ItemSelector.eval(ir.scope(eff))
			if err != nil {
				return nil, err
			}
			v, bound = sel, st.ItemSelector.bound(effBound, itemBound)
		}
		if !within(bound) {
			bound = jsonSize(v)
		}
		vals[i], sizes[i] = v, bound
	}

	r.x.emit(Event{Type: "MapStateStarted", State: st.Name, Scope: r.fr.scope(), Length: intPtr(len(items))})
	if r.x.test != nil {
		if st.ItemSelector != nil || (st.ja != nil && st.ja.ItemSelector != nil) {
			r.inspect("afterItemSelector", vals)
		}
		if m, ok := r.mocked(); ok {
			return r.mockedFanout(input, m, MapRunSettings{ToleratedFailureCount: -1, ToleratedFailurePercentage: -1}, true)
		}
	}
	frames := make([]frame, len(items)) // one allocation for every item's frame
	for i := range frames {
		frames[i] = frame{parent: r.fr, state: st.Name, index: i}
	}
	// Items run one after another share one stateRun (see runMachineWith).
	var seq *stateRun
	if limit == 1 {
		seq = new(stateRun)
	}
	iterate := func(mctx context.Context, i int) error {
		fr := &frames[i]
		r.x.emitState(evMapIterationStarted, st, fr, nil) // the iteration's frame: its index and, by its parent, its scope
		vs, release := r.vars.inner(st.Processor)
		defer release()
		run := seq
		if run == nil {
			run = new(stateRun)
		} else {
			*run = stateRun{} // no reading of the previous item's clock
		}
		out, err := r.x.runMachineWith(mctx, run, st.Processor, vals[i], sizes[i], fr, vs)
		switch {
		case err == nil:
		case r.x.aborted(err): // another iteration failed
			r.x.emit(Event{Type: "MapIterationAborted", State: st.Name, Scope: r.fr.scope(), Index: intPtr(i)})
			return err
		case errors.Is(err, context.Canceled): // the execution was stopped: ExecutionAborted says it
			return err
		default:
			se := toStatesError(err)
			r.x.emit(Event{Type: "MapIterationFailed", State: st.Name, Scope: r.fr.scope(), Index: intPtr(i), Error: se.Name, Cause: se.Cause})
			return err
		}
		vals[i] = out
		r.x.emitState(evMapIterationSucceeded, st, fr, nil) // the iteration's frame: its index and, by its parent, its scope
		return nil
	}
	if err := runIterations(ctx, len(items), limit, iterate); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		se := toStatesError(err)
		r.x.emit(Event{Type: "MapStateFailed", State: st.Name, Scope: r.fr.scope(), Error: se.Name, Cause: se.Cause})
		return nil, se
	}
	r.x.emit(Event{Type: "MapStateSucceeded", State: st.Name, Scope: r.fr.scope()})
	return r.finish(input, vals)
}

// mapFailedEarly is a Map state failing before its iterations start. A
// JSONata evaluation failure is recorded as Step Functions does: the
// EvaluationFailed event, then MapStateFailed.
func (r *stateRun) mapFailedEarly(err error) error {
	var se *StatesError
	if !errors.As(err, &se) || se.Name != ErrQueryEvaluationError {
		return err
	}
	located := r.locate(err)
	r.x.emit(Event{Type: "MapStateFailed", State: r.st.Name, Scope: r.fr.scope()})
	return located
}

// runIterations runs iterate for the indexes 0…n-1, at most limit at once
// and in index order of start, on limit workers (the caller's goroutine
// being one of them) rather than a goroutine per item. The first error
// cancels the context the others run with; no iteration starts after it,
// and it is returned once every running one has ended.
func runIterations(ctx context.Context, n, limit int, iterate func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		once     sync.Once
		firstErr error
		wg       sync.WaitGroup
	)
	work := func() {
		for ctx.Err() == nil {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			if err := iterate(ctx, i); err != nil {
				once.Do(func() {
					firstErr = err
					cancel()
				})
				return
			}
		}
	}
	for range min(limit, n) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	return firstErr
}

// jsonPathMapItems applies InputPath, ItemsPath and MaxConcurrencyPath.
func (r *stateRun) jsonPathMapItems(input any) (eff any, items []any, limit int, err error) {
	st := r.st
	eff, err = r.applyInputPath(input)
	if err != nil {
		return nil, nil, 0, err
	}
	if items, err = r.jsonPathItems(eff); err != nil {
		return nil, nil, 0, err
	}
	limit = int(st.MaxConcurrency)
	if st.MaxConcurrencyPath != nil {
		if limit, err = r.maxConcurrencyPath(eff); err != nil {
			return nil, nil, 0, err
		}
	}
	return eff, items, limit, nil
}

// jsonataMapItems evaluates Items (the state input by default) and
// MaxConcurrency.
func (r *stateRun) jsonataMapItems(ctx context.Context, input any) ([]any, int, error) {
	st := r.st
	limit := int(st.MaxConcurrency)
	raw := input
	env := r.jsonataEnv(ctx, input, nil)
	if st.ja.Items != nil {
		v, err := st.ja.Items.eval(env, "Items")
		if err != nil {
			return nil, 0, err
		}
		raw = v
	}
	items, ok := raw.([]any)
	if !ok {
		if st.ja.Items != nil && st.ja.Items.kind == tmplPath {
			return nil, 0, queryError("Items", "The JSONata expression '%s' specified for the field 'Items' returned an unexpected result type. Expected 'array', but was '%s' for value: %s", st.ja.Items.src, typeName(raw), describe(raw, true))
		}
		return nil, 0, notAnArray(raw)
	}
	if st.ja.MaxConcurrency != nil {
		n, err := r.jsonataInt(env, st.ja.MaxConcurrency, "MaxConcurrency", 0)
		if err != nil {
			return nil, 0, err
		}
		limit = int(n)
	}
	return items, limit, nil
}
