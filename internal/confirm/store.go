package confirm

import (
	"context"
	"sort"
	"time"

	"github.com/veredicto/veredicto"
)

// Store keeps confirmations, keyed by tenant and id.
//
// A confirmation whose stored bytes no longer decode is returned by Get
// and listed by List as a DamagedRecord (never as an error, which a
// workflow would retry in vain); an adapter that can moves the bytes to
// quarantine and stores the damaged record in their place. Put with
// expect equal to its Version replaces it.
type Store interface {
	// Get returns a confirmation; a *veredicto.NotFoundError when the
	// tenant has none with that id.
	Get(ctx context.Context, tenant, id string) (Record, error)
	// List returns the tenant's open confirmations (Open at now), oldest
	// first (by CreatedAt, then id), at most limit (MaxList when limit is
	// not in 1–MaxList); more reports open ones past them or left unread.
	List(ctx context.Context, tenant string, now time.Time, limit int) (recs []Record, more bool, err error)
	// Put writes r with Version expect+1 if the stored version is expect
	// (0: absent), else returns a *veredicto.ConflictError.
	Put(ctx context.Context, r Record, expect int) error
}

// NotFound is the error a Store returns for a confirmation the tenant does
// not have.
func NotFound(id string) error { return &veredicto.NotFoundError{What: "confirmation " + id} }

// listLimit is a Store's page size for a List limit.
func listLimit(limit int) int {
	if limit <= 0 || limit > MaxList {
		return MaxList
	}
	return limit
}

// FirstOpen sorts the open records of rs oldest first and keeps at most
// limit (MaxList when limit is not in 1–MaxList); more reports whether it
// cut any. Every Store's List ends with it.
func FirstOpen(rs []Record, now time.Time, limit int) ([]Record, bool) {
	open := rs[:0:0]
	for _, r := range rs {
		if r.Open(now) {
			open = append(open, r)
		}
	}
	sort.Slice(open, func(i, j int) bool {
		if !open[i].CreatedAt.Equal(open[j].CreatedAt) {
			return open[i].CreatedAt.Before(open[j].CreatedAt)
		}
		return open[i].ID < open[j].ID
	})
	if limit = listLimit(limit); len(open) > limit {
		return open[:limit], true
	}
	return open, false
}
