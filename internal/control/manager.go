package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/quarantine"
)

// Defaults for Config's bounds.
const (
	DefaultMaxExecutions = 200_000
	// DefaultMaxRunning admits 100 000 executions waiting at once (issue
	// 34): a parked one costs its index entry and a small record, about
	// 1 KiB (see park.go and docs/BENCHMARKS.md).
	DefaultMaxRunning = 100_000
	// MaxHistoryEvents is Step Functions' limit on one execution's history.
	MaxHistoryEvents = 25_000
)

// Config configures a Manager.
type Config struct {
	// Dir holds the persisted state machines and executions.
	Dir string
	// Registry binds Task resources to handlers, as for `states run`.
	Registry *asl.Registry
	Logger   *slog.Logger
	Now      func() time.Time
	// Clock is the engine's time (Wait states, retries, timeouts and
	// heartbeats); nil is the real clock. A test gives its own and moves
	// it (internal/asl/asltest). Now defaults to its Now.
	Clock asl.Clock
	// MaxExecutions bounds the executions kept (started ones, any status);
	// MaxRunning bounds those running at once. Beyond either,
	// StartExecution fails with ExecutionLimitExceeded.
	MaxExecutions int
	MaxRunning    int
	// MaxActivityPollers bounds the GetActivityTask calls waiting at once
	// (default DefaultMaxActivityPollers); beyond it GetActivityTask fails
	// with ActivityWorkerLimitExceeded.
	MaxActivityPollers int
	// ParkAfter is how long a Task waits for its token in memory before
	// its execution parks (park.go); 0 is DefaultParkAfter, a negative
	// one parks at once.
	ParkAfter time.Duration

	// OnHistory is called with every history event once it is persisted
	// (durable: a replayable event, such as a Pass state's, with the next
	// one that is not; see persistWorker), in order, with the execution's
	// tenant and ARN (after a kill -9, the replayable events journaled
	// since the last that was not, a handful, may have missed it; the
	// history has them); ev.ID is the event's
	// id in GetExecutionHistory, stable across restarts, and an event is
	// never passed twice (not even when a restart replays it). It is
	// called from the execution's goroutines and must not block for long.
	// The event stream (GET /api/events) is fed from it.
	OnHistory func(tenant, executionARN string, ev asl.Event)
	// OnStatus is called when an execution starts running (also when it
	// resumes after a restart) and when it closes, with its new status,
	// once its closing event and metadata are durable.
	OnStatus func(Status)

	// ExecutionLog, when set, is called with every history event of an
	// execution whose state machine logs (its loggingConfiguration's level
	// is not OFF), in order: an Express execution's as it happens, a
	// Standard one's once persisted. It filters them by the level and
	// writes them (sfnapi.Logs). It must not block for long.
	ExecutionLog func(LogEvent)

	// Mocks, when set, holds the mock configuration's test cases: a start
	// on "<state machine ARN>#<test case>" runs that test case (mock.go).
	Mocks MockSource
	// Data is the data folder whose local buckets a Distributed Map's
	// ItemReader and ResultWriter reach, each execution its tenant's
	// prefixes only (buckets.go); "" reaches none.
	Data string

	// RouteSource is the randomness with which an alias splits its starts
	// between two versions (nil: seeded at random); a test seeds its own.
	RouteSource rand.Source

	// disk can refuse the journaling of executions' writes (tests: a full disk).
	disk disk
}

// Status is an execution's status change, for Config.OnStatus.
type Status struct {
	Tenant          string
	ExecutionARN    string
	StateMachineARN string
	Name            string
	Status          string // RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED
	Resumed         bool   // RUNNING again after a restart
	Output          json.RawMessage
	Error, Cause    string
}

// Manager runs durable executions. It is safe for concurrent use.
type Manager struct {
	cfg     Config
	log     *slog.Logger
	disk    disk
	journal *journal // every write to executions/ and mapruns/ (journal.go)
	// quarantine receives damaged files: DATA/quarantine/sfn for a
	// manager under DATA/sfn.
	quarantine *quarantine.Box
	eng        *asl.Engine
	now        func() time.Time
	root       context.Context
	stop       context.CancelFunc
	wg         sync.WaitGroup

	damaging  sync.Mutex // one markDamaged at a time
	redriving sync.Mutex // one RedriveExecution at a time

	mu        sync.Mutex
	closed    bool
	machines  map[string]*machine   // by ARN
	execs     map[string]*execution // by ARN
	byMachine map[string][]*execution
	running   int
	tokens    map[string]*recorder // task tokens awaiting SendTask*
	vc        catalog              // versions and aliases

	acts       activities           // activities, their queued tasks and waiting workers
	attrs      attributes           // tags and configurations
	runs       map[string]*mapRun   // map runs by ARN (mapruns.go)
	runsByExec map[string][]*mapRun // … by parent execution, oldest first

	wakes wakes         // parked executions by due time (park.go)
	poke  chan struct{} // runWakes looks at the earliest again

	parsedMu sync.Mutex
	parsed   map[string]*asl.StateMachine // recorded definitions, parsed (machineOf)

	// afterStart, set by tests only, runs in launch between the engine's
	// start of a run and its attachment (the window a fast park opens).
	afterStart func(arn string)
}

type machine struct {
	meta     machineMeta
	sm       *asl.StateMachine
	template bool // registered at start, not persisted
}

// execution is the in-memory index entry of one execution: what listing,
// idempotent starts and routing need. Input, output and history stay on
// disk.
type execution struct {
	arn, smARN, name, tenant string
	inputSum                 [32]byte
	start                    time.Time
	dir                      string
	versionARN, aliasARN     string

	// guarded by Manager.mu
	// starting is closed once the start is durable (or failed: startErr);
	// a start sent again meanwhile waits for it before it answers.
	starting         chan struct{}
	startErr         error
	status           string
	stop             time.Time
	x                *asl.Execution
	stopErr, stopWhy string
	// stalled is set on a RUNNING execution whose end (or a history
	// event) could not be persisted: the engine no longer runs it, the
	// status stays RUNNING, and the next start resumes it from its history.
	stalled *stall
	// damage is set on an execution whose metadata could not be read
	// (status StatusDamaged): its name stays reserved.
	damage *damage
	// redriveCount and redriveDate change when it is redriven (redrive.go).
	redriveCount int
	redriveDate  time.Time
	// testCase is the mock configuration's test case it runs ("" for none).
	testCase string
	// park is set while it is parked (park.go).
	park *parked

	// run is the map run a child execution belongs to (nil for any
	// other), index its place in it (mapruns.go); waiters are closed when
	// it ends.
	run     *mapRun
	index   int
	waiters []chan struct{}
}

// stall is what a stalled execution waits with: why, the end it reached
// (nil when the engine did not get that far) and its recorder, for a
// StopExecution that closes it once the disk takes writes again.
type stall struct {
	err     string
	res     *asl.Result
	rec     *recorder
	closing bool
}

// Open loads the state machines and executions persisted under cfg.Dir and
// resumes every RUNNING execution. Close stops them without recording them
// as stopped, so the next Open resumes them again.
func Open(ctx context.Context, cfg Config) (*Manager, error) {
	if cfg.Dir == "" {
		return nil, errors.New("control: Config.Dir is empty")
	}
	if cfg.Registry == nil {
		cfg.Registry = asl.NewRegistry()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	opts := []asl.Option{asl.WithLogger(cfg.Logger)}
	if cfg.Clock != nil {
		opts = append(opts, asl.WithClock(cfg.Clock))
		if cfg.Now == nil {
			cfg.Now = cfg.Clock.Now
		}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxExecutions <= 0 {
		cfg.MaxExecutions = DefaultMaxExecutions
	}
	if cfg.MaxRunning <= 0 {
		cfg.MaxRunning = DefaultMaxRunning
	}
	root, stop := context.WithCancel(context.WithoutCancel(ctx))
	m := &Manager{
		cfg: cfg, log: cfg.Logger, now: cfg.Now, root: root, stop: stop,
		disk: cfg.disk, quarantine: quarantine.Beside(cfg.Dir, cfg.Logger),
		machines: map[string]*machine{}, execs: map[string]*execution{}, byMachine: map[string][]*execution{},
		tokens: map[string]*recorder{}, runs: map[string]*mapRun{}, runsByExec: map[string][]*mapRun{},
		poke: make(chan struct{}, 1),
	}
	m.vc.init(cfg.RouteSource)
	m.eng = asl.New(cfg.Registry, append(opts, asl.WithActivities(m.scheduleActivity, m.activityFor))...)
	for _, d := range []string{m.machinesDir(), m.executionsDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			stop()
			return nil, fmt.Errorf("control: %w", err)
		}
	}
	// What a crash left in the journal is written to the executions'
	// files before they are read.
	j, err := openJournal(cfg.Dir, m.quarantine, cfg.Logger)
	if err != nil {
		stop()
		return nil, err
	}
	m.journal = j
	if err := m.loadMachines(); err != nil {
		m.Close()
		return nil, err
	}
	if err := errors.Join(m.loadActivities(), m.loadAttributes()); err != nil {
		m.Close()
		return nil, err
	}
	if err := m.loadExecutions(ctx); err != nil {
		m.Close()
		return nil, err
	}
	m.wg.Add(1)
	go m.runWakes() // once loadExecutions no longer writes the index unlocked
	return m, nil
}

// Close stops every running execution where it is, leaving it RUNNING on
// disk, and waits for their goroutines; then it drains the journal and
// checkpoints it (no journal is left to replay).
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	m.stop()
	m.wg.Wait()
	m.journal.close()
}

func (m *Manager) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

func (m *Manager) machinesDir() string   { return filepath.Join(m.cfg.Dir, "statemachines") }
func (m *Manager) executionsDir() string { return filepath.Join(m.cfg.Dir, "executions") }

// ListStateMachines lists the state machines by name, after the name in
// next (empty for the first page), at most max of them; the returned next
// is empty on the last page.
func (m *Manager) ListStateMachines(_ context.Context, after string, max int) ([]StateMachine, string) {
	m.mu.Lock()
	all := make([]StateMachine, 0, len(m.machines))
	for _, mc := range m.machines {
		all = append(all, mc.view())
	}
	m.mu.Unlock()
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	i := sort.Search(len(all), func(i int) bool { return all[i].Name > after })
	if after == "" {
		i = 0
	}
	page := all[i:]
	if len(page) > max {
		return page[:max], page[max-1].Name
	}
	return page, ""
}
