package control

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/veredicto/veredicto/internal/asl"
)

var errNoSpace = errors.New("no space left on device")

// fullDisk is a disk that fails the writes full says it cannot take, as
// a full disk would; full can change while the manager runs.
type fullDisk struct {
	full atomic.Pointer[func(path string, l *line) bool]
}

func (d *fullDisk) set(full func(path string, l *line) bool) { d.full.Store(&full) }

func (d *fullDisk) disk() disk {
	return disk{refuse: func(path string, l *line) error {
		if f := d.full.Load(); f != nil && *f != nil && (*f)(path, l) {
			return errNoSpace
		}
		return nil
	}}
}

// closingEvent refuses the history line of an execution's closing event.
func closingEvent(_ string, l *line) bool {
	return l != nil && l.Event != nil && strings.HasPrefix(l.Event.Type, "Execution") && l.Event.Type != "ExecutionStarted"
}

// waitStalled waits until an execution reports that its history could not
// be persisted, and returns it.
func waitStalled(t *testing.T, m *Manager, arn string) Execution {
	t.Helper()
	return waitUntil(t, m, arn, "reported the lost history", func(x Execution) bool { return x.Cause != "" || x.Status != asl.StatusRunning })
}

const checkOnce = `{"StartAt":"Check","States":{
  "Check":{"Type":"Task","Resource":"${CountFunctionArn}","ResultPath":"$.count","Next":"Done"},
  "Done":{"Type":"Pass","End":true}}}`

// TestEndIsDurableBeforeItIsReported: when the closing event cannot be
// persisted (a full disk) the execution is not reported SUCCEEDED: it
// stays RUNNING with the failure as its cause, OnStatus hears nothing;
// after a restart with room on disk it ends SUCCEEDED without running its
// completed Task again, each event in its history once.
func TestEndIsDurableBeforeItIsReported(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := newFixture()
	var d fullDisk
	d.set(closingEvent)
	f.disk = d.disk()
	m := f.open(t, dir)
	x := f.start(t, m, "Once", checkOnce, "o1")
	got := waitStalled(t, m, x.ARN)
	if got.Status != asl.StatusRunning || !strings.Contains(got.Cause, "no space left on device") || got.Output != nil {
		t.Fatalf("got %s %q output %s, want RUNNING naming the lost history", got.Status, got.Cause, got.Output)
	}
	if list, _, _ := m.ListExecutions(ctx, StateMachineARN("Once"), asl.StatusSucceeded, "", 10, nil); len(list) != 0 {
		t.Errorf("listed as SUCCEEDED before its end was persisted: %+v", list)
	}
	f.mu.Lock()
	final := len(f.final)
	f.mu.Unlock()
	if final != 0 {
		t.Errorf("OnStatus was told of an end that is not persisted: %+v", f.final)
	}
	m.Close()

	f.disk = disk{} // room on disk again
	m = f.open(t, dir)
	defer m.Close()
	if got := waitClosed(t, m, x.ARN); got.Status != asl.StatusSucceeded || got.Cause != "" {
		t.Fatalf("after the restart: %s %q", got.Status, got.Cause)
	}
	if n := f.counted.Load(); n != 1 {
		t.Errorf("the completed Task ran %d times, want once", n)
	}
	eachOnce(t, f, historyOf(t, m, x.ARN), "ExecutionSucceeded", 1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.final) != 1 || f.final[0].Status != asl.StatusSucceeded {
		t.Errorf("OnStatus final %+v, want one SUCCEEDED", f.final)
	}
}

// TestMetadataNotWrittenKeepsItRunning: the closing event is persisted but
// meta.json cannot take the end: still RUNNING, named; a restart records
// the end the history holds, and nothing runs again.
func TestMetadataNotWrittenKeepsItRunning(t *testing.T) {
	dir := t.TempDir()
	f := newFixture()
	var d fullDisk
	started := false
	d.set(func(path string, l *line) bool {
		if l == nil && strings.HasSuffix(path, "meta.json") {
			if !started { // StartExecution's own write
				started = true
				return false
			}
			return true
		}
		return false
	})
	f.disk = d.disk()
	m := f.open(t, dir)
	x := f.start(t, m, "Once", checkOnce, "o2")
	if got := waitStalled(t, m, x.ARN); got.Status != asl.StatusRunning || !strings.Contains(got.Cause, "no space left on device") {
		t.Fatalf("got %s %q, want RUNNING naming the failure", got.Status, got.Cause)
	}
	m.Close()
	f.disk = disk{}
	m = f.open(t, dir)
	defer m.Close()
	if got := waitClosed(t, m, x.ARN); got.Status != asl.StatusSucceeded || string(got.Output) != `{"count":1,"tenant":"acme"}` {
		t.Errorf("after the restart: %s %s", got.Status, got.Output)
	}
	if n := f.counted.Load(); n != 1 {
		t.Errorf("the Task ran %d times, want once", n)
	}
}

// TestLostHistoryHaltsTheExecution: when an event in the middle of a run
// cannot be persisted, the execution is halted where its history ends
// (no holes, nothing more persisted or passed to OnHistory), RUNNING with
// the cause; StopExecution closes it once the disk takes writes again.
func TestLostHistoryHaltsTheExecution(t *testing.T) {
	ctx := context.Background()
	f := newFixture()
	var d fullDisk
	var written atomic.Int64
	d.set(func(path string, l *line) bool { return l != nil && written.Add(1) > 20 })
	f.disk = d.disk()
	m := f.open(t, t.TempDir())
	defer m.Close()
	loop := `{"StartAt":"A","States":{"A":{"Type":"Wait","Seconds":0,"Next":"B"},"B":{"Type":"Pass","Next":"A"}}}`
	x := f.start(t, m, "Loop", loop, "full")
	got := waitStalled(t, m, x.ARN)
	if got.Status != asl.StatusRunning || !strings.Contains(got.Cause, "no space left on device") {
		t.Fatalf("got %s %q, want RUNNING naming the lost history", got.Status, got.Cause)
	}
	events, _, err := m.History(ctx, x.ARN, "", 1000, false)
	if err != nil || len(events) != 20 {
		t.Fatalf("history of %d events (%v), want the 20 persisted", len(events), err)
	}
	f.mu.Lock()
	seen := len(f.events)
	f.mu.Unlock()
	if seen != 20 {
		t.Errorf("OnHistory saw %d events, want the 20 persisted", seen)
	}
	var ce *Error
	if _, err := m.StopExecution(ctx, x.ARN, "Full", "the disk"); !errors.As(err, &ce) || ce.Code != CodeServiceUnavailable {
		t.Errorf("stop while the disk is still full: %v, want ServiceUnavailable", err)
	}
	d.set(nil)
	if _, err := m.StopExecution(ctx, x.ARN, "Full", "the disk"); err != nil {
		t.Fatalf("stop once the disk has room: %v", err)
	}
	got, _ = m.DescribeExecution(ctx, x.ARN)
	if got.Status != asl.StatusAborted || got.Error != "Full" {
		t.Errorf("after the stop: %s %s %q", got.Status, got.Error, got.Cause)
	}
	events, _, _ = m.History(ctx, x.ARN, "", 1000, false)
	if last := events[len(events)-1]; len(events) != 21 || last.Type != "ExecutionAborted" || last.ID != 21 {
		t.Errorf("history ends with %+v after %d events, want ExecutionAborted #21", last, len(events))
	}
}
