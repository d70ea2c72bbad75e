// Package browsertest drives headless Chromium from Go tests (chromedp)
// for the web console's browser tests: it finds the browser, fails the
// test when it is missing in CI (CI set) and skips it elsewhere, fails
// the test on any message the page writes to the browser's console or
// any uncaught exception, and saves screenshots for people to look at.
//
// Screenshots go to $VEREDICTO_SCREENSHOTS, or out/console-screenshots/
// at the module root (ignored by git), one sub-folder per test.
package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Browser is one headless Chromium tab for a test.
type Browser struct {
	Ctx context.Context
	t   testing.TB
	dir string

	mu       sync.Mutex
	problems []string
	shots    int
}

// Path is the Chromium binary: $CHROMIUM, else the first of chromium,
// chromium-browser, google-chrome on the PATH; "" when none is there.
func Path() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// New starts Chromium for t (a window of width×height CSS pixels) and
// stops it when t ends. Without Chromium the test fails under CI and is
// skipped elsewhere.
func New(t testing.TB, width, height int) *Browser {
	t.Helper()
	bin := Path()
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium is not installed: the browser tests must run in CI (.ci/run installs it with apt-get install -y chromium)")
		}
		t.Skip("chromium is not installed (apt-get install -y chromium); the browser tests are skipped outside CI")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.NoSandbox, // root in containers
		chromedp.Flag("headless", "new"),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(width, height),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	b := &Browser{t: t, dir: ScreenshotDir(t)}
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			b.problem(fmt.Sprintf("the page wrote to the browser's console (%s); it must never log (documents are personal data)", ev.Type))
		case *runtime.EventExceptionThrown:
			msg := ev.ExceptionDetails.Text
			if ev.ExceptionDetails.Exception != nil {
				msg += " " + ev.ExceptionDetails.Exception.Description
			}
			b.problem("uncaught exception in the page: " + msg)
		}
	}))
	b.Ctx = ctx
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("start chromium %s: %v", bin, err)
	}
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, p := range b.problems {
			t.Error(p)
		}
	})
	return b
}

func (b *Browser) problem(p string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.problems) < 20 {
		b.problems = append(b.problems, p)
	}
}

// Run runs actions with a deadline, failing the test with step's name.
func (b *Browser) Run(step string, timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.Shot("failed-" + step)
		b.t.Fatalf("%s: %v", step, err)
	}
}

// Eval evaluates a JavaScript expression in the page and decodes its
// value into a T, failing the test on an error.
func Eval[T any](b *Browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// Hash moves the page to another route of its own (a same-document
// navigation, which fires no load event for Navigate to wait for).
func (b *Browser) Hash(route string) {
	b.t.Helper()
	js, _ := json.Marshal(route)
	Eval[string](b, "location.hash = "+string(js))
}

// WaitFor polls a JavaScript predicate until it is true or timeout passes,
// failing the test with step's name (and a screenshot) then. A predicate
// that throws (an element not rendered yet: the page is still on its way)
// counts as false for that poll.
func (b *Browser) WaitFor(step, predicate string, timeout time.Duration) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, timeout)
	defer cancel()
	guarded := "(() => { try { return !!(" + predicate + "); } catch (e) { return false; } })()"
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](guarded, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(timeout))); err != nil {
		b.Shot("failed-" + step)
		b.t.Fatalf("%s: waiting for %s: %v", step, predicate, err)
	}
}

// Shot saves a full-page screenshot as NN-name.png in the test's folder.
func (b *Browser) Shot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	b.mu.Lock()
	b.shots++
	n := b.shots
	b.mu.Unlock()
	path := filepath.Join(b.dir, fmt.Sprintf("%02d-%s.png", n, strings.ReplaceAll(name, " ", "-")))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Errorf("save screenshot: %v", err)
		return
	}
	b.t.Logf("screenshot %s", path)
}

// ScreenshotDir is the test's screenshot folder (created empty).
func ScreenshotDir(t testing.TB) string {
	t.Helper()
	root := os.Getenv("VEREDICTO_SCREENSHOTS")
	if root == "" {
		root = filepath.Join(moduleRoot(t), "out", "console-screenshots")
	}
	dir := filepath.Join(root, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func moduleRoot(t testing.TB) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}
