package control

import (
	"bytes"
	"container/heap"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
)

// Parked executions. An execution that can only wait — in a Wait state or
// on a Task's token (.waitForTaskToken, an activity), one of its own
// states, not inside a Parallel branch or a Map iteration — is parked
// (asl.Durable.Park): its engine goroutine returns, and all that is left
// of it in memory is its index entry and a parked record (where it waits:
// its state, its token's id, when its timer is due). Its history on disk
// already says everything else, so it resumes as an execution resumes
// after a restart: by deterministic replay, which invokes no Task that
// had completed.
//
//   - SendTaskSuccess / SendTaskFailure on its token record the outcome
//     in its history, then replay it (resolveParked): the replay finds the
//     outcome where the Task waits and goes on.
//   - One goroutine (runWakes) keeps a min-heap of the parked executions'
//     due times — a Wait's end, a Task's TimeoutSeconds, the execution's
//     own TimeoutSeconds, a Task's HeartbeatSeconds after its last
//     heartbeat — on the manager's clock, and replays each when its time
//     comes: the replay then ends the Wait, or times the Task out.
//   - SendTaskHeartbeat moves its heartbeat count in memory (as a waiting
//     Task's is); a worker taking its activity task records ActivityStarted
//     without replaying it; StopExecution records its end without
//     replaying it (the engine would record ExecutionAborted alone too).
//
// A Task waits Config.ParkAfter (one second by default) for its token
// before it parks, so that a token answered at once costs no replay; a
// Wait with longer than that to go parks at once.
//
// After a restart a parked execution is not replayed at Open: when it
// parks, a line naming where it waits is appended to its history
// (through the journal, as every line: a file of its own cost 200 µs to
// create), with what the index holds of it (its metadata's, which does
// not change while it runs). A history that still ends with that line
// says nothing happened since, and the execution is indexed as parked
// from that line alone (readParked): Open reads the history's last line,
// not the metadata, whose definition can be tens of KiB (the executive
// search's is 36). Otherwise (or for an activity's Task, whose queued
// task lives in memory) it is replayed at Open, as every execution used
// to be. A park line lost or cut by a crash merely leaves the execution
// to be replayed.

// DefaultParkAfter is Config.ParkAfter's default.
const DefaultParkAfter = time.Second

// parked is a parked execution's record (execution.park), guarded by
// Manager.mu. Times are Unix nanoseconds, 0 for none.
type parked struct {
	due       int64 // the Wait's end or the Task's or execution's deadline
	wake      int64 // when runWakes resumes it: due, or an earlier heartbeat deadline
	beat      int64 // when the Task's heartbeat count began (0: not yet)
	heartbeat time.Duration
	token     [16]byte // the random part of the Task's token (zero for a Wait)
	state     string
	index     int32 // in Manager.wakes (-1: not there)
	activity  bool
	// busy is set while an operation owns the record (claim): others wait
	// for it to close, then look again.
	busy chan struct{}
}

// errMoved is what an operation on a token or a parked execution meets
// when the execution parked or resumed meanwhile: look it up again.
var errMoved = errors.New("control: the execution parked or resumed meanwhile")

// parkAfter is Config.ParkAfter with its default.
func (m *Manager) parkAfter() time.Duration {
	switch {
	case m.cfg.ParkAfter == 0:
		return DefaultParkAfter
	case m.cfg.ParkAfter < 0:
		return 0
	}
	return m.cfg.ParkAfter
}

// tokenID is the random part of a token newTaskToken made.
func tokenID(token string) ([16]byte, bool) {
	var id [16]byte
	i := strings.LastIndexByte(token, '.')
	if i < 0 || len(token)-i-1 != 2*len(id) {
		return id, false
	}
	_, err := hex.Decode(id[:], []byte(token[i+1:]))
	return id, err == nil
}

// holds reports whether p waits on token (a token of its execution).
func (p *parked) holds(token string) bool {
	id, ok := tokenID(token)
	return ok && id == p.token && id != [16]byte{}
}

// tokenOf is the token a parked Task of e waits on.
func (e *execution) tokenOf(p *parked) string {
	return taskToken(e.arn, hex.EncodeToString(p.token[:]))
}

// setWake sets p.wake from its deadlines.
func (p *parked) setWake() {
	p.wake = p.due
	if p.heartbeat > 0 && p.beat != 0 {
		if hb := p.beat + int64(p.heartbeat); p.wake == 0 || hb < p.wake {
			p.wake = hb
		}
	}
}

// park is the engine's Park hook: the run parks unless its token was
// answered already (that answer is on its way to the engine) or its
// history can no longer be persisted. The parked record replaces the
// run's tokens in the same critical section, so an answer finds either
// the run waiting or the record; an answer that found this recorder
// before is turned back (errMoved) and finds the record.
func (r *recorder) park(at asl.Parked) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lost.Load() != nil {
		return false
	}
	p := &parked{state: at.State, heartbeat: at.Heartbeat, index: -1, activity: at.Activity}
	if !at.Wake.IsZero() {
		p.due = at.Wake.UnixNano()
	}
	if !at.Beat.IsZero() {
		p.beat = at.Beat.UnixNano()
	}
	if at.Token != "" {
		if res, _ := r.resolved.get(at.Token); res != nil {
			return false
		}
		id, ok := tokenID(at.Token)
		if !ok {
			return false
		}
		p.token = id
	}
	// Before the record is installed (nothing else can append to the
	// history meanwhile), and applied to the file before a resume reads it.
	pl := &parkLine{State: at.State, Token: at.Token, Wake: at.Wake, Heartbeat: at.Heartbeat, Activity: at.Activity}
	if e := r.e; e.run == nil { // a map run's child is indexed with its run (loadMapRuns)
		pl.Index = &parkedIndex{StateMachineARN: e.smARN, Tenant: e.tenant, Start: e.start, InputSHA256: hex.EncodeToString(e.inputSum[:]),
			VersionARN: e.versionARN, AliasARN: e.aliasARN, RedriveCount: e.redriveCount, RedriveDate: e.redriveDate, TestCase: e.testCase}
	}
	rec, err := r.journalLine(&line{Parked: pl})
	if err != nil || r.flush(rec) != nil {
		if !r.owner.sticky {
			r.owner.failed = nil // a hint that failed alone: the history takes lines again
		}
		return false // it waits in memory
	}
	tokens := make([]string, 0, len(r.open))
	for _, o := range r.open {
		tokens = append(tokens, o.v)
	}
	if !r.m.installPark(r.e, p, tokens) {
		return false
	}
	r.parked = true
	return true
}

// installPark makes p the record of e, whose run parks, in place of the
// run's tokens; false once the manager is closing.
func (m *Manager) installPark(e *execution, p *parked, tokens []string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	for _, tok := range tokens {
		delete(m.tokens, tok)
	}
	e.park = p
	m.rewake(e)
	return true
}

// parkLine is a history line that says where the execution parked.
type parkLine struct {
	State     string        `json:"state"`
	Token     string        `json:"token,omitempty"`
	Wake      time.Time     `json:"wake,omitzero"`
	Heartbeat time.Duration `json:"heartbeat,omitempty"`
	Activity  bool          `json:"activity,omitempty"`
	Index     *parkedIndex  `json:"execution,omitempty"`
}

// parkedIndex is what the index holds of a parked execution, as its
// meta.json has it.
type parkedIndex struct {
	StateMachineARN string    `json:"stateMachineArn"`
	Tenant          string    `json:"tenant"`
	Start           time.Time `json:"startDate"`
	InputSHA256     string    `json:"inputSha256"`
	VersionARN      string    `json:"stateMachineVersionArn,omitempty"`
	AliasARN        string    `json:"stateMachineAliasArn,omitempty"`
	RedriveCount    int       `json:"redriveCount,omitempty"`
	RedriveDate     time.Time `json:"redriveDate,omitzero"`
	TestCase        string    `json:"mockTestCase,omitempty"`
}

// indexes reports whether the park line lets Open index execution arn as
// parked: not an activity's Task (its queued task is in memory only: the
// replay queues it again), and a token of its own.
func (pl *parkLine) indexes(arn string) bool {
	if pl == nil || pl.Activity || pl.State == "" {
		return false
	}
	if pl.Token == "" {
		return true
	}
	owner, ok := tokenExecution(pl.Token)
	_, idOK := tokenID(pl.Token)
	return ok && idOK && owner == arn
}

// execution is the index entry a park line's Index makes for the
// execution named name in dir (nil without an Index that decodes).
func (pl *parkLine) execution(arn, name, dir string) *execution {
	ix := pl.Index
	var sum [32]byte
	if ix == nil || hex.DecodedLen(len(ix.InputSHA256)) != len(sum) {
		return nil
	}
	if _, err := hex.Decode(sum[:], []byte(ix.InputSHA256)); err != nil {
		return nil
	}
	return &execution{arn: arn, smARN: ix.StateMachineARN, name: name, tenant: ix.Tenant, inputSum: sum, start: ix.Start, dir: dir,
		status: asl.StatusRunning, versionARN: ix.VersionARN, aliasARN: ix.AliasARN, redriveCount: ix.RedriveCount, redriveDate: ix.RedriveDate,
		testCase: ix.TestCase}
}

// parkTail bounds what readParked reads of a history: a park line is far
// shorter.
const parkTail = 4096

// readParked indexes a RUNNING execution found at Open as parked when its
// history ends with a park line (pl, nil for none) that indexes it, and
// tells OnStatus it runs again (as a replayed one is); false when it must
// be replayed. states interns the state names. Its heartbeat count starts
// again now, as a resumed Task's does.
func (m *Manager) readParked(e *execution, states map[string]string, pl *parkLine) bool {
	if !pl.indexes(e.arn) {
		return false
	}
	p := &parked{heartbeat: pl.Heartbeat, index: -1}
	if pl.Token != "" {
		p.token, _ = tokenID(pl.Token)
	}
	if s, ok := states[pl.State]; ok {
		p.state = s
	} else {
		p.state, states[pl.State] = pl.State, pl.State
	}
	if !pl.Wake.IsZero() {
		p.due = pl.Wake.UnixNano()
	}
	if p.heartbeat > 0 {
		p.beat = m.now().UnixNano()
	}
	e.park = p
	m.rewake(e)
	m.notify(Status{Tenant: e.tenant, ExecutionARN: e.arn, StateMachineARN: e.smARN, Name: e.name, Status: asl.StatusRunning, Resumed: true})
	return true
}

// lastParkLine reads the last line of a history file: ok when it is a
// whole park line.
func lastParkLine(path string) (*parkLine, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, false
	}
	n := min(info.Size(), parkTail)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, info.Size()-n); err != nil {
		return nil, false
	}
	if len(buf) == 0 || buf[len(buf)-1] != '\n' {
		return nil, false // cut short by a crash: the load repairs it
	}
	buf = buf[:len(buf)-1]
	i := bytes.LastIndexByte(buf, '\n')
	if i < 0 && n < info.Size() {
		return nil, false // a long last line: an event's
	}
	var l line
	if json.Unmarshal(buf[i+1:], &l) != nil || l.Parked == nil {
		return nil, false
	}
	return l.Parked, true
}

// claim takes e's parked record for an operation (resume, stop, an
// activity's start), waiting for one under way; nil when e is not parked
// (any more) or the manager is closing. release gives it back.
func (m *Manager) claim(e *execution) *parked {
	for {
		m.mu.Lock()
		p := e.park
		if p == nil || m.closed {
			m.mu.Unlock()
			return nil
		}
		if p.busy == nil {
			p.busy = make(chan struct{})
			m.mu.Unlock()
			return p
		}
		busy := p.busy
		m.mu.Unlock()
		<-busy
	}
}

func (m *Manager) release(p *parked) {
	m.mu.Lock()
	close(p.busy)
	p.busy = nil
	m.mu.Unlock()
}

// unpark resumes a parked execution by replaying its history. with, when
// set, runs on the loaded history first (an answer to record); when it
// fails the execution stays parked. errMoved: e was not parked.
func (m *Manager) unpark(e *execution, with func(*recorder) error) error {
	p := m.claim(e)
	if p == nil {
		return errMoved
	}
	defer m.release(p)
	var meta execMeta
	if err := readJSON(filepath.Join(e.dir, "meta.json"), &meta); err != nil {
		return m.unparkFailed(e, "its metadata could not be read", err)
	}
	rec := newRecorder(m, e)
	rec.from = p
	if err := rec.load(); err != nil {
		return m.unparkFailed(e, "its history could not be read", err)
	}
	if with != nil {
		if err := with(rec); err != nil {
			return err
		}
	}
	m.mu.Lock()
	m.unwake(e)
	m.mu.Unlock()
	return m.rerun(m.root, e, meta, rec, false)
}

// unparkFailed leaves a parked execution that cannot be replayed stalled:
// RUNNING, not run, the failure named (as replay does at Open).
func (m *Manager) unparkFailed(e *execution, why string, err error) error {
	m.log.Error("a parked execution could not be resumed: "+why, "execution", e.arn, "error", err)
	m.mu.Lock()
	m.unwake(e)
	e.park, e.stalled = nil, &stall{err: why + ": " + err.Error()}
	m.mu.Unlock()
	return errorf(CodeServiceUnavailable, "execution '%s' could not be resumed: %s: %v", e.arn, why, err)
}

// resolveParked records an answer to the token of a parked Task and
// resumes its execution, which finds the answer where it waits.
func (m *Manager) resolveParked(e *execution, token string, res resolution) error {
	return m.unpark(e, func(rec *recorder) error { return rec.resolve(token, res) })
}

// stopParked closes a parked execution for StopExecution, with no replay:
// the end of a stopped waiting execution is ExecutionAborted alone.
func (m *Manager) stopParked(e *execution, errName, cause string) (time.Time, error) {
	p := m.claim(e)
	if p == nil {
		return time.Time{}, errMoved
	}
	defer m.release(p)
	rec := newRecorder(m, e)
	if err := rec.load(); err != nil {
		return time.Time{}, errorf(CodeServiceUnavailable, "execution '%s' could not be stopped: its history could not be read: %v", e.arn, err)
	}
	m.mu.Lock()
	e.stopErr, e.stopWhy = errName, cause
	token := ""
	if p.activity {
		token = e.tokenOf(p)
	}
	m.mu.Unlock()
	if token != "" {
		m.acts.forget(token) // no worker is to take it now
	}
	m.finish(e, rec, &asl.Result{Status: asl.StatusAborted})
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.status == asl.StatusRunning && e.stalled != nil {
		return time.Time{}, errorf(CodeServiceUnavailable, "execution '%s' could not record its end: %s", e.arn, e.stalled.err)
	}
	return e.stop, nil
}

// beatParked moves the heartbeat count of the parked Task of e that waits
// on token to now; false when e has no such Task parked.
func (m *Manager) beatParked(e *execution, token string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := e.park
	if p == nil || !p.holds(token) {
		return false
	}
	if p.heartbeat > 0 {
		p.beat = m.now().UnixNano()
		m.rewake(e)
	}
	return true
}

// startParked records that worker took the activity task t of a parked
// execution (ActivityStarted), which stays parked, its heartbeat count
// started; errMoved when its execution is not parked.
func (m *Manager) startParked(e *execution, t *activityTask, worker string) error {
	p := m.claim(e)
	if p == nil {
		return errMoved
	}
	defer m.release(p)
	if !p.holds(t.token) {
		return errorf(CodeTaskTimedOut, "Task Timed Out: 'Provided task does not exist anymore'")
	}
	rec := newRecorder(m, e)
	if err := rec.load(); err != nil {
		return err
	}
	now := m.now().UTC()
	rec.mu.Lock()
	err := rec.persistWorker(asl.Event{Type: "ActivityStarted", State: p.state, Timestamp: now}, worker)
	rec.mu.Unlock()
	if err != nil {
		return err
	}
	m.mu.Lock()
	if p.heartbeat > 0 {
		p.beat = now.UnixNano()
		m.rewake(e)
	}
	m.mu.Unlock()
	return nil
}

// parkedState is the state whose Task waits, parked, on token.
func (m *Manager) parkedState(e *execution, token string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := e.park; p != nil && p.holds(token) {
		return p.state, true
	}
	return "", false
}

// beatOf is, for a recorder resuming a parked execution, when the parked
// Task's heartbeat count began (zero: another token, or not begun).
func (r *recorder) beatOf(token string) time.Time {
	p := r.from
	if p == nil || !p.holds(token) {
		return time.Time{}
	}
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	if p.beat == 0 {
		return time.Time{}
	}
	return time.Unix(0, p.beat)
}

// wakes is the min-heap of the parked executions with a due time, by
// their park.wake. Guarded by Manager.mu.
type wakes []*execution

func (w wakes) Len() int           { return len(w) }
func (w wakes) Less(i, j int) bool { return w[i].park.wake < w[j].park.wake }
func (w wakes) Swap(i, j int) {
	w[i], w[j] = w[j], w[i]
	w[i].park.index, w[j].park.index = int32(i), int32(j)
}
func (w *wakes) Push(x any) {
	e := x.(*execution)
	e.park.index = int32(len(*w))
	*w = append(*w, e)
}
func (w *wakes) Pop() any {
	old := *w
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*w = old[:len(old)-1]
	e.park.index = -1
	return e
}

// rewake puts e in the heap at its park's wake (out of it without one)
// and pokes runWakes when it is the earliest. The caller holds m.mu.
func (m *Manager) rewake(e *execution) {
	p := e.park
	p.setWake()
	switch {
	case p.wake == 0:
		m.unwake(e)
		return
	case p.index < 0:
		heap.Push(&m.wakes, e)
	default:
		heap.Fix(&m.wakes, int(p.index))
	}
	if m.wakes[0] == e {
		select {
		case m.poke <- struct{}{}:
		default:
		}
	}
}

// unwake takes e out of the heap, and pokes runWakes when it was the
// earliest. The caller holds m.mu.
func (m *Manager) unwake(e *execution) {
	p := e.park
	if p == nil || p.index < 0 {
		return
	}
	first := p.index == 0
	heap.Remove(&m.wakes, int(p.index))
	if first {
		select {
		case m.poke <- struct{}{}:
		default:
		}
	}
}

// maxWaking bounds the parked executions being replayed at once by
// runWakes (a thousand Waits ending together replay a few at a time).
const maxWaking = 4

// runWakes resumes parked executions as their times come: one goroutine
// and one timer on the manager's clock for all of them.
func (m *Manager) runWakes() {
	defer m.wg.Done()
	var waking sync.WaitGroup
	defer waking.Wait()
	slots := make(chan struct{}, maxWaking)
	for {
		m.mu.Lock()
		var next int64
		if len(m.wakes) > 0 {
			next = m.wakes[0].park.wake
		}
		m.mu.Unlock()
		var fired <-chan time.Time
		stop := func() bool { return false }
		if next != 0 {
			fired, stop = m.timer(time.Unix(0, next).Sub(m.now()))
		}
		select {
		case <-fired:
		case <-m.poke:
			stop()
			continue
		case <-m.root.Done():
			stop()
			return
		}
		for _, e := range m.due() {
			select {
			case slots <- struct{}{}:
			case <-m.root.Done():
				return
			}
			waking.Add(1)
			go func() {
				defer waking.Done()
				defer func() { <-slots }()
				if err := m.unpark(e, nil); err != nil && !errors.Is(err, errMoved) {
					m.log.Error("a parked execution could not be resumed at its time", "execution", e.arn, "error", err)
				}
			}()
		}
	}
}

// due takes the parked executions whose time has come out of the heap.
func (m *Manager) due() []*execution {
	now := m.now().UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*execution
	for len(m.wakes) > 0 && m.wakes[0].park.wake <= now {
		out = append(out, heap.Pop(&m.wakes).(*execution))
	}
	return out
}

// machineOf parses a recorded definition, once per distinct definition
// (a few in practice; the cache is emptied past maxParsed).
func (m *Manager) machineOf(definition string) (*asl.StateMachine, error) {
	m.parsedMu.Lock()
	sm, ok := m.parsed[definition]
	m.parsedMu.Unlock()
	if ok {
		return sm, nil
	}
	sm, err := asl.Parse([]byte(definition))
	if err != nil {
		return nil, err
	}
	m.parsedMu.Lock()
	if m.parsed == nil || len(m.parsed) >= maxParsed {
		m.parsed = map[string]*asl.StateMachine{}
	}
	m.parsed[definition] = sm
	m.parsedMu.Unlock()
	return sm, nil
}

const maxParsed = 64
