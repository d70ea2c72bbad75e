package search

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/blob/file/filetest"
)

func utf16Bytes(s string, bigEndian bool) []byte {
	out := []byte{0xFF, 0xFE}
	if bigEndian {
		out = []byte{0xFE, 0xFF}
	}
	for _, u := range utf16.Encode([]rune(s)) {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return out
}

func TestDecodeText(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		want    string
		wantErr string
	}{
		{"utf-8", []byte("Gestión de caja"), "Gestión de caja", ""},
		{"utf-8 bom", append([]byte{0xEF, 0xBB, 0xBF}, "Año"...), "Año", ""},
		{"utf-16le bom", utf16Bytes("Reducción 12 % — Ñandú 😀", false), "Reducción 12 % — Ñandú 😀", ""},
		{"utf-16be bom", utf16Bytes("Señor", true), "Señor", ""},
		{"windows-1252", []byte("Reducci\xf3n de costes \x96 \x80 5 M \x93ok\x94"), "Reducción de costes – € 5 M “ok”", ""},
		{"latin-1", []byte("Espa\xf1a, Jos\xe9"), "España, José", ""},
		{"undefined cp1252 byte", []byte("a\x81b\xe9"), "", "neither UTF-8"},
		{"binary", []byte("%PDF-1.7\x00\x01\x02\xff"), "", "not a text document"},
		{"replacement char", []byte("Gesti\uFFFDn"), "", "U+FFFD"},
		{"odd utf-16", []byte{0xFF, 0xFE, 'a'}, "", "odd number"},
		{"unpaired surrogate", []byte{0xFF, 0xFE, 0x00, 0xD8, 'a', 0}, "", "unpaired surrogate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeText(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("DecodeText(%q) = %q, %v; want error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("DecodeText(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestValidIDAcceptsUnicodeLetters(t *testing.T) {
	tests := []struct {
		id   string
		want bool
	}{
		{"c-001", true}, {"Ñandú", true}, {"N\u0303andu\u0301", true}, {"\u0303x", false}, {"josé.pérez_2", true}, {"北京", true},
		{"", false}, {"-x", false}, {"a/b", false}, {"a b", false}, {"..", false}, {strings.Repeat("ñ", 65), false}, {strings.Repeat("ñ", 64), true},
	}
	for _, tt := range tests {
		if got := veredicto.ValidID(tt.id); got != tt.want {
			t.Errorf("veredicto.ValidID(%q) = %v, want %v", tt.id, got, tt.want)
		}
	}
}

// writeTree writes files (raw bytes) under a new folder.
func writeTree(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestLoadHygiene(t *testing.T) {
	base := func() map[string][]byte {
		return map[string][]byte{"jd.md": []byte("JD"), "kickoff.md": []byte("Kickoff"), "candidates/c-1/cv.md": []byte("CV")}
	}
	secret := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(secret, []byte("SECRETO de otra carpeta"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		files   map[string][]byte
		links   map[string]string // link (relative to the folder) → target ("" prefix: inside the folder)
		dirs    []string          // empty folders to create
		lim     Limits
		wantErr []string // substrings of an InvalidInputError
		warns   []string
		check   func(t *testing.T, s *Search)
	}{
		{name: "link outside refused by name", links: map[string]string{"candidates/c-1/interview.md": secret},
			wantErr: []string{"candidates/c-1/interview.md", "symbolic link"}},
		{name: "broken link refused", links: map[string]string{"culture.md": "/nonexistent/x.md"},
			wantErr: []string{"culture.md", "symbolic link"}},
		{name: "link inside the folder refused too", links: map[string]string{"candidates/c-1/case.md": "cv.md"},
			wantErr: []string{"candidates/c-1/case.md", "symbolic link"}},
		{name: "document over the limit", files: map[string][]byte{"candidates/c-1/interview.md": []byte(strings.Repeat("x", 2048))},
			lim: Limits{DocumentBytes: 1024}, wantErr: []string{"candidates/c-1/interview.md", "1 KiB per-document limit"}},
		{name: "search over the limit", files: map[string][]byte{"candidates/c-2/cv.md": []byte(strings.Repeat("y", 900))},
			lim: Limits{DocumentBytes: 1024, SearchBytes: 600}, wantErr: []string{"search folder", "per-search limit"}},
		{name: "latin-1 decoded", files: map[string][]byte{"culture.md": []byte("Cultura de due\xf1o")},
			check: func(t *testing.T, s *Search) {
				if s.Docs.Culture.Text != "Cultura de dueño" {
					t.Errorf("culture = %q", s.Docs.Culture.Text)
				}
			}},
		{name: "binary refused by name", files: map[string][]byte{"candidates/c-1/tests.md": {0x00, 0x01, 0x02, 0x81}},
			wantErr: []string{"candidates/c-1/tests.md"}},
		{name: "unicode candidate id", files: map[string][]byte{"candidates/Ñandú/cv.md": []byte("CV ñ")},
			check: func(t *testing.T, s *Search) {
				if len(s.Candidates) != 2 || s.Candidates[1].CandidateID != "Ñandú" {
					t.Errorf("candidates %v, want c-1 and Ñandú", s.Candidates)
				}
			}},
		{name: "bad candidate id says what is allowed", files: map[string][]byte{"candidates/a b/cv.md": []byte("CV")},
			wantErr: []string{`"a b"`, veredicto.IDRule}},
		{name: "empty and skipped candidate folders warned",
			files: map[string][]byte{"candidates/c-2/cv.md": []byte("  \n"), "candidates/c-3/cv.pdf": []byte("%PDF")},
			warns: []string{"candidates/c-2: every candidate document is empty", "candidates/c-3: no cv.md", "candidates/c-3/cv.pdf: not a candidate document"},
			check: func(t *testing.T, s *Search) {
				if len(s.Candidates) != 1 {
					t.Errorf("candidates %v, want only c-1", s.Candidates)
				}
			}},
		{name: "empty candidate folder warned", dirs: []string{"candidates/c-9"},
			warns: []string{"candidates/c-9: empty folder; candidate skipped"}},
		{name: "fractional gate refused", files: map[string][]byte{"search.yaml": []byte("gates:\n  gem4: 6.5\n")},
			wantErr: []string{"gates.gem4", "6.5 is not a whole number", "use 6 or 7"}},
		{name: "latin-1 search.yaml decoded", files: map[string][]byte{"search.yaml": []byte("client: Due\xf1o S.A.\n")},
			check: func(t *testing.T, s *Search) {
				if s.Docs.Client != "Dueño S.A." {
					t.Errorf("client %q", s.Docs.Client)
				}
			}},
		{name: "search.yaml linked outside refused", links: map[string]string{"search.yaml": secret},
			wantErr: []string{"search.yaml", "symbolic link"}},
		{name: "whole gate written as float honoured", files: map[string][]byte{"search.yaml": []byte("gates:\n  gem4: 8.0\n")},
			check: func(t *testing.T, s *Search) {
				if s.Gates.Gem4 != 8 {
					t.Errorf("gem4 gate %d, want 8", s.Gates.Gem4)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := base()
			for k, v := range tt.files {
				files[k] = v
			}
			dir := writeTree(t, files)
			for _, d := range tt.dirs {
				if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for link, target := range tt.links {
				symlink(t, target, filepath.Join(dir, filepath.FromSlash(link)))
			}
			s, err := LoadWithin(context.Background(), NewFolder(dir), "", "s", tt.lim)
			if tt.wantErr != nil {
				var ii *veredicto.InvalidInputError
				if !errors.As(err, &ii) {
					t.Fatalf("got %v, want an InvalidInputError", err)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				if strings.Contains(err.Error(), "SECRETO") {
					t.Errorf("error leaks the linked file's text: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.warns {
				if !strings.Contains(strings.Join(s.Warnings, "\n"), w) {
					t.Errorf("warnings %q lack %q", s.Warnings, w)
				}
			}
			if tt.check != nil {
				tt.check(t, s)
			}
		})
	}
}

// TestLoadRefusesWhatIsNotAnUploadedFile: a search holding a link
// (anywhere, even inside the folder), a folder, a named pipe, a socket or
// a device where a document belongs is refused before any agent runs,
// named by its path in the search folder, whether the search is a local
// folder (search run) or a tenant's prefix of the inputs bucket (serve);
// nothing the link points at is read, and a named pipe does not block.
func TestLoadRefusesWhatIsNotAnUploadedFile(t *testing.T) {
	type place struct {
		name   string
		prefix string // of the search in the reader
		reader func(root string) BlobReader
	}
	places := []place{
		{"search folder", "", func(root string) BlobReader { return NewFolder(root) }},
		{"inputs bucket", "searches/acme/s3/", func(root string) BlobReader { return file.NewDir(root) }},
	}
	docs := []string{"candidates/c-003/cv.md", "candidates/c-003/notes.md", "culture.md"}
	for _, pl := range places {
		for _, h := range filetest.All() {
			for _, doc := range docs {
				if h.Problem == file.ProblemFolder && doc == "candidates/c-003/notes.md" {
					continue // a folder named notes.md holds files the loader ignores, named in warnings
				}
				if h.AtFolder && doc == "culture.md" {
					continue // the search folder itself: the prefix's own case below
				}
				t.Run(pl.name+"/"+h.Name+"/"+doc, func(t *testing.T) {
					root := t.TempDir()
					files := map[string][]byte{"jd.md": []byte("JD"), "kickoff.md": []byte("Kickoff"), "candidates/c-001/cv.md": []byte("CV")}
					for name, body := range files {
						p := filepath.Join(root, filepath.FromSlash(pl.prefix+name))
						os.MkdirAll(filepath.Dir(p), 0o755)
						if err := os.WriteFile(p, body, 0o644); err != nil {
							t.Fatal(err)
						}
					}
					named := strings.TrimPrefix(h.Plant(t, root, pl.prefix+doc, filetest.NewSecrets(t)), pl.prefix)
					var err error
					filetest.Promptly(t, func() { _, err = LoadWithin(context.Background(), pl.reader(root), pl.prefix, "s3", Limits{}) })
					filetest.Refused(t, err, named, h.Problem)
				})
			}
		}
	}
	t.Run("search folder linked", func(t *testing.T) {
		root := t.TempDir()
		s := filetest.NewSecrets(t)
		if err := os.MkdirAll(filepath.Join(root, "searches", "acme"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(s.Folder, filepath.Join(root, "searches", "acme", "s3")); err != nil {
			t.Fatal(err)
		}
		_, err := LoadWithin(context.Background(), file.NewDir(root), "searches/acme/s3/", "s3", Limits{})
		var ii *veredicto.InvalidInputError
		if !errors.As(err, &ii) || ii.File != "searches/acme/s3" || ii.Problem != file.ProblemLink {
			t.Errorf("got %v; want the search folder named as a link", err)
		}
	})
}

// FuzzLoad builds random search folders — documents in random encodings
// and sizes, symbolic links inside and outside — and checks the loader's
// promises: it never panics, never reads outside the folder, never lets
// U+FFFD or invalid UTF-8 into a document, and refuses only with an
// InvalidInputError or MissingInputError.
func FuzzLoad(f *testing.F) {
	f.Add([]byte("JD"), []byte("Kickoff"), []byte("CV"), uint8(0), uint16(10))
	f.Add([]byte("J\xe9"), []byte{0xFF, 0xFE, 'k', 0}, []byte{0, 1, 2}, uint8(1), uint16(3))
	f.Add([]byte("\uFFFD"), []byte("K"), []byte("Reducci\xf3n"), uint8(2), uint16(4000))
	f.Add([]byte(""), []byte("K"), []byte("CV"), uint8(3), uint16(1))
	outside := filepath.Join(f.TempDir(), "outside.md")
	if err := os.WriteFile(outside, []byte("OUTSIDE-TEXT"), 0o644); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, jd, kickoff, cv []byte, links uint8, limit uint16) {
		dir := t.TempDir()
		write := func(name string, b []byte) {
			p := filepath.Join(dir, filepath.FromSlash(name))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write("jd.md", jd)
		write("kickoff.md", kickoff)
		write("candidates/c-1/cv.md", cv)
		if links&1 != 0 {
			os.Symlink(outside, filepath.Join(dir, "candidates", "c-1", "interview.md"))
		}
		if links&2 != 0 {
			os.Symlink("cv.md", filepath.Join(dir, "candidates", "c-1", "case.md"))
		}
		if links&4 != 0 {
			os.Symlink(filepath.Dir(outside), filepath.Join(dir, "candidates", "c-2"))
		}
		lim := Limits{DocumentBytes: int64(limit) + 1, SearchBytes: 2 * (int64(limit) + 1)}
		s, err := LoadWithin(context.Background(), NewFolder(dir), "", "s", lim)
		if err != nil {
			var ii *veredicto.InvalidInputError
			var mi *veredicto.MissingInputError
			if !errors.As(err, &ii) && !errors.As(err, &mi) {
				t.Fatalf("error %T %v: want InvalidInputError or MissingInputError", err, err)
			}
			if strings.Contains(err.Error(), "OUTSIDE-TEXT") {
				t.Fatalf("error leaks the outside file: %v", err)
			}
			return
		}
		if links&1 != 0 {
			t.Fatalf("a search with a link outside the folder loaded")
		}
		docs := []Doc{s.Docs.JD, s.Docs.Kickoff, s.Docs.Company, s.Docs.Culture}
		for _, c := range s.Candidates {
			docs = append(docs, c.All()...)
		}
		for _, d := range docs {
			if !utf8.ValidString(d.Text) || strings.ContainsRune(d.Text, utf8.RuneError) {
				t.Fatalf("%s holds invalid UTF-8 or U+FFFD: %q", d.ID, d.Text)
			}
			if strings.Contains(d.Text, "OUTSIDE-TEXT") {
				t.Fatalf("%s was read from outside the folder", d.ID)
			}
			if int64(len(d.Text)) > 4*lim.DocumentBytes {
				t.Fatalf("%s is %d bytes, over the limit %d", d.ID, len(d.Text), lim.DocumentBytes)
			}
		}
	})
}

// memKV is a write-once map store.
type memKV map[string][]byte

func (m memKV) Get(_ context.Context, key string) ([]byte, bool, error) {
	b, ok := m[key]
	return b, ok, nil
}

func (m memKV) PutIfAbsent(_ context.Context, key string, value []byte) (bool, error) {
	if _, ok := m[key]; ok {
		return false, nil
	}
	m[key] = value
	return true, nil
}

// TestDamagedRecordIsReportedOnceByName: a damaged record stays beside
// its repair (the store writes a key once), so it is reported once per
// process, naming candidate and stage from its key.
func TestDamagedRecordIsReportedOnceByName(t *testing.T) {
	var logs bytes.Buffer
	const key = "stage/acme/s-1/c-006/gem2/0/11a8"
	svc := &Service{Store: memKV{key: []byte("garbage")}, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	for range 3 {
		_, _, free, err := readStage[Gem2Content](t.Context(), svc, key)
		if err != nil || free != key+"/repair-1" {
			t.Fatalf("readStage: free slot %q, %v", free, err)
		}
	}
	if n := strings.Count(logs.String(), "stage record damaged"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "candidate_id=c-006 stage=gem2") {
		t.Errorf("the warning does not name the candidate and stage:\n%s", logs.String())
	}
}
