package aslbench

import (
	"runtime"
	"time"
)

// The control is a loop that allocates what one run of the Task chain does
// (ControlObjects objects, ControlBytes bytes, each pointing at the one
// before, all kept until the run ends) and does nothing else. Measured
// beside the workloads with each GOMAXPROCS value, it shows what the Go
// runtime's collector costs on the machine at hand, engine aside: on a VM
// whose second vCPU the host often leaves unscheduled, a second P can make
// this loop slower, and then the engine too.
const (
	ControlObjects = 2540
	ControlBytes   = ControlObjects * 104 // per run, the slice included
)

type controlNode struct {
	prev any
	_    [10]int64
}

var controlSink []*controlNode

// ControlRun is one run of the control loop.
func ControlRun() {
	keep := make([]*controlNode, 0, ControlObjects)
	var prev any
	for range ControlObjects {
		n := &controlNode{prev: prev}
		keep = append(keep, n)
		prev = n
	}
	controlSink = keep
}

// MeasureControl runs the control loop for at least d, after one run, and
// reports runs as transitions (one per run).
func MeasureControl(d time.Duration) Measurement {
	ControlRun()
	m := Measurement{Transitions: 1}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for m.Runs == 0 || time.Since(start) < d {
		ControlRun()
		m.Runs++
	}
	m.Seconds = time.Since(start).Seconds()
	runtime.ReadMemStats(&after)
	m.Allocs = float64(after.Mallocs-before.Mallocs) / float64(m.Runs)
	m.Collections = float64(after.NumGC-before.NumGC) / float64(m.Runs)
	return m
}
