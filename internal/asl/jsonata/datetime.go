package jsonata

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The date/time functions implement the XPath picture-string subset that
// ASL expressions use: the components Y M D d H h m s f P Z z F (and MN/FN
// names), with decimal-digit widths ("01", "0001"), name presentations
// ("N", "n", "Nn", with ",*-3" truncation) and literal text. Calendar
// components W w X x E C, ordinal and word presentations are not supported.

const isoPicture = "[Y0001]-[M01]-[D01]T[H01]:[m01]:[s01].[f001][Z01:01t]"

func fnNow(ev *evaluator, a []any, pos int) (any, error) {
	return formatMillis(ev.clock().UnixMilli(), a[0], a[1], pos)
}

func fnFromMillis(_ *evaluator, a []any, pos int) (any, error) {
	f, ok := toNumber(a[0])
	if !ok {
		return Undefined, nil
	}
	return formatMillis(int64(math.Floor(f)), a[1], a[2], pos)
}

func formatMillis(ms int64, picture, tz any, pos int) (any, error) {
	t := time.UnixMilli(ms).UTC()
	pic, hasPic := picture.(string)
	zone, hasZone := tz.(string)
	if !hasPic && !hasZone {
		return t.Format("2006-01-02T15:04:05.000Z"), nil
	}
	if !hasPic {
		pic = isoPicture
	}
	if hasZone {
		off, err := parseOffset(zone)
		if err != nil {
			return nil, newErr("D3134", pos, "invalid timezone %q: %v", zone, err)
		}
		t = t.In(time.FixedZone("", off))
	}
	return formatTime(t, pic, pos)
}

func parseOffset(z string) (int, error) {
	if len(z) != 5 || (z[0] != '+' && z[0] != '-') {
		return 0, fmt.Errorf("want ±HHMM")
	}
	h, err1 := strconv.Atoi(z[1:3])
	m, err2 := strconv.Atoi(z[3:5])
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("want ±HHMM")
	}
	off := h*3600 + m*60
	if z[0] == '-' {
		off = -off
	}
	return off, nil
}

type picPart struct {
	literal   string
	component byte
	pres      string // presentation modifier, e.g. "01", "N", "Nn"
	minW      int
	maxW      int
	ordinal   bool
}

func parsePicture(pic string, pos int) ([]picPart, error) {
	var parts []picPart
	var lit strings.Builder
	for i := 0; i < len(pic); i++ {
		c := pic[i]
		if c == '[' {
			if i+1 < len(pic) && pic[i+1] == '[' {
				lit.WriteByte('[')
				i++
				continue
			}
			end := strings.IndexByte(pic[i:], ']')
			if end < 0 {
				return nil, newErr("D3135", pos, "no matching closing bracket ']' in date/time picture string")
			}
			if lit.Len() > 0 {
				parts = append(parts, picPart{literal: lit.String()})
				lit.Reset()
			}
			spec := strings.Join(strings.Fields(pic[i+1:i+end]), "")
			i += end
			if spec == "" {
				return nil, newErr("D3135", pos, "empty component in date/time picture string")
			}
			p := picPart{component: spec[0]}
			rest := spec[1:]
			if k := strings.IndexByte(rest, ','); k >= 0 {
				width := rest[k+1:]
				rest = rest[:k]
				minS, maxS, _ := strings.Cut(width, "-")
				if minS != "*" && minS != "" {
					p.minW, _ = strconv.Atoi(minS)
				}
				if maxS != "*" && maxS != "" {
					p.maxW, _ = strconv.Atoi(maxS)
				}
			}
			if p.component != 'Z' && p.component != 'z' && strings.HasSuffix(rest, "o") && len(rest) > 1 {
				p.ordinal = true
				rest = strings.TrimSuffix(rest, "o")
			}
			p.pres = rest
			if !strings.ContainsRune("YMDdHhmsfPZzFxXwWEC", rune(p.component)) {
				return nil, newErr("D3132", pos, "unknown component specifier %q in date/time picture string", string(p.component))
			}
			parts = append(parts, p)
			continue
		}
		if c == ']' {
			if i+1 < len(pic) && pic[i+1] == ']' {
				i++
			}
			lit.WriteByte(']')
			continue
		}
		lit.WriteByte(c)
	}
	if lit.Len() > 0 {
		parts = append(parts, picPart{literal: lit.String()})
	}
	return parts, nil
}

var dayNames = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
var monthNames = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}

func formatTime(t time.Time, pic string, pos int) (any, error) {
	parts, err := parsePicture(pic, pos)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, p := range parts {
		if p.literal != "" {
			b.WriteString(p.literal)
			continue
		}
		var num int
		var name string
		switch p.component {
		case 'Y':
			num = t.Year()
		case 'M':
			num = int(t.Month())
			name = monthNames[num-1]
		case 'D':
			num = t.Day()
		case 'd':
			num = t.YearDay()
		case 'F':
			num = int(t.Weekday())
			if num == 0 {
				num = 7
			}
			name = dayNames[t.Weekday()]
		case 'H':
			num = t.Hour()
		case 'h':
			num = t.Hour() % 12
			if num == 0 {
				num = 12
			}
		case 'm':
			num = t.Minute()
		case 's':
			num = t.Second()
		case 'f':
			ms := t.Nanosecond() / 1e6
			digits := len(p.pres)
			if digits == 0 {
				digits = 3
			}
			s := fmt.Sprintf("%03d", ms)
			for len(s) < digits {
				s += "0"
			}
			b.WriteString(s[:digits])
			continue
		case 'P':
			s := "am"
			if t.Hour() >= 12 {
				s = "pm"
			}
			if p.pres == "N" {
				s = strings.ToUpper(s)
			}
			b.WriteString(s)
			continue
		case 'Z', 'z':
			b.WriteString(formatZone(t, p))
			continue
		default:
			return nil, newErr("D3133", pos, "the date/time component [%c] is not supported by this evaluator", p.component)
		}
		pres := p.pres
		if pres == "" {
			if p.component == 'F' {
				pres = "n"
			} else if p.component == 'M' || p.component == 'D' || p.component == 'H' || p.component == 'h' || p.component == 'Y' || p.component == 'd' {
				pres = "1"
			} else {
				pres = "01"
			}
		}
		if pres == "N" || pres == "n" || pres == "Nn" {
			if name == "" {
				return nil, newErr("D3133", pos, "the name presentation is not supported for component [%c]", p.component)
			}
			if p.maxW > 0 && len(name) > p.maxW {
				name = name[:p.maxW]
			}
			switch pres {
			case "N":
				name = strings.ToUpper(name)
			case "n":
				name = strings.ToLower(name)
			}
			b.WriteString(name)
			continue
		}
		if strings.Trim(pres, "0123456789#,") != "" || p.ordinal {
			ipic := pres
			if p.ordinal {
				ipic += ";o"
			}
			out, ok, err := formatIntegerPicture(int64(num), ipic, pos)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, newErr("D3133", pos, "the presentation %q is not supported by this evaluator", pres)
			}
			b.WriteString(out)
			continue
		}
		width := 0
		for _, r := range pres {
			if r >= '0' && r <= '9' {
				width++
			}
		}
		if p.minW > width {
			width = p.minW
		}
		s := strconv.Itoa(num)
		for len(s) < width {
			s = "0" + s
		}
		if p.component == 'Y' && (width == 2 || p.maxW == 2) && len(s) > 2 {
			s = s[len(s)-2:]
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

func formatZone(t time.Time, p picPart) string {
	_, off := t.Zone()
	if strings.HasSuffix(p.pres, "t") || (p.pres != "" && p.pres[len(p.pres)-1] == 't') {
		if off == 0 {
			return "Z"
		}
	}
	// hours and minutes as the reference computes them: the hours are
	// floored, so -03:30 is written -04:30 (kept for identical output)
	mins := off / 60
	h := int(math.Floor(float64(mins) / 60))
	m := mins % 60
	if m < 0 {
		m = -m
	}
	sign := "+"
	if h < 0 {
		sign = "-"
		h = -h
	}
	s := ""
	pres := strings.TrimSuffix(p.pres, "t")
	if pres == "" {
		pres = "01:01"
	}
	switch {
	case strings.Contains(pres, ":"):
		s = fmt.Sprintf("%s%02d:%02d", sign, h, m)
	case pres == "0":
		s = fmt.Sprintf("%s%d", sign, h)
		if m != 0 {
			s += fmt.Sprintf(":%02d", m)
		}
	default:
		s = fmt.Sprintf("%s%02d%02d", sign, h, m)
	}
	if p.component == 'z' {
		return "GMT" + s
	}
	return s
}

var isoDate = regexp.MustCompile(`^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:?\d{2})?)?)?)?$`)

func fnToMillis(ev *evaluator, a []any, pos int) (any, error) {
	s, ok := a[0].(string)
	if !ok {
		return Undefined, nil
	}
	if pic, ok := a[1].(string); ok {
		return parseWithPicture(s, pic, pos, ev.clock())
	}
	m := isoDate.FindStringSubmatch(s)
	if m == nil {
		return nil, newErr("D3110", pos, "the timestamp %q cannot be parsed as ISO 8601", s)
	}
	atoi := func(x string, def int) int {
		if x == "" {
			return def
		}
		n, _ := strconv.Atoi(x)
		return n
	}
	ms := 0
	if m[7] != "" {
		frac := (m[7] + "00")[:3]
		ms, _ = strconv.Atoi(frac)
	}
	off := 0
	if z := m[8]; z != "" && z != "Z" {
		zz := strings.ReplaceAll(z, ":", "")
		var err error
		if off, err = parseOffset(zz); err != nil {
			return nil, newErr("D3110", pos, "the timestamp %q cannot be parsed: bad offset", s)
		}
	}
	t := time.Date(atoi(m[1], 0), time.Month(atoi(m[2], 1)), atoi(m[3], 1), atoi(m[4], 0), atoi(m[5], 0), atoi(m[6], 0), ms*1e6, time.FixedZone("", off))
	return float64(t.UnixMilli()), nil
}

// parseWithPicture parses s by an XPath picture; a picture without date
// components means today (UTC), as in the reference.
func parseWithPicture(s, pic string, pos int, now time.Time) (any, error) {
	parts, err := parsePicture(pic, pos)
	if err != nil {
		return nil, err
	}
	var re strings.Builder
	re.WriteString("^")
	var comps []picPart
	for pi, p := range parts {
		if p.literal != "" {
			re.WriteString(regexp.QuoteMeta(p.literal))
			continue
		}
		switch {
		case p.component == 'M' && (p.pres == "N" || p.pres == "n" || p.pres == "Nn"),
			p.component == 'F' && (p.pres == "N" || p.pres == "n" || p.pres == "Nn" || p.pres == ""):
			re.WriteString(`([A-Za-z]+)`)
		case p.component == 'P':
			re.WriteString(`([AaPp][Mm])`)
		case p.component == 'Z' || p.component == 'z':
			re.WriteString(`(Z|(?:GMT)?[+-]\d{1,2}(?::?\d{2})?)`)
		default:
			// a fixed width when the next component follows directly
			width := 0
			for _, r := range p.pres {
				if r >= '0' && r <= '9' {
					width++
				}
			}
			if width > 1 && pi+1 < len(parts) && parts[pi+1].literal == "" {
				re.WriteString(`(\d{` + strconv.Itoa(width) + `})`)
			} else {
				re.WriteString(`(\d+)`)
			}
		}
		comps = append(comps, p)
	}
	re.WriteString("$")
	rx, err := regexp.Compile(re.String())
	if err != nil {
		return nil, newErr("D3136", pos, "unsupported picture %q", pic)
	}
	m := rx.FindStringSubmatch(s)
	if m == nil {
		return nil, newErr("D3110", pos, "the string %q does not match the picture %q", s, pic)
	}
	year, month, day, hour, minute, sec, ms, off := 1970, 1, 1, 0, 0, 0, 0, 0
	pm := -1
	hasDate := false
	for i, p := range comps {
		v := m[i+1]
		n, _ := strconv.Atoi(v)
		switch p.component {
		case 'Y':
			year, hasDate = n, true
			if len(v) == 2 {
				year += 2000
			}
		case 'M':
			hasDate = true
			if n == 0 {
				for k, name := range monthNames {
					if strings.EqualFold(name, v) || (len(v) >= 3 && len(v) <= len(name) && strings.EqualFold(name[:len(v)], v)) {
						n = k + 1
					}
				}
			}
			month = n
		case 'D':
			day, hasDate = n, true
		case 'H', 'h':
			hour = n
		case 'm':
			minute = n
		case 's':
			sec = n
		case 'f':
			ms, _ = strconv.Atoi((v + "00")[:3])
		case 'P':
			if strings.EqualFold(v, "pm") {
				pm = 1
			} else {
				pm = 0
			}
		case 'Z', 'z':
			z := strings.TrimPrefix(v, "GMT")
			if z != "Z" {
				z = strings.ReplaceAll(z, ":", "")
				if len(z) == 2 || len(z) == 3 {
					z = z[:1] + fmt.Sprintf("%02s", z[1:]) + "00"
				}
				if off, err = parseOffset(z); err != nil {
					return nil, newErr("D3110", pos, "bad timezone %q", v)
				}
			}
		}
	}
	if pm == 1 && hour < 12 {
		hour += 12
	} else if pm == 0 && hour == 12 {
		hour = 0
	}
	if !hasDate {
		y, mo, d := now.UTC().Date()
		year, month, day = y, int(mo), d
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, ms*1e6, time.FixedZone("", off))
	return float64(t.UnixMilli()), nil
}
