package search

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckQuotes(t *testing.T) {
	texts := map[string]string{
		"candidates/c/cv.md":        "### CFO — Alimentos Ñuble\n- Lideré la **refinanciación** de 30 MM USD\n  de deuda a 5 años.",
		"candidates/c/interview.md": "Sobre SAP: \"Soy muy proactivo, así que lideré la implementación de SAP en 12 meses\".",
	}
	tests := []struct {
		name    string
		claim   Claim
		wantErr bool
	}{
		{"exact quote", Claim{Text: `Dice: "lideré la refinanciación de 30 MM USD"`, Sources: []string{"candidates/c/cv.md"}}, false},
		{"accents, case, markdown and line breaks normalised", Claim{Text: "«LIDERE LA REFINANCIACION de 30 MM USD de deuda a 5 anos»", Sources: []string{"candidates/c/cv.md"}}, false},
		{"elision", Claim{Text: "“Soy muy proactivo […] lideré la implementación de SAP”", Sources: []string{"candidates/c/interview.md"}}, false},
		{"quote from the second cited source", Claim{Text: "«implementación de SAP en 12 meses»", Sources: []string{"candidates/c/cv.md", "candidates/c/interview.md"}}, false},
		{"short quoted term not checked", Claim{Text: "perfil «muy estratégico»", Sources: []string{"candidates/c/cv.md"}}, false},
		{"no quotation", Claim{Text: "Refinanció deuda por 30 MM USD", Sources: []string{"candidates/c/cv.md"}}, false},
		{"source without known text not evidence either way", Claim{Text: "«redujo costos en 40% en un año»", Sources: []string{"jd.md"}}, false},
		{"invented figure", Claim{Text: "«lideré la refinanciación de 50 MM USD»", Sources: []string{"candidates/c/cv.md"}}, true},
		{"quote from a source not cited", Claim{Text: "«implementación de SAP en 12 meses»", Sources: []string{"candidates/c/cv.md"}}, true},
		{"partial word does not match", Claim{Text: "«refinanciación de 30 MM US»", Sources: []string{"candidates/c/cv.md"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ans := Answer[Gem1Content]{Content: Gem1Content{Trajectory: []Claim{tt.claim}}}
			err := CheckQuotes(AgentGem1, ans.Content, texts)
			if (err != nil) != tt.wantErr {
				t.Fatalf("CheckQuotes = %v, want error %v", err, tt.wantErr)
			}
			var qe *QuoteError
			if tt.wantErr && (!errors.As(err, &qe) || !strings.Contains(err.Error(), "trayectoria[0]")) {
				t.Errorf("error %v does not name the claim's location", err)
			}
			if err != nil && strings.Contains(err.Error(), "MM USD") {
				t.Errorf("error repeats the quoted text: %v", err)
			}
		})
	}
}

func TestQuotedContentSkipsAuditAndChangeLog(t *testing.T) {
	bad := Claim{Text: "«una frase que ninguna fuente contiene jamás»", Sources: []string{"candidates/c/cv.md"}}
	texts := map[string]string{"candidates/c/cv.md": "CV"}
	audit := Gem4Content{Fluff: []Claim{bad}}
	if err := CheckQuotes(AgentGem4, QuotedContent(AgentGem4, audit), texts); err != nil {
		t.Errorf("GEM4 findings checked: %v", err)
	}
	corr := CorrectionContent{Changes: []Claim{bad}}
	if err := CheckQuotes(AgentCorrection, QuotedContent(AgentCorrection, corr), texts); err != nil {
		t.Errorf("correction change log checked: %v", err)
	}
	corr.Gem2.Execution = []Claim{bad}
	if err := CheckQuotes(AgentCorrection, QuotedContent(AgentCorrection, corr), texts); err == nil {
		t.Error("a corrected GEM2 claim with an invented quotation passed")
	}
}
