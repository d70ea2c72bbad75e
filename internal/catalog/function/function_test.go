package function_test

import (
	"context"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/catalog/function"
)

type counter struct{ n int }

func (c *counter) Add(_ context.Context, in int) (int, error) { return c.n + in, nil }

type services struct{ C *counter }

type otherServices struct{}

// TestBindRefusesServicesOfAnotherKind: a function binds only to its own
// kind's services and names what is missing; bound, both forms call the
// method on the dependency.
func TestBindRefusesServicesOfAnotherKind(t *testing.T) {
	f := function.Bind(function.Function{LogicalID: "AddFunction", Kind: function.KindFlags},
		func(s *services) *counter { return s.C }, (*counter).Add)
	for _, tt := range []struct {
		name     string
		services any
		want     string
	}{
		{"another kind's", &otherServices{}, "AddFunction: bound to *function_test.otherServices, want the flags services (*function_test.services)"},
		{"nil", nil, "want the flags services"},
		{"without the dependency", &services{}, "AddFunction: no *function_test.counter in the assembled services"},
	} {
		if _, err := f.Lambda(tt.services); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Lambda with %s services: %v, want %q", tt.name, err, tt.want)
		}
		if _, err := f.Invoke(tt.services); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Invoke with %s services: %v, want %q", tt.name, err, tt.want)
		}
	}
	s := &services{C: &counter{n: 40}}
	h, err := f.Lambda(s)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := h.(func(context.Context, int) (int, error))(context.Background(), 2); got != 42 || err != nil {
		t.Errorf("Lambda handler: %d, %v; want 42", got, err)
	}
	j, err := f.Invoke(s)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := j(context.Background(), []byte("2")); string(got) != "42" || err != nil {
		t.Errorf("Invoke handler: %s, %v; want 42", got, err)
	}
	if _, err := (function.Function{LogicalID: "X"}).Lambda(s); err == nil {
		t.Error("an entry without a handler bound")
	}
}
