package debateapp

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/veredicto/veredicto/internal/blob/file"
)

// A debate's knowledge names search folders (inputs bucket) and a
// candidate's reports (reports bucket): each prefix is read where it lives.
func TestDebateKnowledgeReadsEachPrefixFromItsBucket(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("inputs/searches/acme/s1/jd.md", "vacante")
	write("reports/reports/acme/s1/c-005/report.md", "informe")
	k := Knowledge{Inputs: file.NewDir(filepath.Join(dir, "inputs")), Reports: file.NewDir(filepath.Join(dir, "reports"))}
	ctx := context.Background()
	for prefix, want := range map[string]string{"searches/acme/s1/": "vacante", "reports/acme/s1/c-005/": "informe"} {
		keys, err := k.List(ctx, prefix)
		if err != nil || len(keys) != 1 {
			t.Fatalf("List(%s) = %v, %v; want one key", prefix, keys, err)
		}
		b, err := k.Get(ctx, keys[0])
		if err != nil || string(b) != want {
			t.Errorf("Get(%s) = %q, %v; want %q", keys[0], b, err, want)
		}
	}
}
