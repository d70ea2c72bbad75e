package chat

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/dynalite"
	"github.com/veredicto/veredicto/internal/store/dynamo"
)

func TestMain(m *testing.M) {
	code := m.Run()
	dynalite.Stop()
	os.Exit(code)
}

// TestHistoryInDynamoDB runs turns with the AWS store (dynalite): each
// tenant's chat has its own turns, history and metrics, even under the
// same chat id.
func TestHistoryInDynamoDB(t *testing.T) {
	client := dynalite.Client(t)
	// A table of its own, so that the test can run again (-count) on the
	// same dynalite and still count from turn 1.
	table := fmt.Sprintf("chat-context-%d", time.Now().UnixNano())
	if err := dynamo.EnsureTable(t.Context(), client, table); err != nil {
		t.Fatal(err)
	}
	r := newRig(t, nil, Options{})
	r.svc.Store = dynamo.New(client, table, nil)
	ctx := context.Background()
	run := func(tenant, msg string) int {
		t.Helper()
		n, err := r.svc.Claim(ctx, tenant, "shared")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.svc.Turn(ctx, tenant, "shared", n, msg); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := run("acme", "Compara a c-001 con c-006 en deuda en la búsqueda cfo-2026"); n != 1 {
		t.Fatalf("first acme turn is %d", n)
	}
	if n := run("acme", "Hola"); n != 2 {
		t.Fatalf("second acme turn is %d", n)
	}
	if n := run("zeta", "Hola"); n != 1 {
		t.Errorf("zeta's first turn in a chat id acme also uses is %d, want 1", n)
	}
	acme, err := r.svc.History(ctx, "acme", "shared", 10)
	if err != nil || len(acme) != 2 || acme[0].Delegated != "search-analyst" || acme[1].User != "Hola" {
		t.Fatalf("acme history = %+v, %v", acme, err)
	}
	zeta, _ := r.svc.History(ctx, "zeta", "shared", 10)
	if len(zeta) != 1 || zeta[0].Delegated != "" {
		t.Errorf("zeta history = %+v", zeta)
	}
	if last, _ := r.svc.History(ctx, "acme", "shared", 1); len(last) != 1 || last[0].Turn != 2 {
		t.Errorf("last 1 turn = %+v", last)
	}
	m, err := r.svc.Metrics(ctx, "acme")
	if err != nil || m.Turns != 2 || m.Agents["search-analyst"].Delegated != 1 {
		t.Errorf("acme metrics = %+v, %v", m, err)
	}
	if m, _ := r.svc.Metrics(ctx, "zeta"); m.Turns != 1 || m.Agents["search-analyst"].Delegated != 0 {
		t.Errorf("zeta metrics = %+v", m)
	}
}
