package control

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/veredicto/veredicto/internal/asl"
)

// HistoryEvent is one persisted history event with the id of the event
// before it.
type HistoryEvent struct {
	asl.Event
	PreviousID int
	// RedriveCount is how many ExecutionRedriven events the history
	// holds up to this one.
	RedriveCount int
	// WorkerName, on an ActivityStarted event, is the name the worker
	// that took the activity task gave (GetActivityTask's workerName).
	WorkerName string
}

// History returns a page of an execution's history: at most max events
// from position next (a token a previous page returned, "" for the
// first), oldest first or, with reverse, newest first.
func (m *Manager) History(_ context.Context, arn, next string, max int, reverse bool) ([]HistoryEvent, string, error) {
	e, err := m.lookup(arn)
	if err != nil {
		return nil, "", err
	}
	path := filepath.Join(e.dir, "history.jsonl")
	total := 0
	if err := readLines(path, nil, func(l line) error {
		if l.Event != nil {
			total++
		}
		return nil
	}); err != nil {
		return nil, "", fmt.Errorf("history of %s: %w", arn, err)
	}
	// A token is the absolute position the next page starts from, marked
	// by direction: "f<i>" returns events i, i+1, …; "r<i>" events i-1,
	// i-2, … — so a running execution's new events never shift a reverse
	// page, and a token serves only the direction that made it.
	lo, hi := 0, min(max, total)
	if reverse {
		lo, hi = total-min(max, total), total
	}
	if next != "" {
		dir, num := next[:1], next[1:]
		n, err := strconv.Atoi(num)
		if err != nil || n < 0 || n > total || (dir == "r") != reverse || (dir != "r" && dir != "f") {
			return nil, "", errorf("InvalidToken", "Invalid Token: '%s'", next)
		}
		if reverse {
			lo, hi = n-min(max, n), n
		} else {
			lo, hi = n, min(n+max, total)
		}
	}
	var out []HistoryEvent
	i, redrives := 0, 0
	err = readLines(path, nil, func(l line) error {
		if l.Event == nil {
			return nil
		}
		if l.Event.Type == "ExecutionRedriven" {
			redrives++
		}
		if i >= lo && i < hi {
			out = append(out, HistoryEvent{Event: *l.Event, PreviousID: l.Prev, RedriveCount: redrives, WorkerName: l.Worker})
		}
		i++
		return nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("history of %s: %w", arn, err)
	}
	if reverse {
		for a, b := 0, len(out)-1; a < b; a, b = a+1, b-1 {
			out[a], out[b] = out[b], out[a]
		}
	}
	switch {
	case reverse && lo > 0:
		return out, "r" + strconv.Itoa(lo), nil
	case !reverse && hi < total:
		return out, "f" + strconv.Itoa(hi), nil
	}
	return out, "", nil
}
