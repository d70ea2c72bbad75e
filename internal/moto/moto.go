// Package moto starts moto_server (Python moto 5.2.1, shipped with the
// machine image and CI) on 127.0.0.1 for the tests of the adapters that
// need an AWS peer gofakes3 and dynalite do not play: SQS, and S3's Object
// Lock. One server per test, stopped by its PID when the test ends; it
// starts in well under a second. Without moto_server a test is skipped
// locally, saying so, and fails when CI is set.
package moto

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/poll"
)

// Start starts moto_server on a free loopback port and returns its
// endpoint ("http://127.0.0.1:P").
func Start(tb testing.TB) string {
	tb.Helper()
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatal("moto_server is required in CI (Python moto 5.2.1 ships with the machine image)")
		}
		tb.Skip("moto_server not found: skipping the test against moto (Python moto 5.2.1 ships with the machine image)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	logf, err := os.Create(filepath.Join(tb.TempDir(), "moto.log"))
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		logf.Close()
	})
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	var last error
	up := poll.Within(30*time.Second, func() bool {
		resp, err := http.Get(endpoint + "/moto-api/")
		if err == nil {
			resp.Body.Close()
		}
		last = err
		return err == nil
	})
	if !up {
		b, _ := os.ReadFile(logf.Name())
		tb.Fatalf("moto_server did not answer on %s: %v\n%s", endpoint, last, b)
	}
	return endpoint
}
