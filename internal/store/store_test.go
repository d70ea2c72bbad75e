package store

import (
	"context"
	"fmt"
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
