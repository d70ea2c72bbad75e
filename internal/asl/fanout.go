package asl

import (
	"context"
	"fmt"

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
	r.x.emit(Event{Type: "ParallelStateStarted", State: st.Name, Scope: r.fr.scope, Length: intPtr(len(st.Branches))})
	results := make([]any, len(st.Branches))
	g, bctx := errgroup.WithContext(ctx)
	for i, b := range st.Branches {
		g.Go(func() error {
			out, err := r.x.runMachine(bctx, b, eff, r.fr.child(fmt.Sprintf("%s/branch[%d]", st.Name, i)))
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
		r.x.emit(Event{Type: "ParallelStateFailed", State: st.Name, Scope: r.fr.scope, Error: se.Name, Cause: se.Cause})
		return nil, se
	}
	r.x.emit(Event{Type: "ParallelStateSucceeded", State: st.Name, Scope: r.fr.scope})
	return r.finish(input, results)
}

func (r *stateRun) mapState(ctx context.Context, input any) (any, error) {
	st := r.st
	eff, err := r.applyInputPath(input)
	if err != nil {
		return nil, err
	}
	itemsPath := st.ItemsPath
	if itemsPath == nil {
		itemsPath = rootPath
	}
	raw, ok := r.scope(eff).lookup(itemsPath)
	items, isArr := raw.([]any)
	if !ok || !isArr {
		return nil, newError(ErrRuntime, "state %q: ItemsPath %q must select an array, got %s", st.Name, itemsPath.raw, describe(raw, ok))
	}
	limit := int(st.MaxConcurrency)
	if st.MaxConcurrencyPath != nil {
		v, found := r.scope(eff).lookup(st.MaxConcurrencyPath)
		n, isInt := asInt(v)
		if !found || !isInt || n < 0 {
			return nil, newError(ErrRuntime, "state %q: MaxConcurrencyPath %q must select a non-negative integer, got %s", st.Name, st.MaxConcurrencyPath.raw, describe(v, found))
		}
		limit = int(n)
	}
	if limit <= 0 || limit > inlineMapConcurrency {
		limit = min(inlineMapConcurrency, max(limit, 0))
		if limit == 0 {
			limit = inlineMapConcurrency
		}
	}
	limit = min(limit, max(len(items), 1))

	// Item inputs are computed up front so a selector error fails the state
	// before any iteration runs.
	inputs := make([]any, len(items))
	for i, it := range items {
		if st.ItemSelector == nil {
			inputs[i] = it
			continue
		}
		ir := *r
		ir.mapItem = &mapItem{index: i, value: it}
		v, err := st.ItemSelector.eval(ir.scope(eff))
		if err != nil {
			return nil, err
		}
		inputs[i] = v
	}

	r.x.emit(Event{Type: "MapStateStarted", State: st.Name, Scope: r.fr.scope, Length: intPtr(len(items))})
	results := make([]any, len(items))
	g, mctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	for i := range items {
		if mctx.Err() != nil {
			break // an iteration failed: start no more
		}
		g.Go(func() error {
			fr := r.fr.child(fmt.Sprintf("%s/item[%d]", st.Name, i))
			r.x.emit(Event{Type: "MapIterationStarted", State: st.Name, Scope: r.fr.scope, Index: intPtr(i)})
			out, err := r.x.runMachine(mctx, st.Processor, inputs[i], fr)
			if err != nil {
				se := toStatesError(err)
				r.x.emit(Event{Type: "MapIterationFailed", State: st.Name, Scope: r.fr.scope, Index: intPtr(i), Error: se.Name, Cause: se.Cause})
				return err
			}
			results[i] = out
			r.x.emit(Event{Type: "MapIterationSucceeded", State: st.Name, Scope: r.fr.scope, Index: intPtr(i)})
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		se := toStatesError(err)
		r.x.emit(Event{Type: "MapStateFailed", State: st.Name, Scope: r.fr.scope, Error: se.Name, Cause: se.Cause})
		return nil, se
	}
	r.x.emit(Event{Type: "MapStateSucceeded", State: st.Name, Scope: r.fr.scope})
	return r.finish(input, results)
}
