package console

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, path string, header http.Header) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func TestHandlerServesThePage(t *testing.T) {
	h := Handler(LocalConfig)
	for _, tt := range []struct {
		path, ct, want string
	}{
		{"/", "text/html; charset=utf-8", `<script src="assets/app.js" defer></script>`},
		{"/assets/app.js", "text/javascript; charset=utf-8", "EventSource"},
		{"/assets/app.css", "text/css; charset=utf-8", "@media"},
		{"/config.js", "text/javascript; charset=utf-8", `window.VEREDICTO_CONFIG = {"api":"","events":"/api/events"};`},
		{"/labels.js", "text/javascript; charset=utf-8", `"qa_aprobado":"Aprobado por la auditoría QA"`},
	} {
		resp := get(t, h, "GET", tt.path, nil)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != tt.ct || !strings.Contains(string(body), tt.want) {
			t.Errorf("GET %s: %d %s, want 200 %s containing %q", tt.path, resp.StatusCode, resp.Header.Get("Content-Type"), tt.ct, tt.want)
		}
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("GET %s: CSP %q must allow only the page's own scripts and forbid framing", tt.path, csp)
		}
		// Revalidation answers 304 without a body.
		again := get(t, h, "GET", tt.path, http.Header{"If-None-Match": {resp.Header.Get("ETag")}})
		if again.StatusCode != http.StatusNotModified {
			t.Errorf("GET %s with its ETag: %d, want 304", tt.path, again.StatusCode)
		}
	}
	for _, tt := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/nope", 404}, {"GET", "/assets/", 404}, {"GET", "/assets/../console.go", 404},
		{"POST", "/", 405}, {"DELETE", "/assets/app.js", 405}, {"HEAD", "/", 200},
	} {
		if resp := get(t, h, tt.method, tt.path, nil); resp.StatusCode != tt.status {
			t.Errorf("%s %s: %d, want %d", tt.method, tt.path, resp.StatusCode, tt.status)
		}
	}
}

func TestHandlerCompressesWhenAsked(t *testing.T) {
	h := Handler(LocalConfig)
	plain := get(t, h, "GET", "/assets/app.js", nil)
	want, _ := io.ReadAll(plain.Body)
	resp := get(t, h, "GET", "/assets/app.js", http.Header{"Accept-Encoding": {"gzip, br"}})
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding %q, want gzip", resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(zr)
	if !bytes.Equal(got, want) {
		t.Error("the gzipped body is not the file")
	}
}

func TestConfigForAWS(t *testing.T) {
	cfg := Config{API: "https://abc.execute-api.eu-west-1.amazonaws.com/", Events: "https://xyz.lambda-url.eu-west-1.on.aws/"}
	if got, want := string(ConfigJS(cfg)), `window.VEREDICTO_CONFIG = {"api":"https://abc.execute-api.eu-west-1.amazonaws.com/","events":"https://xyz.lambda-url.eu-west-1.on.aws/"};`+"\n"; got != want {
		t.Errorf("config.js %q, want %q", got, want)
	}
	csp := get(t, Handler(cfg), "GET", "/", nil).Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "connect-src 'self' https://abc.execute-api.eu-west-1.amazonaws.com https://xyz.lambda-url.eu-west-1.on.aws;") {
		t.Errorf("CSP %q must let the page reach the API and the stream", csp)
	}
	if got := origins("javascript:alert(1)", "https://a.b'; script-src */x", "data://x", "https://ok.example/x'; y"); got != " https://ok.example" {
		t.Errorf("origins of hostile URLs: %q, want only https://ok.example", got)
	}
}

// TestPageNeverLogs: the page writes nothing to the browser's console (it
// shows reports and previews that quote personal documents), builds no
// HTML from strings except the API's rendered reports, and evaluates no
// strings as code.
func TestPageNeverLogs(t *testing.T) {
	err := fs.WalkDir(Assets(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".js") {
			return err
		}
		b, _ := fs.ReadFile(Assets(), p)
		src := string(b)
		if m := regexp.MustCompile(`console\.[a-z]+\(|\beval\(|new Function\(|document\.write`).FindString(src); m != "" {
			t.Errorf("%s calls %s", p, m)
		}
		if n := strings.Count(src, ".innerHTML ="); n != 1 || !strings.Contains(src, "box.innerHTML = html;") {
			t.Errorf("%s assigns innerHTML %d times; only the API's rendered report may be (box.innerHTML = html)", p, n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestAssetsFitTheBudget(t *testing.T) {
	total := 0
	h := Handler(LocalConfig)
	for _, p := range []string{"/", "/assets/app.js", "/assets/app.css", "/config.js"} {
		resp := get(t, h, "GET", p, http.Header{"Accept-Encoding": {"gzip"}})
		b, _ := io.ReadAll(resp.Body)
		total += len(b)
	}
	t.Logf("first render: %d bytes compressed", total)
	if total > 60<<10 { // leaves 40 KB of the 100 KB budget for headers and the first API answer
		t.Errorf("the page's files are %d bytes compressed, over 60 KiB", total)
	}
}
