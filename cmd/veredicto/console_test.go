package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConsoleExport(t *testing.T) {
	out := filepath.Join(t.TempDir(), "site")
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"console", "export", "--api", "https://a.example", "--events", "https://s.example/", "--out", out}, exitOK, "console written to " + out},
		{[]string{"console", "export", "--api", "https://a.example", "--out", out}, exitUsage, "events: is required"},
		{[]string{"console", "export", "--api", "ftp://a.example", "--events", "https://s.example/", "--out", out}, exitUsage, "api: \"ftp://a.example\" is not an absolute https URL"},
		{[]string{"console", "export", "--api", "https://a.example", "--events", "https://s.example/"}, exitUsage, "--out is required"},
		{[]string{"console"}, exitUsage, "the subcommand is export"},
		{[]string{"console", "-h"}, exitOK, "Usage: veredicto console export"},
	} {
		var stdout, stderr bytes.Buffer
		m := &Main{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}
		code := m.Run(context.Background(), tt.args)
		if code != tt.code || !strings.Contains(stdout.String()+stderr.String(), tt.want) {
			t.Errorf("%v: exit %d, %q %q; want %d containing %q", tt.args, code, stdout.String(), stderr.String(), tt.code, tt.want)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "config.js"))
	if err != nil || !strings.Contains(string(b), `"events":"https://s.example/"`) {
		t.Errorf("config.js: %v %s", err, b)
	}
}
