package jsonata

import (
	"math"
	"strconv"
	"strings"
)

// Integer presentations of $formatInteger and of date/time components:
// decimal digits (with optional grouping), letters (a, A), roman numerals
// (i, I) and English words (w, W, Ww), each optionally ordinal (";o").

var smallWords = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
	"eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"}
var tensWords = []string{"", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"}
var magnitudeWords = []string{"thousand", "million", "billion", "trillion"}

func numberWords(n int64) string {
	switch {
	case n < 20:
		return smallWords[n]
	case n < 100:
		w := tensWords[n/10]
		if n%10 != 0 {
			w += "-" + smallWords[n%10]
		}
		return w
	case n < 1000:
		w := smallWords[n/100] + " hundred"
		if n%100 != 0 {
			w += " and " + numberWords(n%100)
		}
		return w
	}
	mag := 0
	factor := int64(1000)
	for mag+1 < len(magnitudeWords) && n >= factor*1000 {
		factor *= 1000
		mag++
	}
	w := numberWords(n/factor) + " " + magnitudeWords[mag]
	if rem := n % factor; rem > 0 {
		if rem < 100 {
			w += " and "
		} else {
			w += ", "
		}
		w += numberWords(rem)
	}
	return w
}

func ordinalWords(words string) string {
	cut := strings.LastIndexAny(words, " -")
	head, last := words[:cut+1], words[cut+1:]
	irregular := map[string]string{"one": "first", "two": "second", "three": "third", "five": "fifth",
		"eight": "eighth", "nine": "ninth", "twelve": "twelfth"}
	switch {
	case irregular[last] != "":
		last = irregular[last]
	case strings.HasSuffix(last, "y"):
		last = last[:len(last)-1] + "ieth"
	default:
		last += "th"
	}
	return head + last
}

func ordinalSuffix(n int64) string {
	if n%100 >= 11 && n%100 <= 13 {
		return "th"
	}
	switch n % 10 {
	case 1:
		return "st"
	case 2:
		return "nd"
	case 3:
		return "rd"
	}
	return "th"
}

var romanTable = []struct {
	v int64
	s string
}{{1000, "m"}, {900, "cm"}, {500, "d"}, {400, "cd"}, {100, "c"}, {90, "xc"}, {50, "l"}, {40, "xl"}, {10, "x"}, {9, "ix"}, {5, "v"}, {4, "iv"}, {1, "i"}}

func roman(n int64) string {
	var b strings.Builder
	for _, r := range romanTable {
		for n >= r.v {
			b.WriteString(r.s)
			n -= r.v
		}
	}
	return b.String()
}

func letters(n int64) string {
	var out []byte
	for n > 0 {
		n--
		out = append([]byte{byte('a' + n%26)}, out...)
		n /= 26
	}
	return string(out)
}

// titleWords capitalises each word of a number in words, including the
// parts of hyphenated ones, except "and".
func titleWords(s string) string {
	b := []byte(s)
	for i := range b {
		if (i == 0 || b[i-1] == ' ' || b[i-1] == '-') && !strings.HasPrefix(s[i:], "and ") {
			b[i] = byte(strings.ToUpper(string(b[i]))[0])
		}
	}
	return string(b)
}

// validDecimalPicture accepts digit pictures with at least one mandatory
// digit, '#' optional digits and ',' grouping separators.
func validDecimalPicture(p string) bool {
	digits := 0
	for _, r := range p {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '#' || r == ',':
		default:
			return false
		}
	}
	return digits > 0
}

// formatIntegerPicture formats n by an integer picture; ok is false for a
// picture this evaluator does not support.
func formatIntegerPicture(n int64, picture string, pos int) (string, bool, error) {
	primary, modifier, _ := strings.Cut(picture, ";")
	ordinal := strings.HasPrefix(modifier, "o")
	neg := n < 0
	if neg {
		n = -n
	}
	var s string
	switch primary {
	case "a", "A":
		s = letters(n)
		if primary == "A" {
			s = strings.ToUpper(s)
		}
	case "i", "I":
		if n > 1_000_000 {
			return "", false, nil
		}
		s = roman(n)
		if primary == "I" {
			s = strings.ToUpper(s)
		}
	case "w", "W", "Ww":
		s = numberWords(n)
		if ordinal {
			s = ordinalWords(s)
		}
		switch primary {
		case "W":
			s = strings.ToUpper(s)
		case "Ww":
			s = titleWords(s)
		}
	default:
		if !validDecimalPicture(primary) {
			return "", false, nil
		}
		var err error
		if s, err = formatPicture(float64(n), primary, pos); err != nil {
			return "", false, err
		}
		if ordinal {
			s += ordinalSuffix(n)
		}
	}
	if neg {
		s = "-" + s
	}
	return s, true, nil
}

// fnFormatInteger is $formatInteger(number, picture).
func fnFormatInteger(_ *evaluator, a []any, pos int) (any, error) {
	f, ok := toNumber(a[0])
	if !ok {
		return Undefined, nil
	}
	pic, _ := a[1].(string)
	if math.Abs(f) >= 1e15 {
		return nil, newErr("D3130", pos, "$formatInteger supports magnitudes below 1e15")
	}
	s, ok, err := formatIntegerPicture(int64(math.Floor(f)), pic, pos)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, newErr("D3130", pos, "the picture %q of $formatInteger is not supported by this evaluator", pic)
	}
	return s, nil
}

// fnParseInteger is $parseInteger(string, picture) for decimal, letter and
// roman pictures.
func fnParseInteger(_ *evaluator, a []any, pos int) (any, error) {
	s, ok := a[0].(string)
	if !ok {
		return Undefined, nil
	}
	pic, _ := a[1].(string)
	primary, _, _ := strings.Cut(pic, ";")
	bad := func() (any, error) {
		return nil, newErr("D3137", pos, "cannot parse %q with the picture %q", s, pic)
	}
	switch primary {
	case "a", "A":
		var n int64
		for _, r := range strings.ToLower(s) {
			if r < 'a' || r > 'z' {
				return bad()
			}
			n = n*26 + int64(r-'a'+1)
		}
		return float64(n), nil
	case "i", "I":
		var n int64
		rest := strings.ToLower(s)
		for _, r := range romanTable {
			for strings.HasPrefix(rest, r.s) {
				n += r.v
				rest = rest[len(r.s):]
			}
		}
		if rest != "" {
			return bad()
		}
		return float64(n), nil
	}
	if !validDecimalPicture(primary) {
		return nil, newErr("D3130", pos, "the picture %q of $parseInteger is not valid or not supported by this evaluator", pic)
	}
	digits := strings.TrimRight(strings.ReplaceAll(s, ",", ""), "stndrh")
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return bad()
	}
	return float64(n), nil
}
