package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/poll"
)

// The README's command blocks, as TestREADMEWorksAsWritten reads them:
//
//   - a ```sh block is a command block; ```text, ```json and the others
//     are not run;
//   - a block whose opening fence follows a line <!-- not-run: reason -->
//     is skipped, and the reason is logged;
//   - the blocks of one section (a ## heading) run in order as one bash
//     script (set -e, pipefail), so a variable set in a block is there in
//     the next; lines that are only a comment are output examples:
//     "#   text … text" says the section's output shows each part between
//     the ellipses;
//   - "tú> message" and "¿Confirmas? [s/n]: answer" lines are what a
//     person types into the command before them: its standard input;
//   - a "veredicto serve" line is started by the test (in the background,
//     on a free port: the README reads the address from
//     DATA/serve.endpoint), waited for until it answers, and stopped at
//     the end of its section;
//   - "go build -o bin/veredicto ./cmd/veredicto" is done once, by the
//     test, from this tree.

type readmeSection struct {
	title string
	items []readmeItem
	skips []string // not-run blocks: line and reason
}

type readmeItem struct {
	line   int      // README line of the item's first command
	script string   // bash, or
	serve  []string // the arguments of a serve line
	expect []string // output fragments the section must show
}

var (
	notRunMark  = regexp.MustCompile(`^<!-- not-run: (.+) -->$`)
	serveLine   = regexp.MustCompile(`^(?:bin/)?veredicto serve\b(.*?)\s*&?\s*(?:#.*)?$`)
	inputLine   = regexp.MustCompile(`^(?:tú> |¿Confirmas\? \[s/n\]: )(.*?)\s*(?:#.*)?$`)
	buildLine   = regexp.MustCompile(`^go build -o bin/veredicto \./cmd/veredicto\s*(?:#.*)?$`)
	expectation = regexp.MustCompile(`^#\s{3,}(.+)$`)
)

// readmeSections parses README.md as the test runs it.
func readmeSections(t *testing.T, text string) []readmeSection {
	t.Helper()
	var out []readmeSection
	cur := readmeSection{title: "preamble"}
	lines := strings.Split(text, "\n")
	lastMark, lastMarkLine := "", -1
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "## "):
			out = append(out, cur)
			cur = readmeSection{title: strings.TrimPrefix(l, "## ")}
		case notRunMark.MatchString(l):
			lastMark, lastMarkLine = notRunMark.FindStringSubmatch(l)[1], i
		case strings.HasPrefix(l, "```"):
			lang := strings.TrimPrefix(l, "```")
			start := i
			var body []string
			for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
				body = append(body, lines[i])
			}
			if lang != "sh" {
				continue
			}
			if lastMarkLine == start-1 {
				cur.skips = append(cur.skips, fmt.Sprintf("README.md:%d: %s", start+1, lastMark))
				continue
			}
			// A section's scripts run as one, from serve line to serve line.
			for _, it := range blockItems(start+2, body) {
				if n := len(cur.items); n > 0 && it.serve == nil && cur.items[n-1].serve == nil {
					cur.items[n-1].script += it.script
					cur.items[n-1].expect = append(cur.items[n-1].expect, it.expect...)
					continue
				}
				cur.items = append(cur.items, it)
			}
		}
	}
	return append(out, cur)
}

// blockItems turns a block's lines (the first at README line first) into
// scripts and serve lines.
func blockItems(first int, body []string) []readmeItem {
	var items []readmeItem
	var script strings.Builder
	scriptLine := 0
	var expect []string
	flush := func() {
		if script.Len() > 0 || len(expect) > 0 {
			items = append(items, readmeItem{line: scriptLine, script: script.String(), expect: expect})
		}
		script.Reset()
		expect, scriptLine = nil, 0
	}
	for i := 0; i < len(body); i++ {
		l := body[i]
		trimmed := strings.TrimSpace(l)
		switch {
		case trimmed == "":
			continue
		case expectation.MatchString(trimmed):
			for _, part := range strings.Split(expectation.FindStringSubmatch(trimmed)[1], "…") {
				if part = strings.TrimSpace(part); len(part) >= 4 {
					expect = append(expect, part)
				}
			}
			continue
		case strings.HasPrefix(trimmed, "#"):
			continue
		case buildLine.MatchString(trimmed):
			continue
		case serveLine.MatchString(trimmed):
			flush()
			items = append(items, readmeItem{line: first + i, serve: strings.Fields(serveLine.FindStringSubmatch(trimmed)[1])})
			continue
		}
		if scriptLine == 0 {
			scriptLine = first + i
		}
		// A command continued on the next lines, then what is typed into it.
		at := first + i
		cmd := l
		for strings.HasSuffix(strings.TrimSpace(cmd), `\`) && i+1 < len(body) {
			i++
			cmd += "\n" + body[i]
		}
		var typed []string
		for i+1 < len(body) && inputLine.MatchString(strings.TrimSpace(body[i+1])) {
			i++
			typed = append(typed, inputLine.FindStringSubmatch(strings.TrimSpace(body[i]))[1])
		}
		if len(typed) > 0 {
			cmd = strings.TrimSpace(regexp.MustCompile(`\s+#.*$`).ReplaceAllString(cmd, "")) + " <<'TYPED'\n" + strings.Join(typed, "\n") + "\nTYPED"
		}
		fmt.Fprintf(&script, "README_LINE=%d; %s\n", at, cmd)
	}
	flush()
	return items
}

// TestREADMEParsesAsWritten checks the reading rules on a small README:
// sections, not-run marks, typed input, serve lines, expected output.
func TestREADMEParsesAsWritten(t *testing.T) {
	readme := "# T\n\n<!-- not-run: an AWS deploy -->\n```sh\nsam deploy\n```\n\n## Chat\n\n```sh\nbin/veredicto serve --data D &   # offline\n" +
		"bin/veredicto chat --data D\ntú> hola\n¿Confirmas? [s/n]: s\n#   Chat … en\nX=1\n```\n\n```text\nveredicto x [--y]\n```\n"
	got := readmeSections(t, readme)
	if len(got) != 2 || len(got[0].items) != 0 || len(got[0].skips) != 1 || !strings.Contains(got[0].skips[0], "an AWS deploy") {
		t.Fatalf("sections %+v", got)
	}
	items := got[1].items
	if len(items) != 2 || strings.Join(items[0].serve, " ") != "--data D" ||
		items[1].script != "README_LINE=12; bin/veredicto chat --data D <<'TYPED'\nhola\ns\nTYPED\nREADME_LINE=16; X=1\n" || strings.Join(items[1].expect, "|") != "Chat" {
		t.Errorf("items %+v", items)
	}
}

// TestREADMEWorksAsWritten runs the README's command blocks in order, as
// a newcomer would paste them into a shell at the clone's root, on a
// fresh data folder: every command must succeed and every output the
// README shows must appear. A changed README changes the test.
func TestREADMEWorksAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: runs every command of the README; make test-long runs it")
	}
	runREADME(t, "README.md")
}

// TestExampleREADMEsWorkAsWritten runs the walkthroughs of the examples'
// READMEs the same way.
func TestExampleREADMEsWorkAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: runs every command of the examples' READMEs; make test-long runs it")
	}
	runREADME(t, filepath.Join("examples", "mock-config", "README.md"))
}

// runREADME runs the command blocks of the README at path (from the
// clone's root) as TestREADMEWorksAsWritten describes.
func runREADME(t *testing.T, path string) {
	t.Helper()
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README's commands need %s", tool)
		}
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", path))
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs("../..")
	// The clone, as a newcomer has it: the tree's folders, a fresh data
	// folder, and the CLI built from this tree.
	dir := t.TempDir()
	for _, name := range []string{"examples", "events", "statemachines", "prompts", "template.yaml", "testdata"} {
		if err := os.Symlink(filepath.Join(root, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "bin", "veredicto"), "./cmd/veredicto")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	env := append(os.Environ(), "PATH="+filepath.Join(dir, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"OPENAI_API_KEY=", "VEREDICTO_TOKEN=", "VEREDICTO_SFN_ENDPOINT=", "USER=ana", "HOME="+dir, "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")

	for _, sec := range readmeSections(t, string(raw)) {
		for _, s := range sec.skips {
			t.Logf("%s: not run (%s)", sec.title, strings.Replace(s, "README.md:", path+":", 1))
		}
		if len(sec.items) == 0 {
			continue
		}
		t.Run(sec.title, func(t *testing.T) {
			output := &lockedBuffer{}
			var server *exec.Cmd
			stop := func() {
				if server == nil {
					return
				}
				server.Process.Signal(syscall.SIGTERM)
				done := make(chan error, 1)
				go func() { done <- server.Wait() }()
				select {
				case <-done:
				case <-time.After(30 * time.Second):
					server.Process.Kill()
					<-done
				}
				server = nil
			}
			defer stop()
			for _, it := range sec.items {
				if it.serve != nil {
					stop()
					server = startREADMEServe(t, dir, env, it, output)
					continue
				}
				if it.script == "" {
					continue
				}
				if strings.Contains(it.script, "aws ") {
					if _, err := exec.LookPath("aws"); err != nil {
						if os.Getenv("CI") != "" {
							t.Fatalf(path+":%d needs the AWS CLI", it.line)
						}
						t.Skipf(path+":%d needs the AWS CLI (pip install awscli); skipped outside CI", it.line)
					}
				}
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", `trap 'echo "failed at `+path+`:$README_LINE" >&2' ERR`+"\n"+it.script)
				cmd.Dir, cmd.Env = dir, env
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				err := cmd.Run()
				cancel()
				output.Write(out.Bytes())
				if testing.Verbose() {
					t.Logf(path+":%d:\n%s", it.line, out.String())
				}
				if err != nil {
					t.Fatalf(path+":%d: %v\n--- script\n%s--- output\n%s", it.line, err, it.script, tail(out.String(), 4000))
				}
				for _, want := range it.expect {
					if !strings.Contains(output.String(), want) {
						t.Errorf(path+":%d says the output shows %q; it does not:\n%s", it.line, want, tail(output.String(), 4000))
					}
				}
			}
		})
	}
}

// startREADMEServe starts a README's serve line on a free port and waits
// until it answers at the address it records under its --data.
func startREADMEServe(t *testing.T, dir string, env []string, it readmeItem, log *lockedBuffer) *exec.Cmd {
	t.Helper()
	args := []string{"serve"}
	data := ".veredicto-local"
	for i := 0; i < len(it.serve); i++ {
		switch a := it.serve[i]; {
		case a == "--addr" && i+1 < len(it.serve):
			i++ // a free port instead
		case strings.HasPrefix(a, "--addr="):
		case a == "--data" && i+1 < len(it.serve):
			data = it.serve[i+1]
			args = append(args, a)
		default:
			args = append(args, a)
		}
	}
	if !strings.Contains(strings.Join(args, " "), "--data") {
		args = append(args, "--data", data)
	}
	args = append(args, "--addr", "127.0.0.1:0")
	os.Remove(filepath.Join(dir, data, "serve.endpoint"))
	cmd := exec.Command(filepath.Join(dir, "bin", "veredicto"), args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("README.md:%d: start serve: %v", it.line, err)
	}
	poll.Until(t, 60*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join(dir, data, "serve.endpoint"))
		if err != nil {
			return false
		}
		resp, err := http.Get(strings.TrimSpace(string(b)) + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, fmt.Sprintf("README.md:%d: serve answering", it.line))
	return cmd
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
