package flags

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/veredicto/veredicto"
)

// ParseQuestionSet reads a question set; name is the file name used in
// errors.
func ParseQuestionSet(name string, data []byte) (QuestionSet, error) {
	var qs QuestionSet
	if err := decodeStrict(name, data, &qs); err != nil {
		return QuestionSet{}, err
	}
	qs.Source = name
	return qs, qs.Validate()
}

// ParseTranscript reads a transcript; name is the file name used in errors.
func ParseTranscript(name string, data []byte) (Transcript, error) {
	var t Transcript
	if err := decodeStrict(name, data, &t); err != nil {
		return Transcript{}, err
	}
	t.Source = name
	return t, t.Validate()
}

// ParseContextPack reads a context pack; name is the file name used in
// errors.
func ParseContextPack(name string, data []byte) (ContextPack, error) {
	var p ContextPack
	if err := decodeStrict(name, data, &p); err != nil {
		return ContextPack{}, err
	}
	p.Source = name
	return p, p.Validate()
}

// ParseMarkers reads a hedging lexicon: one marker per line; blank lines
// and lines starting with "#" are ignored.
func ParseMarkers(name string, data []byte) ([]string, error) {
	var markers []string
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if len(words(line)) == 0 {
			return nil, &veredicto.InvalidInputError{File: name, Field: fmt.Sprintf("line %d", i+1), Problem: "has no letters or digits"}
		}
		markers = append(markers, line)
	}
	if len(markers) == 0 {
		return nil, &veredicto.InvalidInputError{File: name, Problem: "holds no markers"}
	}
	return markers, nil
}

// Validate checks the required fields of the set.
func (qs QuestionSet) Validate() error {
	bad := func(field, problem string) error {
		return &veredicto.InvalidInputError{File: qs.Source, Field: field, Problem: problem}
	}
	if blank(qs.QuestionSetID) {
		return bad("question_set_id", "is required")
	}
	if len(qs.Questions) == 0 {
		return bad("questions", "is required (at least one question)")
	}
	seen := map[string]int{}
	for i, q := range qs.Questions {
		at := fmt.Sprintf("questions[%d].", i)
		switch {
		case blank(q.QuestionID):
			return bad(at+"question_id", "is required")
		case blank(string(q.Target)):
			return bad(at+"target", "is required")
		case q.Target != TargetRRHH && q.Target != TargetTecnico:
			return bad(at+"target", fmt.Sprintf("is %q, want rrhh or tecnico", q.Target))
		case blank(q.QuestionText):
			return bad(at+"question_text", "is required")
		case blank(q.ClosureRule):
			return bad(at+"closure_rule", "is required")
		case q.MaxWords < 0:
			return bad(at+"max_words", fmt.Sprintf("is %d, want a positive number", q.MaxWords))
		}
		if j, ok := seen[q.QuestionID]; ok {
			return bad(at+"question_id", fmt.Sprintf("%q repeats questions[%d]", q.QuestionID, j))
		}
		seen[q.QuestionID] = i
	}
	return nil
}

// Validate checks the required fields of the transcript.
func (t Transcript) Validate() error {
	bad := func(field, problem string) error {
		return &veredicto.InvalidInputError{File: t.source(), Field: field, Problem: problem}
	}
	switch {
	case blank(string(t.Target)):
		return bad("target", "is required")
	case t.Target != TargetRRHH && t.Target != TargetTecnico:
		return bad("target", fmt.Sprintf("is %q, want rrhh or tecnico", t.Target))
	}
	seen := map[string]int{}
	for i, a := range t.Answers {
		at := fmt.Sprintf("answers[%d].", i)
		switch {
		case blank(a.QuestionID):
			return bad(at+"question_id", "is required")
		case blank(a.AnswerText):
			return bad(at+"answer_text", "is required")
		}
		if j, ok := seen[a.QuestionID]; ok {
			return bad(at+"question_id", fmt.Sprintf("%q repeats answers[%d]", a.QuestionID, j))
		}
		seen[a.QuestionID] = i
	}
	return nil
}

func (t Transcript) source() string {
	if t.Source != "" {
		return t.Source
	}
	if t.TranscriptID != "" {
		return "transcript " + t.TranscriptID
	}
	return ""
}

// Validate checks the required fields of the pack.
func (p ContextPack) Validate() error {
	seen := map[string]int{}
	for i, f := range p.Facts {
		at := fmt.Sprintf("facts[%d].", i)
		switch {
		case blank(f.ID):
			return &veredicto.InvalidInputError{File: p.Source, Field: at + "id", Problem: "is required"}
		case blank(f.Text):
			return &veredicto.InvalidInputError{File: p.Source, Field: at + "text", Problem: "is required"}
		}
		if j, ok := seen[f.ID]; ok {
			return &veredicto.InvalidInputError{File: p.Source, Field: at + "id", Problem: fmt.Sprintf("%q repeats facts[%d]", f.ID, j)}
		}
		seen[f.ID] = i
	}
	return nil
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }

// decodeStrict decodes one YAML document into out, rejecting unknown
// fields, and turns decoder errors into *veredicto.InvalidInputError naming the field
// path where the line allows it. Values are left out of messages: they may
// be interview text.
func decodeStrict(name string, data []byte, out any) error {
	if blank(string(data)) {
		return &veredicto.InvalidInputError{File: name, Problem: "is empty"}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err := dec.Decode(out)
	if err == nil {
		return nil
	}
	if errors.Is(err, io.EOF) {
		return &veredicto.InvalidInputError{File: name, Problem: "is empty"}
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return &veredicto.InvalidInputError{File: name, Problem: "is not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	msg := te.Errors[0]
	more := ""
	if n := len(te.Errors) - 1; n > 0 {
		more = fmt.Sprintf(" (and %d more problems)", n)
	}
	line := 0
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	msg = valueRE.ReplaceAllString(msg, "")
	field := fieldPaths(data)[line]
	problem := "is invalid: " + msg
	if unknownFieldRE.MatchString(msg) {
		problem = "is not a known field"
	}
	if field == "" {
		return &veredicto.InvalidInputError{File: name, Problem: fmt.Sprintf("line %d: %s%s", line, msg, more)}
	}
	return &veredicto.InvalidInputError{File: name, Field: field, Problem: fmt.Sprintf("%s (line %d)%s", problem, line, more)}
}

var (
	lineRE         = regexp.MustCompile(`^line (\d+): (.*)$`)
	valueRE        = regexp.MustCompile(" ?`[^`]*`")
	unknownFieldRE = regexp.MustCompile(`^field \S+ not found in type`)
)

// fieldPaths maps each line of a YAML document that holds a mapping key (or
// a scalar sequence item) to its path: "questions[1].max_words".
func fieldPaths(data []byte) map[int]string {
	paths := map[int]string{}
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil {
		return paths
	}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := k.Value
				if path != "" {
					p = path + "." + k.Value
				}
				paths[k.Line] = p
				walk(v, p)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				p := fmt.Sprintf("%s[%d]", path, i)
				// A root sequence is the document's own error, not its first item's.
				if _, ok := paths[c.Line]; path != "" && (!ok || c.Kind == yaml.ScalarNode) {
					paths[c.Line] = p
				}
				walk(c, p)
			}
		}
	}
	walk(&root, "")
	return paths
}
