package companion

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/veredicto/veredicto"
)

// JDRequirement is one requirement line of the JD, with the heading of the
// section it was listed under.
type JDRequirement struct {
	Text    string `json:"text"`
	Section string `json:"section"`
}

// MaxRequirements bounds how many requirements one JD may list.
const MaxRequirements = 60

// ChunkSize is the most requirements classified in one call; a longer list
// is split into balanced chunks.
const ChunkSize = 12

var (
	headingRE    = regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$|^\s*\*\*(.+?)\*\*:?\s*$|^\s*([^\-*•\d][^:]{2,60}):\s*$`)
	bulletRE     = regexp.MustCompile(`^\s*(?:[-*•]|\d{1,2}[.)])\s+(.+?)\s*$`)
	reqHeadRE    = regexp.MustCompile(`(?i)requisit|requerim|necesit|buscamos|perfil|deseabl|valorab|plus|nice to have|ideal|excluyente|obligatori|imprescindible|experiencia|conocimient|habilidad|requirement|qualification|must|skills`)
	notReqHeadRE = regexp.MustCompile(`(?i)har[aá]s|responsabilidad|funcion|tu d[ií]a|ofrecemos|beneficio|condicion|cultura|sobre (nosotros|la empresa)|qui[eé]nes somos|proceso|about|we offer|benefit|responsibilit`)
)

// ExtractRequirements lists the requirements the JD writes as a list: the
// bullet items under headings that name requirements ("Requisitos",
// "Deseable", "Lo que buscamos"…). When no heading does, every bullet
// outside the sections that are plainly not requirements (responsibilities,
// benefits, conditions, culture) counts. A JD without such a list returns
// none and no error: its requirements are in its prose, and the classifier
// extracts them from the text (ClassifyInput.Extract). More than
// MaxRequirements is an invalid input naming file.
func ExtractRequirements(file, jd string) ([]JDRequirement, error) {
	type item struct{ text, section string }
	var all []item
	section := ""
	for _, line := range strings.Split(jd, "\n") {
		if m := bulletRE.FindStringSubmatch(line); m != nil {
			all = append(all, item{strings.TrimSpace(m[1]), section})
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			section = strings.TrimSpace(m[1] + m[2] + m[3])
		}
	}
	anyReqHead := false
	for _, it := range all {
		if isReqSection(it.section) {
			anyReqHead = true
			break
		}
	}
	var out []JDRequirement
	seen := map[string]bool{}
	for _, it := range all {
		keep := isReqSection(it.section)
		if !anyReqHead {
			keep = !notReqHeadRE.MatchString(it.section)
		}
		if !keep || seen[it.text] {
			continue
		}
		seen[it.text] = true
		out = append(out, JDRequirement{Text: it.text, Section: it.section})
	}
	if len(out) > MaxRequirements {
		return nil, &veredicto.InvalidInputError{File: file, Problem: fmt.Sprintf("lists %d requirements; at most %d are classified", len(out), MaxRequirements)}
	}
	return out, nil
}

// CheckJD is the code's check of a JD, before any paid phase: a list of
// at most MaxRequirements requirements, or prose with at least one
// sentence that reads as a requirement (RequirementsFromText). A JD with
// neither is an invalid input naming file.
func CheckJD(file, jd string) error {
	reqs, err := ExtractRequirements(file, jd)
	if err != nil || len(reqs) > 0 {
		return err
	}
	if len(RequirementsFromText(jd)) == 0 {
		return &veredicto.InvalidInputError{File: file, Problem: "states no requirement: neither a list (\"- …\" under \"## Requisitos\") nor a sentence asking for experience, knowledge or skills"}
	}
	return nil
}

var (
	// reqCueRE marks a sentence that asks something of the candidate.
	reqCueRE = regexp.MustCompile(`(?i)\b(requisit\pL*|requiere\pL*|requerim\pL*|experiencia|conocimient\pL*|manejo|dominio|años|formaci[oó]n|t[ií]tulo|ingl[eé]s|certificaci[oó]n|habilidad\pL*|capacidad\pL*|buscamos|necesitamos|deber[aá]s|debes|excluyente|deseable|valorable|idealmente|imprescindible|indispensable|must|required|experience|knowledge)\b`)
	// notReqCueRE marks what the company offers, not what it asks.
	notReqCueRE = regexp.MustCompile(`(?i)\b(ofrecemos|ofrece|beneficio\pL*|seguro|vacaciones|bono|renta|sueldo|salari\pL*|remuneraci\pL*|modalidad|trabajo remoto|100\s*%\s*remot\pL*|reubicaci\pL*|viajes?|we offer|benefits?)\b`)
)

// RequirementsFromText splits a JD without a list into its sentences and
// keeps the ones that ask something of the candidate (experience,
// knowledge, years, language, degree, "buscamos", "excluyente",
// "deseable"…) and not what the company offers; each is a text of the JD
// (joined lines aside), at most MaxRequirements, in order.
func RequirementsFromText(jd string) []JDRequirement {
	var out []JDRequirement
	seen := map[string]bool{}
	for _, s := range sentences(jd) {
		if !reqCueRE.MatchString(s) || notReqCueRE.MatchString(s) || headingRE.MatchString(s) || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, JDRequirement{Text: s})
		if len(out) == MaxRequirements {
			break
		}
	}
	return out
}

// collapse is text with its runs of white space made one space, trimmed.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// CheckExtracted checks a classifier answer that extracted the
// requirements from a JD without a list: at least one and at most
// MaxRequirements, each one a text of the JD copied verbatim (only its
// white space may differ: the JD's lines are joined), then every rule of
// CheckClassification over them.
func CheckExtracted(c *Classification, jd string, p ProfileSnapshot, painPoints []string, e Engine) error {
	if len(c.Requirements) == 0 {
		return fmt.Errorf("requirements: none extracted; copy each requirement of the job description verbatim")
	}
	if len(c.Requirements) > MaxRequirements {
		return fmt.Errorf("requirements: %d extracted; at most %d", len(c.Requirements), MaxRequirements)
	}
	flat := collapse(jd)
	given := make([]JDRequirement, 0, len(c.Requirements))
	for i, r := range c.Requirements {
		t := collapse(r.Requirement)
		if len([]rune(t)) < 3 || !strings.Contains(flat, t) {
			// The message names the position, never the text (it may reach a log).
			return fmt.Errorf("requirements[%d].requirement: is not a text of the job description copied verbatim", i)
		}
		c.Requirements[i].Requirement = t
		given = append(given, JDRequirement{Text: t})
	}
	return CheckClassification(c, given, p, painPoints, e)
}

func isReqSection(s string) bool {
	return s != "" && reqHeadRE.MatchString(s) && !notReqHeadRE.MatchString(s)
}

// Chunks splits reqs into balanced chunks of at most size: 13 → 7 + 6.
func Chunks(reqs []JDRequirement, size int) [][]JDRequirement {
	if len(reqs) <= size {
		return [][]JDRequirement{reqs}
	}
	n := (len(reqs) + size - 1) / size
	var out [][]JDRequirement
	start := 0
	for i := 0; i < n; i++ {
		end := start + (len(reqs)-start+(n-i)-1)/(n-i)
		out = append(out, reqs[start:end])
		start = end
	}
	return out
}

// injectionRE catches instructions addressed to the assistant hidden in a
// document: the code-side first line of the security layer, before any
// model call.
// Up to three words may stand between the verb and its object ("ignore
// all previous instructions", "ignora todas tus instrucciones").
var injectionRE = regexp.MustCompile(`(?i)(ignor\pL*\s+(?:[\pL']+\s+){0,3}(instrucc|indicac|reglas|directiv|instruction|rules|prompt|directive))|` +
	`(olvida\pL*\s+(tus|las|todo)\b)|(forget\s+(?:[\pL']+\s+){0,3}(instruction|rules|prompt))|(disregard\s+(all|previous|the|any|everything|your))|(system prompt|prompt del sistema|eres ahora|you are now|act[uú]a como (si|un|una)|from now on you|a partir de ahora (eres|responde|debes))|` +
	`(responde (solo|únicamente) con)|(revela\w* (tu|el) prompt)|(<\|?(system|im_start)\|?>)`)

// DetectInjection returns the text matched as an instruction to the
// assistant, or "".
func DetectInjection(text string) string {
	return injectionRE.FindString(text)
}

var careerRE = regexp.MustCompile(`(?i)\b(requisitos?|experiencia|años|cargo|puesto|rol|vacante|postula\w*|empleo|trabajo|equipo|responsabilidades|salario|sueldo|remuneraci[oó]n|contrato|buscamos|ofrecemos|empresa|job|role|position|requirements?|experience|hiring|salary|skills?|conocimientos?|perfil)\b`)

// CareerSignals counts the distinct career words of text (the offline
// intent classifier needs at least MinCareerSignals).
func CareerSignals(text string) int {
	seen := map[string]bool{}
	for _, m := range careerRE.FindAllString(text, -1) {
		seen[strings.ToLower(m)] = true
	}
	return len(seen)
}

// MinCareerSignals is how many distinct career words the offline intent
// classifier needs to accept a text as a job description.
const MinCareerSignals = 3
