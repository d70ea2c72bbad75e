// Package eventlogtest is what the event log's adapters share in their
// tests: an event built or the test stopped, and the ids of the events a
// Read returned.
package eventlogtest

import (
	"testing"

	"github.com/veredicto/veredicto/internal/eventlog"
)

// Event is eventlog.New's event; an error fails t.
func Event(t testing.TB, typ, key string, v any) eventlog.Event {
	t.Helper()
	ev, err := eventlog.New(typ, key, v)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// IDs are the ids of evs, in order.
func IDs(evs []eventlog.Event) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}
