package search

import (
	"context"
	"fmt"
	"sync"

	"github.com/veredicto/veredicto"
)

type loadedSearch struct {
	once sync.Once
	s    *Search
	err  error
	// given: handed over by UseLoaded, for the next Validate (guarded by
	// the Service's mu).
	given bool
}

// maxCachedSearches bounds the searches a long-lived process (a warm
// Lambda) keeps in memory.
const maxCachedSearches = 8

// load reads a search once per process for each version of it: every
// task of an execution needs the same documents. version is the one the
// execution's Validate loaded (Plan.InputVersion; "" takes any copy): a
// copy of another version (the search was uploaded again and re-run) is
// read again. A failed load is not kept, so a retried task reads again.
func (svc *Service) load(ctx context.Context, tenant, prefix, searchID, version string) (*Search, error) {
	if err := svc.checkPrefixes(tenant, searchID, prefix, ""); err != nil {
		return nil, err
	}
	ls, err := svc.cached(ctx, tenant, prefix, searchID)
	if err == nil && version != "" && ls.s.Version != version {
		svc.forget(tenant, prefix, ls)
		if ls, err = svc.cached(ctx, tenant, prefix, searchID); err == nil && ls.s.Version != version {
			svc.logger().WarnContext(ctx, "search documents changed while the execution ran; using the current ones",
				"tenant", tenant, "search_id", searchID, "validated", version, "current", ls.s.Version)
		}
	}
	if err != nil {
		return nil, err
	}
	s := ls.s
	if searchID != "" && s.Docs.SearchID != searchID {
		return nil, &veredicto.InvalidInputError{File: FileConfig, Field: "search_id", Problem: fmt.Sprintf("%q does not match the execution's search_id %q", s.Docs.SearchID, searchID)}
	}
	return s, nil
}

// loadFresh reads a search from its documents, whatever copy is cached,
// and caches it: Validate, the first task of every run, starts from what
// is uploaded now — or from the copy UseLoaded handed over for it.
func (svc *Service) loadFresh(ctx context.Context, tenant, prefix, searchID string) (*Search, error) {
	svc.mu.Lock()
	ls := svc.searches[cacheKey(tenant, prefix)]
	given := ls != nil && ls.given
	if given {
		ls.given = false
	}
	svc.mu.Unlock()
	if !given {
		svc.forget(tenant, prefix, nil)
	}
	return svc.load(ctx, tenant, prefix, searchID, "")
}

// UseLoaded hands the service a search its caller has just loaded (with
// LoadWithin, from the service's Inputs, under prefix, within its Limits),
// so that the next Validate of tenant's search under prefix uses it
// instead of reading every document again: "veredicto search run" checks
// the documents before it starts the run, and the run evaluates what it
// checked.
func (svc *Service) UseLoaded(tenant, prefix string, s *Search) {
	s.Tenant = tenant
	ls := &loadedSearch{s: s, given: true}
	ls.once.Do(func() {}) // loaded already
	svc.forget(tenant, prefix, nil)
	svc.mu.Lock()
	defer svc.mu.Unlock()
	svc.remember(cacheKey(tenant, prefix), ls)
}

func cacheKey(tenant, prefix string) string { return tenant + "\x00" + prefix } // tenant: stage keys are scoped by it

// cached returns the cached copy of a search, loading it if there is none.
func (svc *Service) cached(ctx context.Context, tenant, prefix, searchID string) (*loadedSearch, error) {
	key := cacheKey(tenant, prefix)
	svc.mu.Lock()
	ls := svc.searches[key]
	if ls == nil {
		ls = &loadedSearch{}
		svc.remember(key, ls)
	}
	svc.mu.Unlock()
	ls.once.Do(func() {
		if ls.s, ls.err = LoadWithin(ctx, svc.Inputs, prefix, searchID, svc.Limits); ls.err == nil {
			ls.s.Tenant = tenant
		}
	})
	if ls.err != nil {
		svc.forget(tenant, prefix, ls)
		return nil, ls.err
	}
	return ls, nil
}

// remember caches ls under key, dropping the oldest search past
// maxCachedSearches; the caller holds svc.mu.
func (svc *Service) remember(key string, ls *loadedSearch) {
	if svc.searches == nil {
		svc.searches = map[string]*loadedSearch{}
	}
	svc.searches[key] = ls
	svc.order = append(svc.order, key)
	if len(svc.order) > maxCachedSearches {
		delete(svc.searches, svc.order[0])
		svc.order = svc.order[1:]
	}
}

// forget drops the cached copy of a search; with only set, only that copy
// (a concurrent task may have cached a newer one already).
func (svc *Service) forget(tenant, prefix string, only *loadedSearch) {
	key := cacheKey(tenant, prefix)
	svc.mu.Lock()
	defer svc.mu.Unlock()
	ls := svc.searches[key]
	if ls == nil || (only != nil && ls != only) {
		return
	}
	delete(svc.searches, key)
	for i, p := range svc.order {
		if p == key {
			svc.order = append(svc.order[:i], svc.order[i+1:]...)
			break
		}
	}
}

// stageCache keeps the intact stage records of a loaded search that this
// process stored or read, decoded, so that each later task of a candidate
// (GEM2 reads GEM5 and GEM1 again, GEM4 every stage before it, the report
// all of them) neither reads the store nor decodes the record again. A
// stage key names everything its output depends on and the store writes
// a key once, so an entry never goes stale; it lives as long as its
// loaded search (Validate reloads the search: a new run starts empty).
// Contracts handed out are shared: they are only read. At most
// maxStageBytes of records are kept, the oldest dropped first. Safe for
// concurrent use; the zero value is ready.
type stageCache struct {
	mu    sync.Mutex
	byKey map[string]cachedStage
	order []string // keys, oldest first
	bytes int
}

// cachedStage is a record as readStage returns it (Reused, Raw set) and
// its decoded contract (a Contract[C] for the stage's C).
type cachedStage struct {
	rec      StageRecord
	contract any
}

// maxStageBytes bounds the records one search keeps (their raw bytes;
// decoded, about as much again).
const maxStageBytes = 16 << 20

func (c *stageCache) get(key string) (cachedStage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	return e, ok
}

func (c *stageCache) put(key string, rec StageRecord, contract any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[key]; ok || len(rec.Raw) > maxStageBytes {
		return
	}
	if c.byKey == nil {
		c.byKey = map[string]cachedStage{}
	}
	for c.bytes+len(rec.Raw) > maxStageBytes {
		old := c.order[0]
		c.order = c.order[1:]
		c.bytes -= len(c.byKey[old].rec.Raw)
		delete(c.byKey, old)
	}
	c.byKey[key] = cachedStage{rec: rec, contract: contract}
	c.order = append(c.order, key)
	c.bytes += len(rec.Raw)
}

func (s *Search) candidate(id string) (CandidateDocs, error) {
	for _, c := range s.Candidates {
		if c.CandidateID == id {
			return c, nil
		}
	}
	return CandidateDocs{}, &veredicto.InvalidInputError{File: dirCandidates + "/" + id, Problem: "no such candidate folder"}
}
