package confirm

import (
	"context"

	"github.com/veredicto/veredicto"
)

// List returns the tenant's confirmations awaiting a decision or its
// delivery, oldest first, at most MaxList; more reports others past them
// (they show once older ones are decided). Expired ones are left out.
func (s *Service) List(ctx context.Context, tenant string) (views []View, more bool, err error) {
	now := s.now()
	recs, more, err := s.Store.List(ctx, tenant, now, MaxList)
	if err != nil {
		return nil, false, &veredicto.TransientError{Op: "list confirmations", Err: err}
	}
	views = make([]View, 0, len(recs))
	for _, r := range recs {
		views = append(views, r.View(now))
	}
	return views, more, nil
}
