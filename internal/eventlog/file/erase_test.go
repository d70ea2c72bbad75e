package file

import (
	"testing"

	"github.com/veredicto/veredicto/internal/eventlog"
	"github.com/veredicto/veredicto/internal/eventlog/eventlogtest"
)

// TestEraseExecution: the stream of an execution (named by its ARN) is
// removed, and reads as empty afterwards, even from the process that had
// its tail; another execution's stream and another tenant's stay.
func TestEraseExecution(t *testing.T) {
	ctx := t.Context()
	l := New(t.TempDir())
	for _, s := range []struct{ tenant, stream string }{{"acme", "arn:aws:states:local:0:execution:executive_search:s-1-run"},
		{"acme", "arn:aws:states:local:0:execution:executive_search:s-2-run"}, {"globex", "arn:aws:states:local:0:execution:executive_search:s-1-run"}} {
		if _, err := l.Append(ctx, s.tenant, s.stream, eventlogtest.Event(t, eventlog.TypeExecutionStep, "", map[string]string{"estado": "x"})); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := l.EraseExecution(ctx, "acme", "s-1-run"); err != nil || n != 1 {
		t.Fatalf("erase: %d, %v; want acme's stream of s-1-run", n, err)
	}
	for _, s := range []struct {
		tenant, stream string
		want           int
	}{{"acme", "arn:aws:states:local:0:execution:executive_search:s-1-run", 0}, {"acme", "arn:aws:states:local:0:execution:executive_search:s-2-run", 1},
		{"globex", "arn:aws:states:local:0:execution:executive_search:s-1-run", 1}} {
		if evs, err := l.Read(ctx, s.tenant, s.stream, 0, 10); err != nil || len(evs) != s.want {
			t.Errorf("%s %s: %d events, %v; want %d", s.tenant, s.stream, len(evs), err, s.want)
		}
	}
}
