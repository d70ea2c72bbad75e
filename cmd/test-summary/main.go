// Command test-summary runs go test and says, quietly, how it went: one
// line per package as it finishes, the whole output of every test that
// failed (and of a package that failed without a failing test: a build
// error, a panic, a timeout), and at the end one line per reason for which
// tests were skipped, naming them and then the reason. A passing test's
// output is not shown.
//
// Usage:
//
//	go run ./cmd/test-summary [-label TEXT] [go test flags] packages
//
// Everything after test-summary's own flag is passed to go test -json.
// -label is printed after each package's name (the fuzz runs of make test
// name their target with it). The exit status is go test's.
//
// make test uses it instead of a third-party summariser because it groups
// the skipped tests by their reason, so that a test group skipped for one
// cause (chromium not installed, -short) is one line that names them all,
// and because a fresh clone then needs nothing fetched to run its checks.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"
)

func main() {
	label, rest, ok := parseArgs(os.Args[1:])
	if !ok {
		fmt.Fprintln(os.Stderr, "usage: test-summary [-label TEXT] [go test flags] packages")
		os.Exit(2)
	}
	args := append([]string{"test", "-json"}, rest...)
	cmd := exec.Command("go", args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "test-summary:", err)
		os.Exit(2)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "test-summary:", err)
		os.Exit(2)
	}
	s := newSummary(os.Stdout, modulePath("go.mod"), label)
	failed := s.read(out)
	err = cmd.Wait()
	s.skips()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		os.Exit(exit.ExitCode())
	case err != nil:
		fmt.Fprintln(os.Stderr, "test-summary:", err)
		os.Exit(2)
	case failed:
		os.Exit(1)
	}
}

// parseArgs takes test-summary's own flag (-label TEXT or -label=TEXT)
// from the front of args; the rest is go test's.
func parseArgs(args []string) (label string, rest []string, ok bool) {
	if len(args) > 0 {
		if v, found := strings.CutPrefix(args[0], "-label="); found {
			return v, args[1:], true
		}
		if args[0] == "-label" {
			if len(args) < 2 {
				return "", nil, false
			}
			return args[1], args[2:], true
		}
	}
	return "", args, true
}

// modulePath is the module named in the go.mod file at path, or "".
func modulePath(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// event is one line of go test -json (cmd/test2json), with the build
// events of go test -json since Go 1.24.
type event struct {
	Time        time.Time
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	ImportPath  string // build-output
	FailedBuild string // a package's fail: the package whose build failed
}

// summary reads a go test -json stream and writes the summary to w.
type summary struct {
	w      io.Writer
	module string // trimmed from package names
	label  string

	output map[string][]string // test output by package and test ("" for the package's own)
	build  map[string][]string // build output by import path
	// skipped maps a reason to the tests skipped for it, in order.
	skipped map[string][]string
	reasons []string
}

func newSummary(w io.Writer, module, label string) *summary {
	return &summary{w: w, module: module, label: label,
		output: map[string][]string{}, build: map[string][]string{}, skipped: map[string][]string{}}
}

// read consumes the stream, printing as packages finish, and reports
// whether anything failed.
func (s *summary) read(r io.Reader) bool {
	failed := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			fmt.Fprintf(s.w, "%s\n", line) // not an event: go test's own words
			continue
		}
		if s.handle(ev) {
			failed = true
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(s.w, "test-summary: reading go test's output:", err)
		failed = true
	}
	return failed
}

// handle takes one event and reports whether it is a failure.
func (s *summary) handle(ev event) bool {
	key := ev.Package + " " + ev.Test
	switch ev.Action {
	case "build-output":
		s.build[ev.ImportPath] = append(s.build[ev.ImportPath], ev.Output)
	case "output":
		s.output[key] = append(s.output[key], ev.Output)
	case "skip":
		if ev.Test != "" {
			reason := skipReason(s.output[key])
			if _, ok := s.skipped[reason]; !ok {
				s.reasons = append(s.reasons, reason)
			}
			s.skipped[reason] = append(s.skipped[reason], s.name(ev.Package)+" "+ev.Test)
		}
		delete(s.output, key) // a package without test files: nothing to say
	case "pass":
		if ev.Test == "" {
			fmt.Fprintf(s.w, "ok    %s%s  %s\n", s.name(ev.Package), s.labelText(), seconds(ev.Elapsed))
			s.forget(ev.Package)
		}
		delete(s.output, key)
	case "fail":
		if ev.Test != "" {
			s.print(s.output[key])
			delete(s.output, key)
			return true
		}
		if ev.FailedBuild != "" {
			// The build's errors, once: other packages may name the same build.
			fmt.Fprintf(s.w, "FAIL  %s%s  (build failed: %s)\n", s.name(ev.Package), s.labelText(), s.name(ev.FailedBuild))
			s.print(s.build[ev.FailedBuild])
			delete(s.build, ev.FailedBuild)
		} else {
			fmt.Fprintf(s.w, "FAIL  %s%s  %s\n", s.name(ev.Package), s.labelText(), seconds(ev.Elapsed))
			// the package's own output: a panic, a timeout, TestMain
			s.print(slices.DeleteFunc(s.output[key], goTestStatus))
		}
		s.forget(ev.Package)
		return true
	}
	return false
}

// forget drops what is kept of a finished package's tests.
func (s *summary) forget(pkg string) {
	for k := range s.output {
		if strings.HasPrefix(k, pkg+" ") {
			delete(s.output, k)
		}
	}
}

// goTestStatus reports whether l is one of the lines go test ends a
// package's output with, which the summary's own line replaces.
func goTestStatus(l string) bool {
	t := strings.TrimSpace(l)
	return t == "PASS" || t == "FAIL" || strings.HasPrefix(t, "exit status ") || strings.HasPrefix(l, "FAIL\t") || strings.HasPrefix(l, "ok  \t")
}

func (s *summary) print(lines []string) {
	for _, l := range lines {
		io.WriteString(s.w, l)
	}
}

// skips prints one line per reason tests were skipped for, naming them.
func (s *summary) skips() {
	for _, reason := range s.reasons {
		fmt.Fprintf(s.w, "skip  %s — %s\n", groupByPackage(s.skipped[reason]), reason)
	}
}

// groupByPackage turns "pkg TestA", "pkg TestB", "pkg2 TestC" into
// "pkg TestA TestB; pkg2 TestC".
func groupByPackage(tests []string) string {
	var (
		b    strings.Builder
		last string
	)
	for _, t := range tests {
		pkg, name, _ := strings.Cut(t, " ")
		switch {
		case pkg == last:
			b.WriteString(" ")
		case b.Len() > 0:
			b.WriteString("; ")
			fallthrough
		default:
			b.WriteString(pkg + " ")
		}
		b.WriteString(name)
		last = pkg
	}
	return b.String()
}

func (s *summary) name(pkg string) string {
	if s.module != "" {
		if pkg == s.module {
			return "."
		}
		if rest, ok := strings.CutPrefix(pkg, s.module+"/"); ok {
			return rest
		}
	}
	return pkg
}

func (s *summary) labelText() string {
	if s.label == "" {
		return ""
	}
	return " (" + s.label + ")"
}

func seconds(elapsed float64) string { return fmt.Sprintf("%.1fs", elapsed) }

// location is the file:line: prefix the testing package puts before what
// a test logs.
var location = regexp.MustCompile(`^[\w.\-]+\.go:\d+: `)

// skipReason is what a skipped test said before its --- SKIP line: the
// message of its t.Skip, on one line.
func skipReason(lines []string) string {
	var words []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		words = append(words, location.ReplaceAllString(t, ""))
	}
	if len(words) == 0 {
		return "no reason given"
	}
	return strings.Join(slices.Compact(words), " ")
}
