package app

import (
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/search/offline"
)

func TestEveryFunctionHasAHandler(t *testing.T) {
	a := NewLocal(t.TempDir(), offline.New(), nil)
	for _, id := range catalog.LogicalIDs() {
		if h, err := a.Handler(id); err != nil || h == nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	if _, err := a.Handler("Gem9Function"); err == nil || !strings.Contains(err.Error(), "Gem1Function") {
		t.Errorf("unknown id: %v, want the list of known functions", err)
	}
}

func TestChooseAnalyst(t *testing.T) {
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	a, notice, err := ChooseAnalyst("", "", get)
	if err != nil || a.Info().Provider != "offline" || !strings.Contains(notice, "offline") {
		t.Errorf("no key: %v %q %v", a.Info(), notice, err)
	}
	env["OPENAI_API_KEY"] = "k"
	a, _, err = ChooseAnalyst("", "m-1", get)
	if err != nil || a.Info().Provider != "openai" || a.Info().Model != "m-1" {
		t.Errorf("with key: %v %v", a.Info(), err)
	}
	if _, _, err := ChooseAnalyst("magic", "", get); err == nil {
		t.Error("unknown provider accepted")
	}
}

// TestChooseLLMNamesABadTimeout: the local CLI and server read
// OPENAI_TIMEOUT as Lambda does (lambdaenv.OpenAITimeout), refusing a bad
// value by name.
func TestChooseLLMNamesABadTimeout(t *testing.T) {
	for value, ok := range map[string]bool{"": true, "90s": true, "900": true, "901": false, "soon": false} {
		env := map[string]string{"OPENAI_TIMEOUT": value, "OPENAI_API_KEY": "k"}
		_, err := ChooseLLM("", "", func(k string) string { return env[k] })
		if ok && err != nil || !ok && (err == nil || !strings.Contains(err.Error(), "OPENAI_TIMEOUT")) {
			t.Errorf("OPENAI_TIMEOUT=%q: %v, want an error naming OPENAI_TIMEOUT only for a bad value", value, err)
		}
	}
}
