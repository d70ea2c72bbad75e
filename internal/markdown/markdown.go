// Package markdown renders the project's reports (report.md, summary.md)
// as HTML for the web console. It knows the subset the reports are written
// in — headings, paragraphs, bullet and numbered lists, block quotes,
// pipe tables, rules, fenced code, **bold**, *italic*, `code` — and turns
// every citation ("[candidates/c-005/cv.md, jd.md]") into links to the
// cited document.
//
// A report quotes documents, and documents are written by people outside
// the firm, so the output is safe by construction: every character of the
// input is escaped, no raw HTML and no Markdown link or image is ever
// interpreted (they come out as the literal text), and the only
// attributes written are a class and the href the caller's Link function
// returns for a cited source id, escaped.
package markdown

import (
	"html"
	"regexp"
	"slices"
	"strings"
)

// Link returns the href of a cited source id (a document's path relative
// to its search, already checked to look like one). The renderer escapes
// it; "" leaves the citation as plain text.
type Link func(source string) string

// MaxInput bounds what HTML renders: a longer input is cut at this many
// bytes (reports are a few KiB; the bound keeps a hostile input cheap).
const MaxInput = 1 << 20

// HTML renders md as an HTML fragment.
func HTML(md string, link Link) string {
	if len(md) > MaxInput {
		md = md[:MaxInput]
	}
	r := renderer{link: link}
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	r.blocks(lines)
	return r.b.String()
}

type renderer struct {
	b    strings.Builder
	link Link
}

var (
	headingRe = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	bulletRe  = regexp.MustCompile(`^\s*[-*+]\s+(.*)$`)
	orderedRe = regexp.MustCompile(`^\s*\d{1,9}[.)]\s+(.*)$`)
	ruleRe    = regexp.MustCompile(`^\s*([-*_])(\s*[-*_]){2,}\s*$`)
	tableSep  = regexp.MustCompile(`^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$`)
	// sourceRe is what a cited source id looks like: a relative path with
	// an extension that starts with a letter (so "0.90" is not one), no
	// spaces.
	sourceRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]*\.[A-Za-z][A-Za-z0-9]{0,7}$`)
)

func (r *renderer) blocks(lines []string) {
	for i := 0; i < len(lines); {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			i++
		case strings.HasPrefix(trimmed, "```"):
			i = r.fence(lines, i)
		case headingRe.MatchString(trimmed):
			m := headingRe.FindStringSubmatch(trimmed)
			n := string(rune('0' + len(m[1])))
			r.b.WriteString("<h" + n + ">")
			r.inline(m[2])
			r.b.WriteString("</h" + n + ">\n")
			i++
		case ruleRe.MatchString(trimmed):
			r.b.WriteString("<hr>\n")
			i++
		case strings.HasPrefix(trimmed, ">"):
			var inner []string
			for ; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), ">"); i++ {
				t := strings.TrimPrefix(strings.TrimSpace(lines[i]), ">")
				inner = append(inner, strings.TrimPrefix(t, " "))
			}
			r.b.WriteString("<blockquote>\n")
			r.blocks(inner)
			r.b.WriteString("</blockquote>\n")
		case bulletRe.MatchString(line):
			i = r.list(lines, i, bulletRe, "ul")
		case orderedRe.MatchString(line):
			i = r.list(lines, i, orderedRe, "ol")
		case strings.HasPrefix(trimmed, "|") && i+1 < len(lines) && tableSep.MatchString(lines[i+1]):
			i = r.table(lines, i)
		default:
			var para []string
			for ; i < len(lines) && r.continuesParagraph(lines[i]); i++ {
				para = append(para, strings.TrimSpace(lines[i]))
			}
			if len(para) == 0 { // cannot happen: the first line is not a block start
				para, i = []string{trimmed}, i+1
			}
			r.b.WriteString("<p>")
			r.inline(strings.Join(para, "\n"))
			r.b.WriteString("</p>\n")
		}
	}
}

// continuesParagraph reports whether line belongs to a running paragraph:
// it is not blank and starts no other block.
func (r *renderer) continuesParagraph(line string) bool {
	t := strings.TrimSpace(line)
	return t != "" && !strings.HasPrefix(t, "```") && !headingRe.MatchString(t) && !ruleRe.MatchString(t) &&
		!strings.HasPrefix(t, ">") && !bulletRe.MatchString(line) && !orderedRe.MatchString(line) && !strings.HasPrefix(t, "|")
}

func (r *renderer) fence(lines []string, i int) int {
	r.b.WriteString("<pre><code>")
	i++
	for ; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
		r.b.WriteString(html.EscapeString(lines[i]))
		r.b.WriteString("\n")
	}
	r.b.WriteString("</code></pre>\n")
	return i + 1 // past the closing fence (or the end)
}

func (r *renderer) list(lines []string, i int, item *regexp.Regexp, tag string) int {
	r.b.WriteString("<" + tag + ">\n")
	for i < len(lines) {
		m := item.FindStringSubmatch(lines[i])
		if m == nil {
			break
		}
		text := []string{m[1]}
		// Indented lines that start no item continue it.
		for i++; i < len(lines) && strings.HasPrefix(lines[i], "  ") && strings.TrimSpace(lines[i]) != "" &&
			!bulletRe.MatchString(lines[i]) && !orderedRe.MatchString(lines[i]); i++ {
			text = append(text, strings.TrimSpace(lines[i]))
		}
		r.b.WriteString("<li>")
		r.inline(strings.Join(text, "\n"))
		r.b.WriteString("</li>\n")
	}
	r.b.WriteString("</" + tag + ">\n")
	return i
}

func (r *renderer) table(lines []string, i int) int {
	r.b.WriteString("<table>\n<thead><tr>")
	for _, c := range cells(lines[i]) {
		r.b.WriteString("<th>")
		r.inline(c)
		r.b.WriteString("</th>")
	}
	r.b.WriteString("</tr></thead>\n<tbody>\n")
	for i += 2; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
		r.b.WriteString("<tr>")
		for _, c := range cells(lines[i]) {
			r.b.WriteString("<td>")
			// A cell that lists sources ("Fuentes") links them too.
			if !r.sources(c, false) {
				r.inline(c)
			}
			r.b.WriteString("</td>")
		}
		r.b.WriteString("</tr>\n")
	}
	r.b.WriteString("</tbody>\n</table>\n")
	return i
}

// cells splits a table row on unescaped pipes.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, `\|`) {
		row = row[:len(row)-1]
	}
	var out []string
	var cur strings.Builder
	for j := 0; j < len(row); j++ {
		switch {
		case row[j] == '\\' && j+1 < len(row) && row[j+1] == '|':
			cur.WriteByte('|')
			j++
		case row[j] == '|':
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(row[j])
		}
	}
	return append(out, strings.TrimSpace(cur.String()))
}

// inline renders a span: `code`, **bold**, *italic*, citations, line
// breaks kept; everything else is escaped text. Emphasis nests properly:
// a marker closes only the innermost open one (else it is text), and
// what is still open at the end is closed, so the output is well formed.
func (r *renderer) inline(s string) {
	text := func(t string) { r.b.WriteString(html.EscapeString(t)) }
	var open []string // "strong", "em": innermost last
	top := func() string {
		if len(open) == 0 {
			return ""
		}
		return open[len(open)-1]
	}
	for len(s) > 0 {
		j := strings.IndexAny(s, "`*[\\\n")
		if j < 0 {
			text(s)
			break
		}
		text(s[:j])
		s = s[j:]
		switch {
		case s[0] == '\n':
			r.b.WriteString("\n")
			s = s[1:]
		case s[0] == '\\' && len(s) > 1 && strings.ContainsRune("\\`*_[]|#>-", rune(s[1])):
			text(s[1:2])
			s = s[2:]
		case s[0] == '`':
			end := strings.IndexByte(s[1:], '`')
			if end < 0 {
				text("`")
				s = s[1:]
				continue
			}
			r.b.WriteString("<code>")
			text(s[1 : 1+end])
			r.b.WriteString("</code>")
			s = s[2+end:]
		case strings.HasPrefix(s, "**"):
			switch {
			case top() == "strong":
				r.b.WriteString("</strong>")
				open = open[:len(open)-1]
			case !slices.Contains(open, "strong") && strings.Contains(s[2:], "**"):
				r.b.WriteString("<strong>")
				open = append(open, "strong")
			default:
				text("**")
			}
			s = s[2:]
		case s[0] == '*':
			switch {
			case top() == "em":
				r.b.WriteString("</em>")
				open = open[:len(open)-1]
			case !slices.Contains(open, "em") && len(s) > 1 && s[1] != ' ' && strings.Contains(strings.ReplaceAll(s[1:], "**", ""), "*"):
				r.b.WriteString("<em>")
				open = append(open, "em")
			default:
				text("*")
			}
			s = s[1:]
		case s[0] == '[':
			end := strings.IndexByte(s, ']')
			if end < 0 || !r.sources(s[1:end], true) {
				text("[")
				s = s[1:]
				continue
			}
			s = s[end+1:]
		default:
			text(s[:1])
			s = s[1:]
		}
	}
	for i := len(open) - 1; i >= 0; i-- {
		r.b.WriteString("</" + open[i] + ">")
	}
}

// sources writes a list of source ids ("a.md, b/c.md"), in brackets when
// bracketed, each id as a link, when every item looks like a source id;
// otherwise it writes nothing and says false.
func (r *renderer) sources(inner string, bracketed bool) bool {
	items := strings.Split(inner, ",")
	for i, it := range items {
		items[i] = strings.TrimSpace(it)
		if !sourceRe.MatchString(items[i]) || strings.Contains(items[i], "..") {
			return false
		}
	}
	open, closing := `<span class="cites">`, "</span>"
	if bracketed {
		open, closing = `<span class="cites">[`, "]</span>"
	}
	r.b.WriteString(open)
	for i, it := range items {
		if i > 0 {
			r.b.WriteString(", ")
		}
		href := ""
		if r.link != nil {
			href = r.link(it)
		}
		if href == "" {
			r.b.WriteString(html.EscapeString(it))
			continue
		}
		r.b.WriteString(`<a class="cite" href="` + html.EscapeString(href) + `">` + html.EscapeString(it) + `</a>`)
	}
	r.b.WriteString(closing)
	return true
}
