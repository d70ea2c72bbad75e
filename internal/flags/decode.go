package flags

import (
	"fmt"
	"strings"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/yamldoc"
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
		case nearBinario(q.ClosureRule):
			return bad(at+"closure_rule", fmt.Sprintf("%q looks like a misspelt %s (the yes/no rule; any other word takes the core-word rule): write %s, or another rule such as abierta or cifra", q.ClosureRule, ClosureBinario, ClosureBinario))
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
// fields, with errors naming the file, the field path and the line.
func decodeStrict(name string, data []byte, out any) error {
	return yamldoc.Decode(name, data, out)
}

// nearBinario reports a closure rule within two edits of "binario" that is
// not it ("binaro", "binary", "binarios"): a typo that would silently move
// a yes/no question to the core-word drift rule.
func nearBinario(rule string) bool {
	r := []rune(strings.ToLower(strings.TrimSpace(rule)))
	if string(r) == ClosureBinario {
		return false
	}
	w := []rune(ClosureBinario)
	prev := make([]int, len(w)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(r); i++ {
		cur := make([]int, len(w)+1)
		cur[0] = i
		for j := 1; j <= len(w); j++ {
			cost := 1
			if r[i-1] == w[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(w)] <= 2
}
