package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
)

// Map runs, as Step Functions has them: a Distributed Map state opens a
// map run (its ARN arn:…:mapRun:<machine>/<label>:<id>) and runs each item
// batch as a child execution of its own (arn:…:execution:<machine>/<label>:
// <uuid>), recorded and resumed like any execution but listed only under
// its map run (ListExecutions with mapRunArn), never under a state
// machine. A map run's record (maprun.json) holds its settings, which
// UpdateMapRun changes while it runs, its counts (DescribeMapRun) and its
// end; its children live beside it:
//
//	mapruns/<id>/maprun.json
//	mapruns/<id>/executions/<child name>/meta.json, history.jsonl
//
// A map run's id is derived from its parent execution, the Map state and
// the attempt, so a parent resumed after a restart, or redriven, opens the
// same run again: a child that had succeeded is not run again, one still
// running is waited for, and, in a redriven run, one that failed is
// redriven (its redriveStatus is REDRIVABLE_BY_MAP_RUN: it is redriven
// with its parent, never on its own). EXPRESS children run in-process and
// are not recorded, as Step Functions keeps no history of them.

// RedrivableByMapRun is a failed child's redrive status.
const RedrivableByMapRun = "REDRIVABLE_BY_MAP_RUN"

// MapRun describes a map run (DescribeMapRun, ListMapRuns).
type MapRun struct {
	ARN, ExecutionARN, StateMachineARN, Tenant string
	Status                                     string
	Start, Stop                                time.Time
	MaxConcurrency                             int
	ToleratedFailureCount                      int64
	ToleratedFailurePercentage                 float64
	Counts                                     asl.MapRunCounts
	RedriveCount                               int
	RedriveDate                                time.Time
}

// mapRunMeta is maprun.json.
type mapRunMeta struct {
	ARN              string  `json:"mapRunArn"`
	ID               string  `json:"id"`
	ExecutionARN     string  `json:"executionArn"`
	ParentMachineARN string  `json:"parentStateMachineArn"`
	StateMachineARN  string  `json:"stateMachineArn"` // the children's, <machine>/<label>
	Label            string  `json:"label"`
	State            string  `json:"state"`
	Tenant           string  `json:"tenant"`
	ExecutionType    string  `json:"executionType"`
	Definition       string  `json:"definition"`
	Status           string  `json:"status"`
	Error            string  `json:"error,omitempty"`
	Cause            string  `json:"cause,omitempty"`
	MaxConcurrency   int     `json:"maxConcurrency"`
	ToleratedCount   int64   `json:"toleratedFailureCount"`      // -1: not set
	ToleratedPercent float64 `json:"toleratedFailurePercentage"` // -1: not set

	Counts       asl.MapRunCounts `json:"counts"`
	Start        time.Time        `json:"startDate"`
	Stop         time.Time        `json:"stopDate,omitzero"`
	RedriveCount int              `json:"redriveCount,omitempty"`
	RedriveDate  time.Time        `json:"redriveDate,omitzero"`
}

// mapRun is one map run in memory.
type mapRun struct {
	dir string

	mu       sync.Mutex
	meta     mapRunMeta
	sm       *asl.StateMachine // the children's machine (parsed when first needed)
	changed  chan struct{}     // closed when the settings change
	children map[int]*execution
}

func (m *Manager) mapRunsDir() string { return filepath.Join(m.cfg.Dir, "mapruns") }

// mapRunner opens the map runs of the execution parent.
type mapRunner struct {
	m      *Manager
	parent *execution
}

var _ asl.MapRunner = mapRunner{}

func (r mapRunner) OpenMapRun(ctx context.Context, spec asl.MapRunSpec) (asl.MapRun, error) {
	return r.m.openMapRun(ctx, r.parent, spec)
}

// bucketsFor are the local buckets as tenant reaches them (nil without a
// data folder).
func (m *Manager) bucketsFor(tenant string) asl.Buckets {
	if m.cfg.Data == "" {
		return nil
	}
	return LocalBuckets{Data: m.cfg.Data, Tenant: tenant}
}

// openMapRun opens spec's run for parent: a new one, or the one a resumed
// or redriven parent opened before (a closed one is redriven).
func (m *Manager) openMapRun(ctx context.Context, parent *execution, spec asl.MapRunSpec) (asl.MapRun, error) {
	arn := asl.MapRunARN(spec.StateMachineARN, spec.Label, spec.ID)
	now := m.now().UTC()
	m.mu.Lock()
	run, ok := m.runs[arn]
	if !ok {
		_, childMachine := asl.ChildARNs(spec.StateMachineARN, spec.Label, "x")
		run = &mapRun{dir: filepath.Join(m.mapRunsDir(), spec.ID), children: map[int]*execution{}, changed: make(chan struct{}),
			meta: mapRunMeta{ARN: arn, ID: spec.ID, ExecutionARN: parent.arn, ParentMachineARN: spec.StateMachineARN, StateMachineARN: childMachine,
				Label: spec.Label, State: spec.State, Tenant: parent.tenant, ExecutionType: spec.ExecutionType, Definition: string(spec.Definition),
				Status: asl.MapRunRunning, MaxConcurrency: spec.Settings.MaxConcurrency, ToleratedCount: spec.Settings.ToleratedFailureCount,
				ToleratedPercent: spec.Settings.ToleratedFailurePercentage, Start: now}}
		m.runs[arn] = run
		m.runsByExec[parent.arn] = append(m.runsByExec[parent.arn], run)
	}
	m.mu.Unlock()
	run.mu.Lock()
	run.sm = spec.Processor
	if ok && run.meta.Status != asl.MapRunRunning { // redriven with its parent
		run.meta.Status, run.meta.Stop, run.meta.Error, run.meta.Cause = asl.MapRunRunning, time.Time{}, "", ""
		run.meta.RedriveCount++
		run.meta.RedriveDate = now
	}
	meta := run.meta
	run.mu.Unlock()
	if err := m.put(filepath.Join(run.dir, "maprun.json"), meta); err != nil {
		return nil, fmt.Errorf("record map run %s: %w", arn, err)
	}
	m.log.InfoContext(ctx, "map run opened", "map_run", arn, "execution", parent.arn, "redrive_count", meta.RedriveCount)
	return &runHandle{m: m, run: run}, nil
}

// runHandle is an open map run, for the engine.
type runHandle struct {
	m   *Manager
	run *mapRun
}

func (h *runHandle) ARN() string { return h.run.meta.ARN }

func (h *runHandle) Settings() (asl.MapRunSettings, <-chan struct{}) {
	h.run.mu.Lock()
	defer h.run.mu.Unlock()
	return h.run.settings(), h.run.changed
}

func (r *mapRun) settings() asl.MapRunSettings {
	return asl.MapRunSettings{MaxConcurrency: r.meta.MaxConcurrency, ToleratedFailureCount: r.meta.ToleratedCount, ToleratedFailurePercentage: r.meta.ToleratedPercent}
}

func (h *runHandle) Progress(c asl.MapRunCounts) {
	h.run.mu.Lock()
	h.run.meta.Counts = c
	h.run.mu.Unlock()
}

// Close records the run's end in its record (a failure to write it is
// logged: the parent's history holds the end too).
func (h *runHandle) Close(end asl.MapRunEnd) {
	r := h.run
	r.mu.Lock()
	r.meta.Status, r.meta.Error, r.meta.Cause, r.meta.Counts, r.meta.Stop = end.Status, end.Error, end.Cause, end.Counts, end.Stop.UTC()
	meta := r.meta
	r.mu.Unlock()
	if h.m.isClosed() {
		return // stopped with the server: it resumes with its parent
	}
	if err := h.m.put(filepath.Join(r.dir, "maprun.json"), meta); err != nil {
		h.m.log.Error("record the end of a map run", "map_run", meta.ARN, "error", err)
	}
}

// Child runs child index of the run (see the top of this file).
func (h *runHandle) Child(ctx context.Context, index int, input json.RawMessage) asl.ChildResult {
	m, r := h.m, h.run
	r.mu.Lock()
	meta, sm := r.meta, r.sm
	r.mu.Unlock()
	name := asl.ChildName(meta.ID, index)
	arn, smARN := asl.ChildARNs(meta.ParentMachineARN, meta.Label, name)
	if meta.ExecutionType == asl.ChildExpress {
		opts := asl.StartOptions{Name: name, StateMachineName: strings.TrimPrefix(smARN, arnPrefix+"stateMachine:"), ExecutionARN: arn, StateMachineARN: smARN,
			DiscardHistory: true, MaxDuration: MaxExpressDuration, Buckets: m.bucketsFor(meta.Tenant)}
		return asl.RunChild(ctx, m.eng, sm, input, opts)
	}
	e, err := m.child(ctx, r, index, arn, smARN, name, input)
	if err != nil {
		now := m.now().UTC()
		return asl.ChildResult{ExecutionARN: arn, Name: name, StateMachineARN: smARN, Status: asl.StatusFailed, Input: input,
			Error: asl.ErrRuntime, Cause: err.Error(), Start: now, Stop: now}
	}
	m.awaitChild(ctx, e)
	x, err := m.DescribeExecution(context.WithoutCancel(ctx), arn)
	if err != nil {
		return asl.ChildResult{ExecutionARN: arn, Name: name, StateMachineARN: smARN, Status: asl.StatusFailed, Input: input,
			Error: asl.ErrRuntime, Cause: err.Error()}
	}
	status := x.Status
	if status == asl.StatusRunning { // stopped with the server
		status = asl.StatusAborted
	}
	return asl.ChildResult{ExecutionARN: arn, Name: name, StateMachineARN: smARN, Status: status, Input: x.Input, Output: x.Output,
		Error: x.Error, Cause: x.Cause, Start: x.Start, Stop: x.Stop, RedriveCount: x.Redrive.Count, Redrivable: true}
}

// child starts child index of run, or finds it: one that failed before
// the run's last redrive is redriven.
func (m *Manager) child(ctx context.Context, r *mapRun, index int, arn, smARN, name string, input json.RawMessage) (*execution, error) {
	m.mu.Lock()
	if e, ok := m.execs[arn]; ok {
		status, stop := e.status, e.stop
		m.mu.Unlock()
		r.mu.Lock()
		redriven := r.meta.RedriveDate
		r.mu.Unlock()
		if status != asl.StatusRunning && status != asl.StatusSucceeded && !redriven.IsZero() && stop.Before(redriven) {
			if _, err := m.redrive(ctx, e, ""); err != nil {
				return nil, err
			}
		}
		return e, nil
	}
	if m.closed {
		m.mu.Unlock()
		return nil, errorf(CodeServiceUnavailable, "the server is shutting down")
	}
	r.mu.Lock()
	tenant, definition, sm := r.meta.Tenant, r.meta.Definition, r.sm
	runARN := r.meta.ARN
	r.mu.Unlock()
	e := &execution{arn: arn, smARN: smARN, name: name, tenant: tenant, start: m.now().UTC(), status: asl.StatusRunning,
		dir: filepath.Join(r.dir, "executions", name), run: r, index: index}
	m.execs[arn] = e
	m.running++
	m.mu.Unlock()
	r.mu.Lock()
	r.children[index] = e
	r.mu.Unlock()
	meta := execMeta{ARN: arn, StateMachineARN: smARN, Name: name, Tenant: tenant, Status: asl.StatusRunning, Definition: definition,
		Input: input, Start: e.start, MapRunARN: runARN, MapRunIndex: index}
	if err := m.put(filepath.Join(e.dir, "meta.json"), meta); err != nil {
		m.mu.Lock()
		delete(m.execs, arn)
		m.running--
		m.mu.Unlock()
		r.mu.Lock()
		delete(r.children, index)
		r.mu.Unlock()
		return nil, fmt.Errorf("start child %s: %w", arn, err)
	}
	m.launch(ctx, e, sm, input, newRecorder(m, e), false)
	return e, nil
}

// awaitChild waits until e has ended. When ctx ends first (the map run
// stops, or its parent was stopped) e is stopped and waited for, unless
// the server is shutting down: then both resume at the next start.
func (m *Manager) awaitChild(ctx context.Context, e *execution) {
	ended := m.endOf(e)
	select {
	case <-ended:
		return
	case <-ctx.Done():
	}
	if m.isClosed() {
		return
	}
	const why = "the map run stopped its children"
	for range maxMoves {
		m.mu.Lock()
		x, parked := e.x, e.park != nil
		if x != nil && !parked {
			e.stopErr, e.stopWhy = "States.Aborted", why
		}
		m.mu.Unlock()
		if parked {
			if _, err := m.stopParked(e, "States.Aborted", why); errors.Is(err, errMoved) {
				continue // resumed meanwhile
			}
		} else if x != nil {
			x.Stop()
		}
		break
	}
	select {
	case <-ended:
	case <-time.After(stopWait):
		m.log.Warn("a child execution did not end within its stop's bound", "execution", e.arn)
	}
}

// endOf returns a channel closed once e is no longer RUNNING.
func (m *Manager) endOf(e *execution) <-chan struct{} {
	ch := make(chan struct{})
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.status != asl.StatusRunning {
		close(ch)
		return ch
	}
	e.waiters = append(e.waiters, ch)
	return ch
}

// releaseWaiters wakes what waits on e's end. The caller holds m.mu.
func (e *execution) releaseWaiters() {
	for _, ch := range e.waiters {
		close(ch)
	}
	e.waiters = nil
}

func checkMapRunARN(arn string) error {
	kind, rest, ok := parseARN(arn)
	if !ok || kind != "mapRun" || strings.Count(rest, ":") != 1 || !strings.Contains(rest, "/") {
		return invalidArn(arn, "mapRun")
	}
	return nil
}

func (m *Manager) lookupRun(arn string) (*mapRun, error) {
	if err := checkMapRunARN(arn); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[arn]
	if !ok {
		return nil, errorf(CodeResourceNotFound, "Resource not found: '%s'", arn)
	}
	return r, nil
}

func (r *mapRun) view() MapRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	mt := r.meta
	return MapRun{ARN: mt.ARN, ExecutionARN: mt.ExecutionARN, StateMachineARN: mt.StateMachineARN, Tenant: mt.Tenant, Status: mt.Status,
		Start: mt.Start, Stop: mt.Stop, MaxConcurrency: mt.MaxConcurrency, ToleratedFailureCount: max(mt.ToleratedCount, 0),
		ToleratedFailurePercentage: max(mt.ToleratedPercent, 0), Counts: mt.Counts, RedriveCount: mt.RedriveCount, RedriveDate: mt.RedriveDate}
}

// DescribeMapRun describes a map run.
func (m *Manager) DescribeMapRun(_ context.Context, arn string) (MapRun, error) {
	r, err := m.lookupRun(arn)
	if err != nil {
		return MapRun{}, err
	}
	return r.view(), nil
}

// ListMapRuns lists the map runs an execution started, oldest first, at
// most max a page; next is a previous page's token ("" for the first).
func (m *Manager) ListMapRuns(_ context.Context, executionARN, next string, max int) ([]MapRun, string, error) {
	if _, err := m.lookup(executionARN); err != nil {
		return nil, "", err
	}
	m.mu.Lock()
	runs := append([]*mapRun(nil), m.runsByExec[executionARN]...)
	m.mu.Unlock()
	i, err := pageStart(next, len(runs))
	if err != nil {
		return nil, "", err
	}
	var out []MapRun
	for ; i < len(runs); i++ {
		if len(out) == max {
			return out, strconv.Itoa(i), nil
		}
		out = append(out, runs[i].view())
	}
	return out, "", nil
}

// pageStart reads a page token: a position in a list of n.
func pageStart(next string, n int) (int, error) {
	if next == "" {
		return 0, nil
	}
	i, err := strconv.Atoi(next)
	if err != nil || i < 0 || i > n {
		return 0, errorf(CodeInvalidToken, "Invalid Token: '%s'", next)
	}
	return i, nil
}

// MapRunUpdate is what UpdateMapRun changes (nil: unchanged).
type MapRunUpdate struct {
	MaxConcurrency             *int
	ToleratedFailureCount      *int64
	ToleratedFailurePercentage *float64
}

// UpdateMapRun changes a running map run's concurrency and tolerated
// failures; the run applies them at once.
func (m *Manager) UpdateMapRun(_ context.Context, arn string, u MapRunUpdate) error {
	switch {
	case u.MaxConcurrency != nil && *u.MaxConcurrency < 0:
		return errorf(CodeValidation, "1 validation error detected: Value '%d' at 'maxConcurrency' failed to satisfy constraint: Member must have value greater than or equal to 0", *u.MaxConcurrency)
	case u.ToleratedFailureCount != nil && *u.ToleratedFailureCount < 0:
		return errorf(CodeValidation, "1 validation error detected: Value '%d' at 'toleratedFailureCount' failed to satisfy constraint: Member must have value greater than or equal to 0", *u.ToleratedFailureCount)
	case u.ToleratedFailurePercentage != nil && (*u.ToleratedFailurePercentage < 0 || *u.ToleratedFailurePercentage > 100):
		return errorf(CodeValidation, "1 validation error detected: Value '%v' at 'toleratedFailurePercentage' failed to satisfy constraint: Member must have value between 0 and 100", *u.ToleratedFailurePercentage)
	case u.MaxConcurrency == nil && u.ToleratedFailureCount == nil && u.ToleratedFailurePercentage == nil:
		return errorf(CodeValidation, "At least one of maxConcurrency, toleratedFailureCount or toleratedFailurePercentage must be given")
	}
	r, err := m.lookupRun(arn)
	if err != nil {
		return err
	}
	r.mu.Lock()
	if r.meta.Status != asl.MapRunRunning {
		r.mu.Unlock()
		return errorf(CodeValidation, "Map Run '%s' is %s: only a running Map Run is updated", arn, r.meta.Status)
	}
	if u.MaxConcurrency != nil {
		r.meta.MaxConcurrency = *u.MaxConcurrency
	}
	if u.ToleratedFailureCount != nil {
		r.meta.ToleratedCount = *u.ToleratedFailureCount
	}
	if u.ToleratedFailurePercentage != nil {
		r.meta.ToleratedPercent = *u.ToleratedFailurePercentage
	}
	close(r.changed)
	r.changed = make(chan struct{})
	meta := r.meta
	r.mu.Unlock()
	if err := m.put(filepath.Join(r.dir, "maprun.json"), meta); err != nil {
		return fmt.Errorf("update map run %s: %w", arn, err)
	}
	return nil
}

// ListMapRunExecutions lists a map run's children, newest first, as
// ListExecutions with a mapRunArn does.
func (m *Manager) ListMapRunExecutions(_ context.Context, arn, status, next string, max int) ([]ExecutionSummary, string, error) {
	r, err := m.lookupRun(arn)
	if err != nil {
		return nil, "", err
	}
	r.mu.Lock()
	children := make([]*execution, 0, len(r.children))
	for _, e := range r.children {
		children = append(children, e)
	}
	r.mu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	sort.Slice(children, func(i, j int) bool {
		if !children[i].start.Equal(children[j].start) {
			return children[i].start.After(children[j].start)
		}
		return children[i].index > children[j].index
	})
	i, err := pageStart(next, len(children))
	if err != nil {
		return nil, "", err
	}
	var out []ExecutionSummary
	for ; i < len(children); i++ {
		e := children[i]
		if status != "" && e.status != status {
			continue
		}
		if len(out) == max {
			return out, strconv.Itoa(i), nil
		}
		out = append(out, ExecutionSummary{ARN: e.arn, StateMachineARN: e.smARN, Name: e.name, Tenant: e.tenant, Status: e.status, Start: e.start, Stop: e.stop,
			RedriveCount: e.redriveCount, RedriveDate: e.redriveDate, MapRunARN: arn})
	}
	return out, "", nil
}

// loadMapRuns reads the map runs and their children at Open; it returns
// the children that were running, to be resumed with their metadata.
func (m *Manager) loadMapRuns() ([]*execution, []execMeta, error) {
	dirs, err := os.ReadDir(m.mapRunsDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("control: %w", err)
	}
	var resume []*execution
	var metas []execMeta
	for _, d := range dirs {
		if !d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			continue
		}
		dir := filepath.Join(m.mapRunsDir(), d.Name())
		var meta mapRunMeta
		if err := readJSON(filepath.Join(dir, "maprun.json"), &meta); err != nil {
			m.log.Warn("skipping a map run whose record cannot be read", "folder", dir, "error", err)
			continue
		}
		r := &mapRun{dir: dir, meta: meta, children: map[int]*execution{}, changed: make(chan struct{})}
		machineName := strings.TrimPrefix(meta.StateMachineARN, arnPrefix+"stateMachine:")
		names, _ := os.ReadDir(filepath.Join(dir, "executions"))
		for _, nd := range names {
			cm, e := m.loadExecution(machineName, nd.Name(), filepath.Join(dir, "executions", nd.Name()))
			if e == nil {
				continue
			}
			e.run, e.index = r, cm.MapRunIndex
			r.children[e.index] = e
			m.execs[e.arn] = e
			if e.status == asl.StatusRunning {
				m.running++
				resume = append(resume, e)
				metas = append(metas, cm)
			}
		}
		m.runs[meta.ARN] = r
		m.runsByExec[meta.ExecutionARN] = append(m.runsByExec[meta.ExecutionARN], r)
	}
	for _, list := range m.runsByExec {
		sort.SliceStable(list, func(i, j int) bool { return list[i].meta.Start.Before(list[j].meta.Start) })
	}
	return resume, metas, nil
}
