package search

import (
	"fmt"
	"testing"
)

// TestRowCacheIsBounded: rows nobody takes (a run that failed before its
// summary) are dropped oldest first past maxCachedRows, taken ones leave
// no trace, and a row is found only under its report's key and hash.
func TestRowCacheIsBounded(t *testing.T) {
	var c rowCache
	for i := range maxCachedRows + 10 {
		c.put(fmt.Sprintf("r/c-%04d/report.json", i), "h", CandidateResult{CandidateID: fmt.Sprint(i)})
	}
	if len(c.rows) != maxCachedRows {
		t.Fatalf("%d rows kept, want %d", len(c.rows), maxCachedRows)
	}
	if _, ok := c.take("r/c-0000/report.json", "h"); ok {
		t.Error("the oldest row is still kept past the bound")
	}
	last := fmt.Sprintf("r/c-%04d/report.json", maxCachedRows+9)
	if _, ok := c.take(last, "other hash"); ok {
		t.Error("a row is found under another hash")
	}
	if r, ok := c.take(last, "h"); !ok || r.CandidateID != fmt.Sprint(maxCachedRows+9) {
		t.Errorf("the newest row: %+v %v", r, ok)
	}
	if _, ok := c.take(last, "h"); ok {
		t.Error("a row taken twice")
	}
	// Taking every row as it comes keeps the order bounded too.
	for i := range 5 * maxCachedRows {
		k := fmt.Sprintf("s/c-%05d/report.json", i)
		c.put(k, "h", CandidateResult{})
		c.take(k, "h")
	}
	if len(c.order) > 2*maxCachedRows {
		t.Errorf("%d keys in the order, want at most %d", len(c.order), 2*maxCachedRows)
	}
}
