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
}

// maxCachedSearches bounds the searches a long-lived process (a warm
// Lambda) keeps in memory.
const maxCachedSearches = 8

// load reads a search once per process: documents are immutable once a
// search is submitted, and every task of the execution needs them. A failed
// load is not kept, so a retried task reads again.
func (svc *Service) load(ctx context.Context, tenant, prefix, searchID string) (*Search, error) {
	if err := svc.checkPrefixes(tenant, searchID, prefix, ""); err != nil {
		return nil, err
	}
	cacheKey := tenant + "\x00" + prefix // tenant: stage keys are scoped by it
	svc.mu.Lock()
	if svc.searches == nil {
		svc.searches = map[string]*loadedSearch{}
	}
	ls := svc.searches[cacheKey]
	if ls == nil {
		ls = &loadedSearch{}
		svc.searches[cacheKey] = ls
		svc.order = append(svc.order, cacheKey)
		if len(svc.order) > maxCachedSearches {
			delete(svc.searches, svc.order[0])
			svc.order = svc.order[1:]
		}
	}
	svc.mu.Unlock()
	ls.once.Do(func() {
		if ls.s, ls.err = LoadWithin(ctx, svc.Inputs, prefix, searchID, svc.Limits); ls.err == nil {
			ls.s.Tenant = tenant
		}
	})
	if ls.err != nil {
		svc.mu.Lock()
		if svc.searches[cacheKey] == ls {
			delete(svc.searches, cacheKey)
			for i, p := range svc.order {
				if p == cacheKey {
					svc.order = append(svc.order[:i], svc.order[i+1:]...)
					break
				}
			}
		}
		svc.mu.Unlock()
		return nil, ls.err
	}
	if searchID != "" && ls.s.Docs.SearchID != searchID {
		return nil, &veredicto.InvalidInputError{File: FileConfig, Field: "search_id", Problem: fmt.Sprintf("%q does not match the execution's search_id %q", ls.s.Docs.SearchID, searchID)}
	}
	return ls.s, nil
}

func (s *Search) candidate(id string) (CandidateDocs, error) {
	for _, c := range s.Candidates {
		if c.CandidateID == id {
			return c, nil
		}
	}
	return CandidateDocs{}, &veredicto.InvalidInputError{File: dirCandidates + "/" + id, Problem: "no such candidate folder"}
}
