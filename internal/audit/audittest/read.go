package audittest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/veredicto/veredicto/internal/audit"
)

// Entries are the entries of chain in the record folder dir, in order;
// an unreadable chain or entry fails t.
func Entries(t testing.TB, dir, chain string) []audit.Entry {
	t.Helper()
	lines, err := audit.NewDir(dir).Lines(context.Background(), chain)
	if err != nil {
		t.Fatalf("the record %s, chain %s: %v", dir, chain, err)
	}
	out := make([]audit.Entry, 0, len(lines))
	for i, l := range lines {
		var e audit.Entry
		if err := json.Unmarshal(l, &e); err != nil {
			t.Fatalf("the record %s, chain %s, entry %d: %v", dir, chain, i, err)
		}
		out = append(out, e)
	}
	return out
}

// Decisions are the decisions among es named name, in order.
func Decisions(es []audit.Entry, name string) []audit.Decision {
	var out []audit.Decision
	for _, e := range es {
		var d audit.Decision
		if e.Kind == audit.KindDecision && json.Unmarshal(e.Data, &d) == nil && d.Name == name {
			out = append(out, d)
		}
	}
	return out
}
