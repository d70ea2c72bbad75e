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

// ExtractRequirements lists the JD's requirements: the bullet items under
// headings that name requirements ("Requisitos", "Deseable", "Lo que
// buscamos"…). When no heading does, every bullet outside the sections that
// are plainly not requirements (responsibilities, benefits, conditions,
// culture) counts. A JD with no bullet requirement, or with more than
// MaxRequirements, is an invalid input naming file.
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
	if len(out) == 0 {
		return nil, &veredicto.InvalidInputError{File: file, Problem: "no requirements found: list them as bullet points (\"- …\") under a heading such as \"## Requisitos\""}
	}
	if len(out) > MaxRequirements {
		return nil, &veredicto.InvalidInputError{File: file, Problem: fmt.Sprintf("lists %d requirements; at most %d are classified", len(out), MaxRequirements)}
	}
	return out, nil
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
