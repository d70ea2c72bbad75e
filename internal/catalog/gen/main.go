// Command gen writes the files derived from internal/catalog: every
// functions/<folder>/main.go and build.mk. Run it with
// `go generate ./internal/catalog`.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/veredicto/veredicto/internal/catalog"
)

func main() {
	root := flag.String("root", ".", "repository root")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	files, err := catalog.Generated()
	if err != nil {
		return err
	}
	for name, b := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
