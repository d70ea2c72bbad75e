package main

import (
	"strings"
	"testing"
)

// stream is go test -json's output, abridged, for a module m: a package
// that passes with two tests skipped for one reason and one for another,
// one whose test fails, one that panics, one that does not build and one
// without test files.
const stream = `{"Action":"start","Package":"m/a"}
{"Action":"run","Package":"m/a","Test":"TestOK"}
{"Action":"output","Package":"m/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"m/a","Test":"TestOK","Output":"    a_test.go:9: chatty but passing\n"}
{"Action":"pass","Package":"m/a","Test":"TestOK","Elapsed":0.1}
{"Action":"output","Package":"m/a","Test":"TestSlow","Output":"=== RUN   TestSlow\n"}
{"Action":"output","Package":"m/a","Test":"TestSlow","Output":"    a_test.go:12: slow: builds the CLI; make test-long runs it\n"}
{"Action":"output","Package":"m/a","Test":"TestSlow","Output":"--- SKIP: TestSlow (0.00s)\n"}
{"Action":"skip","Package":"m/a","Test":"TestSlow","Elapsed":0}
{"Action":"output","Package":"m/a","Test":"TestBrowser","Output":"=== RUN   TestBrowser\n"}
{"Action":"output","Package":"m/a","Test":"TestBrowser","Output":"    browsertest.go:61: chromium is not installed\n"}
{"Action":"output","Package":"m/a","Test":"TestBrowser","Output":"--- SKIP: TestBrowser (0.00s)\n"}
{"Action":"skip","Package":"m/a","Test":"TestBrowser","Elapsed":0}
{"Action":"output","Package":"m/a","Output":"PASS\n"}
{"Action":"output","Package":"m/a","Output":"ok  \tm/a\t1.234s\n"}
{"Action":"pass","Package":"m/a","Elapsed":1.234}
{"Action":"output","Package":"m/b","Test":"TestBroken","Output":"=== RUN   TestBroken\n"}
{"Action":"output","Package":"m/b","Test":"TestBroken","Output":"    b_test.go:5: got 1, want 2\n"}
{"Action":"output","Package":"m/b","Test":"TestBroken","Output":"--- FAIL: TestBroken (0.00s)\n"}
{"Action":"fail","Package":"m/b","Test":"TestBroken","Elapsed":0}
{"Action":"output","Package":"m/b","Test":"TestBrowserToo","Output":"    browsertest.go:61: chromium is not installed\n"}
{"Action":"skip","Package":"m/b","Test":"TestBrowserToo","Elapsed":0}
{"Action":"output","Package":"m/b","Output":"FAIL\n"}
{"Action":"output","Package":"m/b","Output":"FAIL\tm/b\t0.5s\n"}
{"Action":"fail","Package":"m/b","Elapsed":0.5}
{"Action":"output","Package":"m/c","Output":"panic: boom\n"}
{"Action":"output","Package":"m/c","Output":"exit status 2\n"}
{"Action":"fail","Package":"m/c","Elapsed":0.2}
{"ImportPath":"m/d [m/d.test]","Action":"build-output","Output":"d_test.go:3:1: syntax error\n"}
{"ImportPath":"m/d [m/d.test]","Action":"build-fail"}
{"Action":"fail","Package":"m/d","Elapsed":0,"FailedBuild":"m/d [m/d.test]"}
{"Action":"output","Package":"m/e","Output":"?   \tm/e\t[no test files]\n"}
{"Action":"skip","Package":"m/e","Elapsed":0}
`

func TestSummary(t *testing.T) {
	var out strings.Builder
	s := newSummary(&out, "m", "")
	if !s.read(strings.NewReader(stream)) {
		t.Error("read reported no failure")
	}
	s.skips()
	want := `ok    a  1.2s
=== RUN   TestBroken
    b_test.go:5: got 1, want 2
--- FAIL: TestBroken (0.00s)
FAIL  b  0.5s
FAIL  c  0.2s
panic: boom
FAIL  d  (build failed: d [m/d.test])
d_test.go:3:1: syntax error
skip  a TestSlow — slow: builds the CLI; make test-long runs it
skip  a TestBrowser; b TestBrowserToo — chromium is not installed
`
	if got := out.String(); got != want {
		t.Errorf("summary\n%s\nwant\n%s", got, want)
	}
}

func TestSummaryOfAPassingRunIsOneLinePerPackage(t *testing.T) {
	var out strings.Builder
	s := newSummary(&out, "m", "fuzz FuzzParse")
	passing := `{"Action":"output","Package":"m/a","Test":"FuzzParse","Output":"fuzz: elapsed: 3s, execs: 40000\n"}
{"Action":"pass","Package":"m/a","Test":"FuzzParse","Elapsed":3}
{"Action":"pass","Package":"m/a","Elapsed":3.5}
{"Action":"pass","Package":"m","Elapsed":0.01}
`
	if s.read(strings.NewReader(passing)) {
		t.Error("read reported a failure")
	}
	s.skips()
	if got, want := out.String(), "ok    a (fuzz FuzzParse)  3.5s\nok    . (fuzz FuzzParse)  0.0s\n"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}

func TestModulePath(t *testing.T) {
	if got := modulePath("../../go.mod"); got != "github.com/veredicto/veredicto" {
		t.Errorf("modulePath = %q", got)
	}
}

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		label string
		rest  string
		ok    bool
	}{
		{[]string{"-short", "./..."}, "", "-short ./...", true},
		{[]string{"-label", "fuzz", "-run", "^$", "./x"}, "fuzz", "-run ^$ ./x", true},
		{[]string{"-label=fuzz", "./x"}, "fuzz", "./x", true},
		{[]string{"-label"}, "", "", false},
	} {
		label, rest, ok := parseArgs(tc.args)
		if label != tc.label || strings.Join(rest, " ") != tc.rest || ok != tc.ok {
			t.Errorf("parseArgs(%q) = %q, %q, %v; want %q, %q, %v", tc.args, label, rest, ok, tc.label, tc.rest, tc.ok)
		}
	}
}
