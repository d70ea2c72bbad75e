package asl

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func TestEndlessLoopsFailAtTheHistoryQuota(t *testing.T) {
	tests := []struct {
		name string
		def  string
	}{
		{"self-looping Pass", `{"StartAt":"P","States":{"P":{"Type":"Pass","Next":"P"}}}`},
		{"self-looping Choice", `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.stop","BooleanEquals":true,"Next":"Done"}],"Default":"C"},"Done":{"Type":"Succeed"}}}`},
		{"Pass and Choice", `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":{"n":1},"Next":"C"},"C":{"Type":"Choice","Choices":[{"Variable":"$.n","NumericEquals":0,"Next":"Done"}],"Default":"P"},"Done":{"Type":"Succeed"}}}`},
		{"loop inside a Map iteration", `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","Next":"P"}}},"End":true}}}`},
		{"loop in a Parallel branch under a catch-all", `{"StartAt":"F","States":{"F":{"Type":"Parallel","Branches":[{"StartAt":"P","States":{"P":{"Type":"Pass","Next":"P"}}}],"Catch":[{"ErrorEquals":["States.ALL"],"Next":"Caught"}],"End":true},"Caught":{"Type":"Succeed"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)

			res := run(t, NewRegistry(), tt.def, `{"stop":false,"items":[1,2,3]}`)

			runtime.GC()
			runtime.ReadMemStats(&after)
			if res.Status != StatusFailed || res.Error != ErrRuntime {
				t.Fatalf("got %s %s (%s), want FAILED %s", res.Status, res.Error, res.Cause, ErrRuntime)
			}
			if want := fmt.Sprintf("execution history exceeded %d events (Step Functions quota)", MaxHistoryEvents); !strings.Contains(res.Cause, want) {
				t.Errorf("cause %q\ndoes not contain %q", res.Cause, want)
			}
			if got := len(res.History()); got != MaxHistoryEvents {
				t.Errorf("history holds %d events, want exactly %d", got, MaxHistoryEvents)
			}
			if last := res.History()[len(res.History())-1]; last.Type != "ExecutionFailed" || last.ID != MaxHistoryEvents {
				t.Errorf("last event = #%d %s, want #%d ExecutionFailed", last.ID, last.Type, MaxHistoryEvents)
			}
			// The history is still referenced here, so this bounds what one
			// runaway execution keeps alive.
			const bound = 256 << 20
			if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew > bound {
				t.Errorf("heap in use grew by %d MiB, over %d MiB", grew>>20, bound>>20)
			}
			runtime.KeepAlive(res)
		})
	}
}

func TestHistoryQuotaCountsEventsNobodyRecords(t *testing.T) {
	// OnEvent sees every event, numbered from 1 without gaps and in order
	// although Map iterations emit concurrently, and the quota failure
	// arrives whether or not the caller keeps History.
	var (
		seen     int
		disorder string
	)
	ctx := context.Background()
	sm := mustParse(t, `{"StartAt":"M","States":{"M":{"Type":"Map","ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","Next":"P"}}},"End":true}}}`)
	res, err := New(NewRegistry()).Run(ctx, sm, json.RawMessage(`[1,2,3,4,5,6,7,8]`), StartOptions{OnEvent: func(ev Event) {
		seen++
		if ev.ID != seen && disorder == "" {
			disorder = fmt.Sprintf("event #%d delivered as the %dth", ev.ID, seen)
		}
	}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if disorder != "" {
		t.Error(disorder)
	}
	if res.Error != ErrRuntime || seen != MaxHistoryEvents {
		t.Errorf("got %s after %d events, want %s after %d", res.Error, seen, ErrRuntime, MaxHistoryEvents)
	}
}

func TestNestingDeeperThanTheLimitIsRefused(t *testing.T) {
	nest := func(levels int) string {
		inner := `{"StartAt":"S","States":{"S":{"Type":"Succeed"}}}`
		for i := range levels {
			if i%2 == 0 {
				inner = fmt.Sprintf(`{"StartAt":"P%d","States":{"P%d":{"Type":"Parallel","Branches":[%s],"End":true}}}`, i, i, inner)
			} else {
				inner = fmt.Sprintf(`{"StartAt":"M%d","States":{"M%d":{"Type":"Map","ItemProcessor":%s,"End":true}}}`, i, i, inner)
			}
		}
		return inner
	}
	tests := []struct {
		levels  int
		wantErr bool
	}{
		{1, false},
		{MaxNestingDepth, false},
		{MaxNestingDepth + 1, true},
		{100, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.levels), func(t *testing.T) {
			_, err := Parse([]byte(nest(tt.levels)))
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("Parse(%d levels): %v", tt.levels, err)
				}
				return
			}
			want := fmt.Sprintf("nest more than %d levels deep", MaxNestingDepth)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("Parse(%d levels) = %v, want an error containing %q", tt.levels, err, want)
			}
			if n := strings.Count(err.Error(), want); n != 1 {
				t.Errorf("the nesting problem is reported %d times, want once", n)
			}
		})
	}
}
