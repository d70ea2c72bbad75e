package app

import (
	"encoding/json"
	"testing"

	"github.com/veredicto/veredicto/internal/control"
)

// TestRunIDIsThePersonsID: a debate or companion run is listed by the id
// its person gave (debate_id, application_id), not by the execution name
// the system derived from it.
func TestRunIDIsThePersonsID(t *testing.T) {
	for input, want := range map[string]string{
		`{"tenant":"acme","debate_id":"d-c-005"}`:     "d-c-005",
		`{"tenant":"acme","application_id":"a1b2-f"}`: "a1b2-f",
		`{"tenant":"acme","search_id":"s-1","x":1}`:   "acme--gates",
		`not json`: "acme--gates",
	} {
		if got := runID(control.Execution{Name: "acme--gates", Input: json.RawMessage(input)}); got != want {
			t.Errorf("runID(%s) = %q, want %q", input, got, want)
		}
	}
}
