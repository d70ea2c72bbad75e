package offline

import (
	"slices"
	"strings"
	"unicode"
)

// Leadership. A requirement that asks to have led something («haber
// liderado», «dirigido», «encabezado», «a cargo de», «liderazgo de
// equipos») is evidenced only by a sentence in which the candidate says, in
// the first person and without negation, that they led it: «lideré»,
// «dirigí», «encabecé», «estuve a cargo», «lidero», «tengo 40 personas a
// cargo». Supporting someone else's work («apoyé», «colaboré»,
// «participé», «asistí») is not leading it, and «no la lideré» denies it.
//
// Verbs are read on lower-cased text with its accents: «lideré» (I led)
// and «lideró» (someone led) differ only by the accent, and interview notes
// speak of third parties («el CFO lideró»). An unaccented «lidere» or
// «dirigi» is read as the first person that lost its accent; «lidero»
// without accent is the first person present.

// leadWords are first-person leadership verbs.
var leadWords = set(`lideré lidere lidero lideraba lideramos liderando ` +
	`dirigí dirigi dirijo dirigía dirigia dirigimos dirigiendo ` +
	`encabecé encabece encabezo encabezaba encabezamos encabezando ` +
	`conduje conduzco conducía conducia conducimos conduciendo`)

// leadParticiples follow «he» or «hemos»: «he liderado».
var leadParticiples = set(`liderado dirigido encabezado conducido`)

// firstPersonHave are the first-person forms that, before «a cargo» or a
// team, say the team is the candidate's: «tengo 40 personas a cargo»,
// «estuve a cargo», «tuve un equipo de 12 analistas».
var (
	firstPersonCharge = set(`estuve estoy estaba tuve tengo tenía tenia quedé quede`)
	firstPersonHave   = set(`tengo tuve tenía tenia`)
	teamWords         = set(`equipo equipos personas jefaturas colaboradores profesionales analistas ejecutivos trabajadores reportes gerentes jefes`)
)

// supportWords are first-person verbs (and their nouns, as CVs write them:
// «Apoyo a la gerencia», «Participación en el presupuesto») of helping
// someone else's work.
var supportWords = set(`apoyé apoye apoyo apoyando apoyaba colaboré colabore colaboro colaborando colaboraba colaboración colaboracion ` +
	`participé participe participo participando participaba participación participacion asistí asisti asisto asistiendo ` +
	`ayudé ayude ayudo contribuí contribui contribuyo acompañé acompañe`)

// supportPhrases are support expressions of more than one word.
var supportPhrases = [][]string{{"di", "soporte"}, {"di", "apoyo"}, {"formé", "parte"}, {"forme", "parte"}, {"fui", "parte"}}

// negators deny the verb after them; clitics may stand between («no la
// lideré»), and so may the auxiliary «he» («nunca he liderado»).
var (
	negators = set(`no nunca jamás jamas ni sin`)
	clitics  = set(`lo la los las le les me se nos he hemos`)
)

// lowerWords splits text into lower-cased words, accents kept.
func lowerWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// leadership is what a sentence says about the candidate leading.
type leadership struct {
	leads   bool   // a first-person leadership expression, not negated
	denied  string // a negated one, as written in lower case: «no la lideré»
	support string // a support word, as written in lower case: «apoyé»
}

// leadershipIn reads the leadership expressions of a sentence.
func leadershipIn(text string) leadership {
	ws := lowerWords(text)
	var l leadership
	for i := range ws {
		start, ok := leadAt(ws, i)
		if ok {
			if neg := negatedAt(ws, start); neg >= 0 {
				if l.denied == "" {
					l.denied = strings.Join(ws[neg:i+1], " ")
				}
			} else {
				l.leads = true
			}
		}
		if l.support == "" && supportAt(ws, i) {
			l.support = ws[i]
		}
	}
	return l
}

// leadAt reports whether a leadership expression ends at word i, and
// where it starts (for negation).
func leadAt(ws []string, i int) (start int, ok bool) {
	w := ws[i]
	switch {
	case leadWords[w]:
		return i, true
	case leadParticiples[w] && i > 0 && (ws[i-1] == "he" || ws[i-1] == "hemos"):
		return i - 1, true
	case w == "cargo" && i > 0 && ws[i-1] == "mi" && i > 1 && ws[i-2] == "a": // «a mi cargo»
		return i - 2, true
	case w == "cargo" && i == 1 && ws[0] == "a":
		// a CV line that opens with it, «A cargo de la tesorería»: the
		// candidate's own statement, with the verb left out
		return 0, true
	case w == "cargo" && i > 0 && ws[i-1] == "a":
		// «estuve a cargo», «tengo 40 personas a cargo»: a first-person
		// verb at most five words before; not «estuvo a cargo del CFO».
		for j := i - 2; j >= 0 && j >= i-6; j-- {
			if firstPersonCharge[ws[j]] {
				return j, true
			}
		}
	case w == "reportan" || w == "reportaban" || w == "reportaron":
		if i > 0 && ws[i-1] == "me" { // «me reportan cuatro jefaturas»
			return i - 1, true
		}
	case teamWords[w]:
		// «tengo 35 personas y cuatro jefaturas», «tuve un equipo de 12»
		for j := i - 1; j >= 0 && j >= i-3; j-- {
			if firstPersonHave[ws[j]] {
				return j, true
			}
		}
	case w == "líder" || w == "lider":
		// «Líder de un equipo de 25 personas», «como líder del módulo»:
		// a leader noun that is the candidate's, followed by what they
		// lead; not «apoyé al líder del proyecto».
		if i > 0 && !(ws[i-1] == "como" || ws[i-1] == "fui" || ws[i-1] == "soy" || ws[i-1] == "era") {
			return 0, false
		}
		for j := i + 1; j < len(ws) && j <= i+2; j++ {
			if ws[j] == "de" || ws[j] == "del" {
				return i, true
			}
		}
	}
	return 0, false
}

// negatedAt returns where the negation of the expression starting at
// word start begins, or -1.
func negatedAt(ws []string, start int) int {
	for j := start - 1; j >= 0 && j >= start-3; j-- {
		if negators[ws[j]] {
			return j
		}
		if !clitics[ws[j]] {
			return -1
		}
	}
	return -1
}

func supportAt(ws []string, i int) bool {
	if supportWords[ws[i]] {
		return true
	}
	for _, p := range supportPhrases {
		if i+len(p) <= len(ws) && slices.Equal(ws[i:i+len(p)], p) {
			return true
		}
	}
	return false
}

// asksLeadership reports whether a requirement asks to have led: any form
// of liderar, dirigir or encabezar («haber liderado», «liderando»,
// «liderazgo de equipos», «dirigido»; not «dirigido a», aimed at), or «a
// cargo de».
func asksLeadership(req string) bool {
	ws := words(req)
	for i, w := range ws {
		switch {
		case strings.HasPrefix(w, "lider"), strings.HasPrefix(w, "encabez"):
			return true
		case strings.HasPrefix(w, "dirig"):
			if i+1 < len(ws) && ws[i+1] == "a" && strings.HasPrefix(w, "dirigid") {
				continue
			}
			return true
		case w == "cargo" && i > 0 && ws[i-1] == "a":
			return true
		}
	}
	return false
}

// leadTitles are the words of a position title that make it a position of
// leading people: the years in such positions are years leading.
var leadTitles = set(`gerente subgerente director directora subdirector subdirectora jefe jefa head lider cfo ceo coo cto vicepresidente vp presidente`)

// leadsByTitle reports whether a CV position line («Gerente de Finanzas —
// Empresa (2019–actualidad)») names a leadership position.
func leadsByTitle(positionLine string) bool {
	title := positionLine
	for _, sep := range []string{"—", " – ", " - ", "(", ","} {
		if i := strings.Index(title, sep); i > 0 {
			title = title[:i]
		}
	}
	for _, w := range words(title) {
		if leadTitles[w] {
			return true
		}
	}
	return false
}
