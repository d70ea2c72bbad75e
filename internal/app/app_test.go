package app

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/offline"
)

func TestConfigFromEnvNamesMissingSettings(t *testing.T) {
	_, err := ConfigFromEnv(func(k string) string {
		if k == "REPORTS_BUCKET" {
			return "r"
		}
		return ""
	})
	if err == nil || !strings.Contains(err.Error(), "CONTEXT_TABLE, INPUTS_BUCKET") {
		t.Errorf("error %v, want it to name CONTEXT_TABLE and INPUTS_BUCKET", err)
	}
	env := map[string]string{"INPUTS_BUCKET": "i", "REPORTS_BUCKET": "r", "CONTEXT_TABLE": "t"}
	c, err := ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil || c.TenantClaim != "custom:tenant" || c.Model != "gpt-4o-mini" {
		t.Errorf("defaults: %+v %v", c, err)
	}
}

func TestEveryLogicalIDHasAHandler(t *testing.T) {
	a := NewLocal(t.TempDir(), offline.New())
	for _, id := range LogicalIDs() {
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

// TestFunctionMainsStartTheirOwnHandler: every functions/<folder>/main.go
// starts the handler of the logical id build.mk builds it as, through the
// entry point of its kind, so a copy-paste slip fails here and not at a
// Lambda's init.
func TestFunctionMainsStartTheirOwnHandler(t *testing.T) {
	mk, err := os.ReadFile("../../build.mk")
	if err != nil {
		t.Fatal(err)
	}
	pairs := regexp.MustCompile(`(\w+Function):(\w+)`).FindAllStringSubmatch(string(mk), -1)
	if len(pairs) == 0 {
		t.Fatal("no LogicalId:folder pairs in build.mk")
	}
	svc := NewLocal(t.TempDir(), offline.New()).Search
	for _, p := range pairs {
		id, folder := p[1], p[2]
		src, err := os.ReadFile(filepath.Join("../../functions", folder, "main.go"))
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		main := string(src)
		switch {
		case strings.Contains(main, `app.StartSearch("`+id+`")`):
			if catalog.Lambda(svc, id) == nil {
				t.Errorf("%s: StartSearch has no handler for it", id)
			}
		case strings.Contains(main, `app.StartIntake("`+id+`")`):
			if id != "TriggerFunction" && id != "ApiFunction" {
				t.Errorf("%s: StartIntake serves only TriggerFunction and ApiFunction", id)
			}
		case id == "FlagsFunction" && strings.Contains(main, "app.StartFlags()"):
		default:
			t.Errorf("functions/%s/main.go does not start %s", folder, id)
		}
	}
}

func TestAPIKeyFromSecret(t *testing.T) {
	tests := []struct{ secret, key, err string }{
		{"sk-plain\n", "sk-plain", ""},
		{`{"api_key": " sk-json "}`, "sk-json", ""},
		{`{"apiKey": "sk-x"}`, "", `without a non-empty "api_key"`},
		{`{"api_key": `, "", `without a non-empty "api_key"`},
		{"  ", "", "empty"},
	}
	for _, tt := range tests {
		key, err := apiKeyFromSecret(tt.secret)
		if key != tt.key || (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%q: key %q, err %v; want %q, %q", tt.secret, key, err, tt.key, tt.err)
		}
		if err != nil && strings.Contains(err.Error(), "sk-") {
			t.Errorf("%q: the error quotes the secret: %v", tt.secret, err)
		}
	}
}
