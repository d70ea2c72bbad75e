package platforms

import (
	"errors"
	"testing"

	"github.com/veredicto/veredicto"
)

func TestEmbeddedPlatformsParse(t *testing.T) {
	names := Names()
	if len(names) < 2 {
		t.Fatalf("platforms = %v", names)
	}
	for _, n := range names {
		s, err := Load(n)
		if err != nil || s.PlatformName != n {
			t.Errorf("%s: %+v %v (platform_name must match the file name)", n, s, err)
		}
	}
	var nf *veredicto.NotFoundError
	for _, bad := range []string{"nope", "../go.mod", ""} {
		if _, err := Load(bad); !errors.As(err, &nf) {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
	var ie *veredicto.InvalidInputError
	if _, err := Parse("x.yaml", []byte("platform_name: x\nlayer_2_fields:\n  - {id: a, question: q}\n  - {id: a, question: q}\n")); !errors.As(err, &ie) || ie.Field != "layer_2_fields[1].id" {
		t.Errorf("duplicate id: %v", err)
	}
}
