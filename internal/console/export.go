package console

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	"github.com/veredicto/veredicto"
)

// Export writes the console as a static site under dir — index.html,
// assets/…, config.js for cfg and labels.js — ready to upload to the stack's console
// bucket. Each file is written to a temporary name and renamed, so an
// interrupted export never leaves a half-written file behind.
func Export(dir string, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	files := map[string][]byte{"config.js": ConfigJS(cfg), "labels.js": LabelsJS()}
	err := fs.WalkDir(Assets(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(Assets(), p)
		if err != nil {
			return err
		}
		name := filepath.Join("assets", filepath.FromSlash(p))
		if p == "index.html" {
			name = p
		}
		files[name] = b
		return nil
	})
	if err != nil {
		return fmt.Errorf("read console assets: %w", err)
	}
	for name, b := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("export console: %w", err)
		}
		tmp, err := os.CreateTemp(filepath.Dir(path), ".export-*")
		if err != nil {
			return fmt.Errorf("export console: %w", err)
		}
		_, werr := tmp.Write(b)
		cerr := tmp.Close()
		if werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = os.Chmod(tmp.Name(), 0o644)
		}
		if werr == nil {
			werr = os.Rename(tmp.Name(), path)
		}
		if werr != nil {
			os.Remove(tmp.Name())
			return fmt.Errorf("export console %s: %w", path, werr)
		}
	}
	return nil
}

// Validate checks a static site's configuration: both URLs absolute
// https (http only for a loopback host, to try the export locally).
func (cfg Config) Validate() error {
	for _, f := range []struct{ name, v string }{{"api", cfg.API}, {"events", cfg.Events}} {
		u, err := url.Parse(f.v)
		switch {
		case f.v == "":
			return &veredicto.InvalidInputError{File: "console config", Field: f.name, Problem: "is required (an absolute https URL)"}
		case err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && loopback(u.Hostname()))):
			return &veredicto.InvalidInputError{File: "console config", Field: f.name, Problem: fmt.Sprintf("%q is not an absolute https URL", f.v)}
		case u.RawQuery != "" || u.Fragment != "":
			return &veredicto.InvalidInputError{File: "console config", Field: f.name, Problem: fmt.Sprintf("%q must have no query or fragment", f.v)}
		}
	}
	return nil
}

func loopback(host string) bool { return host == "localhost" || host == "127.0.0.1" || host == "::1" }
