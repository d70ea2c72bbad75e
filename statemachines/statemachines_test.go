package statemachines

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestFileServesEveryDefinition: every definition of the folder is
// embedded and found by its template name, byte for byte.
func TestFileServesEveryDefinition(t *testing.T) {
	names, err := filepath.Glob("*.asl.json")
	if err != nil || len(names) == 0 {
		t.Fatalf("definitions: %v %v", names, err)
	}
	for _, name := range names {
		want, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, ref := range []string{name, "statemachines/" + name} {
			if got, ok := File(ref); !ok || !bytes.Equal(got, want) {
				t.Errorf("File(%q) does not serve %s", ref, name)
			}
		}
	}
	if _, ok := File("statemachines/../template.yaml"); ok {
		t.Error("File serves a name outside the folder")
	}
}
