// Package console is the web console: one page of plain JavaScript and
// CSS, embedded in the binary, that shows a tenant's runs live, renders
// reports, and asks people for the confirmations that wait for them. It
// calls the same HTTP API as any client (/runs, /searches…,
// /api/confirmations) and follows each execution on the event stream
// (/api/events, one EventSource).
//
// `veredicto serve` mounts Handler at "/". On AWS the same files are a
// static site (the bucket of the stack's ConsoleBucket, see
// docs/CONSOLE.md): config.js, written at deploy time, names the HTTP API
// URL and the event stream's Function URL; locally Handler writes it with
// the server's own routes.
//
// The page never logs document text to the browser's console: it logs
// nothing at all.
package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"sort"
	"strings"

	"github.com/veredicto/veredicto/internal/labels"
)

//go:embed assets
var assets embed.FS

// Assets are the console's files as they are served (index.html,
// app.js, app.css), for a static-site deployment.
func Assets() fs.FS {
	sub, _ := fs.Sub(assets, "assets")
	return sub
}

// Config is what the page reads from config.js at start.
type Config struct {
	// API is the base URL of the HTTP API ("" for the page's own origin).
	API string `json:"api"`
	// Events is the URL of the event stream ("/api/events" locally, the
	// stream Function URL on AWS).
	Events string `json:"events"`
}

// ConfigJS renders config.js for cfg.
func ConfigJS(cfg Config) []byte {
	b, _ := json.Marshal(cfg)
	return []byte("window.VEREDICTO_CONFIG = " + string(b) + ";\n")
}

// LabelsJS renders labels.js: the label table (labels.JSON) and how a
// confirmation's preview is read (labels.PreviewJSON), generated from the
// one table in Go, never kept as a second copy in the page.
func LabelsJS() []byte {
	return []byte("window.VEREDICTO_LABELS = " + string(labels.JSON()) + ";\nwindow.VEREDICTO_PREVIEW = " + string(labels.PreviewJSON()) + ";\n")
}

// LocalConfig is the configuration under `veredicto serve`: the API and
// the stream on the page's own origin.
var LocalConfig = Config{API: "", Events: "/api/events"}

// Site is the console: its files by path.
type Site struct {
	files map[string]file
	csp   string
}

// Paths lists the paths the console serves, sorted: "/" (index.html),
// "/config.js", "/labels.js" and "/assets/…".
func (s *Site) Paths() []string {
	out := make([]string, 0, len(s.files))
	for p := range s.files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Handler serves the console: "/" (index.html), "/assets/…",
// "/config.js" and "/labels.js"; anything else is a 404, any method but
// GET and HEAD a 405.
// The responses forbid inline scripts, framing and any origin but the
// page's own and those of cfg (the API and the stream).
func Handler(cfg Config) *Site {
	files := map[string]file{}
	sub := Assets()
	fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		name := "/assets/" + p
		if p == "index.html" {
			name = "/"
		}
		files[name] = newFile(b, contentType(p))
		return nil
	})
	files["/config.js"] = newFile(ConfigJS(cfg), "text/javascript; charset=utf-8")
	files["/labels.js"] = newFile(LabelsJS(), "text/javascript; charset=utf-8")
	csp := "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'" +
		origins(cfg.API, cfg.Events) + "; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	return &Site{files: files, csp: csp}
}

func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f, ok := s.files[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, r.Method+" is not allowed on "+r.URL.Path, http.StatusMethodNotAllowed)
		return
	}
	h := w.Header()
	h.Set("Content-Type", f.contentType)
	h.Set("Content-Security-Policy", s.csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("ETag", f.etag)
	h.Set("Cache-Control", "no-cache") // revalidate: a new binary serves new files
	if r.Header.Get("If-None-Match") == f.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := f.body
	if f.gzip != nil && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		h.Set("Content-Encoding", "gzip")
		body = f.gzip
	}
	h.Add("Vary", "Accept-Encoding")
	h.Set("Content-Length", fmt.Sprint(len(body)))
	if r.Method == http.MethodGet {
		w.Write(body)
	}
}

type file struct {
	body, gzip  []byte
	contentType string
	etag        string
}

func newFile(b []byte, ct string) file {
	sum := sha256.Sum256(b)
	return file{body: b, gzip: gzipped(b), contentType: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
}

func contentType(p string) string {
	switch path.Ext(p) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	}
	return "application/octet-stream"
}

// origins lists the origins of the configured URLs for connect-src.
func origins(urls ...string) string {
	var b bytes.Buffer
	for _, u := range urls {
		if i := strings.Index(u, "://"); i > 0 && (u[:i] == "https" || u[:i] == "http") {
			rest := u[i+3:]
			if j := strings.IndexByte(rest, '/'); j >= 0 {
				rest = rest[:j]
			}
			if rest != "" && !strings.ContainsAny(rest, " ;'\"") {
				b.WriteString(" " + u[:i+3] + rest)
			}
		}
	}
	return b.String()
}
