package httpapi

import (
	"io"
	"log/slog"
	"net/http"
)

// A Group registers one service's routes on a Mux: the groups are the
// packages internal/httpapi/<service>api (searchapi, flagsapi, …), so that
// a Lambda that serves one group links no other service.
type Group interface {
	Register(m *Mux)
}

// New registers GET /healthz and the routes of each group on one Mux
// logging through logger (slog.Default when nil): the local server passes
// every group, each Lambda its own.
func New(logger *slog.Logger, groups ...Group) *Mux {
	m := NewMux(logger)
	m.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	for _, g := range groups {
		if g != nil {
			g.Register(m)
		}
	}
	return m
}

// Route is the group of one route: h at pattern ("POST /{$}" for the local
// server's Step Functions API, LambdaInvokeRoute for its Lambda API).
func Route(pattern string, h http.Handler) Group { return route{pattern, h} }

type route struct {
	pattern string
	h       http.Handler
}

func (r route) Register(m *Mux) { m.Handle(r.pattern, r.h) }

// Site is a handler of fixed paths (the web console's page and assets).
type Site interface {
	http.Handler
	Paths() []string
}

// SiteRoutes is the group of a site's paths, each on GET.
func SiteRoutes(s Site) Group { return siteRoutes{s} }

type siteRoutes struct{ s Site }

func (s siteRoutes) Register(m *Mux) {
	for _, p := range s.s.Paths() {
		if p == "/" {
			p = "/{$}"
		}
		m.Handle("GET "+p, s.s)
	}
}
