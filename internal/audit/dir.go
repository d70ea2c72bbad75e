package audit

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"

	"github.com/veredicto/veredicto"
)

// Dir is a record in a folder: chains/<chain>.jsonl (one JSON line per
// entry, synced before Append returns) and texts/<sha256>. Writers in
// several processes take a lock file per chain.
type Dir struct{ root string }

var _ Store = (*Dir)(nil)

// NewDir is the record kept in the folder root.
func NewDir(root string) *Dir { return &Dir{root: root} }

// Root is the record's folder.
func (d *Dir) Root() string { return d.root }

func (d *Dir) chainPath(chain string) string {
	return filepath.Join(d.root, "chains", url.PathEscape(chain)+".jsonl")
}

// maxLine bounds one entry (a model's raw answer is at most a few hundred
// KiB).
const maxLine = 4 << 20

func (d *Dir) Append(_ context.Context, chain string, seq int, line []byte) error {
	if bytes.ContainsAny(line, "\n\r") {
		return fmt.Errorf("audit: an entry of %s spans lines", chain)
	}
	p := d.chainPath(chain)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	lines, err := readLines(p)
	if err != nil {
		return err
	}
	if len(lines) != seq {
		return &veredicto.ConflictError{What: "audit chain " + chain, Problem: fmt.Sprintf("entry %d is taken (the chain has %d)", seq, len(lines))}
	}
	if _, err := f.Write(append(append([]byte{}, line...), '\n')); err != nil {
		return err
	}
	return f.Sync()
}

func (d *Dir) Lines(_ context.Context, chain string) ([][]byte, error) {
	lines, err := readLines(d.chainPath(chain))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return lines, err
}

func readLines(p string) ([][]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		out = append(out, append([]byte{}, sc.Bytes()...))
	}
	return out, sc.Err()
}

func (d *Dir) Chains(context.Context) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(d.root, "chains"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if chain, err := url.PathUnescape(name); err == nil {
			out = append(out, chain)
		}
	}
	sort.Strings(out)
	return out, nil
}

var hashPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

func (d *Dir) textPath(hash string) (string, error) {
	if !hashPattern.MatchString(hash) {
		return "", fmt.Errorf("audit: %q is not a SHA-256", hash)
	}
	return filepath.Join(d.root, "texts", hash), nil
}

func (d *Dir) PutText(_ context.Context, hash string, text []byte) error {
	p, err := d.textPath(hash)
	if err != nil {
		return err
	}
	if _, err := os.Stat(p); err == nil {
		return nil // stored once: the same hash is the same text
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".text-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(text); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}

func (d *Dir) Text(_ context.Context, hash string) ([]byte, error) {
	p, err := d.textPath(hash)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &veredicto.NotFoundError{What: "audit text " + hash}
	}
	return b, err
}
