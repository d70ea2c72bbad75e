package httpapi

import (
	"log/slog"
	"net/http"
	"path"
	"slices"

	"github.com/veredicto/veredicto"
)

// Mux routes the HTTP surface: a net/http ServeMux of Go 1.22 patterns
// ("POST /searches", "GET /searches/{id}/sources/{path...}") whose unmatched
// requests answer in the API's JSON — 404 for a path no route has, 405
// with Allow for a path asked with a method its routes do not take.
type Mux struct {
	mux      *http.ServeMux
	logger   *slog.Logger
	patterns []string
}

// NewMux returns an empty Mux logging through logger (slog.Default when nil).
func NewMux(logger *slog.Logger) *Mux {
	if logger == nil {
		logger = slog.Default()
	}
	return &Mux{mux: http.NewServeMux(), logger: logger}
}

// Handle registers h for pattern.
func (m *Mux) Handle(pattern string, h http.Handler) {
	m.mux.Handle(pattern, h)
	m.patterns = append(m.patterns, pattern)
}

// HandleFunc registers f for pattern.
func (m *Mux) HandleFunc(pattern string, f func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(f))
}

// Patterns lists the registered patterns, sorted.
func (m *Mux) Patterns() []string {
	out := slices.Clone(m.patterns)
	slices.Sort(out)
	return out
}

func (m *Mux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r = withLogger(r, m.logger)
	h, pattern := m.mux.Handler(r)
	if p := r.URL.Path; p != cleanPath(p) {
		// The ServeMux would redirect to the clean path: an API names no
		// route with "..", "." or "//" in it.
		pattern = ""
	}
	if pattern != "" {
		m.mux.ServeHTTP(w, r)
		return
	}
	// No route: let the ServeMux say why and answer it in JSON: 405 with
	// Allow, else 404 (a path that is not clean, with "..", "//" or a
	// trailing slash, names no route either: an API does not redirect).
	c := &capture{header: http.Header{}}
	h.ServeHTTP(c, r)
	if c.status == http.StatusMethodNotAllowed {
		allow := c.header.Get("Allow")
		WriteError(w, r, &Error{Name: NameMethodNotAllowed, Header: http.Header{"Allow": {allow}},
			Message: r.Method + " is not allowed on " + r.URL.EscapedPath() + "; use " + allow})
		return
	}
	WriteError(w, r, &veredicto.NotFoundError{What: "route " + r.Method + " " + clipPath(r.URL.EscapedPath())})
}

// cleanPath is p without "." and ".." elements or repeated slashes,
// keeping a trailing slash (the ServeMux's canonical form).
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

func clipPath(p string) string {
	if len(p) > 200 {
		return p[:200] + "…"
	}
	return p
}

// capture records what the ServeMux's own 404/405/redirect handler would
// answer, without writing it.
type capture struct {
	header http.Header
	status int
}

func (c *capture) Header() http.Header { return c.header }
func (c *capture) WriteHeader(s int) {
	if c.status == 0 {
		c.status = s
	}
}
func (c *capture) Write(b []byte) (int, error) {
	c.WriteHeader(http.StatusOK)
	return len(b), nil
}
