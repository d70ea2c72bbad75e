package companion

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// JDFacts are the facts the non-negotiable rules are checked against,
// read from the JD text by code (ExtractFacts). A fact the JD does not
// state stays unknown (empty or nil), and a rule over an unknown fact is
// null — "sin dato" — never passed: the rule passes or fails only on what
// the offer says. A mention the JD negates («no requiere reubicación»,
// «sin viajes», «no es necesario mudarse») states the opposite fact.
type JDFacts struct {
	// WorkMode is remoto | hibrido | presencial, no_remoto when the JD
	// only says it is not remote, "" when it does not say.
	WorkMode string `json:"work_mode"`
	// Salary is the pay the JD states (nil: none).
	Salary *SalaryFact `json:"salary"`
	// RelocationRequired is nil when the JD does not say; false when it
	// says no relocation is needed (or the work is fully remote).
	RelocationRequired *bool `json:"relocation_required"`
	// TravelPct is the share of time travelling the JD states: 0 for
	// «sin viajes», nil when it does not say how much.
	TravelPct *float64 `json:"travel_pct"`
	// TravelMentioned: the JD names travel without a percentage.
	TravelMentioned bool `json:"travel_mentioned"`
	// Industries are the profile's excluded industries the JD names
	// (not in a negated mention).
	Industries []string `json:"industries"`
}

// SalaryFact is the pay a JD states: a range (Max 0: open-ended, "desde"),
// its currency, period and basis. Currency is "" when the JD writes «$»
// and its country does not settle which peso or dollar it is; Ask then
// says what to ask.
type SalaryFact struct {
	Min      float64 `json:"min"`
	Max      float64 `json:"max"`
	Currency string  `json:"currency"` // CLP, UF, USD, EUR, MXN, COP, PEN, ARS, BRL, GBP; "" when unresolved
	Period   string  `json:"period"`   // mensual | anual | "" (not stated)
	Basis    string  `json:"basis"`    // bruto | liquido | "" (not stated)
	Ask      string  `json:"ask,omitempty"`
}

// Salary periods and bases.
const (
	PeriodMonthly = "mensual"
	PeriodAnnual  = "anual"
	BasisGross    = "bruto"
	BasisNet      = "liquido"
)

// Work modes of a JD.
const (
	ModeRemote    = "remoto"
	ModeHybrid    = "hibrido"
	ModeOnsite    = "presencial"
	ModeNotRemote = "no_remoto"
)

var (
	remoteRE   = regexp.MustCompile(`(?i)\b(100\s*%\s*remot[oa]|full[- ]?remote|totalmente remot[oa]|trabajo remoto|remote[- ]first|remot[oa]s?|teletrabajo|trabajo a distancia|home[- ]office|remote)\b`)
	hybridRE   = regexp.MustCompile(`(?i)\b(h[ií]brid[oa]s?|hybrid)\b`)
	onsiteRE   = regexp.MustCompile(`(?i)\b(presencial(idad)?|on[- ]?site|en (la )?oficina)\b`)
	relocateRE = regexp.MustCompile(`(?i)\b(reubicaci[oó]n|reubicarse|relocalizaci[oó]n|relocation|relocate|trasladarse|traslado de residencia|mudarse|mudanza|cambiar(se)? de ciudad)\b`)
	travelRE   = regexp.MustCompile(`(?i)\b(viaj\pL*|travel\pL*)`)
	travelPct  = regexp.MustCompile(`(?i)viaj\pL*[^.\n]{0,40}?(\d{1,3})\s*%|(\d{1,3})\s*%[^.\n]{0,40}?viaj|travel\pL*[^.\n]{0,40}?(\d{1,3})\s*%`)
	// salaryWordRE marks a line about pay: Spanish (and Chilean) words
	// for salary, the basis words, English ones.
	salaryWordRE = regexp.MustCompile(`(?i)\b(salari\pL*|sueldo\pL*|renta|remuneraci[oó]n\pL*|compensaci[oó]n|rango|banda|bruto\pL*|l[ií]quido\pL*|neto\pL*|salary|pay|gross)\b`)
	// negatorRE is a word that negates what follows it in its segment.
	negatorRE = regexp.MustCompile(`(?i)^(no|sin|ni|nunca|tampoco|not|without|never)$`)
	// negatedAfterRE negates what precedes it ("Reubicación: no",
	// "relocation not required").
	negatedAfterRE = regexp.MustCompile(`(?i)^\s*(?:[:\-–]\s*(?:no|not|ninguno|ninguna)\b|(?:no|not)\s+(?:requerid|necesari|aplica|required|needed))`)
	segmentEnd     = regexp.MustCompile(`[,.;:!?()\n]`)
)

// negationWindow is how many words before a mention, within its segment
// (no comma, period, colon or parenthesis between), a negator reaches.
const negationWindow = 4

// negated reports whether the mention text[start:end] is negated: a
// negator among the few words before it in its segment («no requiere
// reubicación», «sin viajes», «no es necesario mudarse»), or a negation
// right after it («Reubicación: no»).
func negated(text string, start, end int) bool {
	before := text[:start]
	if i := lastIndexRE(segmentEnd, before); i >= 0 {
		before = before[i+1:]
	}
	words := strings.Fields(before)
	if len(words) > negationWindow {
		words = words[len(words)-negationWindow:]
	}
	for _, w := range words {
		if negatorRE.MatchString(strings.Trim(w, "«»\"'¡¿")) {
			return true
		}
	}
	return negatedAfterRE.MatchString(text[end:])
}

func lastIndexRE(re *regexp.Regexp, s string) int {
	locs := re.FindAllStringIndex(s, -1)
	if len(locs) == 0 {
		return -1
	}
	return locs[len(locs)-1][0]
}

// mentions counts the mentions of re in text, affirmed and negated.
func mentions(re *regexp.Regexp, text string) (affirmed, negatedN int) {
	for _, loc := range re.FindAllStringIndex(text, -1) {
		if negated(text, loc[0], loc[1]) {
			negatedN++
		} else {
			affirmed++
		}
	}
	return affirmed, negatedN
}

// ExtractFacts reads the facts of the non-negotiable rules from the JD,
// understanding negation (see negated).
//   - Work mode, over the mentions the JD affirms: presencial without
//     remote or hybrid is presencial; hybrid, or presencial with remote,
//     is hibrido; remote alone is remoto; a remote mention only negated
//     («no es remoto») is no_remoto; nothing is unknown.
//   - Relocation: an affirmed mention requires it; a negated one, or a
//     fully remote job, does not; else unknown.
//   - Travel: a percentage next to «viaje(s)»; a negated mention («sin
//     viajes», «no requiere viajar») is 0; a mention without a number is
//     known to exist, not how much.
//   - Salary: see ExtractSalary.
//   - Industries: which of excluded (the profile's) the JD names, not in
//     a negated mention.
func ExtractFacts(jd string, excluded []string) JDFacts {
	var f JDFacts
	remote, notRemote := mentions(remoteRE, jd)
	hybrid, _ := mentions(hybridRE, jd)
	onsite, _ := mentions(onsiteRE, jd)
	switch {
	case onsite > 0 && remote == 0 && hybrid == 0:
		f.WorkMode = ModeOnsite
	case hybrid > 0 || onsite > 0 && remote > 0:
		f.WorkMode = ModeHybrid
	case remote > 0:
		f.WorkMode = ModeRemote
	case notRemote > 0:
		f.WorkMode = ModeNotRemote
	}
	reloc, noReloc := mentions(relocateRE, jd)
	switch {
	case reloc > 0:
		f.RelocationRequired = ptr(true)
	case noReloc > 0 || f.WorkMode == ModeRemote:
		f.RelocationRequired = ptr(false)
	}
	if m := travelPct.FindStringSubmatch(jd); m != nil {
		if v, err := strconv.ParseFloat(m[1]+m[2]+m[3], 64); err == nil && v <= 100 {
			f.TravelPct = &v
		}
	}
	if f.TravelPct == nil {
		travel, noTravel := mentions(travelRE, jd)
		switch {
		case travel > 0:
			f.TravelMentioned = true
		case noTravel > 0:
			f.TravelPct = ptr(0.0)
		}
	}
	f.Salary = ExtractSalary(jd)
	low := strings.ToLower(jd)
	for _, ind := range excluded {
		i := strings.TrimSpace(strings.ToLower(ind))
		if i == "" {
			continue
		}
		re := regexp.MustCompile(`(?i)` + regexp.QuoteMeta(i))
		if affirmed, _ := mentions(re, low); affirmed > 0 {
			f.Industries = append(f.Industries, ind)
		}
	}
	sort.Strings(f.Industries)
	return f
}

func ptr[T any](v T) *T { return &v }

var (
	// currencyRE finds a currency on a salary line: ISO codes, symbols
	// (US$, R$, S/, €, $) and names. Longer forms come first.
	currencyRE = regexp.MustCompile(`(?i)(US\$|USD\$|U\$S|R\$|\b(?-i:S)/\.?|€|\$|\b(?:CLP|UF|USD|EUR|MXN|COP|PEN|ARS|BRL|GBP)\b|\beuros?\b|\bd[oó]lares\b|\bpesos? chilenos?\b|\bpesos? mexicanos?\b|\bpesos? colombianos?\b|\bpesos? argentinos?\b|\bsoles\b|\breales\b)`)
	// amountRE is a number with an optional multiplier: "3.000.000",
	// "4.000", "60,000", "2,5", "50k", "3 MM", "1,2 millones".
	amountRE    = regexp.MustCompile(`(?i)(\d{1,3}(?:[.,\s]\d{3})+|\d+(?:[.,]\d+)?)\s*(k|mil\b|mm\b|millones\b|mill[oó]n\b)?`)
	notAmountRE = regexp.MustCompile(`(?i)^\s*(%|años|anos|years|días|dias|horas|hours|meses|months)`)
	monthlyRE   = regexp.MustCompile(`(?i)\b(mensual(es)?|al mes|por mes|monthly|per month|a month)\b|/\s*mes\b`)
	annualRE    = regexp.MustCompile(`(?i)\b(anual(es)?|al año|por año|annual|yearly|per year|a year)\b|/\s*año\b`)
	grossRE     = regexp.MustCompile(`(?i)\b(brut[oa]s?|gross)\b`)
	netRE       = regexp.MustCompile(`(?i)\b(l[ií]quid[oa]s?|net[oa]s?|net)\b`)
	fromRE      = regexp.MustCompile(`(?i)\b(desde|a partir de|from|m[ií]nimo)\s*$`)
)

// currencyName normalizes a currency token of currencyRE; "$" is "".
func currencyName(tok string) string {
	t := strings.ToLower(strings.TrimSpace(tok))
	switch {
	case t == "$":
		return ""
	case t == "us$" || t == "usd$" || t == "u$s" || t == "usd" || strings.HasPrefix(t, "d") && strings.HasSuffix(t, "lares"):
		return "USD"
	case t == "r$" || t == "brl" || t == "reales":
		return "BRL"
	case strings.HasPrefix(t, "s/") || t == "pen" || t == "soles":
		return "PEN"
	case t == "€" || strings.HasPrefix(t, "euro") || t == "eur":
		return "EUR"
	case strings.Contains(t, "chilen"):
		return "CLP"
	case strings.Contains(t, "mexican"):
		return "MXN"
	case strings.Contains(t, "colombian"):
		return "COP"
	case strings.Contains(t, "argentin"):
		return "ARS"
	}
	return strings.ToUpper(t)
}

// dollarCountries are the countries whose «$» the JD's mention resolves.
var dollarCountries = []struct {
	re       *regexp.Regexp
	currency string
	name     string
}{
	{regexp.MustCompile(`(?i)\b(chile|chilen\pL*|santiago|valpara[ií]so|vi[ñn]a del mar)\b`), "CLP", "Chile"},
	{regexp.MustCompile(`(?i)\b(m[eé]xico|mexican\pL*|cdmx|monterrey|guadalajara)\b`), "MXN", "México"},
	{regexp.MustCompile(`(?i)\b(colombia\pL*|bogot\pL*|medell[ií]n)\b`), "COP", "Colombia"},
	{regexp.MustCompile(`(?i)\b(argentin\pL*|buenos aires)\b`), "ARS", "Argentina"},
	{regexp.MustCompile(`(?i)\b(estados unidos|ee\.?\s?uu\.?|usa|u\.s\.)\b`), "USD", "Estados Unidos"},
}

// resolveDollar is the currency of a bare «$» from the countries the JD
// names: one country settles it; none or several leave it to ask.
func resolveDollar(jd string) (currency, ask string) {
	var names, currencies []string
	seen := map[string]bool{}
	for _, c := range dollarCountries {
		if c.re.MatchString(jd) && !seen[c.currency] {
			seen[c.currency] = true
			names = append(names, c.name)
			currencies = append(currencies, c.currency)
		}
	}
	switch len(currencies) {
	case 1:
		return currencies[0], ""
	case 0:
		return "", "la oferta usa «$» sin decir la moneda ni el país: pregunta en qué moneda es la renta"
	}
	return "", fmt.Sprintf("la oferta usa «$» y nombra %s: pregunta si la renta es en %s", strings.Join(names, ", "), strings.Join(currencies, " o "))
}

// ExtractSalary reads the pay a JD states, from the first line that talks
// about pay (salario, sueldo, renta, remuneración, compensación, rango,
// banda, bruto, líquido…) and has an amount and a currency: the smallest
// and largest amounts of the line (one amount after «desde» is an open
// range; «hasta» or a single amount is the maximum), the currency (ISO
// codes CLP, UF, USD, EUR, MXN, COP, PEN, ARS, BRL; US$, R$, S/, €; the
// currencies' names; «$» resolved by the JD's country, or left to ask),
// the period (mensual, anual) and the basis (bruto, líquido). Numbers
// followed by %, años, días, horas or meses are not amounts. nil when no
// line states pay.
func ExtractSalary(jd string) *SalaryFact {
	for _, line := range strings.Split(jd, "\n") {
		if !salaryWordRE.MatchString(line) {
			continue
		}
		// An explicit currency anywhere on the line wins over a bare «$»
		// ("$3.000.000 CLP").
		cur := ""
		for _, tok := range currencyRE.FindAllString(line, -1) {
			if cur == "" || currencyName(cur) == "" {
				cur = tok
			}
		}
		if cur == "" {
			continue
		}
		var amounts []float64
		from := false
		for _, m := range amountRE.FindAllStringSubmatchIndex(line, -1) {
			if notAmountRE.MatchString(line[m[1]:]) {
				continue
			}
			v := parseAmount(line[m[2]:m[3]])
			if m[4] >= 0 {
				switch strings.ToLower(line[m[4]:m[5]]) {
				case "k", "mil":
					v *= 1e3
				default:
					v *= 1e6
				}
			}
			if v <= 0 {
				continue
			}
			if len(amounts) == 0 && fromRE.MatchString(strings.TrimRight(strings.TrimRight(line[:m[0]], " $€"), " ")) {
				from = true
			}
			amounts = append(amounts, v)
		}
		if len(amounts) == 0 {
			continue
		}
		s := &SalaryFact{Min: amounts[0], Max: amounts[0], Currency: currencyName(cur)}
		for _, a := range amounts {
			s.Min, s.Max = math.Min(s.Min, a), math.Max(s.Max, a)
		}
		if from && len(amounts) == 1 {
			s.Max = 0
		}
		if s.Currency == "" {
			s.Currency, s.Ask = resolveDollar(jd)
		}
		switch {
		case monthlyRE.MatchString(line):
			s.Period = PeriodMonthly
		case annualRE.MatchString(line):
			s.Period = PeriodAnnual
		}
		switch {
		case grossRE.MatchString(line):
			s.Basis = BasisGross
		case netRE.MatchString(line):
			s.Basis = BasisNet
		}
		return s
	}
	return nil
}

// parseAmount reads "60.000", "60,000", "60 000", "3.000.000" and "2,5"
// (Spanish and English notations of thousands; a single separator before
// 1–2 digits is decimal).
func parseAmount(s string) float64 {
	s = strings.ReplaceAll(s, " ", "")
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '.' || r == ',' })
	if len(parts) == 2 && len(parts[1]) <= 2 {
		v, _ := strconv.ParseFloat(parts[0]+"."+parts[1], 64)
		return v
	}
	v, _ := strconv.ParseFloat(strings.Join(parts, ""), 64)
	return v
}

// NormalizeCurrency is a profile's currency as ExtractSalary writes a
// JD's: "eur" and "euros" are EUR, "dólares" USD.
func NormalizeCurrency(c string) string {
	if strings.TrimSpace(c) == "" {
		return ""
	}
	if n := currencyName(c); n != "" {
		return n
	}
	return strings.ToUpper(strings.TrimSpace(c))
}

// Non-negotiable rule names, the keys of non_negotiables_check.
const (
	RuleRemoteOnly         = "remote_only"
	RuleMinSalary          = "min_salary"
	RuleNoRelocation       = "no_relocation"
	RuleExcludedIndustries = "excluded_industries"
	RuleMaxTravelPct       = "max_travel_pct"
)

// RuleCheck is one non-negotiable's verdict: Pass nil when the JD does
// not state the fact (null, «sin dato»), and a note in Spanish saying what
// the JD states or what to ask.
type RuleCheck struct {
	Pass *bool
	Note string
}

func verdict(pass bool, note string) RuleCheck { return RuleCheck{Pass: &pass, Note: note} }
func noData(note string) RuleCheck             { return RuleCheck{Note: note} }

// CheckNonNegotiables applies the profile's binary rules to the JD's
// facts, one verdict per rule the profile sets. A rule whose fact the JD
// does not state is null, never passed.
//   - remote_only: passes on remoto, fails on hibrido, presencial or
//     no_remoto; null when the JD does not say the work mode.
//   - min_salary: the JD's maximum (or its «desde» minimum when the range
//     is open) against the floor, in the same currency and period (an
//     annual amount is 12 monthly; a JD that does not say its period is
//     read in the profile's, and the note says so). Another currency, an
//     unresolved «$» or no salary: null. A gross maximum under a net floor
//     fails; a net maximum over a gross floor passes; the other mixes of
//     bruto and líquido cannot be decided: null.
//   - no_relocation: fails when the JD asks for relocation, passes when it
//     says none is needed or the job is fully remote; null otherwise.
//   - excluded_industries: fails when the JD names one (not negated);
//     passes otherwise, naming what the JD was read for.
//   - max_travel_pct: the JD's percentage (0 for «sin viajes») against the
//     maximum; null when the JD does not say how much.
func CheckNonNegotiables(nn NonNegotiables, f JDFacts) map[string]RuleCheck {
	out := map[string]RuleCheck{}
	if nn.RemoteOnly {
		switch f.WorkMode {
		case ModeRemote:
			out[RuleRemoteOnly] = verdict(true, "la oferta es remota")
		case "":
			out[RuleRemoteOnly] = noData("la oferta no indica la modalidad de trabajo: pregunta si es remota")
		case ModeNotRemote:
			out[RuleRemoteOnly] = verdict(false, "la oferta dice que no es remota")
		default:
			out[RuleRemoteOnly] = verdict(false, "la oferta es "+map[string]string{ModeHybrid: "híbrida", ModeOnsite: "presencial"}[f.WorkMode])
		}
	}
	if nn.MinSalary > 0 {
		out[RuleMinSalary] = checkSalary(nn, f.Salary)
	}
	if nn.NoRelocation {
		switch {
		case f.RelocationRequired == nil:
			out[RuleNoRelocation] = noData("la oferta no dice si hay que cambiarse de ciudad: pregúntalo")
		case *f.RelocationRequired:
			out[RuleNoRelocation] = verdict(false, "la oferta pide reubicación")
		case f.WorkMode == ModeRemote:
			out[RuleNoRelocation] = verdict(true, "la oferta es remota: no pide reubicación")
		default:
			out[RuleNoRelocation] = verdict(true, "la oferta dice que no requiere reubicación")
		}
	}
	if len(nn.ExcludedIndustries) > 0 {
		if len(f.Industries) > 0 {
			out[RuleExcludedIndustries] = verdict(false, "la oferta nombra "+strings.Join(f.Industries, ", "))
		} else {
			out[RuleExcludedIndustries] = verdict(true, "la oferta no nombra "+strings.Join(nn.ExcludedIndustries, ", "))
		}
	}
	if nn.MaxTravelPct != nil {
		switch {
		case f.TravelPct != nil:
			out[RuleMaxTravelPct] = verdict(*f.TravelPct <= *nn.MaxTravelPct, fmt.Sprintf("la oferta indica %g %% de viajes; tu máximo es %g %%", *f.TravelPct, *nn.MaxTravelPct))
		case f.TravelMentioned:
			out[RuleMaxTravelPct] = noData("la oferta menciona viajes sin decir cuántos: pregunta qué porcentaje del tiempo")
		default:
			out[RuleMaxTravelPct] = noData("la oferta no habla de viajes: pregúntalo si te importa")
		}
	}
	return out
}

func checkSalary(nn NonNegotiables, s *SalaryFact) RuleCheck {
	if s == nil {
		return noData("la oferta no indica la renta: pregunta el rango")
	}
	if s.Currency == "" {
		return noData(s.Ask)
	}
	floorCur := NormalizeCurrency(nn.Currency)
	if s.Currency != floorCur {
		return noData(fmt.Sprintf("la oferta indica la renta en %s y tu piso está en %s: no se comparan monedas distintas", s.Currency, floorCur))
	}
	period := nn.SalaryPeriod
	if period == "" {
		period = PeriodMonthly
	}
	var notes []string
	min, max := s.Min, s.Max
	switch {
	case s.Period == "":
		notes = append(notes, fmt.Sprintf("la oferta no dice si el monto es mensual o anual: se lee %s, como tu piso", period))
	case s.Period != period && period == PeriodMonthly:
		min, max = min/12, max/12
		notes = append(notes, "la oferta indica un monto anual: se compara su doceava parte")
	case s.Period != period:
		min, max = min*12, max*12
		notes = append(notes, "la oferta indica un monto mensual: se compara por doce")
	}
	amount, open := max, max == 0
	if open {
		amount = min
	}
	what := fmt.Sprintf("la oferta paga %s %s %s", money(amount), s.Currency, period)
	if open {
		what = fmt.Sprintf("la oferta paga desde %s %s %s", money(amount), s.Currency, period)
	}
	note := func(more string) string {
		return strings.Join(append(append([]string{what}, notes...), more), "; ")
	}
	floor := fmt.Sprintf("tu piso es %s %s", money(nn.MinSalary), floorCur)
	basis := nn.SalaryBasis
	switch {
	case s.Basis != "" && basis != "" && s.Basis != basis && s.Basis == BasisGross:
		// gross ≥ net: a gross amount under a net floor is under it.
		if amount < nn.MinSalary && !open {
			return verdict(false, note(floor+" líquido y la oferta no llega ni en bruto"))
		}
		return noData(note(floor + " líquido y la oferta indica bruto: depende de los descuentos, pregunta el líquido"))
	case s.Basis != "" && basis != "" && s.Basis != basis:
		if amount >= nn.MinSalary {
			return verdict(true, note(floor+" bruto y la oferta lo supera en líquido"))
		}
		return noData(note(floor + " bruto y la oferta indica líquido: pregunta el bruto"))
	case open && amount < nn.MinSalary:
		return noData(note(floor + ": el rango no tiene tope, pregunta si llega"))
	}
	return verdict(amount >= nn.MinSalary, note(floor))
}

// money writes an amount with Spanish thousands separators: 3.000.000.
func money(v float64) string {
	s := strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(r)
	}
	if frac != "" {
		b.WriteString("," + frac)
	}
	return b.String()
}

// Checks splits the verdicts into the seed's non_negotiables_check (a
// rule whose fact the JD does not state is null) and their notes.
func Checks(rc map[string]RuleCheck) (map[string]*bool, map[string]string) {
	check, notes := map[string]*bool{}, map[string]string{}
	for r, c := range rc {
		check[r] = c.Pass
		if c.Note != "" {
			notes[r] = c.Note
		}
	}
	return check, notes
}

// FailedRules lists the rules that did not pass, sorted (a null rule did
// not fail).
func FailedRules(check map[string]*bool) []string {
	var out []string
	for r, ok := range check {
		if ok != nil && !*ok {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// UnknownRules lists the rules the JD gave no fact for (null), sorted.
func UnknownRules(check map[string]*bool) []string {
	var out []string
	for r, ok := range check {
		if ok == nil {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}
