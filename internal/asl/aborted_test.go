package asl

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// abortRegistry serves Block, which blocks until its context ends (after
// telling started), and Fail, which fails once Block has started.
func abortRegistry() (*Registry, chan struct{}) {
	started := make(chan struct{})
	reg := NewRegistry()
	reg.Register("BlockFunction", func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	reg.Register("FailFunction", func(context.Context, json.RawMessage) (json.RawMessage, error) {
		<-started
		return nil, &StatesError{Name: "Boom", Cause: "a sibling fails"}
	})
	return reg, started
}

// eventLine is "type state scope index error" of the events with a state.
func eventLines(events []Event) []string {
	var out []string
	for _, ev := range events {
		l := ev.Type + " " + ev.State + " " + ev.Scope
		if ev.Index != nil {
			l += " #" + string(rune('0'+*ev.Index))
		}
		if ev.Error != "" {
			l += " " + ev.Error
		}
		out = append(out, l)
	}
	return out
}

func hasLine(lines []string, want string) bool {
	for _, l := range lines {
		if strings.TrimSpace(l) == want {
			return true
		}
	}
	return false
}

// TestSiblingFailureAborts: when a Map iteration or a Parallel branch
// fails, the iterations and branches still under way are aborted, as Step
// Functions records them: the state each was in gets <Type>StateAborted,
// a Map iteration MapIterationAborted, and neither is reported failed.
func TestSiblingFailureAborts(t *testing.T) {
	for name, def := range map[string]string{
		"map": `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.xs","MaxConcurrency":2,"ItemProcessor":{"StartAt":"C","States":{
		  "C":{"Type":"Choice","Choices":[{"Variable":"$","NumericEquals":0,"Next":"Block"}],"Default":"Fail"},
		  "Block":{"Type":"Task","Resource":"${BlockFunctionArn}","End":true},
		  "Fail":{"Type":"Task","Resource":"${FailFunctionArn}","End":true}}},"End":true}}}`,
		"parallel": `{"StartAt":"P","States":{"P":{"Type":"Parallel","Branches":[
		  {"StartAt":"Block","States":{"Block":{"Type":"Task","Resource":"${BlockFunctionArn}","End":true}}},
		  {"StartAt":"Fail","States":{"Fail":{"Type":"Task","Resource":"${FailFunctionArn}","End":true}}}],"End":true}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			reg, _ := abortRegistry()
			res, err := New(reg).Run(context.Background(), mustParse(t, def), json.RawMessage(`{"xs":[0,1]}`), StartOptions{})
			if err != nil || res.Status != StatusFailed || res.Error != "Boom" {
				t.Fatalf("run: %v %+v", err, res)
			}
			lines := eventLines(res.History())
			scope := map[string]string{"map": "M/item[0]", "parallel": "P/branch[0]"}[name]
			if !hasLine(lines, "TaskStateAborted Block "+scope) {
				t.Errorf("no TaskStateAborted for the blocked Task in %s:\n%s", scope, strings.Join(lines, "\n"))
			}
			if name == "map" && (!hasLine(lines, "MapIterationAborted M  #0") || !hasLine(lines, "MapIterationFailed M  #1 Boom")) {
				t.Errorf("iteration events:\n%s", strings.Join(lines, "\n"))
			}
			for _, l := range lines {
				if strings.Contains(l, "States.Runtime") || strings.HasPrefix(l, "TaskFailed Block") {
					t.Errorf("the aborted sibling is reported failed: %s", l)
				}
			}
		})
	}
}

// TestStoppedExecutionAbortsAlone: a stopped execution ends with
// ExecutionAborted; the states and iterations it cut short are not
// reported failed (nor aborted one by one).
func TestStoppedExecutionAbortsAlone(t *testing.T) {
	reg, started := abortRegistry()
	def := `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.xs","ItemProcessor":{"StartAt":"Block","States":{
	  "Block":{"Type":"Task","Resource":"${BlockFunctionArn}","End":true}}},"End":true}}}`
	x, err := New(reg).Start(context.Background(), mustParse(t, def), json.RawMessage(`{"xs":[0]}`), StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	<-started
	x.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := x.Wait(ctx)
	if err != nil || res.Status != StatusAborted {
		t.Fatalf("stop: %v %+v", err, res)
	}
	lines := eventLines(res.History())
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "ExecutionAborted") {
		t.Errorf("last event %q", last)
	}
	for _, l := range lines {
		if strings.Contains(l, "Failed") || strings.Contains(l, "StateAborted") || strings.Contains(l, "IterationAborted") {
			t.Errorf("stopped execution records %q", l)
		}
	}
}
