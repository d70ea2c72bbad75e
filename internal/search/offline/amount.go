package offline

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// quantity is an amount read from a JD or a CV as Spanish documents write
// them: «18 MM USD», «US$ 25 millones», «$3.000.000 CLP», «UF 5.000»,
// «12%», «más de 20 personas», «al menos tres jefaturas», «entre 3% y
// 4%». Its value is an interval, so a bound («más de 40 MM USD», «hasta
// 18 MM USD») is read as what it says and nothing more.
type quantity struct {
	lo, hi         float64 // the value, scale applied; hi is +Inf when open above, lo -Inf when open below
	loOpen, hiOpen bool    // whether lo and hi themselves are excluded
	// unit is canonical: a currency code (USD, CLP, UF, EUR, MXN, COP,
	// PEN, ARS, BRL), "$" for a dollar sign with no currency named, "¤"
	// for a scaled amount with no unit («150 MM»), "%", "pp", "pb",
	// "meses" (years are 12 months), "días", "personas", "jefaturas",
	// "veces", or the stem of the counted noun («6.000 clientes» → "clien").
	// Empty when the number has no unit.
	unit string
	// cmp is the comparator written before it, folded («superior a», «al
	// menos»…), empty when none.
	cmp  string
	text string // as written, comparator included
}

// Dimensions whose units are not comparable with each other: money in
// different currencies. A figure in another unit of the same dimension
// could meet a threshold, but the baseline does not convert currencies.
const (
	dimMoney = "money"
	dimShare = "share"
)

func dimension(unit string) string {
	switch unit {
	case "USD", "CLP", "UF", "EUR", "MXN", "COP", "PEN", "ARS", "BRL", "$", "¤":
		return dimMoney
	case "%", "pp", "pb":
		return dimShare
	}
	return unit
}

// comparators, folded, by the relation they set with the number after them.
var comparators = map[string]string{
	"superior a": ">", "superiores a": ">", "mas de": ">", "mayor a": ">", "mayor que": ">", "mayores a": ">",
	"por sobre": ">", "por encima de": ">", "sobre": ">",
	"al menos": ">=", "como minimo": ">=", "minimo": ">=", "un minimo de": ">=", "no menos de": ">=", "desde": ">=",
	"hasta": "<=", "como maximo": "<=", "maximo": "<=", "un maximo de": "<=", "no mas de": "<=",
	"menos de": "<", "inferior a": "<", "inferiores a": "<",
	"cerca de": "~", "aproximadamente": "~", "alrededor de": "~", "del orden de": "~", "casi": "<~",
}

// numberWords are the numbers Spanish documents write in letters. They are
// read only before a known unit («tres jefaturas», «dos años»), so «un
// proceso» or «uno de los bancos» is not a quantity.
var numberWords = map[string]float64{
	"un": 1, "una": 1, "uno": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7, "ocho": 8,
	"nueve": 9, "diez": 10, "once": 11, "doce": 12, "trece": 13, "catorce": 14, "quince": 15, "dieciseis": 16,
	"veinte": 20, "treinta": 30, "cuarenta": 40, "cincuenta": 50, "cien": 100,
}

// scales multiply the number before them.
var scales = map[string]float64{"mil millones": 1e9, "millones": 1e6, "millon": 1e6, "mm": 1e6, "mil": 1e3, "k": 1e3}

// currencies, folded, as written before or after the number.
var currencies = map[string]string{
	"usd": "USD", "us$": "USD", "u$s": "USD", "dolares": "USD", "dolar": "USD",
	"clp": "CLP", "pesos chilenos": "CLP", "pesos": "$", "$": "$",
	"uf": "UF", "eur": "EUR", "euros": "EUR", "€": "EUR", "mxn": "MXN", "cop": "COP", "pen": "PEN", "ars": "ARS",
	"brl": "BRL", "r$": "BRL", "reales": "BRL",
}

// scaledCurrencies are the Chilean abbreviations that fuse a scale and a
// currency: «20 MMUSD» (millions of dollars), «800 MUSD» and «M$ 900»
// (thousands).
var scaledCurrencies = map[string]struct {
	code  string
	scale float64
}{
	"mmusd": {"USD", 1e6}, "mmus$": {"USD", 1e6}, "musd": {"USD", 1e3}, "mus$": {"USD", 1e3},
	"mm$": {"$", 1e6}, "m$": {"$", 1e3}, "mmclp": {"CLP", 1e6}, "mclp": {"CLP", 1e3},
}

// units are the counted nouns and measures with a canonical name, and the
// factor to it.
var units = map[string]struct {
	name   string
	factor float64
}{
	"%": {"%", 1}, "por ciento": {"%", 1}, "pp": {"pp", 1}, "puntos porcentuales": {"pp", 1},
	"pb": {"pb", 1}, "bps": {"pb", 1}, "puntos base": {"pb", 1},
	"ano": {"meses", 12}, "anos": {"meses", 12}, "mes": {"meses", 1}, "meses": {"meses", 1},
	"dia": {"días", 1}, "dias": {"días", 1}, "semana": {"días", 7}, "semanas": {"días", 7},
	"persona": {"personas", 1}, "personas": {"personas", 1}, "colaboradores": {"personas", 1}, "profesionales": {"personas", 1},
	"trabajadores": {"personas", 1}, "empleados": {"personas", 1}, "analistas": {"personas", 1}, "ejecutivos": {"personas", 1},
	"jefatura": {"jefaturas", 1}, "jefaturas": {"jefaturas", 1}, "jefes": {"jefaturas", 1}, "gerentes": {"jefaturas", 1},
	"reportes directos": {"jefaturas", 1},
	"vez":               {"veces", 1}, "veces": {"veces", 1}, "x": {"veces", 1},
}

func alternation(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return longestFirst(keys)
}

// longestFirst joins the keys as a regexp alternation, longer first so
// «mil millones» wins over «mil», each quoted.
func longestFirst(keys []string) string {
	sortByLengthDesc(keys)
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = regexp.QuoteMeta(k)
	}
	return strings.Join(q, "|")
}

func sortByLengthDesc(keys []string) {
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && (len(keys[j]) > len(keys[j-1]) || len(keys[j]) == len(keys[j-1]) && keys[j] < keys[j-1]); j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

var (
	// amountRE reads one amount on folded text: an optional comparator, a
	// currency before the number, the number (digits, or a number word),
	// a scale and a unit or currency after it, or the counted noun.
	amountRE = regexp.MustCompile(`(?:\b(` + alternation(comparators) + `)\s+)?` +
		`(?:(` + longestFirst(keysOf(currencies)) + `)\s*)?` +
		`(?:\b(\d+(?:[.,]\d+)*)|\b(` + longestFirst(keysOf(numberWords)) + `)\b)` +
		`(k\b|mm\b|x\b)?` +
		`(?:\s*(` + longestFirst(keysOf(scales)) + `)\b)?` +
		`(?:\s*(?:de\s+)?(` + longestFirst(append(append(keysOf(currencies), keysOf(units)...), keysOf(scaledCurrencies)...)) + `)(?:\b|$|[^a-z0-9])|\s+([a-z]+))?`)
	// rangeRE is the start of a range, «entre 3% y 4%»: its number is the
	// lower bound of the amount that follows.
	rangeRE = regexp.MustCompile(`\bentre\s+(\d+(?:[.,]\d+)*|` + longestFirst(keysOf(numberWords)) + `)\s*%?\s+y\s+`)
)

// quantities reads the amounts written in text, in order. Numbers with no
// unit and bare years are left out; a number in letters is read only
// before a known unit.
func quantities(text string) []quantity {
	f := fold(text)
	lows := map[int]float64{}
	var ranges [][]int
	for _, m := range rangeRE.FindAllStringSubmatchIndex(f, -1) {
		if v, ok := numberValue(f[m[2]:m[3]]); ok {
			lows[m[1]] = v
			ranges = append(ranges, m)
		}
	}
	var out []quantity
	for _, m := range amountRE.FindAllStringSubmatchIndex(f, -1) {
		if insideRangeStart(ranges, m[0]) {
			continue // «3%» in «entre 3% y 4%» is the range's lower bound, read with «4%»
		}
		g := func(i int) string {
			if m[2*i] < 0 {
				return ""
			}
			return f[m[2*i]:m[2*i+1]]
		}
		cmp, before, digits, word, attached, scale, after, noun := g(1), g(2), g(3), g(4), g(5), g(6), g(7), g(8)
		var v float64
		if digits != "" {
			var ok bool
			if v, ok = parseNumber(digits); !ok {
				continue
			}
		} else {
			v = numberWords[word]
		}
		if attached == "x" {
			after, attached = "x", ""
		}
		if attached != "" {
			scale = attached
		}
		q := quantity{cmp: cmp}
		mult := 1.0 // what the written number is multiplied by
		if s, ok := scales[scale]; ok {
			mult = s
		}
		if sc, ok := scaledCurrencies[after]; ok {
			mult *= sc.scale
			after, scale = strings.ToLower(sc.code), "mm"
		}
		switch {
		case currencies[after] != "" && currencies[after] != "$":
			q.unit = currencies[after]
		case currencies[before] != "":
			q.unit = currencies[before]
		case currencies[after] != "":
			q.unit = currencies[after]
		case after != "":
			u := units[after]
			q.unit, mult = u.name, mult*u.factor
		case noun != "" && len(noun) >= 3 && !stopwords[noun] && digits != "":
			q.unit = stem(noun)
		case scale != "":
			q.unit = "¤"
		}
		if q.unit == "" || word != "" && after == "" {
			continue // a number with no unit, or a number word before no known unit
		}
		if digits != "" && scale == "" && before == "" && isYear(digits) && (after == "" || currencies[after] == "") {
			continue
		}
		start, end := m[0], m[1]
		if noun != "" && q.unit != stem(noun) {
			end = m[2*8] - 1 // the word after a scaled amount is not part of it
			for end > start && f[end-1] == ' ' {
				end--
			}
		}
		lo, ranged := lows[m[0]]
		if ranged && cmp == "" {
			start = rangeStart(ranges, m[0])
		}
		q.text = strings.TrimSpace(original(text, f, start, end))
		q.lo, q.hi = v*mult, v*mult
		if ranged && cmp == "" {
			q.lo = lo * mult
		}
		q.bound(comparators[cmp])
		out = append(out, q)
	}
	return out
}

// bound widens the value by what its comparator says.
func (q *quantity) bound(op string) {
	v := q.lo
	switch op {
	case ">":
		q.hi, q.loOpen = math.Inf(1), true
	case ">=":
		q.hi = math.Inf(1)
	case "<":
		q.lo, q.hiOpen = math.Inf(-1), true
	case "<=":
		q.lo = math.Inf(-1)
	case "~": // «cerca de 35 MM»: within a tenth either way
		q.lo, q.hi = v*0.9, v*1.1
	case "<~": // «casi 20»: under it, within a tenth
		q.lo, q.hi, q.hiOpen = v*0.9, v, true
	}
}

// rangeStart is where the range ending at end starts.
func rangeStart(ranges [][]int, end int) int {
	for _, r := range ranges {
		if r[1] == end {
			return r[0]
		}
	}
	return end
}

func insideRangeStart(ranges [][]int, at int) bool {
	for _, r := range ranges {
		if at >= r[0] && at < r[1] {
			return true
		}
	}
	return false
}

func isYear(digits string) bool {
	v, err := strconv.Atoi(digits)
	return err == nil && v >= 1900 && v <= 2100
}

// numberValue reads a number written in digits or in letters.
func numberValue(s string) (float64, bool) {
	if v, ok := numberWords[s]; ok {
		return v, true
	}
	return parseNumber(s)
}

// parseNumber reads a number as Spanish and English documents write it:
// «3,2» and «3.2» are 3.2; «1.200», «3.000.000» and «1,500» are
// thousands; with both marks the last one is the decimal one.
func parseNumber(s string) (float64, bool) {
	dot, comma := strings.Count(s, "."), strings.Count(s, ",")
	switch {
	case dot > 0 && comma > 0:
		dec := ","
		if strings.LastIndex(s, ".") > strings.LastIndex(s, ",") {
			dec = "."
		}
		thou := map[string]string{",": ".", ".": ","}[dec]
		s = strings.ReplaceAll(s, thou, "")
		s = strings.Replace(s, dec, ".", 1)
	case dot > 0:
		if thousands(s, ".") {
			s = strings.ReplaceAll(s, ".", "")
		} else if dot > 1 {
			return 0, false
		}
	case comma > 0:
		if thousands(s, ",") && !strings.HasPrefix(s, "0,") {
			s = strings.ReplaceAll(s, ",", "")
		} else if comma > 1 {
			return 0, false
		} else {
			s = strings.Replace(s, ",", ".", 1)
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

// thousands reports whether every group after the first has three digits.
func thousands(s, sep string) bool {
	parts := strings.Split(s, sep)
	for _, p := range parts[1:] {
		if len(p) != 3 {
			return false
		}
	}
	return len(parts[0]) <= 3
}

// original maps a byte range of fold(text) back to text: fold keeps one
// rune for each rune.
func original(text, folded string, start, end int) string {
	rs := []rune(text)
	a := len([]rune(folded[:start]))
	b := a + len([]rune(folded[start:end]))
	if b > len(rs) {
		b = len(rs)
	}
	return string(rs[a:b])
}

// A threshold is a requirement's quantity: the relation and the value the
// evidence must satisfy.
type threshold struct {
	quantity
	op string // ">", ">=", "<", "<="; a number with no comparator is a minimum
}

// outcome of comparing evidence with a threshold.
type outcome int

const (
	met          outcome = iota
	undecided            // the evidence's bounds allow both
	notMet               // every value the evidence allows misses the threshold
	incomparable         // the evidence is in another currency, or names none
	absent               // the evidence states no figure of the threshold's kind
)

func (o outcome) String() string {
	return [...]string{"met", "undecided", "notMet", "incomparable", "absent"}[o]
}

// against compares the quantities of one piece of evidence with t: met
// when any of them meets it; otherwise the closest thing to a verdict, in
// the order undecided, not met, incomparable (a figure of the same
// dimension in another unit: money in another currency or in none), absent.
// It also returns the quantity the outcome rests on (zero when absent).
func (t threshold) against(qs []quantity) (outcome, quantity) {
	best, on := absent, quantity{}
	for _, q := range qs {
		o := incomparable
		switch {
		case q.unit == t.unit:
			o = t.compare(q)
		case dimension(q.unit) != dimension(t.unit):
			continue
		}
		if o < best {
			best, on = o, q
		}
	}
	return best, on
}

// compare reports whether every value the evidence allows satisfies t
// (met), none does (notMet), or some do (undecided). Units must match.
func (t threshold) compare(e quantity) outcome {
	v := t.lo
	switch t.op {
	case ">":
		if e.lo > v || e.lo == v && e.loOpen {
			return met
		}
		if e.hi <= v {
			return notMet
		}
	case ">=":
		if e.lo >= v {
			return met
		}
		if e.hi < v || e.hi == v && e.hiOpen {
			return notMet
		}
	case "<":
		if e.hi < v || e.hi == v && e.hiOpen {
			return met
		}
		if e.lo >= v {
			return notMet
		}
	case "<=":
		if e.hi <= v {
			return met
		}
		if e.lo > v || e.lo == v && e.loOpen {
			return notMet
		}
	}
	return undecided
}

// thresholds reads the quantities of a requirement as thresholds. A
// quantity with no comparator is a minimum («10 años de experiencia»); an
// approximate one («cerca de 20 MM USD») is a minimum at its figure.
func thresholds(req string) []threshold {
	var out []threshold
	for _, q := range quantities(req) {
		op := comparators[q.cmp]
		switch op {
		case "", "~", "<~":
			op = ">="
		}
		v := q.lo
		if math.IsInf(v, -1) {
			v = q.hi
		}
		q.lo, q.hi = v, v
		out = append(out, threshold{quantity: q, op: op})
	}
	return out
}
