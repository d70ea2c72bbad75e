package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
)

// Activity tasks. The engine hands a scheduled activity task to
// scheduleActivity (asl.WithActivities) with its token, already persisted
// in the execution's history: it is queued on its activity, or given at
// once to a waiting worker that may take it. GetActivityTask takes one,
// records ActivityStarted in the execution's history and starts the
// task's HeartbeatSeconds; the worker answers through SendTask*, as for
// any task token. A task leaves the queue when its Task ends without a
// worker (TimeoutSeconds, the execution stopped): dropToken forgets it.
//
// After a restart the replay schedules every task still waiting again:
// one no worker had taken is queued anew; one a worker had taken (its
// ActivityStarted is in the history) is not handed out twice, its worker
// still holds the token, and its HeartbeatSeconds count again from the
// restart.

// ActivityTask is what GetActivityTask hands a worker; the zero
// ActivityTask is none (the poll timed out).
type ActivityTask struct {
	Token string
	Input string
}

// activityTask is a scheduled task.
type activityTask struct {
	token, tenant, input string
}

// poller is a GetActivityTask call waiting for a task.
type poller struct {
	tenant string             // "" takes any tenant's task
	got    chan *activityTask // buffered (1): a task, or nil when the activity is deleted
}

func (p *poller) takes(t *activityTask) bool { return p.tenant == "" || p.tenant == t.tenant }

// scheduleActivity is the engine's activities handler.
func (m *Manager) scheduleActivity(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
	ti, ok := asl.TaskFromContext(ctx)
	if !ok || ti.Token == "" {
		return nil, errors.New("control: an activity task came without its token")
	}
	m.mu.Lock()
	rec := m.tokens[ti.Token]
	m.mu.Unlock()
	if rec == nil {
		return nil, fmt.Errorf("control: the token of activity task %s of %s is not recorded", ti.State, ti.ExecutionID)
	}
	if rec.taken(ti.Token) {
		// A worker took it before the restart (or while it was parked) and
		// still holds the token; its heartbeats count from the Task
		// hook's TaskReplay.Beat.
		return nil, nil
	}
	t := &activityTask{token: ti.Token, tenant: rec.e.tenant, input: string(in)}
	if !m.acts.add(ti.Resource, t, false) {
		return nil, asl.MissingActivity(ti.Resource) // deleted since the engine's lookup (exists)
	}
	return nil, nil
}

// activityFor is the engine's lookup of an activity before it schedules a
// task of it (asl.WithActivities): whether the activity exists for the
// execution's tenant. Another tenant's activity is as missing — the
// execution fails exactly as with one never created — so that a tenant's
// definition cannot learn which activities another tenant has. An
// execution this manager does not know (none: every one it runs is
// recorded) is held to nothing more than existence.
func (m *Manager) activityFor(execution, arn string) bool {
	tenant := ""
	m.mu.Lock()
	if e := m.execs[execution]; e != nil {
		tenant = e.tenant
	}
	m.mu.Unlock()
	return m.acts.exists(arn, tenant)
}

// exists reports whether the activity arn exists for tenant ("": an
// operator's execution, which may use any).
func (s *activities) exists(arn, tenant string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.byARN[arn]
	return ok && a.usableBy(tenant)
}

// usableBy reports whether an execution of tenant may schedule tasks of
// a: an operator's activity is everyone's, a tenant's its own.
func (a *activity) usableBy(tenant string) bool {
	return a.meta.Tenant == "" || tenant == "" || a.meta.Tenant == tenant
}

// add gives t to the first waiting worker that takes it, else queues it
// (at the front when it goes back to the queue); false when the activity
// does not exist.
func (s *activities) add(arn string, t *activityTask, front bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.byARN[arn]
	if !ok || !a.usableBy(t.tenant) {
		return false
	}
	if _, queued := s.queued[t.token]; queued {
		return true // scheduled again by the replay of its parked execution
	}
	for i, p := range a.waiting {
		if p.takes(t) {
			a.waiting = slices.Delete(a.waiting, i, i+1)
			s.pollers--
			p.got <- t
			return true
		}
	}
	if front {
		a.queue = slices.Insert(a.queue, 0, t)
	} else {
		a.queue = append(a.queue, t)
	}
	s.queued[t.token] = a
	return true
}

// poll takes the oldest queued task of arn that a worker of tenant takes,
// or else registers a waiting poller (nil task): at most max wait at
// once.
func (s *activities) poll(arn, tenant string, max int) (*activityTask, *poller, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.byARN[arn]
	if !ok {
		return nil, nil, ActivityDoesNotExist(arn)
	}
	p := &poller{tenant: tenant}
	for i, t := range a.queue {
		if p.takes(t) {
			a.queue = slices.Delete(a.queue, i, i+1)
			delete(s.queued, t.token)
			return t, nil, nil
		}
	}
	if s.pollers >= max {
		return nil, nil, errorf(CodeActivityWorkerLimitExceeded, "Activity Worker Limit Exceeded: at most %d GetActivityTask calls wait at once", max)
	}
	p.got = make(chan *activityTask, 1)
	a.waiting = append(a.waiting, p)
	s.pollers++
	return nil, p, nil
}

// leave withdraws a waiting poller; when a task (or the activity's
// deletion) reached it first, that is returned with ok set.
func (s *activities) leave(arn string, p *poller) (t *activityTask, ok bool) {
	s.mu.Lock()
	if a, found := s.byARN[arn]; found {
		if i := slices.Index(a.waiting, p); i >= 0 {
			a.waiting = slices.Delete(a.waiting, i, i+1)
			s.pollers--
			s.mu.Unlock()
			return nil, false
		}
	}
	s.mu.Unlock()
	return <-p.got, true // sent under mu, before the poller left the list
}

// forget takes a task whose Task has ended out of its queue.
func (s *activities) forget(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.queued[token]
	if !ok {
		return
	}
	delete(s.queued, token)
	a.queue = slices.DeleteFunc(a.queue, func(t *activityTask) bool { return t.token == token })
}

// GetActivityTask waits up to ActivityPollTimeout (or until ctx ends) for
// a task of the activity and hands it to worker (a name for the history,
// possibly empty). A worker of tenant takes only that tenant's tasks;
// tenant "" takes any (an operator's). No task is the zero ActivityTask.
func (m *Manager) GetActivityTask(ctx context.Context, arn, worker, tenant string) (ActivityTask, error) {
	if err := checkActivityARN(arn); err != nil {
		return ActivityTask{}, err
	}
	max := m.cfg.MaxActivityPollers
	if max <= 0 {
		max = DefaultMaxActivityPollers
	}
	expired, stop := m.timer(ActivityPollTimeout)
	defer stop()
	for {
		t, p, err := m.acts.poll(arn, tenant, max)
		if err != nil {
			return ActivityTask{}, err
		}
		done := false
		if p != nil {
			select {
			case t = <-p.got:
				if t == nil {
					return ActivityTask{}, nil // the activity was deleted
				}
			case <-expired:
				done = true
			case <-ctx.Done():
				done = true
			case <-m.root.Done():
				done = true
			}
			if done {
				var got bool
				if t, got = m.acts.leave(arn, p); !got || t == nil {
					return ActivityTask{}, nil
				}
				if ctx.Err() != nil || m.root.Err() != nil {
					m.acts.add(arn, t, true) // no one to hand it to: back to the front
					return ActivityTask{}, nil
				}
			}
		}
		if m.startActivity(t, worker) {
			return ActivityTask{Token: t.token, Input: t.input}, nil
		}
		if done {
			return ActivityTask{}, nil
		}
	}
}

// startActivity records that worker took t and starts its HeartbeatSeconds;
// false when its Task no longer waits (it ended meanwhile) or the start
// cannot be recorded.
func (m *Manager) startActivity(t *activityTask, worker string) bool {
	for range maxMoves {
		rec, e, err := m.waiting(t.token)
		arn := ""
		switch {
		case err != nil:
			return false
		case e != nil: // parked: it stays parked, its heartbeats counted in its record
			arn, err = e.arn, m.startParked(e, t, worker)
		default:
			arn, err = rec.e.arn, rec.activityStarted(t.token, worker)
		}
		if errors.Is(err, errMoved) {
			continue
		}
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || ce.Code != CodeTaskTimedOut { // not a Task that just ended
				m.log.Error("an activity task could not be handed to its worker", "execution", arn, "error", err)
			}
			return false
		}
		if rec == nil {
			return true
		}
		_ = m.beatLive(t.token)
		return true
	}
	return false
}

// timer starts a timer of d on the manager's clock.
func (m *Manager) timer(d time.Duration) (<-chan time.Time, func() bool) {
	if m.cfg.Clock != nil {
		return m.cfg.Clock.NewTimer(d)
	}
	t := time.NewTimer(d)
	return t.C, t.Stop
}

// activityStarted records in the history that worker took the activity
// task waiting on tok (Step Functions' ActivityStarted).
func (r *recorder) activityStarted(tok, worker string) error {
	if r.m.isClosed() {
		return errorf(CodeServiceUnavailable, "the server is shutting down")
	}
	if p := r.lost.Load(); p != nil {
		return *p
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.parked {
		return errMoved // to the parked record
	}
	// Only a Task still waiting on tok (open: its outcome not recorded)
	// is started.
	state, ok := r.states.get(tok)
	i := slices.IndexFunc(r.open, func(o pair[string]) bool { return o.v == tok })
	if !ok || i < 0 {
		return errorf(CodeTaskTimedOut, "Task Timed Out: 'Provided task does not exist anymore'")
	}
	scope := strings.TrimSuffix(r.open[i].k, "|"+state)
	ev := asl.Event{Type: "ActivityStarted", State: state, Scope: scope, Timestamp: r.m.now().UTC()}
	if err := r.persistWorker(ev, worker); err != nil {
		r.historyLost(err)
		return err
	}
	return nil
}

// taken reports whether a worker took the activity task waiting on tok
// before the restart this recorder resumes from.
func (r *recorder) taken(tok string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rp == nil {
		return false
	}
	_, ok := r.rp.taken.get(tok)
	return ok
}
