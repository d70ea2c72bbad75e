// Package flags is the deterministic interview classifier of seed 002
// (Flags — Schema v1.1): it turns interview transcripts, read against their
// question set and an optional context pack, into observable flags per
// question and a descriptive summary. It describes; it never explains,
// advises or decides.
//
// Every rule is computed in Go. The only judgment delegated is
// contradiction_with_context, through the ContradictionJudge interface
// (OfflineJudge or LLMJudge); the code still computes every level and
// aggregate from the flags.
//
// Rules, made exact (the seed's "ante duda → marcar riesgo" applies
// wherever the seed is silent):
//
//   - Text is compared after composing decomposed Spanish accents (NFD
//     "i"+U+0301 → "í") and lower-casing. Words are maximal runs of letters
//     and digits; everything else separates them.
//   - closure_ok = NOT forced_closure.
//   - hedging_detected: the answer contains a marker of the lexicon
//     (DefaultHedgingMarkers unless Options.HedgingMarkers is set) as a whole
//     word or a contiguous run of whole words, case-insensitive and literal
//     ("Creo" matches "creo", "creó" and "recreo" do not, "mas o menos"
//     without its accent does not match "más o menos").
//   - drift_detected, closure_rule binario: the trimmed answer is not
//     exactly "Sí" or "No", ignoring case. Trailing punctuation is not
//     stripped ("Sí." drifts) and the unaccented "Si" drifts: the seed says
//     "exactamente" and the conservative reading marks the risk.
//   - drift_detected, any other closure_rule: the answer contains none of
//     the question's core words — the words of question_text minus the
//     stopwords (DefaultStopwords: the seed's list) — matched literally. A
//     question with no core words drifts (conservative).
//   - over_explanation: the answer has more than max_words words (default
//     120); exactly max_words is not over. Here a word is a
//     whitespace-separated run holding at least one letter or digit, so
//     "12,5" and "EBITDA/deuda" are one word each and a lone "—" is none.
//   - contradiction_with_context: the judge's verdict against the context
//     pack's facts; false when there is no pack or it has no facts (the
//     seed's "no comparable").
//   - authority_level: alta with none of {closure_ok=false,
//     hedging_detected, drift_detected}, media with exactly one, baja with
//     two or more.
//   - verbal_risk: alto if contradiction_with_context, or over_explanation
//     and hedging_detected together; medio if exactly one of the three;
//     bajo otherwise.
//   - summary.overall_closure: ok when at least 80% of the questions have
//     closure_ok (exactly 80% is ok), fail otherwise.
//   - summary.overall_authority: the weighted mode, the level with the
//     largest count × weight (alta 3, media 2, baja 1); ties go to the
//     lower level.
//   - summary.overall_verbal_risk: the highest risk observed.
//   - A question answered in no transcript gets closure_ok=false,
//     drift_detected=true and every other flag false, with levels derived
//     by the same rules, and a warning. A question answered in several
//     transcripts uses the first transcript given, with a warning.
package flags

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/veredicto/veredicto"
)

// Target is the interview a question belongs to.
type Target string

// Targets.
const (
	TargetRRHH    Target = "rrhh"
	TargetTecnico Target = "tecnico"
)

// ClosureBinario is the closure rule of yes/no questions. Other closure
// rules (abierta, cifra, …) are accepted as given and share the core-word
// drift rule.
const ClosureBinario = "binario"

// DefaultMaxWords is the answer length limit when a question sets none.
const DefaultMaxWords = 120

// Level is an authority level.
type Level string

// Authority levels.
const (
	LevelBaja  Level = "baja"
	LevelMedia Level = "media"
	LevelAlta  Level = "alta"
)

// Risk is a verbal risk level.
type Risk string

// Verbal risk levels.
const (
	RiskBajo  Risk = "bajo"
	RiskMedio Risk = "medio"
	RiskAlto  Risk = "alto"
)

// Closure is the overall closure verdict.
type Closure string

// Overall closure values.
const (
	ClosureOK   Closure = "ok"
	ClosureFail Closure = "fail"
)

// DefaultHedgingMarkers is the documented doubt lexicon: the seed's three
// markers ("creo", "depende", "más o menos") plus common Spanish hedges.
// Treat it as read-only; pass Options.HedgingMarkers (or the CLI's
// --hedging FILE, one marker per line, see ParseMarkers) to replace it.
var DefaultHedgingMarkers = []string{
	"creo",
	"depende",
	"más o menos",
	"quizá",
	"quizás",
	"tal vez",
	"a lo mejor",
	"supongo",
	"probablemente",
	"puede que",
	"no sé",
	"no estoy seguro",
	"no estoy segura",
}

// DefaultStopwords are the words of question_text that are not core words
// for the drift rule: exactly the seed's list ("por qué" is split into its
// two words). Treat it as read-only; pass Options.Stopwords to replace it.
var DefaultStopwords = []string{"qué", "cómo", "cuál", "cuándo", "por", "el", "la", "un", "una"}

// QuestionSet is the question set file.
type QuestionSet struct {
	QuestionSetID string     `yaml:"question_set_id" json:"question_set_id"`
	Questions     []Question `yaml:"questions" json:"questions"`
	// Source names the file the set was read from, for error messages.
	Source string `yaml:"-" json:"-"`
}

// Question is one question of a set.
type Question struct {
	QuestionID   string `yaml:"question_id" json:"question_id"`
	Target       Target `yaml:"target" json:"target"`
	QuestionText string `yaml:"question_text" json:"question_text"`
	ClosureRule  string `yaml:"closure_rule" json:"closure_rule"`
	// MaxWords is the answer length limit; 0 (or absent) means
	// DefaultMaxWords.
	MaxWords int `yaml:"max_words,omitempty" json:"max_words,omitempty"`
}

// Transcript is one interview's answers.
type Transcript struct {
	TranscriptID string   `yaml:"transcript_id" json:"transcript_id"`
	Target       Target   `yaml:"target" json:"target"`
	Answers      []Answer `yaml:"answers" json:"answers"`
	// Source names the file the transcript was read from.
	Source string `yaml:"-" json:"-"`
}

// Answer is the answer to one question.
type Answer struct {
	QuestionID    string `yaml:"question_id" json:"question_id"`
	AnswerText    string `yaml:"answer_text" json:"answer_text"`
	ForcedClosure bool   `yaml:"forced_closure" json:"forced_closure"`
}

// ContextPack holds the facts answers are contrasted with (ContextPack_BASE).
type ContextPack struct {
	ContextPackID string `yaml:"context_pack_id" json:"context_pack_id"`
	Facts         []Fact `yaml:"facts" json:"facts"`
	// Source names the file the pack was read from.
	Source string `yaml:"-" json:"-"`
}

// Fact is one fact or decision of a context pack.
type Fact struct {
	ID   string `yaml:"id" json:"id"`
	Text string `yaml:"text" json:"text"`
}

// Flags is the classifier's output, with the seed's fields in the seed's
// order.
type Flags struct {
	FlagsID     string          `yaml:"flags_id" json:"flags_id"`
	GeneratedAt time.Time       `yaml:"generated_at" json:"generated_at"` // UTC, whole seconds: RFC 3339
	Summary     Summary         `yaml:"summary" json:"summary"`
	ByQuestion  []QuestionFlags `yaml:"by_question" json:"by_question"`
}

// Summary holds the descriptive aggregates.
type Summary struct {
	OverallClosure    Closure `yaml:"overall_closure" json:"overall_closure"`
	OverallAuthority  Level   `yaml:"overall_authority" json:"overall_authority"`
	OverallVerbalRisk Risk    `yaml:"overall_verbal_risk" json:"overall_verbal_risk"`
}

// QuestionFlags are the flags of one question.
type QuestionFlags struct {
	QuestionID               string `yaml:"question_id" json:"question_id"`
	Target                   Target `yaml:"target" json:"target"`
	ClosureOK                bool   `yaml:"closure_ok" json:"closure_ok"`
	AuthorityLevel           Level  `yaml:"authority_level" json:"authority_level"`
	VerbalRisk               Risk   `yaml:"verbal_risk" json:"verbal_risk"`
	OverExplanation          bool   `yaml:"over_explanation" json:"over_explanation"`
	ContradictionWithContext bool   `yaml:"contradiction_with_context" json:"contradiction_with_context"`
	HedgingDetected          bool   `yaml:"hedging_detected" json:"hedging_detected"`
	DriftDetected            bool   `yaml:"drift_detected" json:"drift_detected"`
}

// ContradictionJudge decides whether an answer contradicts any of the facts.
// Implementations must be safe for concurrent use.
type ContradictionJudge interface {
	Contradicts(ctx context.Context, answer string, facts []Fact) (bool, error)
}

// Options tunes Classify. The zero value uses the defaults.
type Options struct {
	// FlagsID is the output's flags_id; empty derives one from the inputs
	// (NewID of their canonical JSON).
	FlagsID string
	// Now is the clock for generated_at; nil means time.Now.
	Now func() time.Time
	// HedgingMarkers replaces DefaultHedgingMarkers when non-nil.
	HedgingMarkers []string
	// Stopwords replaces DefaultStopwords when non-nil.
	Stopwords []string
}

// NewID returns a deterministic flags_id for the given inputs: "fl_" and
// the first 12 hex digits of the SHA-256 of the inputs, each
// length-prefixed so that moving bytes between inputs changes the id.
func NewID(inputs ...[]byte) string {
	h := sha256.New()
	for _, in := range inputs {
		fmt.Fprintf(h, "%d\n", len(in))
		h.Write(in)
	}
	return "fl_" + hex.EncodeToString(h.Sum(nil))[:12]
}

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

// Classify computes the flags of every question of qs, in question-set
// order, from the transcripts (earlier transcripts win on a question
// answered twice) contrasted with pack (nil: no contrast). A nil judge means
// OfflineJudge. The warnings name questions and files, never answer text.
func Classify(ctx context.Context, qs QuestionSet, transcripts []Transcript, pack *ContextPack, judge ContradictionJudge, opts Options) (Flags, []string, error) {
	if err := qs.Validate(); err != nil {
		return Flags{}, nil, err
	}
	for _, t := range transcripts {
		if err := t.Validate(); err != nil {
			return Flags{}, nil, err
		}
	}
	var facts []Fact
	if pack != nil {
		if err := pack.Validate(); err != nil {
			return Flags{}, nil, err
		}
		facts = pack.Facts
	}
	if judge == nil {
		judge = OfflineJudge{}
	}
	hedges, err := compileMarkers(opts.HedgingMarkers)
	if err != nil {
		return Flags{}, nil, err
	}
	stop := opts.Stopwords
	if stop == nil {
		stop = DefaultStopwords
	}
	stopset := map[string]bool{}
	for _, w := range stop {
		for _, t := range words(w) {
			stopset[t] = true
		}
	}

	questions := map[string]Question{}
	for _, q := range qs.Questions {
		questions[q.QuestionID] = q
	}
	type found struct {
		answer Answer
		from   string
	}
	answers := map[string]found{}
	var warnings []string
	for _, t := range transcripts {
		for i, a := range t.Answers {
			q, ok := questions[a.QuestionID]
			if !ok {
				return Flags{}, nil, &veredicto.InvalidInputError{File: t.source(), Field: fmt.Sprintf("answers[%d].question_id", i),
					Problem: fmt.Sprintf("%q is not in question set %s", a.QuestionID, qs.QuestionSetID)}
			}
			if prev, ok := answers[a.QuestionID]; ok {
				warnings = append(warnings, fmt.Sprintf("question %s is answered in %s and in %s; using %s", a.QuestionID, prev.from, t.source(), prev.from))
				continue
			}
			if q.Target != t.Target {
				warnings = append(warnings, fmt.Sprintf("question %s (target %s) is answered in %s (target %s)", a.QuestionID, q.Target, t.source(), t.Target))
			}
			answers[a.QuestionID] = found{answer: a, from: t.source()}
		}
	}

	out := Flags{FlagsID: opts.FlagsID, ByQuestion: make([]QuestionFlags, 0, len(qs.Questions))}
	for _, q := range qs.Questions {
		f, ok := answers[q.QuestionID]
		if !ok {
			warnings = append(warnings, fmt.Sprintf("question %s has no answer in any transcript: flagged closure_ok=false, drift_detected=true", q.QuestionID))
			out.ByQuestion = append(out.ByQuestion, derive(QuestionFlags{QuestionID: q.QuestionID, Target: q.Target, DriftDetected: true}))
			continue
		}
		a := f.answer
		qf := QuestionFlags{
			QuestionID:      q.QuestionID,
			Target:          q.Target,
			ClosureOK:       !a.ForcedClosure,
			OverExplanation: overExplained(a.AnswerText, q.MaxWords),
			HedgingDetected: hedged(a.AnswerText, hedges),
			DriftDetected:   drifted(q, a.AnswerText, stopset),
		}
		if len(facts) > 0 {
			c, err := judge.Contradicts(ctx, a.AnswerText, facts)
			if err != nil {
				return Flags{}, nil, fmt.Errorf("contradiction of %s (%s): %w", q.QuestionID, f.from, err)
			}
			qf.ContradictionWithContext = c
		}
		out.ByQuestion = append(out.ByQuestion, derive(qf))
	}
	out.Summary = summarize(out.ByQuestion)

	now := opts.Now
	if now == nil {
		now = time.Now
	}
	out.GeneratedAt = now().UTC().Truncate(time.Second)
	if out.FlagsID == "" {
		canon, err := json.Marshal(struct {
			QS          QuestionSet  `json:"qs"`
			Transcripts []Transcript `json:"transcripts"`
			Pack        *ContextPack `json:"pack"`
			Hedges      []string     `json:"hedges"`
			Stop        []string     `json:"stop"`
		}{qs, transcripts, pack, opts.HedgingMarkers, opts.Stopwords})
		if err != nil {
			return Flags{}, nil, fmt.Errorf("flags id: %w", err)
		}
		out.FlagsID = NewID(canon)
	}
	return out, warnings, nil
}

// derive fills the authority level and verbal risk from the boolean flags.
func derive(f QuestionFlags) QuestionFlags {
	f.AuthorityLevel = authorityLevel(f.ClosureOK, f.HedgingDetected, f.DriftDetected)
	f.VerbalRisk = verbalRisk(f.ContradictionWithContext, f.OverExplanation, f.HedgingDetected)
	return f
}

func authorityLevel(closureOK, hedging, drift bool) Level {
	n := 0
	for _, neg := range []bool{!closureOK, hedging, drift} {
		if neg {
			n++
		}
	}
	switch n {
	case 0:
		return LevelAlta
	case 1:
		return LevelMedia
	default:
		return LevelBaja
	}
}

func verbalRisk(contradiction, overExplanation, hedging bool) Risk {
	switch {
	case contradiction || (overExplanation && hedging):
		return RiskAlto
	case overExplanation || hedging:
		return RiskMedio
	default:
		return RiskBajo
	}
}

// levels and risks are in ascending order; ties resolve to the earlier one.
var (
	levels      = []Level{LevelBaja, LevelMedia, LevelAlta}
	levelWeight = map[Level]int{LevelBaja: 1, LevelMedia: 2, LevelAlta: 3}
	risks       = []Risk{RiskBajo, RiskMedio, RiskAlto}
)

func summarize(qf []QuestionFlags) Summary {
	s := Summary{OverallClosure: ClosureFail, OverallAuthority: LevelBaja, OverallVerbalRisk: RiskBajo}
	ok := 0
	count := map[Level]int{}
	riskRank := map[Risk]int{}
	for i, r := range risks {
		riskRank[r] = i
	}
	for _, f := range qf {
		if f.ClosureOK {
			ok++
		}
		count[f.AuthorityLevel]++
		if riskRank[f.VerbalRisk] > riskRank[s.OverallVerbalRisk] {
			s.OverallVerbalRisk = f.VerbalRisk
		}
	}
	// ok/total >= 80% in integers: exactly 80% is ok.
	if len(qf) > 0 && ok*5 >= len(qf)*4 {
		s.OverallClosure = ClosureOK
	}
	best := -1
	for _, l := range levels {
		if score := count[l] * levelWeight[l]; score > best {
			best, s.OverallAuthority = score, l
		}
	}
	return s
}

func overExplained(answer string, maxWords int) bool {
	if maxWords <= 0 {
		maxWords = DefaultMaxWords
	}
	return wordCount(answer) > maxWords
}

func wordCount(s string) int {
	n := 0
	for _, f := range strings.Fields(s) {
		if strings.IndexFunc(f, isWordRune) >= 0 {
			n++
		}
	}
	return n
}

func compileMarkers(markers []string) ([][]string, error) {
	if markers == nil {
		markers = DefaultHedgingMarkers
	}
	out := make([][]string, 0, len(markers))
	for i, m := range markers {
		w := words(m)
		if len(w) == 0 {
			return nil, fmt.Errorf("hedging marker %d (%q) has no letters or digits", i, m)
		}
		out = append(out, w)
	}
	return out, nil
}

func hedged(answer string, markers [][]string) bool {
	w := words(answer)
	for _, m := range markers {
		if containsRun(w, m) {
			return true
		}
	}
	return false
}

// containsRun reports whether run occurs in w as contiguous elements.
func containsRun(w, run []string) bool {
	for i := 0; i+len(run) <= len(w); i++ {
		match := true
		for j := range run {
			if w[i+j] != run[j] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

func drifted(q Question, answer string, stop map[string]bool) bool {
	if strings.ToLower(strings.TrimSpace(q.ClosureRule)) == ClosureBinario {
		a := compose(strings.TrimSpace(answer))
		return !strings.EqualFold(a, "Sí") && !strings.EqualFold(a, "No")
	}
	have := map[string]bool{}
	for _, w := range words(answer) {
		have[w] = true
	}
	for _, w := range words(q.QuestionText) {
		if !stop[w] && have[w] {
			return false
		}
	}
	return true
}

// composer turns the decomposed forms of Spanish accented letters into their
// precomposed forms, so NFD and NFC text compare equal.
var composer = strings.NewReplacer(
	"a\u0301", "á", "e\u0301", "é", "i\u0301", "í", "o\u0301", "ó", "u\u0301", "ú",
	"A\u0301", "Á", "E\u0301", "É", "I\u0301", "Í", "O\u0301", "Ó", "U\u0301", "Ú",
	"n\u0303", "ñ", "N\u0303", "Ñ", "u\u0308", "ü", "U\u0308", "Ü",
)

func compose(s string) string { return composer.Replace(s) }

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// words returns the lower-cased words of s: maximal runs of letters and
// digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(compose(s)), func(r rune) bool { return !isWordRune(r) })
}

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
