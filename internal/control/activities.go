package control

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Activities. An activity is a named queue of tasks: a Task state whose
// Resource is its ARN schedules a task on it (activitytasks.go) and a
// worker takes it with GetActivityTask, then answers with SendTaskSuccess
// or SendTaskFailure on the task's token. Activities are persisted, one
// file each (activities/<name>.json); their tasks are the executions',
// recorded in their histories, and wait again after a restart.
//
// An activity created with a tenant's key is that tenant's (Tenant set):
// the API shows it to that tenant and to operators only. One created with
// an operator's key is everyone's. Either way a task goes only to a
// worker of its execution's tenant, or to an operator's.

// Step Functions' quotas on activities.
const (
	// MaxActivities bounds the activities registered at once.
	MaxActivities = 10_000
	// DefaultMaxActivityPollers bounds the GetActivityTask calls waiting
	// at once (Config.MaxActivityPollers), over every activity.
	DefaultMaxActivityPollers = 1000
	// ActivityPollTimeout is how long GetActivityTask waits for a task.
	ActivityPollTimeout = 60 * time.Second
)

// Activity describes an activity.
type Activity struct {
	ARN, Name string
	// Tenant is the tenant whose key created it; "" for an operator's.
	Tenant  string
	Created time.Time
	// Encryption is the configuration it was created with (nil: none).
	Encryption *EncryptionConfiguration
}

// activityMeta is activities/<name>.json.
type activityMeta struct {
	ARN        string                   `json:"activityArn"`
	Name       string                   `json:"name"`
	Tenant     string                   `json:"tenant,omitempty"`
	Created    time.Time                `json:"creationDate"`
	Encryption *EncryptionConfiguration `json:"encryptionConfiguration,omitempty"`
}

func (a activityMeta) view() Activity {
	return Activity{ARN: a.ARN, Name: a.Name, Tenant: a.Tenant, Created: a.Created, Encryption: a.Encryption}
}

// ActivityARN is the local ARN of the activity name.
func ActivityARN(name string) string { return arnPrefix + "activity:" + name }

func checkActivityARN(arn string) error {
	kind, rest, ok := parseARN(arn)
	if !ok || kind != "activity" || strings.Contains(rest, ":") {
		return invalidArn(arn, "activity")
	}
	return nil
}

// ActivityDoesNotExist is the answer for a missing activity.
func ActivityDoesNotExist(arn string) error {
	return errorf(CodeActivityDoesNotExist, "Activity Does Not Exist: '%s'", arn)
}

// activities holds the activities, their queued tasks and the workers
// waiting for them.
type activities struct {
	// mu is a leaf: nothing else is locked while it is held.
	mu      sync.Mutex
	byARN   map[string]*activity
	queued  map[string]*activity // token → the activity whose queue holds it
	pollers int                  // GetActivityTask calls waiting
}

type activity struct {
	meta    activityMeta
	queue   []*activityTask // scheduled, no worker yet; oldest first
	waiting []*poller       // workers waiting; oldest first
}

func (m *Manager) activitiesDir() string { return filepath.Join(m.cfg.Dir, "activities") }

// loadActivities reads the persisted activities at Open. One whose file
// does not decode is quarantined and skipped: its name is free again.
func (m *Manager) loadActivities() error {
	m.acts.byARN, m.acts.queued = map[string]*activity{}, map[string]*activity{}
	if err := os.MkdirAll(m.activitiesDir(), 0o755); err != nil {
		return fmt.Errorf("control: %w", err)
	}
	entries, err := os.ReadDir(m.activitiesDir())
	if err != nil {
		return fmt.Errorf("control: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		var meta activityMeta
		path := filepath.Join(m.activitiesDir(), e.Name())
		if err := readJSON(path, &meta); err != nil {
			var de *decodeError
			if !errors.As(err, &de) {
				return fmt.Errorf("control: %w", err)
			}
			_, _ = m.quarantine.Replace(path, "the activity "+de.reason, nil)
			continue
		}
		m.acts.byARN[meta.ARN] = &activity{meta: meta}
	}
	return nil
}

// CreateActivity creates an activity for tenant ("" for an operator's)
// with tags and an encryption configuration (nil: none). Creating it again
// returns the existing one, its tags unchanged, as Step Functions does;
// with another encryption configuration, or when another tenant holds the
// name (names are one namespace, as an account's), ActivityAlreadyExists.
func (m *Manager) CreateActivity(_ context.Context, name, tenant string, tags []Tag, enc *EncryptionConfiguration) (Activity, error) {
	if !ValidName(name) {
		return Activity{}, errorf(CodeInvalidName, "Invalid Name: '%s'", name)
	}
	arn := ActivityARN(name)
	if err := errors.Join(CheckTags(tags, 0), enc.check()); err != nil {
		return Activity{}, withResource(firstError(err), arn)
	}
	m.acts.mu.Lock()
	if old, ok := m.acts.byARN[arn]; ok {
		m.acts.mu.Unlock()
		switch {
		case old.meta.Tenant != "" && old.meta.Tenant != tenant && tenant != "":
			return Activity{}, errorf(CodeActivityAlreadyExists, "Activity already exists: '%s' (activity names are shared by every tenant of this server)", arn)
		case encryptionKey(old.meta.Encryption) != encryptionKey(enc):
			return Activity{}, errorf(CodeActivityAlreadyExists, "Activity already exists: '%s'. EncryptionConfiguration may not be updated.", arn)
		}
		return old.meta.view(), nil
	}
	if len(m.acts.byARN) >= MaxActivities {
		m.acts.mu.Unlock()
		return Activity{}, errorf(CodeActivityLimitExceeded, "Activity Limit Exceeded: at most %d activities", MaxActivities)
	}
	meta := activityMeta{ARN: arn, Name: name, Tenant: tenant, Created: m.now().UTC(), Encryption: enc}
	err := writeAtomic(filepath.Join(m.activitiesDir(), name+".json"), meta)
	if err == nil {
		m.acts.byARN[arn] = &activity{meta: meta}
	}
	m.acts.mu.Unlock()
	if err != nil {
		return Activity{}, fmt.Errorf("create activity %s: %w", name, err)
	}
	// Whatever a deleted activity of the same name had is gone with it.
	m.dropAttributes(arn)
	if len(tags) > 0 {
		if err := m.putAttributes(arn, Attributes{Tags: uniqueTags(tags)}); err != nil {
			return Activity{}, err
		}
	}
	return meta.view(), nil
}

// activity returns the activity arn names.
func (m *Manager) activity(arn string) (Activity, bool) {
	m.acts.mu.Lock()
	defer m.acts.mu.Unlock()
	a, ok := m.acts.byARN[arn]
	if !ok {
		return Activity{}, false
	}
	return a.meta.view(), true
}

// DescribeActivity returns an activity.
func (m *Manager) DescribeActivity(_ context.Context, arn string) (Activity, error) {
	if err := checkActivityARN(arn); err != nil {
		return Activity{}, err
	}
	a, ok := m.activity(arn)
	if !ok {
		return Activity{}, ActivityDoesNotExist(arn)
	}
	return a, nil
}

// ListActivities lists the activities visible takes (nil: all) by name,
// after the name in next (empty for the first page), at most max of them;
// the returned next is empty on the last page. A token that names no
// position is InvalidToken. The filter applies before the paging, so a
// page and its token are made of visible activities only (a tenant's
// listing names no other tenant's activity, not even in its token).
func (m *Manager) ListActivities(_ context.Context, after string, max int, visible func(Activity) bool) ([]Activity, string, error) {
	if after != "" && !ValidName(after) {
		return nil, "", errorf(CodeInvalidToken, "Invalid Token: '%s'", after)
	}
	m.acts.mu.Lock()
	all := make([]Activity, 0, len(m.acts.byARN))
	for _, a := range m.acts.byARN {
		if v := a.meta.view(); visible == nil || visible(v) {
			all = append(all, v)
		}
	}
	m.acts.mu.Unlock()
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	i := 0
	if after != "" {
		i = sort.Search(len(all), func(i int) bool { return all[i].Name > after })
	}
	page := all[i:]
	if len(page) > max {
		return page[:max], page[max-1].Name, nil
	}
	return page, "", nil
}

// DeleteActivity deletes an activity; deleting a missing one succeeds, as
// in Step Functions. Workers waiting on it are answered without a task;
// its queued tasks go with it, and their executions wait on until their
// TimeoutSeconds, as no worker can take them any more.
func (m *Manager) DeleteActivity(_ context.Context, arn string) error {
	if err := checkActivityARN(arn); err != nil {
		return err
	}
	m.acts.mu.Lock()
	a, ok := m.acts.byARN[arn]
	if !ok {
		m.acts.mu.Unlock()
		return nil
	}
	err := os.Remove(filepath.Join(m.activitiesDir(), a.meta.Name+".json"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		m.acts.mu.Unlock()
		return fmt.Errorf("delete activity %s: %w", a.meta.Name, err)
	}
	delete(m.acts.byARN, arn)
	for _, t := range a.queue {
		delete(m.acts.queued, t.token)
	}
	for _, p := range a.waiting {
		p.got <- nil // buffered: the poller leaves without a task
	}
	m.acts.pollers -= len(a.waiting)
	a.queue, a.waiting = nil, nil
	m.acts.mu.Unlock()
	m.dropAttributes(arn)
	return nil
}
