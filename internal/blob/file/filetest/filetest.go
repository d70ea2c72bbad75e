// Package filetest plants, for the tests of every reader of uploaded
// files, what an upload must never make a reader return: symbolic links
// (to the server's signing key, to another tenant's document, to a file of
// the same folder, to /etc/passwd, to /dev/null, to nowhere, to a
// folder), a folder, a named pipe, a socket and a device where a document
// is expected. Each reader's test plants one of them at the key it reads
// and checks the refusal names it (file.Dir's opener).
package filetest

import (
	"errors"
	"net"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/blob/file"
)

// Texts of the secrets the links point at: a reader that returns one of
// them followed a link.
const (
	KeyText   = "SIGNING-KEY-must-never-be-served"
	OtherText = "OTHER-TENANT-must-never-be-served"
)

// Secrets are files outside the folder a reader reads.
type Secrets struct {
	// Key stands for DATA/auth/hs256.key; Other for a document of another
	// tenant; Folder for a folder holding both.
	Key, Other, Folder string
}

// NewSecrets writes the secrets under a new temporary folder.
func NewSecrets(t *testing.T) Secrets {
	t.Helper()
	dir := t.TempDir()
	s := Secrets{Key: filepath.Join(dir, "hs256.key"), Other: filepath.Join(dir, "other.md"), Folder: dir}
	for p, text := range map[string]string{s.Key: KeyText, s.Other: OtherText} {
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// Hostile is one thing planted where a reader expects a document.
type Hostile struct {
	Name string
	// Problem is what the refusal says of it (a part of the message).
	Problem string
	// AtFolder: the link is the folder holding the document, so the
	// refusal names that folder.
	AtFolder bool
	plant    func(p string, s Secrets) error
}

func link(target func(p string, s Secrets) string) func(string, Secrets) error {
	return func(p string, s Secrets) error { return os.Symlink(target(p, s), p) }
}

// All is every kind of hostile entry.
func All() []Hostile {
	return []Hostile{
		{Name: "link to the signing key", Problem: file.ProblemLink, plant: link(func(_ string, s Secrets) string { return s.Key })},
		{Name: "link to another tenant's document", Problem: file.ProblemLink, plant: link(func(_ string, s Secrets) string { return s.Other })},
		{Name: "link inside the folder", Problem: file.ProblemLink, plant: func(p string, _ Secrets) error {
			if err := os.WriteFile(p+".real", []byte("a document of the same folder"), 0o644); err != nil {
				return err
			}
			return os.Symlink(filepath.Base(p)+".real", p)
		}},
		{Name: "link to /etc/passwd", Problem: file.ProblemLink, plant: link(func(string, Secrets) string { return "/etc/passwd" })},
		{Name: "link to /dev/null", Problem: file.ProblemLink, plant: link(func(string, Secrets) string { return "/dev/null" })},
		{Name: "link to nowhere", Problem: file.ProblemLink, plant: link(func(string, Secrets) string { return "nowhere.md" })},
		{Name: "folder linked to another folder", Problem: file.ProblemLink, AtFolder: true, plant: func(p string, s Secrets) error {
			// The folder holding p is a link to s.Folder, where p's name
			// holds the signing key's text.
			if err := os.WriteFile(filepath.Join(s.Folder, filepath.Base(p)), []byte(KeyText), 0o600); err != nil {
				return err
			}
			if err := os.RemoveAll(filepath.Dir(p)); err != nil {
				return err
			}
			return os.Symlink(s.Folder, filepath.Dir(p))
		}},
		{Name: "folder", Problem: file.ProblemFolder, plant: func(p string, _ Secrets) error {
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(p, "x.md"), []byte("inside a folder"), 0o644)
		}},
		{Name: "named pipe", Problem: file.ProblemPipe, plant: func(p string, _ Secrets) error { return syscall.Mkfifo(p, 0o600) }},
		{Name: "socket", Problem: file.ProblemSocket, plant: func(p string, _ Secrets) error {
			// Listen at a short path (a socket's path is bounded) and move
			// the socket into place.
			dir, err := os.MkdirTemp("", "s")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			l, err := net.Listen("unix", filepath.Join(dir, "s"))
			if err != nil {
				return err
			}
			l.(*net.UnixListener).SetUnlinkOnClose(false)
			defer l.Close()
			return os.Rename(filepath.Join(dir, "s"), p)
		}},
		{Name: "device", Problem: file.ProblemDevice, plant: func(p string, _ Secrets) error {
			var null syscall.Stat_t
			if err := syscall.Stat("/dev/null", &null); err != nil {
				return err
			}
			return syscall.Mknod(p, syscall.S_IFCHR|0o600, int(null.Rdev))
		}},
	}
}

// Plant puts h at key under root (slash-separated; its folders are
// created) and returns the key the refusal names: key, or its folder when
// h.AtFolder. A device needs privileges: without them the test is
// skipped, saying so.
func (h Hostile) Plant(t *testing.T, root, key string, s Secrets) string {
	t.Helper()
	named, ok := h.TryPlant(t, root, key, s)
	if !ok {
		t.Skip("cannot create a device here: it needs privileges")
	}
	return named
}

// TryPlant is Plant for a test that plants several: it reports false,
// after logging why, when a device cannot be created here.
func (h Hostile) TryPlant(t *testing.T, root, key string, s Secrets) (string, bool) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Remove(p) // a document of the same name planted by the test's base tree
	if err := h.plant(p, s); err != nil {
		if h.Problem == file.ProblemDevice {
			t.Logf("no device at %s: creating one needs privileges (%v)", key, err)
			return "", false
		}
		t.Fatalf("plant %s at %s: %v", h.Name, key, err)
	}
	if h.AtFolder {
		return path.Dir(key), true
	}
	return key, true
}

// Promptly runs f and fails the test when it has not returned within 5 s:
// a reader that opened a named pipe without O_NONBLOCK would block there.
// f reports with t.Error, not t.Fatal (it runs on another goroutine).
func Promptly(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the read blocked (a named pipe opened without O_NONBLOCK?)")
	}
}

// Leaks reports whether s holds the text of a secret.
func Leaks(s string) bool {
	return strings.Contains(s, KeyText) || strings.Contains(s, OtherText)
}

// Refused fails the test unless err is a *veredicto.InvalidInputError whose
// message holds "named: problem", and nothing of a secret.
func Refused(t *testing.T, err error, named, problem string) {
	t.Helper()
	want := named + ": " + problem
	if !errors.As(err, new(*veredicto.InvalidInputError)) || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v; want an InvalidInputError %q", err, want)
	}
	if err != nil && Leaks(err.Error()) {
		t.Errorf("the refusal holds what a link points at: %v", err)
	}
}
