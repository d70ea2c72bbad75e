package intake_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/veredicto/veredicto"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/blob/file/filetest"
	"github.com/veredicto/veredicto/internal/intake"
	"github.com/veredicto/veredicto/internal/search"
	filestore "github.com/veredicto/veredicto/internal/store/file"
)

// startedSearch is acme's search s3, recorded as started, with files
// (raw bytes by path in the search) under the inputs bucket it returns.
func startedSearch(t *testing.T, files map[string][]byte) (*intake.Service, string) {
	t.Helper()
	inputs := t.TempDir()
	for name, body := range files {
		p := filepath.Join(inputs, "searches", "acme", "s3", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	kv := filestore.NewMemory()
	rec, _ := json.Marshal(intake.SearchRecord{SearchID: "s3", Tenant: "acme", Execution: "acme--s3",
		Input: search.StartInput{Tenant: "acme", SearchID: "s3", InputPrefix: search.InputPrefix("acme", "s3"), ReportPrefix: search.ReportPrefix("acme", "s3")}})
	kv.PutIfAbsent(context.Background(), "search/acme/s3", rec)
	return &intake.Service{Inputs: fileblob.NewDir(inputs), Records: kv}, inputs
}

var searchBase = map[string][]byte{"jd.md": []byte("JD"), "kickoff.md": []byte("Kickoff"), "candidates/c-001/cv.md": []byte("CV")}

// TestSourceRefusesWhatTheLoaderRefuses: the sources route reads a
// document only as the loader does. A link (to the signing key, another
// tenant's document, a file beside it, /etc/passwd, /dev/null, nowhere), a
// linked folder, a folder, a named pipe (without blocking), a socket or a
// device is refused with the loader's own message and nothing of a link's
// target is answered.
func TestSourceRefusesWhatTheLoaderRefuses(t *testing.T) {
	ctx := context.Background()
	const doc = "candidates/c-003/cv.md"
	for _, h := range filetest.All() {
		t.Run(h.Name, func(t *testing.T) {
			svc, inputs := startedSearch(t, searchBase)
			named := strings.TrimPrefix(h.Plant(t, inputs, "searches/acme/s3/"+doc, filetest.NewSecrets(t)), "searches/acme/s3/")
			var b []byte
			var err error
			filetest.Promptly(t, func() { b, err = svc.Source(ctx, "acme", "s3", doc) })
			filetest.Refused(t, err, named, h.Problem)
			if err == nil || filetest.Leaks(string(b)) {
				t.Fatalf("Source = %.80q, %v; want nothing read", b, err)
			}
			_, lerr := search.LoadWithin(ctx, svc.Inputs, "searches/acme/s3/", "s3", search.Limits{})
			if lerr == nil || !strings.Contains(lerr.Error(), err.Error()) {
				t.Errorf("Source says %q; the loader says %v", err, lerr)
			}
		})
	}
}

// TestSourceAnswersTheLoadersText: the route answers a document's decoded
// UTF-8 text, as the loader keeps it, refuses with the loader's message a
// document too large or not text, and answers NotFound for a file the
// loader does not read or finds empty.
func TestSourceAnswersTheLoadersText(t *testing.T) {
	ctx := context.Background()
	files := map[string][]byte{
		"culture.md":                    []byte("  Cultura de due\xf1o \x96 \x80\n"),
		"company.md":                    append([]byte{0xFF, 0xFE}, 'O', 0, 'k', 0),
		"candidates/c-002/cv.md":        []byte(strings.Repeat("x", int(search.DefaultLimits.DocumentBytes)+1)),
		"candidates/c-003/cv.md":        {'%', 'P', 'D', 'F', 0, 1, 2},
		"candidates/c-004/notes.md":     []byte("not a document"),
		"candidates/c-005/interview.md": []byte(" \n"),
	}
	for k, v := range searchBase {
		files[k] = v
	}
	svc, _ := startedSearch(t, files)
	for _, tt := range []struct {
		id, want, refusal string
	}{
		{"culture.md", "Cultura de dueño – €", ""},
		{"company.md", "Ok", ""},
		{"candidates/c-002/cv.md", "", "candidates/c-002/cv.md: is larger than the 512 KiB per-document limit"},
		{"candidates/c-003/cv.md", "", "candidates/c-003/cv.md: is not a text document"},
		{"candidates/c-004/notes.md", "", "NotFound"},
		{"candidates/c-005/interview.md", "", "NotFound"},
		{"search.yaml", "", "NotFound"},
	} {
		t.Run(tt.id, func(t *testing.T) {
			b, err := svc.Source(ctx, "acme", "s3", tt.id)
			switch tt.refusal {
			case "":
				if err != nil || string(b) != tt.want {
					t.Errorf("Source = %q, %v; want %q", b, err, tt.want)
				}
			case "NotFound":
				if !errors.As(err, new(*veredicto.NotFoundError)) {
					t.Errorf("Source = %q, %v; want NotFound", b, err)
				}
			default:
				if !errors.As(err, new(*veredicto.InvalidInputError)) || !strings.HasPrefix(err.Error(), tt.refusal) {
					t.Errorf("Source = %.40q, %v; want %q", b, err, tt.refusal)
				}
			}
		})
	}
	_, err := search.LoadWithin(ctx, svc.Inputs, "searches/acme/s3/", "s3", search.Limits{})
	for _, same := range []string{"candidates/c-002/cv.md: is larger than the 512 KiB per-document limit", "candidates/c-003/cv.md: is not a text document"} {
		if !strings.Contains(err.Error(), same) {
			t.Errorf("the loader's refusal %v lacks the route's %q", err, same)
		}
	}
}

// TestRecordOutsideItsTenantIsNotFollowed: a search record whose prefixes
// name another tenant's folders (damaged, or written by hand) answers as
// a missing search on every route; it is never read.
func TestRecordOutsideItsTenantIsNotFollowed(t *testing.T) {
	ctx := context.Background()
	svc, inputs := startedSearch(t, searchBase)
	p := filepath.Join(inputs, "searches", "bravo", "s9", "jd.md")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte(filetest.OtherText), 0o644)
	rec, _ := json.Marshal(intake.SearchRecord{SearchID: "s4", Tenant: "acme", Execution: "acme--s4",
		Input: search.StartInput{Tenant: "acme", SearchID: "s4", InputPrefix: "searches/bravo/s9", ReportPrefix: "reports/bravo/s9"}})
	svc.Records.PutIfAbsent(ctx, "search/acme/s4", rec)
	if b, err := svc.Source(ctx, "acme", "s4", "jd.md"); !errors.As(err, new(*veredicto.NotFoundError)) || err.Error() != "search s4 not found" {
		t.Errorf("Source = %q, %v; want the search not found", b, err)
	}
}
