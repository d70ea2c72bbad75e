package companion

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// JDFacts are the facts the non-negotiable rules are checked against,
// extracted from the JD text by code (ExtractFacts). A fact the JD does
// not state is unknown, and a rule over an unknown fact passes: the rule
// fails only on what the offer says.
type JDFacts struct {
	WorkMode           string   `json:"work_mode"` // remoto | hibrido | presencial | "" (unknown)
	SalaryMax          float64  `json:"salary_max"`
	SalaryCurrency     string   `json:"salary_currency"`
	RelocationRequired bool     `json:"relocation_required"`
	TravelPct          *float64 `json:"travel_pct"`
	Industries         []string `json:"industries"` // the profile's excluded industries the JD names
}

var (
	remoteRE     = regexp.MustCompile(`(?i)\b(100\s*%\s*remot[oa]|full[- ]remote|totalmente remot[oa]|trabajo remoto|remote[- ]first|remoto)\b`)
	hybridRE     = regexp.MustCompile(`(?i)\b(h[ií]brid[oa]|hybrid)\b`)
	onsiteRE     = regexp.MustCompile(`(?i)\b(presencial|on[- ]site|en (la )?oficina)\b`)
	relocateRE   = regexp.MustCompile(`(?i)\b(reubicaci[oó]n|relocation|relocalizaci[oó]n|trasladarse|mudarse|relocate)\b`)
	travelRE     = regexp.MustCompile(`(?i)viaj\w*[^.\n]{0,40}?(\d{1,3})\s*%|(\d{1,3})\s*%[^.\n]{0,40}?viaj`)
	salaryLineRE = regexp.MustCompile(`(?i)(salario|sueldo|remuneraci[oó]n|compensaci[oó]n|rango|banda|bruto|salary)`)
	amountRE     = regexp.MustCompile(`(\d{1,3}(?:[.,\s]\d{3})+|\d+(?:[.,]\d+)?)\s*(k|mil)?\b`)
	currencyRE   = regexp.MustCompile(`(?i)(€|\$|\b(EUR|USD|CLP|MXN|ARS|COP|PEN|GBP|euros?|d[oó]lares)\b)`)
)

// ExtractFacts reads the facts of the non-negotiable rules from the JD.
// Work mode: an explicit "presencial" wins over "híbrido", which wins over
// "remoto" (an offer that is remote only says so without the others).
// Salary: the largest amount on a line that talks about pay, with its
// currency. Travel: a percentage next to "viaje(s)". Industries: which of
// excluded (the profile's) the JD names.
func ExtractFacts(jd string, excluded []string) JDFacts {
	var f JDFacts
	switch {
	case onsiteRE.MatchString(jd) && !remoteRE.MatchString(jd) && !hybridRE.MatchString(jd):
		f.WorkMode = "presencial"
	case hybridRE.MatchString(jd) || (onsiteRE.MatchString(jd) && remoteRE.MatchString(jd)):
		f.WorkMode = "hibrido"
	case remoteRE.MatchString(jd):
		f.WorkMode = "remoto"
	}
	f.RelocationRequired = relocateRE.MatchString(jd)
	if m := travelRE.FindStringSubmatch(jd); m != nil {
		s := m[1]
		if s == "" {
			s = m[2]
		}
		if v, err := strconv.ParseFloat(s, 64); err == nil && v <= 100 {
			f.TravelPct = &v
		}
	}
	for _, line := range strings.Split(jd, "\n") {
		if !salaryLineRE.MatchString(line) {
			continue
		}
		cur := currencyRE.FindString(line)
		if cur == "" {
			continue
		}
		for _, m := range amountRE.FindAllStringSubmatch(line, -1) {
			v := parseAmount(m[1])
			if strings.EqualFold(m[2], "k") || strings.EqualFold(m[2], "mil") {
				v *= 1000
			}
			if v > f.SalaryMax {
				f.SalaryMax = v
				f.SalaryCurrency = normalizeCurrency(cur)
			}
		}
	}
	low := strings.ToLower(jd)
	for _, ind := range excluded {
		if i := strings.TrimSpace(strings.ToLower(ind)); i != "" && strings.Contains(low, i) {
			f.Industries = append(f.Industries, ind)
		}
	}
	sort.Strings(f.Industries)
	return f
}

// parseAmount reads "60.000", "60,000", "60 000" and "2,5" (Spanish and
// English notations of thousands; a single separator before 1–2 digits is
// decimal).
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

func normalizeCurrency(c string) string {
	switch strings.ToLower(c) {
	case "€", "eur", "euro", "euros":
		return "EUR"
	case "$", "usd", "dolares", "dólares":
		return "USD"
	}
	return strings.ToUpper(c)
}

// Non-negotiable rule names, the keys of non_negotiables_check.
const (
	RuleRemoteOnly         = "remote_only"
	RuleMinSalary          = "min_salary"
	RuleNoRelocation       = "no_relocation"
	RuleExcludedIndustries = "excluded_industries"
	RuleMaxTravelPct       = "max_travel_pct"
)

// CheckNonNegotiables applies the profile's binary rules to the JD's
// facts: {rule: passed} for every rule the profile sets.
//   - remote_only fails when the JD states a hybrid or on-site mode;
//   - min_salary fails when the JD states a maximum below it in the same
//     currency (another currency cannot be compared: passes, unknown);
//   - no_relocation fails when the JD asks for relocation;
//   - excluded_industries fails when the JD names one of them;
//   - max_travel_pct fails when the JD states more travel.
func CheckNonNegotiables(nn NonNegotiables, f JDFacts) map[string]bool {
	out := map[string]bool{}
	if nn.RemoteOnly {
		out[RuleRemoteOnly] = f.WorkMode == "" || f.WorkMode == "remoto"
	}
	if nn.MinSalary > 0 {
		pass := true
		if f.SalaryMax > 0 && strings.EqualFold(normalizeCurrency(nn.Currency), f.SalaryCurrency) {
			pass = f.SalaryMax >= nn.MinSalary
		}
		out[RuleMinSalary] = pass
	}
	if nn.NoRelocation {
		out[RuleNoRelocation] = !f.RelocationRequired
	}
	if len(nn.ExcludedIndustries) > 0 {
		out[RuleExcludedIndustries] = len(f.Industries) == 0
	}
	if nn.MaxTravelPct != nil {
		out[RuleMaxTravelPct] = f.TravelPct == nil || *f.TravelPct <= *nn.MaxTravelPct
	}
	return out
}

// FailedRules lists the rules that did not pass, sorted.
func FailedRules(check map[string]bool) []string {
	var out []string
	for r, ok := range check {
		if !ok {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}
