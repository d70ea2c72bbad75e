package jsonata

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// fnFormatBase is $formatBase(number, radix): the number rounded to an
// integer, written in the given radix (2 to 36).
func fnFormatBase(_ *evaluator, a []any, pos int) (any, error) {
	f, ok := toNumber(a[0])
	if !ok {
		return Undefined, nil
	}
	f = roundHalfEven(f, 0)
	radix := 10.0
	if r, ok := toNumber(a[1]); ok {
		radix = r
	}
	if radix < 2 || radix > 36 {
		return nil, newErr("D3100", pos, "the radix of the formatBase function must be between 2 and 36; it was given %s", formatNumber(radix))
	}
	if math.Abs(f) >= 1<<63 {
		return nil, newErr("D3100", pos, "the number %s is too large for $formatBase", formatNumber(f))
	}
	return strconv.FormatInt(int64(f), int(radix)), nil
}

type numberFormat struct {
	decimal, grouping, exponent, percent, permille, zero, digit, pattern rune
	minus, infinity, nan                                                 string
}

func fnFormatNumber(_ *evaluator, a []any, pos int) (any, error) {
	f, ok := toNumber(a[0])
	if !ok {
		return Undefined, nil
	}
	pic, _ := a[1].(string)
	nf := numberFormat{decimal: '.', grouping: ',', exponent: 'e', percent: '%', permille: '‰', zero: '0', digit: '#', pattern: ';', minus: "-", infinity: "Infinity", nan: "NaN"}
	if opts, ok := a[2].(map[string]any); ok {
		set := func(key string, r *rune) {
			if s, ok := opts[key].(string); ok && s != "" {
				*r, _ = utf8.DecodeRuneInString(s)
			}
		}
		set("decimal-separator", &nf.decimal)
		set("grouping-separator", &nf.grouping)
		set("exponent-separator", &nf.exponent)
		set("percent", &nf.percent)
		set("per-mille", &nf.permille)
		set("zero-digit", &nf.zero)
		set("digit", &nf.digit)
		set("pattern-separator", &nf.pattern)
		if s, ok := opts["minus-sign"].(string); ok {
			nf.minus = s
		}
		if s, ok := opts["infinity"].(string); ok {
			nf.infinity = s
		}
		if s, ok := opts["NaN"].(string); ok {
			nf.nan = s
		}
	}
	return nf.format(f, pic, pos)
}

func formatPicture(f float64, pic string, pos int) (string, error) {
	nf := numberFormat{decimal: '.', grouping: ',', exponent: 'e', percent: '%', permille: '‰', zero: '0', digit: '#', pattern: ';', minus: "-", infinity: "Infinity", nan: "NaN"}
	return nf.format(f, pic, pos)
}

func (nf numberFormat) isDigit(r rune) bool { return r >= nf.zero && r <= nf.zero+9 }

func (nf numberFormat) active(r rune) bool {
	return nf.isDigit(r) || r == nf.digit || r == nf.decimal || r == nf.grouping
}

func (nf numberFormat) format(f float64, picture string, pos int) (string, error) {
	if math.IsNaN(f) {
		return nf.nan, nil
	}
	subs := strings.Split(picture, string(nf.pattern))
	if len(subs) > 2 {
		return "", newErr("D3080", pos, "the picture string must not contain more than one pattern separator")
	}
	pic := subs[0]
	if f < 0 && len(subs) == 2 {
		pic = subs[1]
	}
	runes := []rune(pic)
	first, last := -1, -1
	for i, r := range runes {
		if nf.active(r) {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return "", newErr("D3085", pos, "the picture string must contain at least one digit or '#': %q", pic)
	}
	// an exponent marker followed by digits ends the mantissa
	expDigits := 0
	mant := runes[first : last+1]
	for i := first + 1; i <= last; i++ {
		if runes[i] != nf.exponent {
			continue
		}
		j := i + 1
		for j <= last && nf.isDigit(runes[j]) {
			j++
		}
		if j == last+1 && j > i+1 {
			expDigits = j - i - 1
			mant = runes[first:i]
		}
		break
	}
	// an exponent marker right after the active part, followed by digits
	if expDigits == 0 && last+1 < len(runes) && runes[last+1] == nf.exponent {
		j := last + 2
		for j < len(runes) && nf.isDigit(runes[j]) {
			j++
		}
		if j > last+2 {
			expDigits = j - last - 2
			last = j - 1
		}
	}
	prefix := string(runes[:first])
	suffix := string(runes[last+1:])
	intPart, fracPart := mant, []rune(nil)
	for i, r := range mant {
		if r == nf.decimal {
			intPart, fracPart = mant[:i], mant[i+1:]
			break
		}
	}
	minInt, minFrac, maxFrac := 0, 0, 0
	var groups []int // digit counts to the right of each grouping separator
	digitsRight := 0
	for i := len(intPart) - 1; i >= 0; i-- {
		r := intPart[i]
		switch {
		case r == nf.grouping:
			groups = append(groups, digitsRight)
		case nf.isDigit(r):
			minInt++
			digitsRight++
		case r == nf.digit:
			digitsRight++
		}
	}
	for _, r := range fracPart {
		if nf.isDigit(r) {
			minFrac++
			maxFrac++
		} else if r == nf.digit {
			maxFrac++
		}
	}
	if minInt == 0 && maxFrac == 0 {
		minInt = 1
	}
	if strings.ContainsRune(prefix+suffix, nf.percent) {
		f *= 100
	} else if strings.ContainsRune(prefix+suffix, nf.permille) {
		f *= 1000
	}
	abs := math.Abs(f)
	exp := 0
	if expDigits > 0 && abs != 0 {
		intDigits := minInt
		if intDigits == 0 {
			intDigits = 0
		}
		exp = int(math.Floor(math.Log10(abs))) + 1 - intDigits
		abs = shiftDecimal(abs, -exp)
	}
	if math.IsInf(abs, 0) {
		s := prefix + nf.infinity + suffix
		if f < 0 && len(subs) < 2 {
			s = nf.minus + s
		}
		return s, nil
	}
	abs = roundHalfEven(abs, maxFrac)
	text := strconv.FormatFloat(abs, 'f', maxFrac, 64)
	ip, fp, _ := strings.Cut(text, ".")
	for len(fp) > minFrac && strings.HasSuffix(fp, "0") {
		fp = fp[:len(fp)-1]
	}
	if ip == "0" && minInt == 0 {
		ip = ""
	}
	for len(ip) < minInt {
		ip = "0" + ip
	}
	// grouping: regular when every separator position is a multiple of the first
	if len(groups) > 0 {
		regular := groups[0] > 0
		for i, g := range groups {
			if g != groups[0]*(i+1) {
				regular = false
			}
		}
		var out []rune
		digits := []rune(ip)
		for i := range digits {
			fromRight := len(digits) - i
			sep := false
			if regular {
				sep = fromRight%groups[0] == 0 && i > 0
			} else {
				for _, g := range groups {
					if g == fromRight && i > 0 {
						sep = true
					}
				}
			}
			if sep {
				out = append(out, nf.grouping)
			}
			out = append(out, digits[i])
		}
		ip = string(out)
	}
	s := ip
	if fp != "" {
		s += string(nf.decimal) + fp
	}
	if nf.zero != '0' {
		s = strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return nf.zero + (r - '0')
			}
			return r
		}, s)
	}
	if expDigits > 0 {
		e := strconv.Itoa(int(math.Abs(float64(exp))))
		for len(e) < expDigits {
			e = "0" + e
		}
		if exp < 0 {
			e = nf.minus + e
		}
		s += string(nf.exponent) + e
	}
	s = prefix + s + suffix
	if f < 0 && len(subs) < 2 {
		s = nf.minus + s
	}
	return s, nil
}
