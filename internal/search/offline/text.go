package offline

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// sentence is one line or sentence of a source document.
type sentence struct {
	source  string
	text    string   // as written (trimmed, without bullet markers)
	heading string   // the nearest Markdown heading above it
	stems   []string // content-word stems, deduplicated
}

var (
	bulletRE   = regexp.MustCompile(`^\s*(?:[-*•]|\d+[.)])\s+`)
	sentenceRE = regexp.MustCompile(`[^.!?;]+[.!?;]?`)
)

// split breaks a Markdown document into sentences, remembering the heading
// each falls under. Headings themselves are kept as sentences too (a CV's
// "### Cargo — Empresa (2015–2020)" line carries facts).
func split(source, text string) []sentence {
	var out []sentence
	heading := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			h := strings.TrimSpace(strings.TrimLeft(line, "#"))
			if strings.HasPrefix(line, "###") {
				out = append(out, newSentence(source, h, heading))
				continue
			}
			heading = h
			continue
		}
		line = bulletRE.ReplaceAllString(line, "")
		if len([]rune(line)) <= 200 {
			out = append(out, newSentence(source, line, heading))
			continue
		}
		for _, s := range sentenceRE.FindAllString(line, -1) {
			if s = strings.TrimSpace(s); len([]rune(s)) > 3 {
				out = append(out, newSentence(source, s, heading))
			}
		}
	}
	return out
}

func newSentence(source, text, heading string) sentence {
	return sentence{source: source, text: text, heading: heading, stems: stems(text)}
}

// accents folds the accented letters of Spanish (and common Latin ones).
var accents = strings.NewReplacer(
	"á", "a", "é", "e", "í", "i", "ó", "o", "ú", "u", "ü", "u", "ñ", "n",
	"à", "a", "è", "e", "ì", "i", "ò", "o", "ù", "u", "â", "a", "ê", "e", "î", "i", "ô", "o", "û", "u",
	"ä", "a", "ë", "e", "ï", "i", "ö", "o", "ç", "c",
)

// fold lower-cases and removes accents: "Días" → "dias". Every accented
// letter it folds is one rune, so folded text has as many runes as s.
func fold(s string) string {
	return accents.Replace(strings.ToLower(s))
}

// words splits folded text into words of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(fold(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// stopwords are Spanish function words and words too common in this domain
// to signal a match.
var stopwords = set(`a al algo algun alguna algunas alguno algunos ante antes aun bajo bien cada casi como con contra cual cuales cuando de del desde donde dos durante e el ella ellas ellos en entre era eran es esa esas ese eso esos esta estaba estan estar estas este esto estos fue fueron gran ha habia han hasta hay la las le les lo los mas me mi mientras muy mucho nada ni no nos o otra otras otro otros para pero poco por porque que se segun ser si sido sin sobre son su sus tambien tan tanto te tiene tienen todo todos tras tu un una unas uno unos y ya anos ano experiencia empresa cargo rol trabajo area persona personas candidato candidata segun dijo comenta indica senala soy muy ` +
	// Words of the generic phrases (fluffPhrases): they must not make two
	// unrelated sentences look like the same fact.
	`orientado orientada resultados proactivo proactiva apasionado apasionada nato nata excelentes habilidades pensamiento estrategico estrategica desempeno sinergia dinamico dinamica resiliente integral motivado motivada altamente innovador innovadora mentalidad`)

func set(list string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(list) {
		m[w] = true
	}
	return m
}

// stem reduces a folded word to a crude prefix stem so that "liderazgo",
// "lideró" and "liderar" meet ("lider"). Numbers are kept whole.
func stem(w string) string {
	if w[0] >= '0' && w[0] <= '9' {
		return w
	}
	r := []rune(w)
	if len(r) > 5 {
		r = r[:5]
	}
	return string(r)
}

// stems returns the deduplicated content stems of text, in order.
func stems(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range words(text) {
		if len([]rune(w)) < 3 || stopwords[w] {
			continue
		}
		s := stem(w)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// overlap counts the stems of a that appear in b, ignoring bare numbers.
func overlap(a, b []string) int {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	in := make(map[string]bool, len(b))
	for _, s := range b {
		in[s] = true
	}
	n := 0
	for _, s := range a {
		if in[s] && !isNumber(s) {
			n++
		}
	}
	return n
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

// match is a candidate sentence supporting a target (a requirement, a
// priority, a claim), with its strength.
type match struct {
	sentence
	score int
}

// bestMatches returns the sentences sharing at least min stems with target,
// strongest first (ties keep document order), at most n.
func bestMatches(target []string, pool []sentence, min, n int) []match {
	var ms []match
	for _, s := range pool {
		if k := overlap(target, s.stems); k >= min {
			ms = append(ms, match{s, k})
		}
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].score > ms[j].score })
	if len(ms) > n {
		ms = ms[:n]
	}
	return ms
}

// minOverlap is how many stems a sentence must share with a target to count
// as evidence for it: two, or one when the target has only one or two.
func minOverlap(target []string) int {
	if len(target) <= 2 {
		return 1
	}
	return 2
}

// Quantities: a number with a unit, a percentage or a money amount. Bare
// years are not achievements.
var quantityRE = regexp.MustCompile(`(?i)(\d+(?:[.,]\d+)?\s*(?:%|por ciento|mm|millones|mil|usd|us\$|clp|eur|€|\$|x\b|veces|dias|días|meses|personas|pp|puntos)|(?:usd|us\$|\$|€)\s*\d)`)

func quantified(text string) bool {
	return quantityRE.MatchString(text)
}

// numbersIn lists the numbers written in text (years excluded), for
// comparing a reference's figure with the CV's.
var numberRE = regexp.MustCompile(`\d+(?:[.,]\d+)?`)

func numbersIn(text string) []string {
	var out []string
	for _, n := range numberRE.FindAllString(text, -1) {
		n = strings.ReplaceAll(n, ",", ".")
		if v, err := strconv.Atoi(n); err == nil && v >= 1900 && v <= 2100 {
			continue
		}
		out = append(out, n)
	}
	return out
}

// fluffPhrases are generic self-descriptions that carry no evidence (seed
// §4 rule 2). Matched on folded text.
var fluffPhrases = []string{
	"orientado a resultados", "orientada a resultados", "lider nato", "lider nata", "proactivo", "proactiva",
	"apasionado", "apasionada", "excelentes habilidades de comunicacion", "habilidades de comunicacion",
	"excelentes habilidades", "pensamiento estrategico", "alto desempeno",
	"trabajo en equipo", "vision estrategica", "perfil integral", "gran capacidad", "altamente motivado",
	"altamente motivada", "sinergia", "dinamico", "dinamica", "resiliente", "capacidad de adaptacion",
	"enfoque en el cliente", "mentalidad de crecimiento", "innovador", "innovadora",
}

// fluffIn returns the generic phrases found in text.
func fluffIn(text string) []string {
	f := " " + strings.Join(words(text), " ") + " "
	var out []string
	for _, p := range fluffPhrases {
		if strings.Contains(f, " "+p+" ") {
			out = append(out, p)
		}
	}
	return out
}

// removeFluff deletes generic phrases from a sentence, keeping its facts:
// "Como líder proactivo y orientado a resultados, reduje el costo en 8%" →
// "Reduje el costo en 8%". It works on the original text, case- and
// accent-insensitively, and returns "" when nothing factual is left.
func removeFluff(text string) string {
	out := elideQuotedFluff(text)
	for _, p := range fluffPhrases {
		out = removeFolded(out, p)
	}
	out = strings.Join(strings.Fields(out), " ")
	out = residueRE.ReplaceAllString(out, "$1")
	out = leadInRE.ReplaceAllString(out, "")
	out = strayRE.ReplaceAllString(out, "")
	out = residueRE.ReplaceAllString(out, "$1")
	out = strings.Join(strings.Fields(out), " ")
	out = strings.TrimLeft(out, " ,;:-")
	out = strings.ReplaceAll(out, " ,", ",")
	if len(stems(out)) < 2 {
		return ""
	}
	r := []rune(out)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// leadInRE removes what generic phrases leave behind at the start of a
// sentence ("Como líder y , …").
var leadInRE = regexp.MustCompile(`(?i)^\s*(?:como\s+(?:un|una)?\s*(?:l[ií]der|profesional|ejecutiv[oa])?\s*(?:(?:y|,)\s*)*)+,?\s*`)

// strayRE removes what generic phrases leave inside a sentence or quote:
// "Como soy un y, reduje…" → "reduje…", "un y" and dangling conjunctions.
var strayRE = regexp.MustCompile(`(?i)\bcomo\s+(?:soy\s+)?(?:(?:un|una|muy)\s+)*(?:(?:l[ií]der|profesional|ejecutiv[oa])\s+)?(?:(?:y|e)\s*)?,\s*|\b(?:un|una|muy)\s+(?:y|e)\b\s*,?|\s+(?:y|e)\s*(?:,)`)

// residueRE removes a run of function words left before a comma at the
// start of a sentence or quote: "Con mi, refinanciamos" → "refinanciamos".
var residueRE = regexp.MustCompile(`(?i)(^|["«“(]\s*)(?:(?:con|de|mi|soy|muy|un|una|como|y|e|tan|el|la)\s*)+,\s*`)

// removeFolded removes every occurrence of phrase (folded) from s, matching
// on folded text; fold keeps rune positions, so the cut maps back exactly.
func removeFolded(s, phrase string) string { return replaceFolded(s, phrase, "") }

// replaceFolded replaces phrase (folded) in s at word boundaries with repl.
func replaceFolded(s, phrase, repl string) string {
	from := 0 // in runes: repl may itself hold the phrase
	for {
		rs := []rune(s)
		fs := fold(string(rs[from:]))
		at := indexWord(fs, phrase)
		if at < 0 {
			return s
		}
		start := from + len([]rune(fs[:at]))
		end := start + len([]rune(phrase))
		s = string(rs[:start]) + repl + string(rs[end:])
		from = start + len([]rune(repl))
	}
}

// quotedResidueRE folds the function words an elision leaves before a
// comma at the start of a quotation into it: "Con mi […], refinanciamos"
// → "[…] refinanciamos", "Como soy un […] y […], reduje" → "[…] reduje".
var quotedResidueRE = regexp.MustCompile(`(?i)^\s*(?:(?:con|de|mi|soy|muy|un|una|como|y|e|tan|el|la)\s+|\[…\]\s*)*\[…\]\s*,\s*`)

// elideQuotedFluff replaces the generic phrases inside quotations with an
// elision mark, so a corrected quotation still quotes its source word for
// word (the quotation check reads "[…]" as an elision).
func elideQuotedFluff(text string) string {
	var b strings.Builder
	rest := text
	for {
		i := strings.IndexAny(rest, "\"«“")
		if i < 0 {
			b.WriteString(rest)
			return b.String()
		}
		open, size := utf8.DecodeRuneInString(rest[i:])
		closing := map[rune]rune{'"': '"', '«': '»', '“': '”'}[open]
		j := strings.IndexRune(rest[i+size:], closing)
		if j < 0 {
			b.WriteString(rest)
			return b.String()
		}
		quote := rest[i+size : i+size+j]
		for _, p := range fluffPhrases {
			quote = replaceFolded(quote, p, "[…]")
		}
		quote = quotedResidueRE.ReplaceAllString(quote, "[…] ")
		b.WriteString(rest[:i+size])
		b.WriteString(quote)
		rest = rest[i+size+j:]
		_, csize := utf8.DecodeRuneInString(rest)
		b.WriteString(rest[:csize])
		rest = rest[csize:]
	}
}

// indexWord finds phrase in s at word boundaries.
func indexWord(s, phrase string) int {
	from := 0
	for {
		i := strings.Index(s[from:], phrase)
		if i < 0 {
			return -1
		}
		i += from
		before := i == 0 || !isWordByte(s[i-1])
		after := i+len(phrase) == len(s) || !isWordByte(s[i+len(phrase)])
		if before && after {
			return i
		}
		from = i + 1
	}
}

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b >= 0x80
}

// containsAny reports whether folded text contains any of the folded cues
// as whole words or phrases.
func containsAny(text string, cues []string) bool {
	f := " " + strings.Join(words(text), " ") + " "
	for _, c := range cues {
		if strings.Contains(f, " "+c+" ") {
			return true
		}
	}
	return false
}

// Tenure: "(2015–2020)", "(2019-actualidad)".
var tenureRE = regexp.MustCompile(`(?i)\(?\b((?:19|20)\d{2})\s*[–—-]\s*((?:19|20)\d{2}|actualidad|presente|hoy|la fecha)\b`)

// job is a position read from a CV line with a date range.
type job struct {
	sentence
	from, to int
}

// jobs reads the dated positions of a CV, in document order. now is the
// year "actualidad" stands for.
func jobs(cv []sentence, now int) []job {
	var out []job
	for _, s := range cv {
		m := tenureRE.FindStringSubmatch(s.text)
		if m == nil {
			continue
		}
		from, _ := strconv.Atoi(m[1])
		to, err := strconv.Atoi(m[2])
		if err != nil {
			to = now
		}
		if to < from {
			continue
		}
		out = append(out, job{sentence: s, from: from, to: to})
	}
	return out
}

// scoreFromPercent maps results like "84/100" in a tests document to 0–10.
var outOf100RE = regexp.MustCompile(`\b(\d{1,3})\s*/\s*100\b`)

func testScores(ss []sentence) []match {
	var out []match
	for _, s := range ss {
		if m := outOf100RE.FindStringSubmatch(s.text); m != nil {
			v, _ := strconv.Atoi(m[1])
			if v <= 100 {
				out = append(out, match{s, v})
			}
		}
	}
	return out
}

func clamp(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

// Kinds of measure a quantity or a requirement speaks of. A quantified
// sentence is evidence for a requirement only when they share a kind: a
// team size is not evidence of a cost reduction, nor of years of
// experience.
const (
	measureShare  = "proporción" // %, puntos, pp
	measureMoney  = "monto"      // MM, millones, USD, $
	measurePeople = "personas"
	measureTime   = "plazo" // días, meses, años
	measureTimes  = "veces"
)

var measureRE = regexp.MustCompile(`(?i)\d+(?:[.,]\d+)?\s*(%|por ciento|pp\b|puntos|mm\b|millones|mil\b|usd|us\$|clp|eur|€|\$|personas|d[ií]as|meses|años|x\b|veces)|(usd|us\$|\$|€)\s*\d`)

func measureOf(unit string) string {
	switch u := strings.ToLower(unit); {
	case u == "%" || u == "por ciento" || u == "pp" || u == "puntos":
		return measureShare
	case u == "personas":
		return measurePeople
	case u == "días" || u == "dias" || u == "meses" || u == "años":
		return measureTime
	case u == "x" || u == "veces":
		return measureTimes
	}
	return measureMoney
}

// measures lists the kinds of the quantities written in text.
func measures(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range measureRE.FindAllStringSubmatch(text, -1) {
		unit := m[1]
		if unit == "" {
			unit = m[2]
		}
		out[measureOf(unit)] = true
	}
	return out
}

// requirementMeasures are the kinds of result a requirement asks for: the
// kinds of its own quantities, or those its wording implies (a reduction
// or a saving is a share or an amount; a team is people). Empty when the
// requirement asks for no measurable result.
func requirementMeasures(req string) map[string]bool {
	out := measures(req)
	if len(out) > 0 {
		return out
	}
	low := strings.ToLower(req)
	for _, w := range []string{"reducci", "ahorro", "costo", "margen", "rentabilidad", "crecimiento"} {
		if strings.Contains(low, w) {
			out[measureShare], out[measureMoney] = true, true
		}
	}
	for _, w := range []string{"equipo", "personas", "jefatura"} {
		if strings.Contains(low, w) {
			out[measurePeople] = true
		}
	}
	return out
}

// supports reports whether a matching sentence can be evidence for a
// requirement: a sentence without quantities can (lexical evidence); a
// quantified one only when one of its quantities is of a kind the
// requirement asks for.
func supports(req string, s string) bool {
	want, have := requirementMeasures(req), measures(s)
	if len(want) == 0 || len(have) == 0 {
		return true
	}
	for k := range have {
		if want[k] {
			return true
		}
	}
	return false
}
