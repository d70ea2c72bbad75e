package chat

import (
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A request's features for the learned intent model (IntentModel): what
// the keyword heuristic reads (its keywords, its score, the opening verb,
// the agent's name, a question about the chat) plus what it cannot read:
// negation, status questions, paraphrases, and the words' stems and
// character n-grams the model weighs from the corpus. Features are names
// ("w:compa", "¬k:reports:envia*") with values; a word inside a negation's
// scope is marked "¬" and adds no n-grams, so «no lo envíes» never reads as
// «envía».

// Bounds of one request's features.
const (
	maxFeatureWords = 120 // words read from one request
	stemRunes       = 5   // a stem is a word's first five letters
	negationScope   = 3   // words a negation reaches, clitics aside
	ngramMin        = 3
	ngramMax        = 5
)

// token is one word of a request with where it sits.
type token struct {
	w       string // folded word
	clause  int    // clauses are cut at , ; : . ! ? ( ) and new lines
	negated bool
}

// tokenize folds text and splits it into words, numbering clauses, at most
// maxFeatureWords.
func tokenize(text string) ([]token, bool) {
	folded := fold(text)
	question := strings.ContainsAny(folded, "?¿")
	var out []token
	clause := 0
	for c := range strings.FieldsFuncSeq(folded, func(r rune) bool { return strings.ContainsRune(",;:.!?¡¿()\n", r) }) {
		for _, w := range words(c) {
			if len(out) == maxFeatureWords {
				return out, question
			}
			out = append(out, token{w: w, clause: clause})
		}
		clause++
	}
	return out, question
}

// negationCues open a negation's scope, longest first; a trailing "*"
// matches a word start. The scope is the next negationScope words of the
// same clause (clitics not counted), up to a word that turns to another
// request (scopeBreakers).
var negationCues = [][]string{
	{"tampoco", "hace", "falta", "que"}, {"no", "hace", "falta", "que"}, {"no", "es", "necesario", "que"},
	{"tampoco", "hace", "falta"}, {"no", "hace", "falta"}, {"no", "es", "necesario"},
	{"no", "necesito", "que"}, {"no", "quiero", "que"},
	{"ya", "no"}, {"todavia", "no"}, {"aun", "no"}, {"mejor", "no"}, {"nada", "de"}, {"deja", "de"},
	{"no"}, {"ni"}, {"nunca"}, {"tampoco"}, {"sin"}, {"olvid*"}, {"cancel*"},
}

var (
	clitics       = []string{"lo", "la", "le", "les", "los", "las", "me", "te", "se", "nos", "os", "mas", "todavia", "aun"}
	scopeBreakers = []string{"pero", "sino", "solo", "mejor", "primero", "directamente", "que", "y"}
)

// markNegation marks the words inside a negation's scope and returns the
// cues found ("no hace falta", "sin").
func markNegation(toks []token) []string {
	var cues []string
	for i := 0; i < len(toks); i++ {
		n := cueAt(toks, i)
		if n == 0 {
			continue
		}
		words := make([]string, n)
		for k := range n {
			words[k] = toks[i+k].w
		}
		cues = append(cues, strings.Join(words, " "))
		reached := 0
		j := i + n
		for ; j < len(toks) && reached < negationScope && toks[j].clause == toks[i].clause; j++ {
			if slices.Contains(scopeBreakers, toks[j].w) || cueAt(toks, j) > 0 {
				break
			}
			toks[j].negated = true
			if !slices.Contains(clitics, toks[j].w) {
				reached++
			}
		}
		i = j - 1
	}
	return cues
}

// cueAt is the length of the negation cue starting at toks[i], or 0.
func cueAt(toks []token, i int) int {
	for _, cue := range negationCues {
		if i+len(cue) > len(toks) {
			continue
		}
		ok := true
		for k, c := range cue {
			if p, star := strings.CutSuffix(c, "*"); star {
				ok = strings.HasPrefix(toks[i+k].w, p)
			} else {
				ok = toks[i+k].w == c
			}
			if !ok {
				break
			}
		}
		if ok {
			return len(cue)
		}
	}
	return 0
}

// statusCues make a request a status question about work already asked
// («¿cómo va…?», «¿ya terminó…?», «¿se envió…?»); a trailing "*" matches a
// word start. Every cue occurs in the corpus's train split.
var statusCues = [][]string{
	{"como", "va*"}, {"como", "viene*"}, {"ya", "termin*"}, {"ha", "terminado"}, {"termino"}, {"se", "termino"},
	{"en", "que", "qued*"}, {"en", "que", "anda"}, {"en", "que", "punto"},
	{"ya", "esta*"}, {"esta", "ya"}, {"ya", "quedo"}, {"ya", "tenemos"}, {"ya", "hay"}, {"ya", "acabo"},
	{"ya", "llego"}, {"ha", "llegado"}, {"llego", "el"}, {"ya", "se", "envio"}, {"se", "ha", "enviado"},
	{"ya", "se", "mando"}, {"ya", "se", "le", "envio"}, {"ya", "salio"}, {"ya", "clasific*"},
	{"ya", "le", "mand*"}, {"ya", "llegaron"}, {"que", "onda", "con"}, {"como", "van"}, {"como", "vienen"},
}

// isStatus reports whether a request asks how work already asked for is
// going: a status cue in a question.
func isStatus(toks []token, question bool) (bool, string) {
	if !question {
		return false, ""
	}
	for i := range toks {
		for _, cue := range statusCues {
			if matchAt(toks, i, cue) {
				return true, strings.Join(cue, " ")
			}
		}
	}
	return false, ""
}

// IsStatusQuestion reports whether text asks how work already asked for
// is going («¿cómo va la búsqueda cfo-2026?», «¿ya se envió el informe?»).
func IsStatusQuestion(text string) bool {
	toks, question := tokenize(text)
	ok, _ := isStatus(toks, question)
	return ok
}

func matchAt(toks []token, i int, seq []string) bool {
	if i+len(seq) > len(toks) {
		return false
	}
	for k, c := range seq {
		if p, star := strings.CutSuffix(c, "*"); star {
			if !strings.HasPrefix(toks[i+k].w, p) {
				return false
			}
		} else if toks[i+k].w != c {
			return false
		}
	}
	return true
}

// paraphrases group the words a consultant uses for one thing the
// specialists do when the registry's keywords are not said («contrástame»,
// «hazle llegar», «que lo vean varios evaluadores»): each group is one
// feature whose weight per agent the model learns. Every entry occurs in
// the corpus's train split.
var paraphrases = map[string][][]string{
	"compare": {{"contrast*"}, {"enfrent*"}, {"diferenc*"}, {"lado", "a", "lado"},
		{"frente", "a", "frente"}, {"quien", "queda"}, {"cual", "de"},
		{"quien", "tiene"}, {"mas", "fuerte"}, {"versus"}, {"me", "quedo"}},
	"send": {{"reenvi*"}, {"remit*"}, {"despach*"}, {"entreg*"}, {"llegar"}, {"llegue"}, {"reciba"}, {"pasale"},
		{"compart*"}, {"mandale"}, {"mandaselo"}, {"enviale"}, {"tenga", "hoy"}},
	"export": {{"export*"}, {"descarg*"}, {"bajame"}, {"pdf"}, {"markdown"}, {"archivo"}, {"formato"}, {"sacame", "el", "informe"}},
	"committee": {{"evaluadores"}, {"varios", "agentes"}, {"comite"}, {"vot*"}, {"desempat*"}, {"una", "vuelta"}, {"discut*"},
		{"discusion"}, {"consenso"}, {"acuerdo"}, {"opinion"}, {"debat*"}, {"rondas"}, {"miradas"}, {"mas", "ojos"}, {"pronuncie"}},
	"answers": {{"contradi*"}, {"evasiv*"}, {"por", "las", "ramas"}, {"titube*"}, {"no", "cierra"}, {"no", "cuadra*"}, {"esquiv*"},
		{"incoheren*"}, {"para", "atras"}, {"vago"}, {"insegur*"}, {"respond*"}, {"contest*"}, {"respuesta*"}, {"focos", "rojos"},
		{"algo", "raro"}, {"exager*"}},
	"career": {{"mi", "cv"}, {"mi", "perfil"}, {"me", "falta"}, {"le", "falta"}, {"mi", "postulacion"}, {"mi", "candidatura"},
		{"postul*"}, {"doy", "el", "perfil"}, {"encajo"}, {"calza"}, {"vacante"}, {"oferta"}, {"brecha*"}, {"mi", "experiencia"},
		{"mi", "carrera"}, {"me", "conviene"}, {"reforzar"}, {"destacar"}, {"me", "vendo"},
		{"screening"}, {"acompan*"}, {"candidatura"}, {"postulacion"}},
	"draft": {{"borrador"}, {"redact*"}, {"escrib*"}, {"texto"}, {"palabras"}, {"mensaje"}, {"resumen"}},
	"evaluation": {{"evaluac*"}, {"evalua*"}, {"busqueda*"}, {"ranking"}, {"puntaj*"}, {"puntuac*"}, {"terna"},
		{"finalistas"}, {"gem*"}},
}

// paraphraseNames are the groups in a fixed order.
var paraphraseNames = sortedKeys(func() map[string]bool {
	m := map[string]bool{}
	for k := range paraphrases {
		m[k] = true
	}
	return m
}())

// features are a request's features and what they found (for Reasons).
type features struct {
	values    map[string]float64
	negations []string // cues
	status    string   // the status cue, "" when not a status question
}

// featuresOf reads text's features for the registry's specialists.
func (r *Registry) featuresOf(text string) features {
	toks, question := tokenize(text)
	f := features{values: map[string]float64{}}
	f.negations = markNegation(toks)
	_, f.status = isStatus(toks, question)
	set := func(name string, v float64) {
		if v != 0 {
			f.values[name] = v
		}
	}
	if len(f.negations) > 0 {
		set("neg", 1)
	}
	if f.status != "" {
		set("status", 1)
	}
	if question {
		set("question", 1)
	}
	plain := make([]string, len(toks))
	for i, t := range toks {
		plain[i] = t.w
	}
	if imp, _ := opensImperative(plain); imp {
		set("imperative", 1)
	}
	if isMeta(plain) {
		set("meta", 1)
	}
	switch n := len(toks); {
	case n <= 3:
		set("len:short", 1)
	case n >= 20:
		set("len:long", 1)
	}
	// Stems and n-grams, each group scaled to unit length.
	var stems, grams []string
	for i, t := range toks {
		s := lexeme(t.w)
		if t.negated {
			stems = append(stems, "¬w:"+s)
			continue
		}
		stems = append(stems, "w:"+s)
		if i+1 < len(toks) && !toks[i+1].negated && toks[i+1].clause == t.clause {
			stems = append(stems, "b:"+s+"_"+lexeme(toks[i+1].w))
		}
		grams = append(grams, ngrams(t.w)...)
	}
	addUnit(f.values, stems)
	addUnit(f.values, grams)
	// Paraphrase groups, marked when negated.
	for _, name := range paraphraseNames {
		for _, seq := range paraphrases[name] {
			if at, ok := find(toks, seq); ok {
				if toks[at].negated {
					set("¬p:"+name, 1)
				} else {
					set("p:"+name, 1)
				}
				break
			}
		}
	}
	// The heuristic's reading, per specialist: its keywords found outside
	// and inside a negation, its name, and its score.
	base := r.ScoreDelegationIntent(text)
	for i, a := range r.Agents {
		if a.ID == r.Supervisor {
			continue
		}
		for k, m := range r.matchers[i] {
			free, negated := m.positions(toks, plain)
			switch {
			case free:
				set("k:"+a.ID+":"+a.Keywords[k].Term, 1)
			case negated:
				set("¬k:"+a.ID, 1)
			}
		}
		for _, m := range r.names[i] {
			if free, _ := m.positions(toks, plain); free {
				set("named:"+a.ID, 1)
				break
			}
		}
		set("h:"+a.ID, base.Scores[a.ID])
	}
	return f
}

// positions reports whether the keyword occurs outside a negation's scope
// (free) and inside one (negated); plain are toks' words.
func (m matcher) positions(toks []token, plain []string) (free, negated bool) {
	for i := range plain {
		if !m.at(plain, i) {
			continue
		}
		if toks[i].negated {
			negated = true
		} else {
			free = true
		}
	}
	return free, negated
}

// find returns where seq (a trailing "*" matching a word start) first
// occurs.
func find(toks []token, seq []string) (int, bool) {
	for i := range toks {
		if matchAt(toks, i, seq) {
			return i, true
		}
	}
	return 0, false
}

// lexeme is what a word weighs as: a candidate id ("c-001") is "#cand",
// any other word with a digit (a search or interview id) "#id", any other
// word its stem. Ids name this corpus's cases, not what is asked.
func lexeme(w string) string {
	switch {
	case candidateRE.MatchString(w):
		return "#cand"
	case strings.IndexFunc(w, unicode.IsDigit) >= 0:
		return "#id"
	}
	return stem(w)
}

// stem is a word's first stemRunes letters: «compárame», «compara» and
// «comparar» share "compa".
func stem(w string) string {
	if utf8.RuneCountInString(w) <= stemRunes {
		return w
	}
	n := 0
	for i := range w {
		if n == stemRunes {
			return w[:i]
		}
		n++
	}
	return w
}

// ngrams are a word's character n-grams (3 to 5 letters) with its
// boundaries marked: "envia" → " en", "env", …, "ia ".
func ngrams(w string) []string {
	if strings.IndexFunc(w, unicode.IsDigit) >= 0 {
		return nil // ids (c-001, cfo-2026) say nothing of the intent
	}
	rs := []rune(" " + w + " ")
	var out []string
	for n := ngramMin; n <= ngramMax; n++ {
		for i := 0; i+n <= len(rs); i++ {
			out = append(out, "n:"+string(rs[i:i+n]))
		}
	}
	return out
}

// addUnit adds names to values, each 1/√len so the group has unit length
// however long the request (a name repeated counts once).
func addUnit(values map[string]float64, names []string) {
	if len(names) == 0 {
		return
	}
	seen := map[string]bool{}
	for _, n := range names {
		seen[n] = true
	}
	v := 1 / math.Sqrt(float64(len(seen)))
	for n := range seen {
		values[n] = v
	}
}
