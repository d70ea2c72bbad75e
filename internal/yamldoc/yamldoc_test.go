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

// TestFractionInAWholeNumberField: yaml.v3 cuts 0.5 to 0 in an integer
// field without a word; Decode refuses it naming the field and line,
// wherever the field sits (nested, in a list, a map, an inline struct, a
// pointer), and leaves whole numbers written as floats and fractions in
// float fields alone.
func TestFractionInAWholeNumberField(t *testing.T) {
	type base struct {
		Max int `yaml:"max"`
	}
	type doc struct {
		Inline    base `yaml:",inline"`
		Questions []struct {
			MaxWords *int    `yaml:"max_words"`
			Weight   float64 `yaml:"weight"`
		} `yaml:"questions"`
		Limits map[string]uint `yaml:"limits"`
		Rounds struct {
			Min int
		} `yaml:"rounds"`
	}
	for text, want := range map[string]string{
		"max: 2.5\n": "x.yaml: max: 2.5 is not a whole number (line 1)",
		"questions:\n  - max_words: 60\n  - max_words: 0.5\n": "x.yaml: questions[1].max_words: 0.5 is not a whole number (line 3)",
		"limits:\n  a: 3\n  b: 1.25\n":                        "x.yaml: limits.b: 1.25 is not a whole number (line 3)",
		"rounds:\n  min: 1.5\n":                               "x.yaml: rounds.min: 1.5 is not a whole number (line 2)",
		"questions:\n  - weight: .nan\n":                      "x.yaml: questions[0].weight: .nan is not a finite number (line 2)",
		"questions:\n  - weight: -.Inf\n":                     "x.yaml: questions[0].weight: -.Inf is not a finite number (line 2)",
		"questions:\n  - weight: &f 1.5\nmax: *f\n":           "x.yaml: max: 1.5 is not a whole number (line 2)",
	} {
		var d doc
		err := Decode("x.yaml", []byte(text), &d)
		if err == nil || err.Error() != want {
			t.Errorf("%q: got %v, want %s", text, err, want)
		}
	}
	var d doc
	if err := Decode("x.yaml", []byte("max: 1e3\nquestions:\n  - max_words: 60.0\n    weight: 0.5\n"), &d); err != nil || d.Inline.Max != 1000 || *d.Questions[0].MaxWords != 60 {
		t.Errorf("whole numbers written as floats: %v %+v", err, d)
	}
}

// TestJSONOnOneLineNamesTheRightField: a JSON document (a question sent
// to the API) is all on line 1; the field comes from what the decoder
// names or quotes, not from the line.
func TestJSONOnOneLineNamesTheRightField(t *testing.T) {
	type q struct {
		Question string   `yaml:"question"`
		Options  []string `yaml:"options"`
		Config   struct {
			Timeout struct {
				PerAgent float64 `yaml:"per_agent"`
			} `yaml:"timeout"`
		} `yaml:"config"`
	}
	for text, want := range map[string]string{
		`{"question":"x","options":["a","b"],"config":{"timeout":{"per_agent":"treinta"}}}`: "x.json: config.timeout.per_agent: is text where a number is expected (line 1)",
		`{"question":"x","options":["a","b"],"bogus":1}`:                                    "x.json: bogus: is not a known field (line 1)",
	} {
		var v q
		if err := Decode("x.json", []byte(text), &v); err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %s", text, err, want)
		}
	}
}
