package local

import (
	"context"
	"testing"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/store/file"
)

func TestLocalStartRunsOnce(t *testing.T) {
	kv := file.NewMemory()
	runs := 0
	l := New(kv, func(ctx context.Context, name string, input []byte) (*asl.Result, error) {
		runs++
		return &asl.Result{Status: asl.StatusSucceeded}, nil
	})
	ctx := context.Background()
	for i := range 3 {
		ex, err := l.Start(ctx, "acme--s1", []byte(`{}`))
		if err != nil || ex.Started != (i == 0) {
			t.Fatalf("start %d: %+v %v", i, ex, err)
		}
	}
	if runs != 1 {
		t.Errorf("runs = %d, want 1", runs)
	}
	st, err := l.Describe(ctx, "acme--s1")
	if err != nil || st.Status != "SUCCEEDED" {
		t.Errorf("describe: %+v %v", st, err)
	}
}
