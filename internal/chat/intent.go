package chat

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
)

// Thresholds of seed §5.2: at HintThreshold the supervisor's system prompt
// carries the internal delegation hint (§6); at MissedThreshold a turn
// that delegated nothing is a missed delegation (§8).
const (
	HintThreshold   = 0.55
	MissedThreshold = 0.75
)

// Intent is ScoreDelegationIntent's answer (seed §5.3).
type Intent struct {
	// Target is the agent with the highest score ("" when none scored).
	Target string `json:"target"`
	// Score is Target's score, in [0, 1], two decimals.
	Score float64 `json:"score"`
	// Scores holds every specialist's score above zero.
	Scores map[string]float64 `json:"scores"`
	// Reasons explain Target's score: matched keywords, adjustments and
	// the score ("matched: compar*, candidat*", "imperative: compara",
	// "score:0.85").
	Reasons []string `json:"reasons"`
}

// The heuristic's constants (see Score).
const (
	// lengthUnit is how many words count as one unit of text: a keyword
	// of weight 1 in a request of lengthUnit words has density 1/2.
	lengthUnit = 8.0
	// minLength and maxLength clamp the word count (the "controlled
	// length"): a two-word request is not more certain than a four-word
	// one, and a long message is not diluted without end.
	minLength = 4
	maxLength = 40
	// Structural adjustments.
	imperativeBoost = 0.15
	namedBoost      = 0.25
	metaPenalty     = 0.35
)

// ScoreDelegationIntent scores how likely text asks for each specialist of
// the registry (seed §5.2). It is deterministic and reads nothing but its
// arguments. For every specialist a:
//
//  1. raw(a) = Σ weight of a's distinct keywords found in the folded text
//     (lowercase, accents removed, words of letters, digits, '-' and '_');
//  2. density(a) = raw / (raw + n/8), where n is the word count clamped to
//     [4, 40]: the ratio over a controlled length, below 1 however many
//     keywords match;
//  3. structural adjustments, for an agent with raw > 0 or named:
//     +0.15 when the request opens with an imperative or a "can you +
//     verb" form ("compara…", "envía…", "¿puedes marcar…", "please send…");
//     +0.25 when it names the agent (its name, id or an alias) by a
//     word that is not already one of its matched keywords;
//     −0.35 when it is a question about the chat itself ("¿qué puedes
//     hacer?", "who are you?");
//  4. score(a) = clamp(density + adjustments, 0, 1), rounded to two
//     decimals.
//
// The target is the highest score; a tie goes to the agent listed first.
func (r *Registry) ScoreDelegationIntent(text string) Intent {
	toks := words(fold(text))
	n := float64(min(max(len(toks), minLength), maxLength))
	imperative, verb := opensImperative(toks)
	meta := isMeta(toks)
	in := Intent{Scores: map[string]float64{}, Reasons: []string{}}
	best := -1.0
	for i, a := range r.Agents {
		if a.ID == r.Supervisor {
			continue
		}
		raw := 0.0
		var matched []string
		var hits []matcher
		for k, m := range r.matchers[i] {
			if m.in(toks) {
				raw += a.Keywords[k].Weight
				matched = append(matched, a.Keywords[k].Term)
				hits = append(hits, m)
			}
		}
		named := ""
		for _, m := range r.names[i] {
			if m.in(toks) && !covered(m, hits) {
				named = m.term
				break
			}
		}
		if raw == 0 && named == "" {
			continue
		}
		score := raw / (raw + n/lengthUnit)
		var reasons []string
		if raw > 0 {
			reasons = append(reasons, "matched: "+strings.Join(matched, ", "))
		}
		if imperative {
			score += imperativeBoost
			reasons = append(reasons, "imperative: "+verb)
		}
		if named != "" {
			score += namedBoost
			reasons = append(reasons, "named: "+named)
		}
		if meta {
			score -= metaPenalty
			reasons = append(reasons, "question about the chat")
		}
		score = math.Round(min(max(score, 0), 1)*100) / 100
		if score == 0 {
			continue
		}
		in.Scores[a.ID] = score
		if score > best {
			best = score
			in.Target, in.Score = a.ID, score
			in.Reasons = append(reasons, fmt.Sprintf("score:%.2f", score))
		}
	}
	return in
}

// covered reports whether a name is already counted as a keyword (the
// debate agent's id "debate" is also its keyword): it is not counted twice.
func covered(name matcher, hits []matcher) bool {
	for _, h := range hits {
		if h.in(name.seq) {
			return true
		}
	}
	return false
}

// matcher finds one keyword (a sequence of folded words, the last one a
// prefix when the term ends in "*").
type matcher struct {
	term   string
	seq    []string
	prefix bool
}

func newMatcher(term string) matcher {
	prefix := strings.HasSuffix(term, "*")
	return matcher{term: term, seq: words(fold(strings.TrimSuffix(term, "*"))), prefix: prefix}
}

func (m matcher) in(toks []string) bool {
	for i := range toks {
		if m.at(toks, i) {
			return true
		}
	}
	return false
}

// at reports whether the keyword starts at toks[i].
func (m matcher) at(toks []string, i int) bool {
	last := len(m.seq) - 1
	if last < 0 || i+last >= len(toks) {
		return false
	}
	for j, w := range m.seq {
		t := toks[i+j]
		if j == last && m.prefix {
			if !strings.HasPrefix(t, w) {
				return false
			}
		} else if t != w {
			return false
		}
	}
	return true
}

func (r *Registry) compile() {
	r.matchers = make([][]matcher, len(r.Agents))
	r.names = make([][]matcher, len(r.Agents))
	for i, a := range r.Agents {
		for _, k := range a.Keywords {
			r.matchers[i] = append(r.matchers[i], newMatcher(k.Term))
		}
		for _, name := range append([]string{a.ID, a.Name}, a.Aliases...) {
			if m := newMatcher(name); len(m.seq) > 0 {
				r.names[i] = append(r.names[i], m)
			}
		}
	}
}

// fold lowercases text and removes Spanish accents and the diaeresis.
func fold(s string) string {
	return strings.Map(func(c rune) rune {
		switch c = unicode.ToLower(c); c {
		case 'á', 'à', 'â', 'ä':
			return 'a'
		case 'é', 'è', 'ê', 'ë':
			return 'e'
		case 'í', 'ì', 'î', 'ï':
			return 'i'
		case 'ó', 'ò', 'ô', 'ö':
			return 'o'
		case 'ú', 'ù', 'û', 'ü':
			return 'u'
		case 'ñ':
			return 'n'
		}
		return c
	}, s)
}

// words splits folded text into words of letters, digits, '-' and '_'
// (so "c-001" and "search_id" stay whole), trimming '-' and '_' at the ends.
func words(s string) []string {
	f := strings.FieldsFunc(s, func(c rune) bool {
		return !unicode.IsLetter(c) && !unicode.IsDigit(c) && c != '-' && c != '_'
	})
	out := f[:0]
	for _, w := range f {
		if w = strings.Trim(w, "-_"); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// courtesy words skipped before the opening verb.
var courtesy = []string{"por", "favor", "porfa", "please", "pls", "hola", "hey", "oye", "ok", "vale", "bueno", "ahora", "now", "and", "y", "tambien", "also", "luego", "then"}

// askers open a request phrased as a question ("¿puedes comparar…?",
// "can you send…"): the verb after them counts as an imperative.
var askers = []string{"puedes", "podrias", "puede", "podria", "quiero", "quisiera", "necesito", "can", "could", "would", "will", "i", "want", "need", "you", "to", "me", "lo", "la", "nos"}

// imperatives are the request verbs (Spanish imperative and infinitive,
// English base form) the heuristic recognises at the start of a request.
var imperatives = []string{
	"compara", "comparar", "compare", "marca", "marcar", "flag", "abre", "abrir", "open",
	"envia", "enviar", "manda", "mandar", "send", "email", "busca", "buscar", "search", "find",
	"lanza", "lanzar", "launch", "run", "ejecuta", "ejecutar", "corre", "correr", "inicia", "iniciar", "start",
	"evalua", "evaluar", "evaluate", "analiza", "analizar", "analyze", "analyse", "clasifica", "clasificar", "classify",
	"prepara", "preparar", "prepare", "exporta", "exportar", "export", "revisa", "revisar", "review", "check",
	"genera", "generar", "generate", "crea", "crear", "create", "dame", "give", "muestra", "mostrar", "show",
	"haz", "hacer", "make", "organiza", "organizar", "organize", "debate", "debatir", "investiga", "investigar",
	"research", "publica", "publicar", "publish", "escribe", "escribir", "write", "programa", "programar", "schedule",
	"redacta", "redactar", "draft", "disena", "disenar", "design", "detecta", "detectar", "detect", "resume", "resumir",
	"summarize", "ayudame", "help", "convoca", "convocar", "identifica", "identificar", "identify", "ordena", "rank",
	"prioriza", "priorizar", "prioritize", "consulta", "consultar", "guarda", "guardar", "save", "sube", "subir", "upload",
	"planifica", "planificar", "plan", "optimiza", "optimizar", "optimize", "traduce", "traducir", "translate",
}

// opensImperative reports whether the request opens with a request verb,
// after courtesy words and "can you"-style askers (at most four words in).
func opensImperative(toks []string) (bool, string) {
	for i, t := range toks {
		if i >= 5 {
			break
		}
		if slices.Contains(imperatives, t) {
			return true, t
		}
		if !slices.Contains(courtesy, t) && !slices.Contains(askers, t) {
			break
		}
	}
	return false, ""
}

// metaPhrases are questions about the chat itself.
var metaPhrases = [][]string{
	{"que", "puedes", "hacer"}, {"quien", "eres"}, {"que", "eres"}, {"como", "funcionas"}, {"como", "funciona", "este", "chat"},
	{"que", "agentes"}, {"con", "quien", "hablo"}, {"what", "can", "you", "do"}, {"who", "are", "you"}, {"what", "are", "you"},
	{"how", "do", "you", "work"}, {"how", "does", "this", "chat"}, {"which", "agents"}, {"what", "agents"},
}

func isMeta(toks []string) bool {
	for _, p := range metaPhrases {
		if (matcher{seq: p}).in(toks) {
			return true
		}
	}
	return false
}
