package httpapi

import (
	"fmt"
	"net/http"
	"net/url"
)

// CheckOrigin refuses an origin that is not scheme://host[:port].
func CheckOrigin(origin string) error {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
		return fmt.Errorf("%q is not an origin (scheme://host[:port])", origin)
	}
	return nil
}

// CORS lets pages of one origin call next from a browser: requests with
// that Origin get Access-Control-Allow-Origin, and their preflights
// (OPTIONS with Access-Control-Request-Method) are answered here. Any
// other origin gets no CORS header, so browsers keep its pages out. The
// server sends none at all unless an origin is configured.
func CORS(origin string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != origin {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", "GET, POST")
			h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Last-Event-ID")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}
