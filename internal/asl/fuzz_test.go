package asl

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds Parse random definitions grown from the conformance corpus
// and the project's state machines. Parse must never panic, and must either
// refuse the bytes with a *DefinitionError that names problems, or return a
// machine the engine can walk: every transition lands on a state of the same
// machine and nesting stays within MaxNestingDepth. `make test` runs it
// briefly; run it longer with
//
//	go test -run '^$' -fuzz FuzzParse -fuzztime 5m ./internal/asl
func FuzzParse(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("..", "..", "testdata", "conformance", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range seeds {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		var c conformanceCase
		if err := json.Unmarshal(data, &c); err != nil {
			f.Fatalf("%s: %v", file, err)
		}
		f.Add([]byte(c.Definition))
	}
	machines, err := filepath.Glob(filepath.Join("..", "..", "statemachines", "*.asl.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range machines {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	if len(seeds) == 0 || len(machines) == 0 {
		f.Fatalf("no seeds: %d conformance cases, %d state machines", len(seeds), len(machines))
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		sm, err := Parse(data)
		if err != nil {
			var de *DefinitionError
			if !errors.As(err, &de) || len(de.Problems) == 0 {
				t.Fatalf("Parse error %T %q, want a *DefinitionError naming problems", err, err)
			}
			if sm != nil {
				t.Fatalf("Parse returned a machine with its error %q", err)
			}
			return
		}
		if err := checkWalkable(sm, 0); err != nil {
			t.Fatalf("Parse accepted a machine the engine cannot run: %v\n%s", err, data)
		}
	})
}

// checkWalkable reports the first transition of sm (or a nested machine)
// that leads nowhere, or nesting deeper than MaxNestingDepth.
func checkWalkable(sm *StateMachine, depth int) error {
	if depth > MaxNestingDepth {
		return fmt.Errorf("nested %d levels deep", depth)
	}
	if sm == nil {
		return errors.New("nil machine")
	}
	if _, ok := sm.States[sm.StartAt]; !ok {
		return fmt.Errorf("StartAt %q names no state", sm.StartAt)
	}
	to := func(from, next string) error {
		if _, ok := sm.States[next]; !ok {
			return fmt.Errorf("state %q: transition to %q, which is not a state", from, next)
		}
		return nil
	}
	for name, st := range sm.States {
		if st == nil {
			return fmt.Errorf("state %q is nil", name)
		}
		switch st.Type {
		case "Succeed", "Fail":
		case "Choice":
			if st.Default != "" {
				if err := to(name, st.Default); err != nil {
					return err
				}
			}
			if len(st.Choices) == 0 {
				return fmt.Errorf("Choice state %q has no rules", name)
			}
			for _, r := range st.Choices {
				if err := to(name, r.Next); err != nil {
					return err
				}
			}
		case "Pass", "Task", "Wait", "Parallel", "Map":
			if !st.End {
				if err := to(name, st.Next); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("state %q has type %q", name, st.Type)
		}
		for _, c := range st.Catch {
			if err := to(name, c.Next); err != nil {
				return err
			}
		}
		if st.Type == "Parallel" && len(st.Branches) == 0 {
			return fmt.Errorf("Parallel state %q has no branches", name)
		}
		for _, b := range st.Branches {
			if err := checkWalkable(b, depth+1); err != nil {
				return fmt.Errorf("state %q branch: %w", name, err)
			}
		}
		if st.Type == "Map" {
			if err := checkWalkable(st.Processor, depth+1); err != nil {
				return fmt.Errorf("state %q item processor: %w", name, err)
			}
		}
	}
	return nil
}
