package confirm

import (
	"context"
	"fmt"

	"github.com/veredicto/veredicto"
)

// List returns the tenant's confirmations awaiting a decision or its
// delivery, and the damaged ones (StatusDamaged), oldest first, at most
// MaxList; more reports others past them (they show once older ones are
// decided). Expired ones are left out.
func (s *Service) List(ctx context.Context, tenant string) (views []View, more bool, err error) {
	now := s.now()
	recs, more, err := s.Store.List(ctx, tenant, now, MaxList)
	if err != nil {
		return nil, false, storeErr("list confirmations", err)
	}
	views = make([]View, 0, len(recs))
	for _, r := range recs {
		views = append(views, r.View(now))
	}
	return views, more, nil
}

// storeErr is a failure of the Store as callers see it: an error of a
// named kind (a damaged record, a conflict, a bad request) keeps its name,
// since trying again cannot change it; anything else (an outage) is a
// TransientError, which the workflows retry.
func storeErr(op string, err error) error {
	if veredicto.Kind(err) != "" {
		return fmt.Errorf("%s: %w", op, err)
	}
	return &veredicto.TransientError{Op: op, Err: err}
}
