package confirm

import (
	"context"
	"errors"
	"fmt"

	"github.com/veredicto/veredicto"
)

// Redeliver finishes the delivery of a recorded decision (a confirmation
// left resolving by a crash or a failed SendTask).
func (s *Service) Redeliver(ctx context.Context, tenant, id string) (View, error) {
	rec, err := s.Store.Get(ctx, tenant, id)
	if err != nil {
		return View{}, err
	}
	if rec.Status != StatusResolving {
		return rec.View(s.now()), nil
	}
	return s.deliver(ctx, rec)
}

// ExpireExecution expires the pending confirmations whose task waited in
// the execution executionARN, which has ended (stopped, failed, or went on
// without them): nobody should be asked to decide for a task that no longer
// waits. Confirmations without a task token (a keyed question a later run
// applies) stay. It returns how many it expired; each is announced on the
// event log like any expiry.
func (s *Service) ExpireExecution(ctx context.Context, tenant, executionARN string) (int, error) {
	now := s.now()
	recs, _, err := s.Store.List(ctx, tenant, now, MaxList)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, rec := range recs {
		if rec.Execution != executionARN || rec.Status != StatusPending || rec.TaskToken == "" {
			continue
		}
		rec.Status, rec.ResolvedAt = StatusExpired, now
		if err := s.Store.Put(ctx, rec, rec.Version); err != nil {
			var ce *veredicto.ConflictError
			if !errors.As(err, &ce) { // a concurrent decision or re-ask won: leave it to that
				errs = append(errs, fmt.Errorf("confirmation %s: %w", rec.ID, err))
			}
			continue
		}
		s.emitResolved(ctx, rec)
		n++
	}
	return n, errors.Join(errs...)
}

// RedeliverAll finishes, for each tenant, the deliveries this process owns
// (Record.Resolver) that a crash or a failed SendTask left resolving: the
// decision was recorded, the waiting task never heard it. A server calls it
// once it can take SendTask calls again, after a restart. It returns how
// many decisions it delivered; errors are per confirmation and joined.
func (s *Service) RedeliverAll(ctx context.Context, tenants []string) (int, error) {
	delivered := 0
	var errs []error
	for _, tenant := range tenants {
		recs, more, err := s.Store.List(ctx, tenant, s.now(), MaxList)
		if err != nil {
			errs = append(errs, fmt.Errorf("tenant %q: %w", tenant, err))
			continue
		}
		if more {
			s.logger().WarnContext(ctx, "more open confirmations than one pass reads; deliveries among the newer ones wait for a later start", "tenant", tenant, "read", len(recs))
		}
		for _, r := range recs {
			if r.Status != StatusResolving || r.Resolver != s.Resolver {
				continue
			}
			v, err := s.Redeliver(ctx, tenant, r.ID)
			if err != nil {
				errs = append(errs, fmt.Errorf("confirmation %s: %w", r.ID, err))
				continue
			}
			if v.Status != StatusResolving {
				delivered++
			}
		}
	}
	return delivered, errors.Join(errs...)
}
