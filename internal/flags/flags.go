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
//     stopwords (DefaultStopwords: the seed's list, where "por qué" is one
//     stopword of two words and a lone "por" stays a core word) — matched
//     literally. A question with no core words drifts (conservative).
//   - over_explanation: the seed's "excede longitud sin aportar cierre":
//     the answer has more than max_words words (default 120; exactly
//     max_words is not over) and did not close by itself (forced_closure).
//     Here a word is a whitespace-separated run holding at least one letter
//     or digit, so "12,5" and "EBITDA/deuda" are one word each and a lone
//     "—" is none.
//   - contradiction_with_context: the judge's verdict against the context
//     pack's facts; false when there is no pack or it has no facts (the
//     seed's "no comparable"). A judge answer that stays invalid after its
//     re-ask marks it true ("ante duda → marcar riesgo"); the output does
//     not explain it, the log names the question.
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
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"time"
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
// for the drift rule: exactly the seed's list. "por qué" is one stopword of
// two words, removed only where they stand together; a lone "por" is a
// core word. Treat it as read-only; pass Options.Stopwords to replace it.
var DefaultStopwords = []string{"qué", "cómo", "cuál", "cuándo", "por qué", "el", "la", "un", "una"}

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
	// Stopwords replaces DefaultStopwords when non-nil; an entry of
	// several words is one stopword, matched as a run.
	Stopwords []string
	// Logger receives what the output does not say: why a flag was set
	// conservatively (a judge answer that stayed invalid). Question ids
	// only, never answer text. nil: slog.Default().
	Logger *slog.Logger
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
