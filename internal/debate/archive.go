package debate

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/veredicto/veredicto"
)

// checkKeys refuses a Flow whose tenant or debate id could not have come
// from Prepare: they make the log store's keys (LogKey, RoundKey), where a
// "/" would reach another debate's or another tenant's.
func (f *Flow) checkKeys() error {
	switch {
	case !validID(f.Tenant):
		return &veredicto.InvalidInputError{File: "state input", Field: "tenant", Problem: "is missing or invalid"}
	case !validID(f.Result.SessionID):
		return &veredicto.InvalidInputError{File: "state input", Field: "result.SessionID", Problem: "is missing or invalid"}
	}
	return nil
}

// RoundKey is where the log store keeps an archived round of debate id.
func RoundKey(tenant, id string, number int) string {
	return LogKey(tenant, id) + "/rounds/" + strconv.Itoa(number)
}

// archive moves the answers of every round but the last out of the state:
// each such round is stored whole under RoundKey (written once, so a retried
// step stores the same round it carried in) and stays in the Flow without
// its answers, marked Archived. The steps before Finish read only the last
// round's answers (and the rebuttals, which stay); Finish restores the rest
// for the report. Without a log store the rounds stay in the state.
func (s *Steps) archive(ctx context.Context, f *Flow) error {
	rounds := f.Result.Rounds
	if s.Logs == nil || len(rounds) < 2 {
		return nil
	}
	if err := f.checkKeys(); err != nil {
		return err
	}
	for i := range len(rounds) - 1 {
		rd := &rounds[i]
		if rd.Archived {
			continue
		}
		b, err := json.Marshal(rd)
		if err != nil {
			return fmt.Errorf("archive round %d: %w", rd.Number, err)
		}
		if _, err := s.Logs.PutIfAbsent(ctx, RoundKey(f.Tenant, f.Result.SessionID, rd.Number), b); err != nil {
			return &veredicto.TransientError{Op: fmt.Sprintf("archive debate %s round %d", f.Result.SessionID, rd.Number), Err: err}
		}
		rd.Answers, rd.Archived = nil, true
	}
	return nil
}

// restore reads the archived rounds back (see archive).
func (s *Steps) restore(ctx context.Context, f *Flow) error {
	for i := range f.Result.Rounds {
		rd := &f.Result.Rounds[i]
		if !rd.Archived {
			continue
		}
		if s.Logs == nil {
			return fmt.Errorf("debate %s: round %d is archived and there is no log store to read it from", f.Result.SessionID, rd.Number)
		}
		b, ok, err := s.Logs.Get(ctx, RoundKey(f.Tenant, f.Result.SessionID, rd.Number))
		if err != nil {
			return &veredicto.TransientError{Op: fmt.Sprintf("read debate %s round %d", f.Result.SessionID, rd.Number), Err: err}
		}
		if !ok {
			return fmt.Errorf("debate %s: round %d is archived but missing from the log store", f.Result.SessionID, rd.Number)
		}
		var whole Round
		if err := json.Unmarshal(b, &whole); err != nil || whole.Number != rd.Number {
			return fmt.Errorf("debate %s: the archived round %d is damaged (%v)", f.Result.SessionID, rd.Number, err)
		}
		whole.Archived = false
		*rd = whole
	}
	return nil
}
