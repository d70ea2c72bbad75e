package prompts

import (
	"strings"
	"testing"
)

func TestDefuse(t *testing.T) {
	for n := 1; n <= 9; n++ {
		for _, c := range []string{"<", ">"} {
			run := strings.Repeat(c, n)
			text := "antes " + run + " después"
			got := Defuse(text)
			if strings.Contains(got, "<<<") || strings.Contains(got, ">>>") {
				t.Errorf("Defuse(%q) = %q still holds a mark", text, got)
			}
			if n < 3 && got != text {
				t.Errorf("Defuse(%q) = %q, want it unchanged", text, got)
			}
			if strings.ReplaceAll(got, " ", "") != strings.ReplaceAll(text, " ", "") {
				t.Errorf("Defuse(%q) = %q changed more than spacing", text, got)
			}
		}
	}
	for text, want := range map[string]string{
		"<<<>>>":          "< < <> > >",
		"x>>>>>y<<<<z":    "x> > > > >y< < < <z",
		"ñ<<ü>>é":         "ñ<<ü>>é",
		">>> fin\n<<<<<<": "> > > fin\n< < < < < <",
	} {
		if got := Defuse(text); got != want {
			t.Errorf("Defuse(%q) = %q, want %q", text, got, want)
		}
	}
}

func FuzzDefuse(f *testing.F) {
	f.Add("a>>>>>b<<<c")
	f.Fuzz(func(t *testing.T, text string) {
		got := Defuse(text)
		if strings.Contains(got, "<<<") || strings.Contains(got, ">>>") {
			t.Fatalf("Defuse(%q) = %q still holds a mark", text, got)
		}
		if strings.ReplaceAll(got, " ", "") != strings.ReplaceAll(text, " ", "") {
			t.Fatalf("Defuse(%q) = %q changed more than spacing", text, got)
		}
	})
}
