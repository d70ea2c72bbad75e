package offline

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/veredicto/veredicto/internal/search"
)

// reqCheck is one requirement of the mandate checked against the
// candidate's CV and interview.
//
// A sentence is evidence for a requirement when it speaks of the same
// thing (shared stems, a quantity of a kind the requirement asks for),
// says the candidate led it when the requirement asks to have led
// (lead.go), and meets each threshold the requirement states (amount.go):
// «18 MM USD» does not meet «superior a 20 MM USD», and an amount in
// another currency, or in «$» alone, is not compared. Each threshold may
// be met by a different such sentence («Lidero un equipo de 35 personas»
// and «Tengo 35 personas y cuatro jefaturas»). A threshold in years may
// also be met by the dated positions of the CV: the positions with a
// leadership title when the requirement asks to have led, all of them
// otherwise.
type reqCheck struct {
	text     string
	met      bool
	evidence []sentence // what meets it, strongest first
	// near is the sentence that came closest when it is not met (nil when
	// nothing in the sources speaks of it), and reasons say, in Spanish,
	// why neither it nor anything else meets it.
	near    *sentence
	reasons []string
	sources []string // the sources the reasons rest on besides near
}

// notTopic are the currency codes: they say in what unit, not what about
// («Lideré la implementación de SAP… 3,2 MM USD» is not about a
// refinancing «liderado… superior a 20 MM USD»); thresholds check them.
var notTopic = set(`usd clp eur mxn cop pen ars brl`)

// topicStems are the stems of req that say what it is about.
func topicStems(req string) []string {
	var out []string
	for _, s := range stems(req) {
		if !notTopic[s] {
			out = append(out, s)
		}
	}
	return out
}

// openCues mark a note of what is still to be checked («Pendiente:
// profundizar en liderazgo, relación con directorio…»): it names a topic,
// it is not evidence of it.
var openCues = []string{"pendiente", "pendientes", "por confirmar", "por validar", "por verificar", "por profundizar",
	"profundizar en", "no se abordo", "no se pregunto", "falta confirmar", "falta validar"}

// maxEvidence is how many sentences are kept as evidence of one
// requirement.
const maxEvidence = 3

// checkRequirement checks req against the pool of sentences and the
// positions read from the CV.
func checkRequirement(req string, pool []sentence, positions []job) reqCheck {
	rc := reqCheck{text: req}
	st := topicStems(req)
	var cands []sentence
	for _, m := range bestMatches(st, pool, minOverlap(st), len(pool)) {
		if supports(req, m.text) && !containsAny(m.text, openCues) {
			cands = append(cands, m.sentence)
		}
	}
	if len(cands) == 0 {
		return rc
	}
	lead := asksLeadership(req)
	var qualifying []sentence
	for _, s := range cands {
		if !lead || leadershipIn(s.text).leads {
			qualifying = append(qualifying, s)
		}
	}
	ths := thresholds(req)
	if len(ths) == 0 {
		if len(qualifying) > 0 {
			rc.met, rc.evidence = true, firstN(qualifying, maxEvidence)
			return rc
		}
		rc.near = &cands[0]
		rc.reasons = leadershipReasons(leadershipIn(cands[0].text))
		return rc
	}

	var unmet []threshold
	var tenure *tenureEvidence
	for _, th := range ths {
		ok := false
		for _, s := range qualifying {
			if o, _ := th.against(quantities(s.text)); o == met {
				ok = true
				rc.evidence = appendSentence(rc.evidence, s)
			}
		}
		if !ok && th.unit == "meses" {
			t := tenureFrom(positions, lead)
			tenure = &t
			if o, _ := th.against([]quantity{t.quantity()}); o == met {
				ok = true
				for _, p := range t.positions {
					rc.evidence = appendSentence(rc.evidence, p.sentence)
				}
			}
		}
		if !ok {
			unmet = append(unmet, th)
		}
	}
	if len(unmet) == 0 {
		rc.met, rc.evidence = true, firstN(rc.evidence, maxEvidence)
		return rc
	}
	rc.evidence = nil
	nearest := qualifying // what says the candidate led it comes first
	if len(nearest) == 0 {
		nearest = cands
	}
	near := closest(nearest, unmet)
	rc.near = &near
	l := leadershipIn(near.text)
	if lead && !l.leads {
		rc.reasons = leadershipReasons(l)
	}
	qs := quantities(near.text)
	for _, th := range unmet {
		if o, q := th.against(qs); o != met { // when met, near does not say it led it
			rc.reasons = append(rc.reasons, thresholdReason(th, o, q))
		}
		if th.unit == "meses" && tenure != nil {
			rc.reasons = append(rc.reasons, tenure.reason(lead))
			for _, p := range tenure.positions {
				rc.sources = appendUnique(rc.sources, p.source)
			}
		}
	}
	return rc
}

// closest is the sentence that comes nearest to meeting the thresholds:
// the one with the best outcome on them (met, undecided, not met, not
// comparable, absent), the strongest match on a tie.
func closest(cands []sentence, ths []threshold) sentence {
	best, bestScore := 0, -1
	for i, s := range cands {
		qs := quantities(s.text)
		score := 0
		for _, th := range ths {
			o, _ := th.against(qs)
			score += int(absent - o)
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	return cands[best]
}

// leadershipReasons says why a sentence does not evidence having led.
func leadershipReasons(l leadership) []string {
	switch {
	case l.denied != "":
		return []string{fmt.Sprintf("«%s» niega haberlo liderado", l.denied)}
	case l.support != "":
		return []string{fmt.Sprintf("«%s» es apoyo, no liderazgo", l.support)}
	}
	return []string{"no dice haberlo liderado"}
}

// thresholdReason says why a sentence's quantities do not meet th.
func thresholdReason(th threshold, o outcome, q quantity) string {
	switch o {
	case undecided:
		return fmt.Sprintf("«%s» no basta para acreditar «%s»", q.text, th.text)
	case notMet:
		return fmt.Sprintf("%s no cumple «%s»", lowerFirst(q.text), th.text)
	case incomparable:
		return fmt.Sprintf("%s no se compara con «%s»: está en otra moneda o no la indica, y la línea base no convierte monedas", lowerFirst(q.text), th.text)
	}
	return fmt.Sprintf("no informa «%s»", th.text)
}

// lowerFirst lower-cases a capitalised first word («Entre cuatro y seis
// personas») for use inside a sentence; acronyms («US$ 20», «UF 5.000»)
// keep their case.
func lowerFirst(s string) string {
	r := []rune(s)
	if len(r) > 1 && unicode.IsUpper(r[0]) && unicode.IsLower(r[1]) {
		r[0] = unicode.ToLower(r[0])
	}
	return string(r)
}

// tenureEvidence is the time spent in the CV's dated positions.
type tenureEvidence struct {
	positions []job
	years     int
}

// tenureFrom adds up the years of the positions (overlaps counted once),
// only those with a leadership title when leading is asked.
func tenureFrom(positions []job, leading bool) tenureEvidence {
	var t tenureEvidence
	for _, p := range positions {
		if !leading || leadsByTitle(p.text) {
			t.positions = append(t.positions, p)
		}
	}
	spans := append([]job(nil), t.positions...)
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].from < spans[j].from })
	end := 0
	for _, p := range spans {
		from := max(p.from, end)
		if p.to > from {
			t.years += p.to - from
		}
		end = max(end, p.to)
	}
	return t
}

func (t tenureEvidence) quantity() quantity {
	m := float64(t.years * 12)
	return quantity{lo: m, hi: m, unit: "meses"}
}

func (t tenureEvidence) reason(leading bool) string {
	what := "sus cargos con fechas suman"
	if leading {
		what = "sus cargos de jefatura con fechas suman"
	}
	if len(t.positions) == 0 {
		if leading {
			return "no informa cargos de jefatura con fechas"
		}
		return "no informa cargos con fechas"
	}
	return what + " " + yearsText(t.years)
}

// gap is the evidence-gap claim of an unmet requirement: the requirement,
// and when something came close, that sentence and why it does not meet
// it, citing the JD (which must hold the requirement word for word, as
// the claim quotes it) and the candidate's source.
func (rc reqCheck) gap(jd search.Doc) search.Claim {
	c := gap(requirementGapLead + rc.text + "»")
	if rc.near == nil || jd.Missing || !containsWords(jd.Text, rc.text) {
		return c
	}
	c.Text += fmt.Sprintf(". Lo más cercano: «%s» (%s): %s", rc.near.text, rc.near.source, strings.Join(rc.reasons, "; "))
	c.Sources = []string{jd.ID, rc.near.source}
	for _, s := range rc.sources {
		c.Sources = appendUnique(c.Sources, s)
	}
	return c
}

// requirementGapLead opens GEM1's gap claim for a requirement without
// evidence; GEM3 counts the requirements it names.
const requirementGapLead = "evidencia para el requisito «"

// unmetRequirements counts the requirements of reqs that a GEM1 output
// declares without evidence.
func unmetRequirements(g1 search.Gem1Content, reqs []string) int {
	n := 0
	for _, r := range reqs {
		for _, g := range g1.EvidenceGaps {
			if strings.HasPrefix(g.Text, search.NotInSources+": "+requirementGapLead+r+"»") {
				n++
				break
			}
		}
	}
	return n
}

// requirementPoints is the share of points (out of max) proportional to
// the requirements met, rounded down so that only evidence for every
// requirement earns all of them. With no requirement read from the JD
// (GEM5 declared the gap and blocked) it is half, rounded down: nothing
// was verified either way.
func requirementPoints(met, total, max int) int {
	if total == 0 {
		return max / 2
	}
	return max * met / total
}

// mandateRequirements are the mandate's requirements that GEM5 found in
// the JD (not its declared gap).
func mandateRequirements(m search.MandateSummary) []string {
	out := []string{}
	for _, r := range m.Requirements {
		if !strings.HasPrefix(r, search.NotInSources) {
			out = append(out, r)
		}
	}
	return out
}

// containsWords reports whether text holds phrase word for word, whatever
// the case, accents and punctuation.
func containsWords(text, phrase string) bool {
	return strings.Contains(" "+strings.Join(words(text), " ")+" ", " "+strings.Join(words(phrase), " ")+" ")
}

func firstN(ss []sentence, n int) []sentence {
	if len(ss) > n {
		return ss[:n]
	}
	return ss
}

func appendSentence(ss []sentence, s sentence) []sentence {
	for _, x := range ss {
		if x.source == s.source && x.text == s.text {
			return ss
		}
	}
	return append(ss, s)
}
