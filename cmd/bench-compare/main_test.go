package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestSameJSON(t *testing.T) {
	if err := sameJSON([]byte(`{"a":1,"b":[1,2]}`), []byte(`{"b":[1,2],"a":1.0}`)); err != nil {
		t.Errorf("equal documents reported different: %v", err)
	}
	if err := sameJSON([]byte(`{"a":1}`), []byte(`{"a":2}`)); err == nil {
		t.Error("different documents reported equal")
	}
}

func TestParse(t *testing.T) {
	c, err := parse([]string{"-rounds", "3", "-time", "50ms", "-cpu", "1, 4"})
	if err != nil {
		t.Fatal(err)
	}
	if c.rounds != 3 || c.each != 50*time.Millisecond || len(c.procs) != 2 || c.procs[1] != 4 {
		t.Errorf("parsed %+v", c)
	}
	for _, bad := range [][]string{{"-cpu", "0"}, {"-cpu", "x"}, {"-rounds", "0"}} {
		if _, err := parse(bad); err == nil || !strings.Contains(err.Error(), "-") {
			t.Errorf("parse(%v) = %v, want an error naming the flag", bad, err)
		}
	}
}

func TestSpread(t *testing.T) {
	if got := spread([]float64{250e3, 120e3, 1.5e6}); got != "120 k/s – 1.50 M/s" {
		t.Errorf("spread = %q", got)
	}
	if got := spread(nil); got != "–" {
		t.Errorf("spread(nil) = %q", got)
	}
}

// TestScheduleBalances: over four rounds each GOMAXPROCS value goes first
// as often as the other and is next to the Node run as often as the other.
func TestScheduleBalances(t *testing.T) {
	procs := []int{1, 2}
	first := map[int]int{}
	nextToNode := map[int]int{}
	goFirst := 0
	for round := range 4 {
		g, order := schedule(round, procs)
		first[order[0]]++
		if g {
			goFirst++
			nextToNode[order[len(order)-1]]++
		} else {
			nextToNode[order[0]]++
		}
	}
	if goFirst != 2 || first[1] != 2 || first[2] != 2 || nextToNode[1] != 2 || nextToNode[2] != 2 {
		t.Errorf("unbalanced: Go first %d/4, value first %v, next to Node %v", goFirst, first, nextToNode)
	}
	if _, order := schedule(2, procs); procs[0] != 1 {
		t.Errorf("schedule reordered its argument: %v (order %v)", procs, order)
	}
}

func TestParseCPULine(t *testing.T) {
	total, steal, ok := parseCPULine("cpu  3124706 260 597620 3028565 27614 0 21235 267174 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n")
	if !ok || steal != 267174 || total != 3124706+260+597620+3028565+27614+0+21235+267174 {
		t.Errorf("parseCPULine = %d, %d, %v", total, steal, ok)
	}
	for _, bad := range []string{"", "cpu0 1 2 3 4 5 6 7 8", "cpu 1 2 3 4 5 6 7", "cpu 1 2 3 4 5 6 7 x"} {
		if _, _, ok := parseCPULine(bad); ok {
			t.Errorf("parseCPULine(%q) accepted", bad)
		}
	}
}

// TestStealDuring: the share is the stolen ticks over all the ticks that
// passed while f ran, and unknown without /proc/stat.
func TestStealDuring(t *testing.T) {
	file := filepath.Join(t.TempDir(), "stat")
	old := procStat
	procStat = file
	defer func() { procStat = old }()
	if err := os.WriteFile(file, []byte("cpu  100 0 100 700 0 0 0 100 0 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := stealDuring(func() error {
		return os.WriteFile(file, []byte("cpu  150 0 150 900 0 0 0 200 0 0\n"), 0o600) // 400 ticks, 100 stolen
	})
	if err != nil || got != 0.25 {
		t.Errorf("stealDuring = %v, %v, want 0.25", got, err)
	}
	if share([]float64{0.25, 0.1, 0.5}) != "25 %" || share([]float64{0.2, -1}) != "–" || share(nil) != "–" {
		t.Errorf("share: %q %q %q", share([]float64{0.25, 0.1, 0.5}), share([]float64{0.2, -1}), share(nil))
	}
	procStat = filepath.Join(t.TempDir(), "missing")
	if got, _ := stealDuring(func() error { return nil }); got != -1 {
		t.Errorf("without /proc/stat: %v, want -1", got)
	}
}
