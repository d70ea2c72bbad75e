package veredicto_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/veredicto/veredicto"
)

type wrapped struct{ err error }

func (w wrapped) Error() string { return "wrapped: " + w.err.Error() }
func (w wrapped) Unwrap() error { return w.err }

type plainError struct{}

func (*plainError) Error() string { return "plain" }

func TestErrorNameWalksTheChain(t *testing.T) {
	transient := &veredicto.TransientError{Op: "llm gem1", Err: errors.New("429")}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"bare", transient, "TransientError"},
		{"fmt wrap", fmt.Errorf("gem1 c-001: %w", transient), "TransientError"},
		{"custom wrapper type", wrapped{fmt.Errorf("x: %w", transient)}, "TransientError"},
		{"joined", errors.Join(errors.New("first"), &veredicto.InvalidInputError{File: "search.yaml"}), "InvalidInputError"},
		{"first named wins", fmt.Errorf("a: %w", &veredicto.NotFoundError{What: "x"}), "NotFoundError"},
		{"unnamed pointer", &plainError{}, "plainError"},
		{"unnamed wrapped keeps outer", fmt.Errorf("x: %w", &plainError{}), "wrapError"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := veredicto.ErrorName(tt.err); got != tt.want {
				t.Errorf("ErrorName(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}

func TestNamesMatchTypes(t *testing.T) {
	kinds := []veredicto.Named{
		&veredicto.TransientError{}, &veredicto.InvalidInputError{}, &veredicto.MissingInputError{},
		&veredicto.NotFoundError{}, &veredicto.ConflictError{}, &veredicto.DamagedError{}, &veredicto.ConfirmationRejected{},
	}
	names := veredicto.Names()
	if len(names) != len(kinds) {
		t.Fatalf("Names() has %d names for %d kinds", len(names), len(kinds))
	}
	for i, k := range kinds {
		// The ASL name is the type name, so the Lambda runtime (which names
		// an unwrapped error by its type) and ErrorName agree.
		if got := fmt.Sprintf("%T", k); got != "*veredicto."+k.ErrorName() {
			t.Errorf("kind %T names itself %q", k, k.ErrorName())
		}
		if names[i] != k.ErrorName() {
			t.Errorf("Names()[%d] = %q, want %q", i, names[i], k.ErrorName())
		}
	}
}

func TestMessagesNameTheProblem(t *testing.T) {
	err := &veredicto.InvalidInputError{File: "search.yaml", Field: "gates.gem1", Problem: "must be a number between 0 and 100"}
	if got, want := err.Error(), "search.yaml: gates.gem1: must be a number between 0 and 100"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	te := &veredicto.TransientError{Op: "llm gem1", Err: errors.New("429 Too Many Requests")}
	if got, want := te.Error(), "llm gem1: 429 Too Many Requests"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	de := &veredicto.DamagedError{What: "confirmation cf_1", Reason: "not valid JSON (syntax error at byte 3)", Quarantined: "/data/quarantine/confirmations/x"}
	if got, want := de.Error(), "confirmation cf_1 is damaged: not valid JSON (syntax error at byte 3); its bytes were moved to quarantine"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := veredicto.Kind(fmt.Errorf("get confirmation: %w", de)); got != veredicto.NameDamaged {
		t.Errorf("Kind of a wrapped DamagedError = %q, want %q", got, veredicto.NameDamaged)
	}
}
