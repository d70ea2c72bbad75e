// Package quarantine moves damaged records aside, with one convention for
// every store under a data folder: the bytes of a record that no longer
// decodes go to
//
//	DATA/quarantine/<store>/<its path in the store>.<unix nanoseconds>
//
// kept, never deleted, with a note beside them (the same name plus
// ".why.json") saying which record it was, why it was moved and when; and
// one log line names it: the paths and the reason, never the content (a
// record may hold personal data). "veredicto doctor" lists them (List).
//
// A store replaces what it moved aside with what keeps the rest working
// (Replace): a confirmation with a "damaged" record that is still listed,
// an execution with metadata that keeps its name reserved, a queue file
// with a dead letter naming the reason. An event-log line stays where it
// is, blanked, its bytes kept here (Keep).
package quarantine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Folder is the quarantine's folder under a data folder.
const Folder = "quarantine"

// noteSuffix ends the name of the note beside a quarantined file.
const noteSuffix = ".why.json"

// Box moves the damaged records of one store aside. It is safe for
// concurrent use; its fields are set once by New.
type Box struct {
	data, store string
	logger      *slog.Logger
	now         func() time.Time
}

// New returns the quarantine of the store kept in the folder store
// (slash-separated, relative to the data folder data: "confirmations",
// "queue/inputs"). A nil logger logs to slog.Default().
func New(data, store string, logger *slog.Logger) *Box {
	if logger == nil {
		logger = slog.Default()
	}
	return &Box{data: data, store: filepath.ToSlash(store), logger: logger, now: time.Now}
}

// Beside returns the quarantine of a store whose folder lies directly
// under the data folder (DATA/confirmations, DATA/events, DATA/sfn).
func Beside(storeDir string, logger *slog.Logger) *Box {
	return New(filepath.Dir(storeDir), filepath.Base(storeDir), logger)
}

// Item is one damaged record: moved aside (Quarantined set), or found in
// place by a check.
type Item struct {
	// Store is the store's folder relative to the data folder.
	Store string `json:"store"`
	// Path is the record's path relative to the store's folder.
	Path string `json:"path"`
	// Reason says what is wrong, never what the record holds.
	Reason string `json:"reason"`
	// Quarantined is where its bytes are now; "" while they are in place.
	Quarantined string `json:"quarantined,omitempty"`
	// At is when it was moved aside (zero while in place).
	At time.Time `json:"at,omitzero"`
}

// Found is an Item for a damaged record still in place at path.
func (b *Box) Found(path, reason string) Item {
	return Item{Store: b.store, Path: b.rel(path), Reason: reason}
}

// rel is path relative to the store's folder (its base name when it lies
// outside it).
func (b *Box) rel(path string) string {
	r, err := filepath.Rel(filepath.Join(b.data, filepath.FromSlash(b.store)), path)
	if err != nil || !filepath.IsLocal(r) {
		return filepath.Base(path)
	}
	return filepath.ToSlash(r)
}

// dest picks the quarantine path of the record at path: a name no other
// quarantined file has.
func (b *Box) dest(path string) (string, time.Time, error) {
	at := b.now().UTC()
	base := filepath.Join(b.data, Folder, filepath.FromSlash(b.store), filepath.FromSlash(b.rel(path)))
	if err := os.MkdirAll(filepath.Dir(base), 0o700); err != nil {
		return "", at, fmt.Errorf("quarantine %s: %w", path, err)
	}
	for {
		d := base + "." + strconv.FormatInt(at.UnixNano(), 10)
		if _, err := os.Lstat(d); errors.Is(err, fs.ErrNotExist) {
			return d, at, nil
		}
		at = at.Add(time.Nanosecond)
	}
}

// Replace moves the damaged file at path aside and calls put, which writes
// what stands for the record from now on (at path or elsewhere). If put
// fails the file is moved back, so the damage stays visible where it was
// and nothing is lost; the error names both steps. Either way one line is
// logged: the move, or the failure to make it.
func (b *Box) Replace(path, reason string, put func(it Item) error) (Item, error) {
	it, err := b.replace(path, reason, put)
	if err != nil {
		b.logger.Error("damaged record left in place: it could not be moved to quarantine", "store", b.store, "path", path, "reason", reason, "error", err.Error())
	}
	return it, err
}

func (b *Box) replace(path, reason string, put func(it Item) error) (Item, error) {
	d, at, err := b.dest(path)
	if err != nil {
		return Item{}, err
	}
	it := Item{Store: b.store, Path: b.rel(path), Reason: reason, Quarantined: d, At: at}
	if err := move(path, d); err != nil {
		return Item{}, fmt.Errorf("quarantine %s: %w", path, err)
	}
	if put != nil {
		if err := put(it); err != nil {
			if berr := move(d, path); berr != nil {
				return Item{}, fmt.Errorf("quarantine %s: %w (and moving it back from %s: %v)", path, err, d, berr)
			}
			return Item{}, fmt.Errorf("quarantine %s: %w", path, err)
		}
	}
	b.note(it, path)
	return it, nil
}

// Keep writes data, a damaged part of the file at path that the store
// blanks in place (a line of a log), to the quarantine, and notes and logs
// it. The store blanks the part only once Keep has succeeded.
func (b *Box) Keep(path string, data []byte, reason string) (Item, error) {
	d, at, err := b.dest(path)
	if err == nil {
		err = writeFile(d, data)
	}
	if err != nil {
		b.logger.Error("damaged record left in place: it could not be copied to quarantine", "store", b.store, "path", path, "reason", reason, "error", err.Error())
		return Item{}, fmt.Errorf("quarantine part of %s: %w", path, err)
	}
	it := Item{Store: b.store, Path: b.rel(path), Reason: reason, Quarantined: d, At: at}
	b.note(it, path)
	return it, nil
}

// note writes the note beside a quarantined file and logs the move. A note
// that cannot be written (the disk that damaged the record may be full)
// is logged: the bytes are safe, List still shows them.
func (b *Box) note(it Item, path string) {
	n := it
	n.Quarantined = "" // the note travels with the file: List says where it is
	buf, _ := json.Marshal(n)
	err := writeFile(it.Quarantined+noteSuffix, buf)
	args := []any{"store", it.Store, "path", path, "quarantine", it.Quarantined, "reason", it.Reason}
	if err != nil {
		args = append(args, "note_error", err.Error())
	}
	b.logger.Error("damaged record moved to quarantine", args...)
}

// move renames from to to, copying across file systems (a data folder
// whose store folders are mounts of their own).
func move(from, to string) error {
	err := os.Rename(from, to)
	if errors.Is(err, syscall.EXDEV) {
		var b []byte
		if b, err = os.ReadFile(from); err == nil {
			if err = writeFile(to, b); err == nil {
				err = os.Remove(from)
			}
		}
	}
	if err != nil {
		return err
	}
	syncDir(filepath.Dir(to))
	syncDir(filepath.Dir(from))
	return nil
}

// writeFile writes b to path durably, readable by its owner alone.
func writeFile(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return err
	}
	syncDir(filepath.Dir(path))
	return nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// List returns every record quarantined under the data folder data,
// oldest first; none (an empty list) when there is no quarantine.
func List(data string) ([]Item, error) {
	root := filepath.Join(data, Folder)
	out := []Item{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == root {
			return filepath.SkipAll
		}
		if err != nil {
			return err
		}
		if d.IsDir() || strings.HasSuffix(p, noteSuffix) {
			return nil
		}
		out = append(out, readItem(root, p))
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("list the quarantine: %w", err)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}

// readItem describes the quarantined file p from its note, or from its
// name when the note is missing.
func readItem(root, p string) Item {
	it := Item{Quarantined: p, Reason: "unknown: no note beside it"}
	if b, err := os.ReadFile(p + noteSuffix); err == nil && json.Unmarshal(b, &it) == nil {
		it.Quarantined = p
		return it
	}
	rel, _ := filepath.Rel(root, p)
	rel = filepath.ToSlash(rel)
	if i := strings.LastIndexByte(rel, '.'); i > 0 {
		if ns, err := strconv.ParseInt(rel[i+1:], 10, 64); err == nil {
			it.At, rel = time.Unix(0, ns).UTC(), rel[:i]
		}
	}
	it.Store, it.Path, _ = strings.Cut(rel, "/")
	return it
}

// Reason says why bytes did not decode as JSON without quoting them: the
// position of a syntax error, the field of a type mismatch.
func Reason(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("not valid JSON (syntax error at byte %d)", se.Offset)
	case errors.As(err, &te):
		kind, _, _ := strings.Cut(te.Value, " ") // "number 5": the kind alone
		if te.Field == "" {
			return fmt.Sprintf("a JSON %s where %s was expected", kind, te.Type)
		}
		return fmt.Sprintf("field %q holds a JSON %s, not %s", te.Field, kind, te.Type)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "truncated JSON"
	}
	return "a field does not decode"
}
