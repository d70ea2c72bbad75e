package search

import (
	"fmt"
	"testing"
)

// TestStageCacheDropsTheOldest: past maxStageBytes of records, the oldest
// go first; a record larger than the bound is not kept at all.
func TestStageCacheDropsTheOldest(t *testing.T) {
	var c stageCache
	third := make([]byte, maxStageBytes/3)
	for i := range 4 {
		c.put(fmt.Sprint("k", i), StageRecord{Raw: third}, i)
	}
	for i, want := range []bool{false, true, true, true} {
		if _, ok := c.get(fmt.Sprint("k", i)); ok != want {
			t.Errorf("k%d kept: %v, want %v", i, ok, want)
		}
	}
	c.put("huge", StageRecord{Raw: make([]byte, maxStageBytes+1)}, nil)
	if _, ok := c.get("huge"); ok {
		t.Error("a record over the bound was kept")
	}
	if e, ok := c.get("k3"); !ok || e.contract.(int) != 3 {
		t.Errorf("k3: %+v, %v", e, ok)
	}
}
