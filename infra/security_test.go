package infra

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSecurityThreatTableNamesRealTests: every row of docs/SECURITY.md's
// threat table names at least one test, and every test it names exists,
// so the table cannot claim a defence nobody checks.
func TestSecurityThreatTableNamesRealTests(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "SECURITY.md"))
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	funcRE := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)\w+)\(`)
	err = filepath.WalkDir("..", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && p != ".." {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, "_test.go") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, m := range funcRE.FindAllSubmatch(b, -1) {
				defined[string(m[1])] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "## Threat table")
	if !ok {
		t.Fatal("docs/SECURITY.md has no threat table")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	nameRE := regexp.MustCompile("`((?:Test|Fuzz)\\w+)`")
	rows := 0
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| asset") {
			continue
		}
		rows++
		cells := strings.Split(line, "|")
		tests := nameRE.FindAllStringSubmatch(cells[len(cells)-2], -1)
		if len(tests) == 0 {
			t.Errorf("row %q names no test", strings.TrimSpace(cells[1]))
		}
		for _, m := range tests {
			if !defined[m[1]] {
				t.Errorf("row %q names %s, which no test file defines", strings.TrimSpace(cells[1]), m[1])
			}
		}
	}
	if rows < 10 {
		t.Errorf("the threat table has %d rows", rows)
	}
}
