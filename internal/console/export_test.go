package console

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/veredicto/veredicto"
)

func TestExport(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{API: "https://abc.execute-api.eu-west-1.amazonaws.com", Events: "https://xyz.lambda-url.eu-west-1.on.aws/"}
	if err := Export(dir, cfg); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"index.html":     `src="config.js"`,
		"assets/app.js":  "VEREDICTO_CONFIG",
		"assets/app.css": "@media",
		"config.js":      `"api":"https://abc.execute-api.eu-west-1.amazonaws.com"`,
		"labels.js":      `window.VEREDICTO_LABELS = {`,
	} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s: %v, want it to contain %q", name, err, want)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*", ".export-*"))
	if more, _ := filepath.Glob(filepath.Join(dir, ".export-*")); len(left)+len(more) > 0 {
		t.Errorf("temporary files left: %v %v", left, more)
	}
}

func TestExportRejectsABadConfig(t *testing.T) {
	for _, tt := range []struct {
		cfg   Config
		field string
	}{
		{Config{Events: "https://s.example/"}, "api"},
		{Config{API: "https://a.example", Events: ""}, "events"},
		{Config{API: "http://a.example", Events: "https://s.example/"}, "api"},
		{Config{API: "javascript:alert(1)", Events: "https://s.example/"}, "api"},
		{Config{API: "https://a.example", Events: "https://s.example/?x=1"}, "events"},
	} {
		err := Export(t.TempDir(), tt.cfg)
		var inv *veredicto.InvalidInputError
		if !errors.As(err, &inv) || inv.Field != tt.field {
			t.Errorf("%+v: %v, want an InvalidInputError on %s", tt.cfg, err, tt.field)
		}
	}
	if err := (Config{API: "http://127.0.0.1:8080", Events: "http://localhost:8080/api/events"}).Validate(); err != nil {
		t.Errorf("loopback http: %v", err)
	}
}
