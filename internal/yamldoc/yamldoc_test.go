package yamldoc

import (
	"errors"
	"strings"
	"testing"

	"github.com/veredicto/veredicto"
)

type doc struct {
	Name  string   `yaml:"name"`
	Max   int      `yaml:"max"`
	Ratio float64  `yaml:"ratio"`
	On    bool     `yaml:"on"`
	Tags  []string `yaml:"tags"`
	Gates struct {
		Gem1 *float64 `yaml:"gem1"`
	} `yaml:"gates"`
}

func TestDecodeNamesFieldLineAndProblemWithoutGoTypes(t *testing.T) {
	tests := []struct {
		name, data, field, want string
	}{
		{"empty", "  \n", "", "is empty"},
		{"unknown field", "name: a\nnmae: b\n", "nmae", "is not a known field (line 2)"},
		{"text for an int", "max: many\n", "max", "is text where a whole number is expected (line 1)"},
		{"text for a float", "gates:\n  gem1: alto\n", "gates.gem1", "is text where a number is expected (line 2)"},
		{"text for a bool", "on: quizá\n", "on", "is text where true or false is expected (line 1)"},
		{"mapping for a list", "tags: {a: 1}\n", "tags", "is a mapping where a list is expected (line 1)"},
		{"root list", "- a\n", "", "line 1: the value is a list where a mapping is expected"},
		{"syntax", "name: [a\n", "", "is not valid YAML"},
		{"several", "max: x\nratio: y\n", "max", "(and 1 more problem)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d doc
			err := Decode("f.yaml", []byte(tt.data), &d)
			var ie *veredicto.InvalidInputError
			if !errors.As(err, &ie) {
				t.Fatalf("got %v, want *veredicto.InvalidInputError", err)
			}
			if ie.File != "f.yaml" || ie.Field != tt.field || !strings.Contains(ie.Problem, tt.want) {
				t.Errorf("got file %q field %q problem %q; want f.yaml %q containing %q", ie.File, ie.Field, ie.Problem, tt.field, tt.want)
			}
			for _, leak := range []string{"yamldoc.doc", "float64", "!!str", "many", "quizá", "alto"} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("message %q leaks %q", err.Error(), leak)
				}
			}
		})
	}
}

func TestDecodeAcceptsAValidDocument(t *testing.T) {
	var d doc
	if err := Decode("f.yaml", []byte("name: a\nmax: 3\nratio: 0.5\non: true\ntags: [x]\ngates: {gem1: 6}\n"), &d); err != nil {
		t.Fatal(err)
	}
	if d.Name != "a" || d.Max != 3 || d.Ratio != 0.5 || !d.On || len(d.Tags) != 1 || d.Gates.Gem1 == nil || *d.Gates.Gem1 != 6 {
		t.Errorf("decoded %+v", d)
	}
}
