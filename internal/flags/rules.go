package flags

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/llm"
)

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
	stopruns := compileStopwords(stop)
	log := opts.Logger
	if log == nil {
		log = slog.Default()
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
			qf := derive(QuestionFlags{QuestionID: q.QuestionID, Target: q.Target, DriftDetected: true})
			if err := decideAll(ctx, findings(q, nil, "", qf, hedges, stopruns, nil, false)); err != nil {
				return Flags{}, nil, err
			}
			out.ByQuestion = append(out.ByQuestion, qf)
			continue
		}
		a := f.answer
		qf := QuestionFlags{
			QuestionID:      q.QuestionID,
			Target:          q.Target,
			ClosureOK:       !a.ForcedClosure,
			OverExplanation: overExplained(a.AnswerText, q.MaxWords, a.ForcedClosure),
			HedgingDetected: hedged(a.AnswerText, hedges),
			DriftDetected:   drifted(q, a.AnswerText, stopruns),
		}
		var verdict *Verdict
		stayedInvalid := false
		if len(facts) > 0 {
			v, err := judgeVerdict(ctx, judge, a.AnswerText, facts)
			c := v.Contradicts
			verdict = &v
			var invalid *llm.InvalidOutputError
			switch {
			case errors.As(err, &invalid):
				// The seed's conservative rule ("ante duda → marcar
				// riesgo"): a verdict that stayed invalid after the
				// re-ask marks the risk. The flag itself is not explained
				// (seed 002: "No explicar el flag"); the reason goes to
				// the log, naming the question, never the answer.
				log.WarnContext(ctx, "contradiction judge answer invalid after one re-ask; contradiction_with_context marked true",
					"question_id", q.QuestionID, "source", f.from, "error_type", llm.NameInvalidOutput)
				c, stayedInvalid = true, true
			case err != nil:
				return Flags{}, nil, fmt.Errorf("contradiction of %s (%s): %w", q.QuestionID, f.from, err)
			}
			qf.ContradictionWithContext = c
		}
		qf = derive(qf)
		// The rules that fired and the spans behind them go to the audit
		// record only (seed 002: the flag is not explained).
		if err := decideAll(ctx, findings(q, &a, f.from, qf, hedges, stopruns, verdict, stayedInvalid)); err != nil {
			return Flags{}, nil, err
		}
		out.ByQuestion = append(out.ByQuestion, qf)
	}
	out.Summary = summarize(out.ByQuestion)
	if err := decideAll(ctx, summaryFindings(out.ByQuestion, out.Summary)); err != nil {
		return Flags{}, nil, err
	}

	// The clock reading is recorded (a replay reads it back).
	at, err := audit.NowOf(ctx, "generated_at", opts.Now)
	if err != nil {
		return Flags{}, nil, fmt.Errorf("audit: clock for generated_at: %w", err)
	}
	out.GeneratedAt = at.UTC().Truncate(time.Second)
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

// judgeVerdict is judge's verdict, with the facts it names when it is a
// FactJudge.
func judgeVerdict(ctx context.Context, judge ContradictionJudge, answer string, facts []Fact) (Verdict, error) {
	if fj, ok := judge.(FactJudge); ok {
		return fj.Verdict(ctx, answer, facts)
	}
	c, err := judge.Contradicts(ctx, answer, facts)
	return Verdict{Contradicts: c}, err
}

func decideAll(ctx context.Context, ds []audit.Decision) error {
	for _, d := range ds {
		if err := decide(ctx, d); err != nil {
			return err
		}
	}
	return nil
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

// overExplained is the seed's "excede longitud sin aportar cierre": more
// than maxWords words and no closure of its own (the answer needed a
// forced closure). A long answer that closed is not over-explained.
func overExplained(answer string, maxWords int, forcedClosure bool) bool {
	if maxWords <= 0 {
		maxWords = DefaultMaxWords
	}
	return forcedClosure && wordCount(answer) > maxWords
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

func drifted(q Question, answer string, stop [][]string) bool {
	if strings.ToLower(strings.TrimSpace(q.ClosureRule)) == ClosureBinario {
		a := compose(strings.TrimSpace(answer))
		return !strings.EqualFold(a, "Sí") && !strings.EqualFold(a, "No")
	}
	have := map[string]bool{}
	for _, w := range words(answer) {
		have[w] = true
	}
	for _, w := range coreWords(q.QuestionText, stop) {
		if have[w] {
			return false
		}
	}
	return true
}

// compileStopwords turns each stopword into its run of words: "por qué" is
// one stopword of two words, removed only where both stand together.
func compileStopwords(stop []string) [][]string {
	out := make([][]string, 0, len(stop))
	for _, s := range stop {
		if w := words(s); len(w) > 0 {
			out = append(out, w)
		}
	}
	// Longest first, so "por qué" is removed before a one-word stopword
	// could take its first word.
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// coreWords are the question's words minus its stopwords, each stopword
// matched as a whole run of words: in "¿Por qué elegiste Go?" the run
// "por qué" goes and "elegiste" and "go" stay; a lone "por" is a core word.
func coreWords(text string, stop [][]string) []string {
	w := words(text)
	var out []string
	for i := 0; i < len(w); {
		n := 0
		for _, run := range stop {
			if i+len(run) <= len(w) && equalRun(w[i:i+len(run)], run) {
				n = len(run)
				break
			}
		}
		if n > 0 {
			i += n
			continue
		}
		out = append(out, w[i])
		i++
	}
	return out
}

func equalRun(a, b []string) bool {
	for i := range b {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
