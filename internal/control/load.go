package control

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/veredicto/veredicto/internal/asl"
)

func (m *Manager) loadMachines() error {
	entries, err := os.ReadDir(m.machinesDir())
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		var meta machineMeta
		path := filepath.Join(m.machinesDir(), e.Name())
		if err := readJSON(path, &meta); err != nil {
			var de *decodeError
			if !errors.As(err, &de) {
				return fmt.Errorf("control: %w", err)
			}
			// not a reason to refuse to start: its executions stay listed
			_, _ = m.quarantine.Replace(path, "the state machine "+de.reason, nil)
			continue
		}
		sm, err := m.parseDefinition(meta.Definition)
		if err != nil {
			m.log.Warn("a persisted state machine no longer validates; skipped", "state_machine", meta.Name, "error", err)
			continue
		}
		mc := &machine{meta: meta, sm: sm}
		m.machines[meta.ARN] = mc
		if err := m.loadVersions(mc); err != nil {
			return err
		}
	}
	return nil
}

func (m *Manager) loadExecutions(ctx context.Context) error {
	machines, err := os.ReadDir(m.executionsDir())
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	var resume []*execution
	var metas []execMeta
	// Parked executions are indexed, not replayed (park.go): their index
	// entries share the strings many of them repeat.
	names := map[string]string{}
	intern := func(s string) string {
		if v, ok := names[s]; ok {
			return v
		}
		names[s] = s
		return s
	}
	states := map[string]string{}
	for _, md := range machines {
		if !md.IsDir() {
			continue
		}
		names, err := os.ReadDir(filepath.Join(m.executionsDir(), md.Name()))
		if err != nil {
			return fmt.Errorf("control: %w", err)
		}
		files := make([]executionFiles, min(len(names), loadChunk))
		for len(names) > 0 {
			chunk := names[:min(len(names), loadChunk)]
			names = names[len(chunk):]
			readFolders(files[:len(chunk)], func(i int) (string, string) {
				return filepath.Join(m.executionsDir(), md.Name(), chunk[i].Name()), ExecutionARN(md.Name(), chunk[i].Name())
			})
			for i, nd := range chunk {
				dir := filepath.Join(m.executionsDir(), md.Name(), nd.Name())
				meta, e := m.loadExecutionFrom(md.Name(), nd.Name(), dir, files[i])
				if e == nil {
					continue
				}
				e.smARN, e.tenant, e.versionARN, e.aliasARN = intern(e.smARN), intern(e.tenant), intern(e.versionARN), intern(e.aliasARN)
				m.execs[e.arn] = e
				m.byMachine[e.smARN] = append(m.byMachine[e.smARN], e)
				if e.status == asl.StatusRunning {
					m.running++
					if m.readParked(e, states, files[i].park) {
						continue
					}
					resume = append(resume, e)
					metas = append(metas, meta)
				}
			}
		}
	}
	for _, list := range m.byMachine {
		sort.SliceStable(list, func(i, j int) bool { return list[i].start.Before(list[j].start) })
	}
	children, childMetas, err := m.loadMapRuns()
	if err != nil {
		return err
	}
	for i, e := range children {
		if pl, _ := lastParkLine(filepath.Join(e.dir, "history.jsonl")); !m.readParked(e, states, pl) {
			resume, metas = append(resume, e), append(metas, childMetas[i])
		}
	}
	for i, e := range resume {
		if err := m.replay(ctx, e, metas[i], true); err != nil {
			return err
		}
	}
	return nil
}

// loadExecution reads an execution folder at Open. Metadata that does not
// decode (or names another execution) is quarantined and replaced by one
// naming the damage, and so is missing metadata beside a history: the
// execution is damaged, its name reserved. A folder with neither is a
// start that never completed, skipped.
func (m *Manager) loadExecution(machineName, name, dir string) (execMeta, *execution) {
	return m.loadExecutionFrom(machineName, name, dir, readExecution(dir, ""))
}

// executionFiles is what Open reads of an execution's folder: for a
// RUNNING one whose history ends with where it parked, that line; its
// metadata (err: why not), unless the park line indexes it (indexed).
type executionFiles struct {
	park    *parkLine
	indexed bool
	meta    execMeta
	err     error
}

// readExecution reads the folder dir of execution arn ("": a map run's
// child, indexed with its run).
func readExecution(dir, arn string) executionFiles {
	var f executionFiles
	f.park, _ = lastParkLine(filepath.Join(dir, "history.jsonl"))
	if arn != "" && f.park.indexes(arn) && f.park.Index != nil {
		f.indexed = true
		return f
	}
	f.err = readJSON(filepath.Join(dir, "meta.json"), &f.meta)
	if f.err != nil || f.meta.Status != asl.StatusRunning {
		f.park = nil
	}
	return f
}

// loadChunk and loadReaders: Open reads the folders of loadChunk
// executions at once, loadReaders at a time (the reads wait on the disk
// more than on the CPU), then indexes them in order.
const (
	loadChunk   = 512
	loadReaders = 8
)

// readFolders reads the folders of executions 0, 1… (dir: each one's
// folder and ARN) into files, loadReaders at a time.
func readFolders(files []executionFiles, dir func(int) (string, string)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(loadReaders, len(files)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				files[i] = readExecution(dir(i))
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
}

// loadExecutionFrom is loadExecution with the folder's files read.
func (m *Manager) loadExecutionFrom(machineName, name, dir string, f executionFiles) (execMeta, *execution) {
	if f.indexed {
		if e := f.park.execution(ExecutionARN(machineName, name), name, dir); e != nil {
			return execMeta{}, e // parked: readParked indexes it, no replay needs its metadata
		}
		f = readExecution(dir, "")
	}
	meta, err := f.meta, f.err
	var de *decodeError
	var e *execution
	switch {
	case err == nil && meta.Damage != nil:
		e = m.loadDamaged(machineName, name, dir, &meta, "", false)
	case err == nil && meta.ARN != ExecutionARN(machineName, name):
		e = m.loadDamaged(machineName, name, dir, nil, "its metadata (meta.json) holds another execution's", true)
	case err == nil:
		return meta, &execution{arn: meta.ARN, smARN: meta.StateMachineARN, name: meta.Name, tenant: meta.Tenant,
			inputSum: sha256.Sum256(meta.Input), start: meta.Start, dir: dir, status: meta.Status, stop: meta.Stop,
			versionARN: meta.VersionARN, aliasARN: meta.AliasARN, redriveCount: meta.RedriveCount, redriveDate: meta.RedriveDate,
			testCase: meta.TestCase}
	case errors.As(err, &de):
		e = m.loadDamaged(machineName, name, dir, nil, "its metadata (meta.json) "+de.reason, true)
	case errors.Is(err, fs.ErrNotExist):
		e = m.loadDamaged(machineName, name, dir, nil, "its metadata (meta.json) is missing", false)
	}
	if e == nil {
		m.log.Warn("skipping an execution folder without readable metadata", "folder", dir, "error", err)
	}
	return execMeta{}, e
}

// replay runs a RUNNING execution again from its history: resumed after a
// restart, or redriven (its meta.json counts one redrive more than its
// history: the ExecutionRedriven event is appended first). A history that
// cannot be read or appended to leaves it stalled: RUNNING, not run, the
// failure named.
func (m *Manager) replay(ctx context.Context, e *execution, meta execMeta, resumed bool) error {
	rec := newRecorder(m, e)
	what := "redriven"
	if resumed {
		what = "resumed"
	}
	stalled := func(why string, err error) error {
		m.log.Error("an execution could not be "+what+": "+why, "execution", e.arn, "error", err)
		m.mu.Lock()
		e.stalled = &stall{err: why + ": " + err.Error()}
		m.mu.Unlock()
		return nil
	}
	if err := rec.load(); err != nil {
		return stalled("its history could not be read", err)
	}
	if meta.RedriveCount > rec.redrives() {
		if err := rec.persistRedriven(meta.RedriveDate); err != nil {
			return stalled("its redrive could not be recorded in its history", err)
		}
	}
	return m.rerun(ctx, e, meta, rec, resumed)
}

// rerun runs an execution again from the history rec has loaded: resumed
// after a restart, redriven, or resumed from its parked record (rec.from
// set: neither logged nor reported to OnStatus, its status never changed).
func (m *Manager) rerun(ctx context.Context, e *execution, meta execMeta, rec *recorder, resumed bool) error {
	if res := rec.ended(); res != nil {
		// it ended just before the crash: record what the history says
		m.finish(e, rec, res)
		return nil
	}
	sm, err := m.machineOf(meta.Definition)
	if err != nil {
		m.finish(e, rec, &asl.Result{Status: asl.StatusFailed, Error: asl.ErrRuntime, Cause: "the recorded definition no longer parses: " + err.Error()})
		return nil
	}
	if resumed {
		m.log.InfoContext(ctx, "resuming execution", "execution", e.arn, "events", rec.nextID)
	}
	// A parked execution's record gives way to its run in one step, its
	// tokens the run's again: an answer finds one or the other.
	m.mu.Lock()
	for _, w := range rec.rp.waiting {
		m.tokens[w.v] = rec
	}
	m.unwake(e)
	e.park = nil
	m.mu.Unlock()
	m.launch(ctx, e, sm, meta.Input, rec, resumed)
	return nil
}
