package flags

import (
	"fmt"
	"strings"

	"github.com/veredicto/veredicto/internal/audit"
)

// What the audit record keeps of a question's flags: for every rule that
// fired, the rule and the span of the answer behind the flag. A span is
// written answer[a:b] "text": character offsets in the answer with its
// Spanish accents composed (the text the rules read), and that text.

// span is a run of an answer's (composed) text.
type span struct {
	start, end int
	text       string
}

func (s span) String() string { return fmt.Sprintf("answer[%d:%d] %q", s.start, s.end, s.text) }

// whole is the answer's span, trimmed.
func whole(answer string) span {
	r := []rune(compose(answer))
	start, end := 0, len(r)
	for start < end && isSpace(r[start]) {
		start++
	}
	for end > start && isSpace(r[end-1]) {
		end--
	}
	return span{start, end, string(r[start:end])}
}

func isSpace(r rune) bool { return strings.ContainsRune(" \t\n\r\v\f\u00a0", r) }

// token is a word of the answer (as words reads it) and its span.
type token struct {
	word string
	span
}

// tokens are the answer's words, as words reads them, with their spans.
func tokens(answer string) []token {
	r := []rune(compose(answer))
	var out []token
	for i := 0; i < len(r); {
		if !isWordRune(r[i]) {
			i++
			continue
		}
		j := i
		for j < len(r) && isWordRune(r[j]) {
			j++
		}
		out = append(out, token{strings.ToLower(string(r[i:j])), span{i, j, string(r[i:j])}})
		i = j
	}
	return out
}

// hedgeSpans names each marker of the lexicon found in the answer, with
// its first occurrence.
func hedgeSpans(answer string, markers [][]string) []string {
	ts := tokens(answer)
	r := []rune(compose(answer))
	var out []string
	for _, m := range markers {
		for i := 0; i+len(m) <= len(ts); i++ {
			match := true
			for j := range m {
				if ts[i+j].word != m[j] {
					match = false
					break
				}
			}
			if match {
				sp := span{ts[i].start, ts[i+len(m)-1].end, ""}
				sp.text = string(r[sp.start:sp.end])
				out = append(out, fmt.Sprintf("marker %q: %s", strings.Join(m, " "), sp))
				break
			}
		}
	}
	return out
}

// pastLimit is the answer's span past its max_words-th word (words as
// wordCount counts them).
func pastLimit(answer string, maxWords int) span {
	r := []rune(compose(answer))
	n := 0
	for i := 0; i < len(r); {
		if isSpace(r[i]) {
			i++
			continue
		}
		j := i
		word := false
		for j < len(r) && !isSpace(r[j]) {
			word = word || isWordRune(r[j])
			j++
		}
		if word {
			if n++; n > maxWords {
				end := whole(answer).end
				return span{i, end, string(r[i:end])}
			}
		}
		i = j
	}
	return span{}
}

// findings are the decisions behind question q's flags: every rule that
// fired with the span of the answer behind it, then the levels. verdict
// is the contradiction judge's (nil with no facts), invalid whether its
// answer stayed invalid.
func findings(q Question, a *Answer, from string, qf QuestionFlags, hedges, stop [][]string, verdict *Verdict, invalid bool) []audit.Decision {
	var out []audit.Decision
	fired := func(flag, detail string) {
		out = append(out, audit.Decision{Name: "flag", Outcome: flag, Evidence: []string{q.QuestionID}, Detail: detail})
	}
	if a == nil {
		fired("closure_ok=false", "no transcript answers the question")
		fired("drift_detected", "no transcript answers the question")
	} else {
		at := "(" + from + ") "
		if !qf.ClosureOK {
			fired("closure_ok=false", at+"the transcript marks forced_closure: the interviewer closed the answer")
		}
		if qf.HedgingDetected {
			fired("hedging_detected", at+strings.Join(hedgeSpans(a.AnswerText, hedges), "; "))
		}
		if qf.DriftDetected {
			if strings.ToLower(strings.TrimSpace(q.ClosureRule)) == ClosureBinario {
				fired("drift_detected", at+fmt.Sprintf("closure_rule binario: %s is not exactly Sí or No", whole(a.AnswerText)))
			} else {
				fired("drift_detected", at+fmt.Sprintf("none of the question's core words (%s) is in %s", strings.Join(coreWords(q.QuestionText, stop), ", "), whole(a.AnswerText)))
			}
		}
		if qf.OverExplanation {
			max := q.MaxWords
			if max <= 0 {
				max = DefaultMaxWords
			}
			fired("over_explanation", at+fmt.Sprintf("%d words, over max_words %d, and a forced closure: past the limit %s", wordCount(a.AnswerText), max, pastLimit(a.AnswerText, max)))
		}
		if qf.ContradictionWithContext {
			why := "the judge found it contradicts facts " + strings.Join(verdict.FactIDs, ", ")
			if invalid {
				why = "the judge's answer stayed invalid after one re-ask: the risk is marked (ante duda, marcar riesgo)"
			}
			fired("contradiction_with_context", at+why+": "+whole(a.AnswerText).String())
		}
	}
	out = append(out, audit.Decision{Name: "levels", Outcome: fmt.Sprintf("authority_level=%s verbal_risk=%s", qf.AuthorityLevel, qf.VerbalRisk),
		Evidence: []string{q.QuestionID}, Detail: fmt.Sprintf("closure_ok=%t hedging=%t drift=%t over_explanation=%t contradiction=%t",
			qf.ClosureOK, qf.HedgingDetected, qf.DriftDetected, qf.OverExplanation, qf.ContradictionWithContext)})
	return out
}

// summaryFindings are the decisions behind the summary's aggregates.
func summaryFindings(qf []QuestionFlags, s Summary) []audit.Decision {
	ok := 0
	count := map[Level]int{}
	for _, f := range qf {
		if f.ClosureOK {
			ok++
		}
		count[f.AuthorityLevel]++
	}
	pct := 0.0
	if len(qf) > 0 {
		pct = float64(ok) * 100 / float64(len(qf))
	}
	eighty := 80.0
	return []audit.Decision{
		{Name: "overall_closure", Score: &pct, Threshold: &eighty, Outcome: string(s.OverallClosure), Detail: fmt.Sprintf("%d of %d questions with closure_ok", ok, len(qf))},
		{Name: "overall_authority", Outcome: string(s.OverallAuthority), Detail: fmt.Sprintf("weighted mode: alta %d×3, media %d×2, baja %d×1; ties go to the lower level",
			count[LevelAlta], count[LevelMedia], count[LevelBaja])},
		{Name: "overall_verbal_risk", Outcome: string(s.OverallVerbalRisk), Detail: "the highest risk of any question"},
	}
}
