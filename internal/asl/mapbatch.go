package asl

import (
	"context"
	"encoding/json"
)

// mapRunState is one attempt of a Distributed Map: its open run, its
// configuration and what its children did.
type mapRunState struct {
	r          *stateRun
	run        MapRun
	cfg        mapRunConfig
	eff, input any
	items      []any // the items, when they come from the state input

	counts  MapRunCounts
	results []childRecord // by child index
	pending []json.RawMessage
}

// childRecord is what is kept of one child: its end, and how many items
// it held.
type childRecord struct {
	res   ChildResult
	items int64
}

// batch is one child's input, or the reader's failure.
type batch struct {
	index int
	input json.RawMessage
	items int64
	err   error
}

// childDone is a child's end.
type childDone struct {
	index int
	res   ChildResult
}

// batchesAhead bounds how many children's inputs are read ahead of the
// children that run them.
const batchesAhead = 4

// execute runs the children and returns the Map's result (before
// ResultSelector, ResultPath, OutputPath), the counts, and the run's
// failure: a *StatesError (States.ItemReaderFailed,
// States.ExceedToleratedFailureThreshold, States.ResultWriterFailed…), or
// the context's error when the execution was stopped.
func (m *mapRunState) execute(ctx context.Context) (any, MapRunCounts, error) {
	readCtx, stopReading := context.WithCancel(ctx)
	childCtx, abortChildren := context.WithCancel(ctx)
	defer stopReading()
	defer abortChildren()
	batches := make(chan batch, batchesAhead)
	go m.produce(readCtx, batches)
	done := make(chan childDone)
	settings, changed := m.run.Settings()
	var (
		running    int
		readerDone bool
		failure    *StatesError
		stopped    bool
		ctxDone    = ctx.Done()
	)
	stop := func(se *StatesError) {
		if failure == nil && !stopped {
			failure = se
		}
		stopReading()
		abortChildren()
	}
	for !((readerDone || failure != nil || stopped) && running == 0) {
		var in <-chan batch
		if failure == nil && !stopped && !readerDone && running < concurrency(settings) {
			in = batches
		}
		select {
		case b, ok := <-in:
			switch {
			case !ok:
				readerDone = true
				if exceeded(settings, m.failedItems(), m.counts.Items.Total, true) {
					stop(newError(ErrExceedToleratedFailure, "%s", causeExceeded))
				}
			case b.err != nil:
				readerDone = true
				stop(toStatesError(b.err))
			default:
				m.results = append(m.results, childRecord{items: b.items})
				m.counts.Items.Total += b.items
				m.counts.Items.Running += b.items
				m.counts.Executions.Total++
				m.counts.Executions.Running++
				running++
				go func() { done <- childDone{b.index, m.run.Child(childCtx, b.index, b.input)} }()
				m.run.Progress(m.counts)
			}
		case d := <-done:
			running--
			m.ended(d)
			m.run.Progress(m.counts)
			if exceeded(settings, m.failedItems(), m.counts.Items.Total, readerDone) {
				stop(newError(ErrExceedToleratedFailure, "%s", causeExceeded))
			}
		case <-changed:
			settings, changed = m.run.Settings()
			if exceeded(settings, m.failedItems(), m.counts.Items.Total, readerDone) {
				stop(newError(ErrExceedToleratedFailure, "%s", causeExceeded))
			}
		case <-ctxDone:
			ctxDone, stopped = nil, true
			stop(nil)
		}
	}
	stopReading()
	for b := range batches { // read ahead, never started
		if b.err == nil {
			m.counts.Items.Total += b.items
			m.counts.Items.Pending += b.items
			m.pending = append(m.pending, b.input)
		}
	}
	m.run.Progress(m.counts)
	if ctx.Err() != nil {
		return nil, m.counts, ctx.Err()
	}
	out, err := m.outcome(ctx, failure)
	m.run.Progress(m.counts)
	if failure != nil {
		return nil, m.counts, failure
	}
	return out, m.counts, err
}

// concurrency is how many children may run at once.
func concurrency(s MapRunSettings) int {
	if s.MaxConcurrency <= 0 {
		return DefaultMapRunConcurrency
	}
	return min(s.MaxConcurrency, MaxMapRunConcurrency)
}

// exceeded reports whether failed items of total exceed the tolerated
// failures: the count at any time, the percentage once every item is
// known (total final). Without either, one failed item is too many.
func exceeded(s MapRunSettings, failed, total int64, final bool) bool {
	count, pct := s.ToleratedFailureCount >= 0, s.ToleratedFailurePercentage >= 0
	switch {
	case !count && !pct:
		return failed > 0
	case count && failed > s.ToleratedFailureCount:
		return true
	case pct && final && total > 0:
		return float64(failed)*100 > s.ToleratedFailurePercentage*float64(total)
	}
	return false
}

// failedItems counts the items of failed and timed-out children, and of
// children stopped by someone else than the run.
func (m *mapRunState) failedItems() int64 {
	return m.counts.Items.Failed + m.counts.Items.TimedOut + m.counts.Items.Aborted
}

// ended records a child's end in the counts.
func (m *mapRunState) ended(d childDone) {
	rec := &m.results[d.index]
	rec.res = d.res
	if d.res.Status == StatusSucceeded && !m.exporting() {
		rec.res.Input = nil // kept only for the ResultWriter's records
	}
	n := rec.items
	m.counts.Items.Running -= n
	m.counts.Executions.Running--
	switch d.res.Status {
	case StatusSucceeded:
		m.counts.Items.Succeeded += n
		m.counts.Executions.Succeeded++
	case StatusTimedOut:
		m.counts.Items.TimedOut += n
		m.counts.Executions.TimedOut++
	case StatusAborted:
		m.counts.Items.Aborted += n
		m.counts.Executions.Aborted++
	default:
		m.counts.Items.Failed += n
		m.counts.Executions.Failed++
	}
}

// exporting reports whether the Map writes its results to a bucket.
func (m *mapRunState) exporting() bool {
	return m.r.st.dist.writer != nil && m.r.st.dist.writer.export
}

// produce reads the items, selects and batches them, and sends each
// child's input on out, which it closes once done; a read that fails
// sends the failure last.
func (m *mapRunState) produce(ctx context.Context, out chan<- batch) {
	defer close(out)
	send := func(b batch) error {
		select {
		case out <- b:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	bt := batcher{cfg: m.cfg}
	index := 0
	flush := func() error {
		if len(bt.items) == 0 {
			return nil
		}
		in, err := bt.input()
		if err != nil {
			return err
		}
		n := int64(len(bt.items))
		bt.reset()
		index++
		return send(batch{index: index - 1, input: in, items: n})
	}
	sel := m.selector(ctx)
	err := m.eachItem(ctx, func(i int, item any) error {
		v, err := sel(i, item)
		if err != nil {
			return err
		}
		if !m.cfg.batched {
			in, err := marshalJSON(v)
			if err != nil {
				return newError(ErrRuntime, "item %d cannot be encoded as JSON: %v", i, err)
			}
			index++
			return send(batch{index: index - 1, input: in, items: 1})
		}
		if !bt.fits(v) {
			if err := flush(); err != nil {
				return err
			}
		}
		bt.add(v)
		if m.cfg.maxItems > 0 && len(bt.items) >= m.cfg.maxItems {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil && ctx.Err() == nil {
		send(batch{err: err})
	}
}

// eachItem calls fn with each item and its index, from the state input or
// the ItemReader.
func (m *mapRunState) eachItem(ctx context.Context, fn func(int, any) error) error {
	if rd := m.r.st.dist.reader; rd != nil {
		i := 0
		yield := func(v any) error {
			i++
			return fn(i-1, v)
		}
		if t := m.r.x.test; t != nil && t.ItemReaderData != nil && m.r.fr == rootFrame {
			return rd.readData(t.ItemReaderData, m.cfg.reader.maxItems, yield)
		}
		return rd.readItems(ctx, m.r.x.buckets, m.cfg.reader, yield)
	}
	for i, v := range m.items {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(i, v); err != nil {
			return err
		}
	}
	return nil
}

// selector returns what makes an item a child's input (or a batch's
// member): its ItemSelector, which sees the item as $$.Map.Item.
func (m *mapRunState) selector(ctx context.Context) func(int, any) (any, error) {
	st := m.r.st
	ir := *m.r // the selector's view of each item in turn
	var it mapItem
	ir.mapItem = &it
	ir.stateCtx = m.r.stateContext()
	return func(i int, v any) (any, error) {
		it = mapItem{index: i, value: v}
		switch {
		case st.jsonata && st.ja.ItemSelector != nil:
			return st.ja.ItemSelector.eval(ir.jsonataEnv(ctx, m.input, nil), "ItemSelector")
		case !st.jsonata && st.ItemSelector != nil:
			return st.ItemSelector.eval(ir.scope(m.eff))
		}
		return v, nil
	}
}

// batcher gathers items into one child's input: {"BatchInput": …,
// "Items": […]}, within MaxItemsPerBatch and MaxInputBytesPerBatch.
type batcher struct {
	cfg   mapRunConfig
	items []any
	size  int // the input's JSON size with items
}

func (b *batcher) reset() { b.items, b.size = nil, 0 }

// base is the size of an input without items.
func (b *batcher) base() int {
	n := len(`{"Items":[]}`)
	if b.cfg.batchInput != nil {
		n += len(`"BatchInput":,`) + jsonSize(b.cfg.batchInput)
	}
	return n
}

// fits reports whether v may join the batch: a batch always takes its
// first item.
func (b *batcher) fits(v any) bool {
	if len(b.items) == 0 {
		return true
	}
	return b.size+1+jsonSize(v) <= b.cfg.maxBytes
}

func (b *batcher) add(v any) {
	if len(b.items) == 0 {
		b.size = b.base() + jsonSize(v)
	} else {
		b.size += 1 + jsonSize(v)
	}
	b.items = append(b.items, v)
}

func (b *batcher) input() (json.RawMessage, error) {
	in := map[string]any{"Items": b.items}
	if b.cfg.batchInput != nil {
		in["BatchInput"] = b.cfg.batchInput
	}
	out, err := marshalJSON(in)
	if err != nil {
		return nil, newError(ErrRuntime, "a batch cannot be encoded as JSON: %v", err)
	}
	return out, nil
}

// outcome writes the results (with a ResultWriter that exports them) and
// builds the Map's result: the children's results in item order, or,
// exported, where they are.
func (m *mapRunState) outcome(ctx context.Context, failure *StatesError) (any, error) {
	w := m.r.st.dist.writer
	if w != nil && w.export {
		key, err := m.writeResults(ctx, w)
		if err != nil {
			if failure == nil {
				return nil, err
			}
			return nil, nil // the run's own failure is reported
		}
		return map[string]any{"MapRunArn": m.run.ARN(), "ResultWriterDetails": map[string]any{"Bucket": m.cfg.writer.bucket, "Key": key}}, nil
	}
	if failure != nil {
		return nil, nil
	}
	transformation := "COMPACT"
	if w != nil {
		transformation = w.transformation
	}
	out := make([]any, 0, len(m.results))
	for _, rec := range m.results {
		vs, err := resultValues(rec.res, transformation)
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

// resultValues is what a child adds to the Map's result: its output
// (COMPACT), its output's elements (FLATTEN, an array output) or its whole
// record (NONE, and any child that did not succeed).
func resultValues(res ChildResult, transformation string) ([]any, error) {
	if res.Status != StatusSucceeded || transformation == "NONE" {
		return []any{res.record()}, nil
	}
	v, err := parseJSON(res.Output)
	if err != nil {
		return nil, newError(ErrRuntime, "the output of %s is not JSON: %v", res.ExecutionARN, err)
	}
	if a, ok := v.([]any); ok && transformation == "FLATTEN" {
		return a, nil
	}
	return []any{v}, nil
}
