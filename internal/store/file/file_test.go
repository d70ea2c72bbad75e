package file

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
)

type kv interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	PutIfAbsent(ctx context.Context, key string, value []byte) (bool, error)
}

func TestPutIfAbsentWritesOnce(t *testing.T) {
	for name, s := range map[string]kv{"local": NewLocal(t.TempDir()), "memory": NewMemory()} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			if _, ok, err := s.Get(ctx, "stage/s/c/gem1/0/h"); ok || err != nil {
				t.Fatalf("Get on empty store: ok=%v err=%v", ok, err)
			}
			var wg sync.WaitGroup
			wins := make(chan string, 20)
			for i := 0; i < 20; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					v := fmt.Sprintf("writer-%d", i)
					wrote, err := s.PutIfAbsent(ctx, "stage/s/c/gem1/0/h", []byte(v))
					if err != nil {
						t.Error(err)
					}
					if wrote {
						wins <- v
					}
				}()
			}
			wg.Wait()
			close(wins)
			var winners []string
			for w := range wins {
				winners = append(winners, w)
			}
			if len(winners) != 1 {
				t.Fatalf("%d writers won, want exactly 1", len(winners))
			}
			got, ok, err := s.Get(ctx, "stage/s/c/gem1/0/h")
			if err != nil || !ok || string(got) != winners[0] {
				t.Errorf("Get = %q %v %v, want the winner %q", got, ok, err, winners[0])
			}
		})
	}
}

func TestListByPrefix(t *testing.T) {
	ctx := context.Background()
	for name, kv := range map[string]interface {
		PutIfAbsent(context.Context, string, []byte) (bool, error)
		List(context.Context, string) ([]string, error)
	}{"local": NewLocal(t.TempDir()), "memory": NewMemory()} {
		for _, k := range []string{"stage/s-1/c-002/gem1/0/h", "stage/s-1/c-001/gem1/0/h", "stage/s-10/c-001/gem1/0/h", "search/s-1", "odd/a b/ñ%/x"} {
			if _, err := kv.PutIfAbsent(ctx, k, []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
		got, err := kv.List(ctx, "stage/s-1/")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, ",") != "stage/s-1/c-001/gem1/0/h,stage/s-1/c-002/gem1/0/h" {
			t.Errorf("%s: List = %v", name, got)
		}
		if got, _ := kv.List(ctx, "odd/"); len(got) != 1 || got[0] != "odd/a b/ñ%/x" {
			t.Errorf("%s: escaped key listed as %v", name, got)
		}
		// Prefixes that end inside a segment, inside an escaped folder,
		// at a missing folder, or at the top.
		for prefix, want := range map[string]string{
			"stage/s-1":     "stage/s-1/c-001/gem1/0/h,stage/s-1/c-002/gem1/0/h,stage/s-10/c-001/gem1/0/h",
			"odd/a b/ñ":     "odd/a b/ñ%/x",
			"odd/a b/ñ%/":   "odd/a b/ñ%/x",
			"none/at/all/":  "",
			"s":             "search/s-1,stage/s-1/c-001/gem1/0/h,stage/s-1/c-002/gem1/0/h,stage/s-10/c-001/gem1/0/h",
			"stage//s-1/c-": "",
		} {
			if got, _ := kv.List(ctx, prefix); strings.Join(got, ",") != want {
				t.Errorf("%s: List(%q) = %v, want %s", name, prefix, got, want)
			}
		}
	}
}
