package asl

import (
	"context"
	"encoding/json"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/poll"
)

// TestWaitingTaskStackShrinks: an execution waiting on a task token holds
// its goroutine, whose stack the collector halves while less than a
// quarter of it is in use (plus the runtime's 800-byte guard). The frames
// under a waiting Task (the execution's run, the machine's loop, the
// state's retries, the Task) fit in under 3 KiB, so that stack shrinks to
// 8 KiB: with a frame grown past that, each of the thousands of
// confirmations `veredicto serve` keeps waiting would hold 16 KiB
// (internal/control's BenchmarkWaitingExecutions).
func TestWaitingTaskStackShrinks(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector enlarges every frame")
	}
	const n = 200
	def := `{"StartAt":"Prepare","States":{
	  "Prepare":{"Type":"Pass","Result":{"toolName":"senior_review"},"ResultPath":"$.ask","Next":"Confirm"},
	  "Confirm":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","TimeoutSeconds":604800,
	    "Retry":[{"ErrorEquals":["Custom.Retry"],"MaxAttempts":2}],"Catch":[{"ErrorEquals":["States.ALL"],"Next":"Done"}],
	    "Parameters":{"FunctionName":"Ask","Payload":{"token.$":"$$.Task.Token","preview.$":"$.ask"}},"Next":"Done"},
	  "Done":{"Type":"Succeed"}}}`
	var (
		mu     sync.Mutex
		tokens []string
	)
	reg := NewRegistry()
	reg.Register("Ask", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		var p struct{ Token string }
		if err := json.Unmarshal(in, &p); err != nil {
			return nil, err
		}
		mu.Lock()
		tokens = append(tokens, p.Token)
		mu.Unlock()
		return nil, nil
	})
	eng := New(reg)
	sm := mustParse(t, def)
	stacks := func() uint64 {
		for range 4 { // each collection halves a stack at most once
			runtime.GC()
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.StackInuse
	}
	before := stacks()
	xs := make([]*Execution, n)
	for i := range xs {
		// As veredicto serve starts them: streamed, durable, no history kept.
		x, err := eng.Start(context.Background(), sm, json.RawMessage(`{"n":1}`), StartOptions{
			OnEvent: deepListener, DiscardHistory: true,
			Durable: &Durable{
				Token: func(Call) string { return newToken() },
				Task:  func(Call) TaskReplay { return TaskReplay{} },
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		xs[i] = x
	}
	poll.Until(t, 30*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(tokens) == n
	}, "every task to be given its token")
	after := stacks()
	perWaiting := float64(after-before) / n
	for _, tok := range tokens {
		if err := eng.SendTaskSuccess(tok, json.RawMessage(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range xs {
		<-x.Done()
	}
	if perWaiting > 12<<10 {
		t.Errorf("each waiting execution holds %.1f KiB of stack, want 8 KiB (its frames outgrew a quarter of 16 KiB)", perWaiting/1024)
	}
}

// deepListener stands for what serve does with each event (encode it,
// write and sync it): it needs more stack than the engine's own frames,
// so the execution's goroutine grows past 8 KiB while it runs and must
// shrink back once it waits.
func deepListener(Event) { useStack(12) }

//go:noinline
func useStack(depth int) byte {
	var buf [1 << 10]byte
	buf[depth] = byte(depth)
	if depth == 0 {
		return buf[0]
	}
	return useStack(depth-1) + buf[depth]
}
