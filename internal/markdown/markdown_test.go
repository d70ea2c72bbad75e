package markdown

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func link(src string) string { return "#/fuente/s1/" + url.PathEscape(src) }

func TestHTML(t *testing.T) {
	for _, tt := range []struct {
		name, md, want string
	}{
		{"heading", "# Evaluación: c-005\n", "<h1>Evaluación: c-005</h1>\n"},
		{"heading level 3 with closing hashes", "### Riesgos ###", "<h3>Riesgos</h3>\n"},
		{"paragraph joins lines", "uno\ndos", "<p>uno\ndos</p>\n"},
		{"bold and code", "Búsqueda `demo` es **SI**.", "<p>Búsqueda <code>demo</code> es <strong>SI</strong>.</p>\n"},
		{"italic", "un *matiz* aquí", "<p>un <em>matiz</em> aquí</p>\n"},
		{"lone star stays text", "5 * 3 = 15", "<p>5 * 3 = 15</p>\n"},
		{"unclosed bold stays text", "**abierto", "<p>**abierto</p>\n"},
		{"rule", "---", "<hr>\n"},
		{"quote", "> ⚠️ Línea base offline", "<blockquote>\n<p>⚠️ Línea base offline</p>\n</blockquote>\n"},
		{"bullets", "- uno\n- dos", "<ul>\n<li>uno</li>\n<li>dos</li>\n</ul>\n"},
		{"ordered", "1. uno\n2. dos", "<ol>\n<li>uno</li>\n<li>dos</li>\n</ol>\n"},
		{"citation", "- logro [candidates/c-005/cv.md, jd.md]",
			`<ul>` + "\n" + `<li>logro <span class="cites">[<a class="cite" href="#/fuente/s1/candidates%2Fc-005%2Fcv.md">candidates/c-005/cv.md</a>, <a class="cite" href="#/fuente/s1/jd.md">jd.md</a>]</span></li>` + "\n</ul>\n"},
		{"brackets that are not a citation", "[no es una cita] y [x]", "<p>[no es una cita] y [x]</p>\n"},
		{"dot-dot is never a source", "[../other/cv.md]", "<p>[../other/cv.md]</p>\n"},
		{"table", "| a | b |\n|---|---|\n| 1 | **2** |",
			"<table>\n<thead><tr><th>a</th><th>b</th></tr></thead>\n<tbody>\n<tr><td>1</td><td><strong>2</strong></td></tr>\n</tbody>\n</table>\n"},
		{"a cell listing sources links them", "| Fuentes |\n|---|\n| a/cv.md, jd.md |",
			"<table>\n<thead><tr><th>Fuentes</th></tr></thead>\n<tbody>\n<tr><td><span class=\"cites\"><a class=\"cite\" href=\"#/fuente/s1/a%2Fcv.md\">a/cv.md</a>, <a class=\"cite\" href=\"#/fuente/s1/jd.md\">jd.md</a></span></td></tr>\n</tbody>\n</table>\n"},
		{"numbers are not sources", "| c |\n|---|\n| 0.90 |\n\n[1.5] y [3.0, 2.1]", "<table>\n<thead><tr><th>c</th></tr></thead>\n<tbody>\n<tr><td>0.90</td></tr>\n</tbody>\n</table>\n<p>[1.5] y [3.0, 2.1]</p>\n"},
		{"a cell of words is text", "| a |\n|---|\n| confirma |", "<table>\n<thead><tr><th>a</th></tr></thead>\n<tbody>\n<tr><td>confirma</td></tr>\n</tbody>\n</table>\n"},
		{"escaped pipe in a cell", "| a |\n|---|\n| x \\| y |", "<table>\n<thead><tr><th>a</th></tr></thead>\n<tbody>\n<tr><td>x | y</td></tr>\n</tbody>\n</table>\n"},
		{"fence", "```\n<b>x</b>\n```", "<pre><code>&lt;b&gt;x&lt;/b&gt;\n</code></pre>\n"},
		{"backslash escape", `\*no\*`, "<p>*no*</p>\n"},
		{"nested emphasis", "**a *b* c**", "<p><strong>a <em>b</em> c</strong></p>\n"},
		{"crossed emphasis stays well formed", "*a **b* c**", "<p><em>a <strong>b* c</strong></em></p>\n"},
		{"unclosed italic inside bold", "**a *b**", "<p><strong>a *b</strong></p>\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := HTML(tt.md, link); got != tt.want {
				t.Errorf("HTML(%q)\n got %q\nwant %q", tt.md, got, tt.want)
			}
		})
	}
}

// TestHTMLNeverEmitsMarkupFromTheInput feeds hostile text through every
// block kind and checks that the only tags in the output are the
// renderer's own, and that no attribute but class and href appears.
func TestHTMLNeverEmitsMarkupFromTheInput(t *testing.T) {
	hostile := []string{
		`<script>alert(1)</script>`,
		`<img src=x onerror=alert(1)>`,
		`[click](javascript:alert(1))`,
		`![img](http://evil/x.png)`,
		`<a href="javascript:alert(1)">x</a>`,
		`"><svg onload=alert(1)>`,
		"`<b>code</b>`",
		`**<i>bold</i>**`,
		`[a.md" onmouseover="x.md]`,
		`&lt;already escaped&gt; & <`,
	}
	var md strings.Builder
	for _, h := range hostile {
		for _, f := range []string{"# %s", "%s", "- %s", "1. %s", "> %s", "| %s | %s |\n|---|---|\n| %s | %s |"} {
			md.WriteString(strings.ReplaceAll(f, "%s", h) + "\n\n")
		}
	}
	out := HTML(md.String(), link)
	allowed := map[string]bool{"h1": true, "p": true, "ul": true, "ol": true, "li": true, "blockquote": true, "table": true,
		"thead": true, "tbody": true, "tr": true, "th": true, "td": true, "code": true, "strong": true, "em": true, "span": true, "a": true, "hr": true, "pre": true}
	for _, m := range regexp.MustCompile(`<(/?)([a-zA-Z0-9]+)([^>]*)>`).FindAllStringSubmatch(out, -1) {
		if !allowed[strings.ToLower(m[2])] {
			t.Errorf("tag %q comes from the input: %s", m[2], m[0])
		}
		attrs := regexp.MustCompile(`\s([a-zA-Z-]+)=`).FindAllStringSubmatch(m[3], -1)
		for _, a := range attrs {
			if a[1] != "class" && a[1] != "href" {
				t.Errorf("attribute %q comes from the input: %s", a[1], m[0])
			}
		}
	}
	// Event handlers and script may appear as escaped text, never as markup.
	for _, bad := range []string{"<script", "<img", "<svg", `"><`} {
		if strings.Contains(out, bad) {
			t.Errorf("output holds %q", bad)
		}
	}
	// "javascript:" may appear as text, never inside an href.
	if regexp.MustCompile(`href="[^"]*javascript:`).MatchString(out) {
		t.Error("an href carries javascript:")
	}
}

func TestHTMLLinkEmptyLeavesCitationAsText(t *testing.T) {
	got := HTML("x [cv.md]", func(string) string { return "" })
	if want := "<p>x <span class=\"cites\">[cv.md]</span></p>\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestHTMLRendersTheExampleReport renders a report written by the project
// (testdata/report.md, from the example search) and checks its structure
// and that every citation became a link.
func TestHTMLRendersTheExampleReport(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("testdata", "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := HTML(string(md), link)
	for _, want := range []string{"<h1>Evaluación de candidato: c-005", "<h2>Decisión: ESCALADO A CONSULTOR SENIOR", "<table>", "<th>Etapa</th>",
		`<a class="cite" href="#/fuente/s1/candidates%2Fc-005%2Fcv.md">candidates/c-005/cv.md</a>`, "<blockquote>"} {
		if !strings.Contains(out, want) {
			t.Errorf("rendered report lacks %q", want)
		}
	}
	cites := strings.Count(string(md), "[candidates/")
	if links := strings.Count(out, `<a class="cite" href="#/fuente/s1/candidates`); links < cites {
		t.Errorf("%d citation links for %d cited candidate documents", links, cites)
	}
	if strings.Contains(out, "**") {
		t.Error("a bold marker was left unrendered")
	}
}

func TestHTMLBoundsItsInput(t *testing.T) {
	out := HTML(strings.Repeat("a", MaxInput+100), nil)
	if n := strings.Count(out, "a"); n != MaxInput {
		t.Errorf("rendered %d bytes of text, want the bound %d", n, MaxInput)
	}
}

func BenchmarkHTMLReport(b *testing.B) {
	md, err := os.ReadFile(filepath.Join("testdata", "report.md"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(md)))
	for b.Loop() {
		HTML(string(md), link)
	}
}

// FuzzHTML: whatever the input, the output's tags are the renderer's own,
// balanced and properly nested, and no attribute but class and href
// appears.
func FuzzHTML(f *testing.F) {
	for _, s := range []string{"# t\n\n- a [cv.md]\n\n| a | b |\n|---|---|\n| **x** | *y* |", "**a *b* c**", "*a **b* c**", "> q\n> - l", "```\n<b>\n", "[a.md, b/c.md] `x` \\*"} {
		f.Add(s)
	}
	tag := regexp.MustCompile(`<(/?)([a-zA-Z0-9]+)([^>]*)>`)
	attr := regexp.MustCompile(`\s([a-zA-Z-]+)=`)
	f.Fuzz(func(t *testing.T, md string) {
		out := HTML(md, link)
		var stack []string
		for _, m := range tag.FindAllStringSubmatch(out, -1) {
			name := m[2]
			for _, a := range attr.FindAllStringSubmatch(m[3], -1) {
				if a[1] != "class" && a[1] != "href" {
					t.Fatalf("attribute %q in %q from %q", a[1], m[0], md)
				}
			}
			switch {
			case name == "hr":
			case m[1] == "":
				stack = append(stack, name)
			case len(stack) == 0 || stack[len(stack)-1] != name:
				t.Fatalf("</%s> closes %v in %q from %q", name, stack, out, md)
			default:
				stack = stack[:len(stack)-1]
			}
		}
		if len(stack) != 0 {
			t.Fatalf("unclosed %v in %q from %q", stack, out, md)
		}
	})
}
