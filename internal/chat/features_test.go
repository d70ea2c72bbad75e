package chat

import (
	"slices"
	"strings"
	"testing"
)

// negatedWords are the words of text inside a negation's scope.
func negatedWords(text string) []string {
	toks, _ := tokenize(text)
	markNegation(toks)
	var out []string
	for _, t := range toks {
		if t.negated {
			out = append(out, t.w)
		}
	}
	return out
}

func TestNegationScope(t *testing.T) {
	tests := []struct {
		text    string
		negated string // space-separated, in order
	}{
		{"No hace falta debatir esto", "debatir esto"},
		{"Ya no compares a nadie", "compares a nadie"},
		{"Prepara el informe de c-004 sin enviarlo todavía", "enviarlo todavia"},
		// A clitic does not use up the scope.
		{"No lo mandes todavía, solo expórtalo en PDF", "lo mandes todavia"},
		// A comma, a colon and "pero" end it: the next request is free.
		{"No abras debate; mejor compárame a c-001 con c-002", "abras debate"},
		{"No me basta el informe de c-007: quiero que lo debata el comité", "me basta el informe"},
		{"Deja preparado el informe pero no lo envíes aún", "lo envies aun"},
		{"ni compares ni mandes nada", "compares mandes nada"},
		{"No quiero que clasifiques esa entrevista", "clasifiques esa entrevista"},
		{"Nada de mandar correos al cliente hoy", "mandar correos al"},
		// Articles are not counted either.
		{"Olvídate de la comparación entre c-001 y c-002", "de la comparacion entre"},
		// No cue, nothing negated.
		{"Compara a c-001 con c-004 en liderazgo", ""},
		{"Reenvía el informe de c-007 a la gerenta", ""},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			if got := strings.Join(negatedWords(tc.text), " "); got != tc.negated {
				t.Errorf("negated = %q, want %q", got, tc.negated)
			}
		})
	}
}

func TestIsStatusQuestion(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"¿Cómo va la búsqueda cfo-2026?", true},
		{"ya termino la evaluacion de coo-andina?", true},
		{"¿En qué quedó la evaluación que lanzamos ayer?", true},
		{"¿Ya se envió el informe de c-004 al cliente?", true},
		{"¿Qué onda con el debate de c-003? ¿Ya llegaron a algo?", true},
		{"¿Cómo vienen las banderas de la entrevista de c-005?", true},
		// Not a question: a request that names a status word.
		{"Ya terminé de subir los CV, lanza la evaluación", false},
		{"Compara a c-001 con c-004", false},
		{"¿Qué es una terna?", false},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			if got := IsStatusQuestion(tc.text); got != tc.want {
				t.Errorf("IsStatusQuestion = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParaphraseFeatures(t *testing.T) {
	r := defaultRegistry(t)
	tests := []struct {
		text string
		want []string // features that must be present
		not  []string // and absent
	}{
		{"Contrástame a las dos finalistas", []string{"p:compare", "p:evaluation"}, []string{"p:send"}},
		{"Reenvía el informe de c-007", []string{"p:send", "w:reenv", "w:#cand"}, []string{"w:c-007"}},
		{"Haz que los agentes debatan", []string{"p:committee", "imperative"}, nil},
		{"hazle llegar a maria@cliente.cl los informes de la terna", []string{"p:send", "p:evaluation"}, nil},
		{"¿Qué me falta para quedar en la vacante de directora de personas?", []string{"p:career", "question"}, nil},
		{"Fíjate si c-004 fue evasivo al responder", []string{"p:answers"}, nil},
		// Negated: the group and the keyword are marked, never free.
		{"Ya no compares a nadie", []string{"¬k:search-analyst", "neg", "¬w:compa"}, []string{"k:search-analyst:compar*", "w:compa"}},
		{"No hace falta debatir esto", []string{"¬p:committee", "¬k:debate"}, []string{"p:committee", "k:debate:debatir"}},
		{"¿Cómo va la búsqueda cfo-2026?", []string{"status", "k:search-analyst:busqueda*", "h:search-analyst", "w:#id"}, nil},
		{"¿Quién eres?", []string{"meta", "len:short"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			f := r.featuresOf(tc.text)
			for _, w := range tc.want {
				if _, ok := f.values[w]; !ok {
					t.Errorf("missing feature %q in %v", w, sortedNames(f.values))
				}
			}
			for _, n := range tc.not {
				if _, ok := f.values[n]; ok {
					t.Errorf("unexpected feature %q", n)
				}
			}
		})
	}
}

func TestFeatureHelpers(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"comparame", "compa"}, {"compara", "compa"}, {"envia", "envia"}, {"c-001", "#cand"}, {"cfo-2026", "#id"}, {"int-7", "#id"}, {"ñu", "ñu"},
	} {
		if got := lexeme(tc.in); got != tc.want {
			t.Errorf("lexeme(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := ngrams("envia"); !slices.Contains(got, "n: en") || !slices.Contains(got, "n:ia ") || !slices.Contains(got, "n:envia") || len(got) != 5+4+3 {
		t.Errorf("ngrams(envia) = %v", got)
	}
	if got := ngrams("c-001"); got != nil {
		t.Errorf("ngrams of an id = %v, want none", got)
	}
	// A long message is bounded.
	toks, _ := tokenize(strings.Repeat("palabra ", 1000))
	if len(toks) != maxFeatureWords {
		t.Errorf("tokenize kept %d words, want %d", len(toks), maxFeatureWords)
	}
}

// TestLexiconFromTrain keeps the paraphrase groups and status cues honest:
// every entry occurs in the corpus's train split, so nothing was taken
// from the held-out one.
func TestLexiconFromTrain(t *testing.T) {
	var toks [][]token
	for _, l := range loadSplit(t, "train") {
		tk, _ := tokenize(l.Text)
		toks = append(toks, tk)
	}
	in := func(seq []string) bool {
		return slices.ContainsFunc(toks, func(tk []token) bool { _, ok := find(tk, seq); return ok })
	}
	for name, seqs := range paraphrases {
		for _, seq := range seqs {
			if !in(seq) {
				t.Errorf("paraphrase %s: %v is not in the train split", name, seq)
			}
		}
	}
	for _, seq := range statusCues {
		if !in(seq) {
			t.Errorf("status cue %v is not in the train split", seq)
		}
	}
}
