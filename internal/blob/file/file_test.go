package file_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/blob/file/filetest"
)

func TestDirPutGetList(t *testing.T) {
	ctx := context.Background()
	d := file.NewDir(t.TempDir())
	for _, k := range []string{"searches/s1/jd.md", "searches/s1/candidates/c1/cv.md", "reports/s1/summary.md"} {
		if err := d.Put(ctx, k, []byte("x "+k), "text/markdown"); err != nil {
			t.Fatal(err)
		}
	}
	got, err := d.Get(ctx, "searches/s1/jd.md")
	if err != nil || string(got) != "x searches/s1/jd.md" {
		t.Errorf("Get = %q, %v", got, err)
	}
	keys, err := d.List(ctx, "searches/s1/")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(keys) != "[searches/s1/candidates/c1/cv.md searches/s1/jd.md]" {
		t.Errorf("List = %v", keys)
	}
	var nf *veredicto.NotFoundError
	if _, err := d.Get(ctx, "searches/s1/nope.md"); !errors.As(err, &nf) {
		t.Errorf("Get missing: %v, want *NotFoundError", err)
	}
}

// TestPutLeavesNoTemporaryFile: a put writes a temporary file and renames
// it; written again, the key is replaced; nothing else stays in the folder.
func TestPutLeavesNoTemporaryFile(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	d := file.NewDir(root)
	for _, v := range []string{"first", "second"} {
		if err := d.Put(ctx, "reports/s1/c1/report.md", []byte(v), "text/markdown"); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := d.Get(ctx, "reports/s1/c1/report.md"); err != nil || string(got) != "second" {
		t.Errorf("Get = %q, %v; want the second put", got, err)
	}
	entries, err := os.ReadDir(filepath.Join(root, "reports", "s1", "c1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "report.md" {
		t.Errorf("the folder holds %v, want report.md alone", entries)
	}
}

func TestDirRejectsEscapingKeys(t *testing.T) {
	d := file.NewDir(t.TempDir())
	for _, k := range []string{"../etc/passwd", "a/../../b", "/abs", "", "a//b"} {
		if err := d.Put(context.Background(), k, nil, ""); err == nil {
			t.Errorf("Put(%q) succeeded, want an error", k)
		}
	}
}

// TestListWalksOnlyThePrefixFolder: a prefix that ends inside a folder
// name still matches every key that starts with it, and hidden folders
// hold no keys.
func TestListWalksOnlyThePrefixFolder(t *testing.T) {
	ctx := context.Background()
	d := file.NewDir(t.TempDir())
	for _, k := range []string{"searches/a/s1/x", "searches/a/s10/y", "searches/b/s1/z", ".hidden/a/k"} {
		if err := d.Put(ctx, k, []byte("v"), ""); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		prefix string
		want   []string
	}{
		{"searches/a/s1", []string{"searches/a/s1/x", "searches/a/s10/y"}},
		{"searches/a/s1/", []string{"searches/a/s1/x"}},
		{"searches/", []string{"searches/a/s1/x", "searches/a/s10/y", "searches/b/s1/z"}},
		{"searches/c/", nil},
		{".hidden/a/", nil},
		{"../", nil},
	}
	for _, c := range cases {
		got, err := d.List(ctx, c.prefix)
		if err != nil || strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("List(%q) = %q, %v; want %q", c.prefix, got, err, c.want)
		}
	}
}

// TestDirRefusesWhatIsNotTheFolders: Get, GetAtMost, Stat and List read
// only regular files the folder holds. Every link (wherever it points,
// inside the folder too), a folder, a named pipe (without blocking), a
// socket and a device where a document is expected are refused as an
// InvalidInputError naming the path, and nothing of a link's target is
// returned; so is a key that leaves the folder.
func TestDirRefusesWhatIsNotTheFolders(t *testing.T) {
	ctx := context.Background()
	const key = "searches/acme/s3/candidates/c-003/notes.md"
	type refusal struct{ name, file, problem string }
	var cases []refusal
	for _, h := range filetest.All() {
		cases = append(cases, refusal{h.Name, "", h.Problem})
	}
	for _, k := range []string{"searches/acme/../../../auth/hs256.key", "../auth/hs256.key", "/etc/passwd", "searches/acme/s3/./jd.md", "a//b", ""} {
		cases = append(cases, refusal{"key " + k, strconv.Quote(k), "is not a path inside the folder"})
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			d := file.NewDir(root)
			k := tt.file
			if tt.file == "" { // a hostile entry
				for _, h := range filetest.All() {
					if h.Name == tt.name {
						tt.file = h.Plant(t, root, key, filetest.NewSecrets(t))
					}
				}
				k = key
			} else {
				k, _ = strconv.Unquote(k)
			}
			check := func(op string, got []byte, err error) {
				t.Helper()
				var ie *veredicto.InvalidInputError
				if !errors.As(err, &ie) || ie.File != tt.file || !strings.Contains(ie.Problem, tt.problem) {
					t.Errorf("%s = %q, %v; want an InvalidInputError on %s saying %q", op, got, err, tt.file, tt.problem)
				}
				if filetest.Leaks(string(got)) || bytes.Contains(got, []byte("root:")) {
					t.Errorf("%s returned what the link points at: %q", op, got)
				}
			}
			filetest.Promptly(t, func() {
				b, err := d.Get(ctx, k)
				check("Get", b, err)
				b, err = d.GetAtMost(ctx, k, 10)
				check("GetAtMost", b, err)
				_, err = d.Stat(ctx, k)
				check("Stat", nil, err)
				if strings.HasPrefix(tt.name, "key ") || tt.problem == file.ProblemFolder {
					return // a folder holds keys
				}
				keys, err := d.List(ctx, "searches/acme/")
				check("List", []byte(strings.Join(keys, ",")), err)
			})
		})
	}
}

// TestDirReadsRegularFiles: the opener's refusals leave ordinary reads
// alone: a regular file is read, a path through a file is NotFound as in
// S3, and an object over the limit is refused by name.
func TestDirReadsRegularFiles(t *testing.T) {
	ctx := context.Background()
	d := file.NewDir(t.TempDir())
	if err := d.Put(ctx, "searches/acme/s3/jd.md", []byte("JD text"), ""); err != nil {
		t.Fatal(err)
	}
	if b, err := d.Get(ctx, "searches/acme/s3/jd.md"); err != nil || string(b) != "JD text" {
		t.Errorf("Get: %q, %v", b, err)
	}
	if b, err := d.GetAtMost(ctx, "searches/acme/s3/jd.md", 2); err != nil || string(b) != "JD " {
		t.Errorf("GetAtMost 2: %q, %v; want 3 bytes", b, err)
	}
	if fi, err := d.Stat(ctx, "searches/acme/s3/jd.md"); err != nil || fi.Size() != 7 {
		t.Errorf("Stat: %v, %v", fi, err)
	}
	for _, k := range []string{"searches/acme/s3/jd.md/x", "searches/acme/s4/jd.md", "nope"} {
		if _, err := d.Get(ctx, k); !errors.As(err, new(*veredicto.NotFoundError)) {
			t.Errorf("Get(%s): %v, want NotFound", k, err)
		}
	}
	if _, err := file.NewDir(filepath.Join(t.TempDir(), "absent")).Get(ctx, "a"); !errors.As(err, new(*veredicto.NotFoundError)) {
		t.Errorf("a bucket not yet created: %v, want NotFound", err)
	}
}

// TestDirListNamesEveryRefusal: List returns no key Get would refuse: it
// names every link and special file under the prefix instead, and a
// prefix whose folder is a link is refused by that folder's name.
func TestDirListNamesEveryRefusal(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	d := file.NewDir(root)
	s := filetest.NewSecrets(t)
	var want []string
	for i, h := range filetest.All() {
		named, ok := h.TryPlant(t, root, fmt.Sprintf("searches/acme/s3/candidates/c-%03d/cv.md", i), s)
		if !ok {
			continue
		}
		if h.Problem != file.ProblemFolder { // a folder holds keys
			want = append(want, named+": "+h.Problem)
		}
	}
	keys, err := d.List(ctx, "searches/acme/s3/")
	if keys != nil {
		t.Errorf("List returned keys %q beside its refusals", keys)
	}
	for _, w := range want {
		if !strings.Contains(fmt.Sprint(err), w) {
			t.Errorf("List error lacks %q:\n%v", w, err)
		}
	}
	if !errors.As(err, new(*veredicto.InvalidInputError)) || strings.Contains(fmt.Sprint(err), filetest.KeyText) {
		t.Errorf("List: %v, want InvalidInputErrors naming keys only", err)
	}
	if err := d.Put(ctx, "searches/bravo/s9/jd.md", []byte("x"), ""); err != nil {
		t.Fatal(err)
	}
	if keys, err := d.List(ctx, "searches/bravo/"); err != nil || strings.Join(keys, ",") != "searches/bravo/s9/jd.md" {
		t.Errorf("a clean prefix: %q, %v", keys, err)
	}
	if err := os.Symlink(filepath.Join(root, "searches", "bravo"), filepath.Join(root, "searches", "zeta")); err != nil {
		t.Fatal(err)
	}
	_, err = d.List(ctx, "searches/zeta/s9/")
	var ie *veredicto.InvalidInputError
	if !errors.As(err, &ie) || ie.File != "searches/zeta" || ie.Problem != file.ProblemLink {
		t.Errorf("a prefix through a link: %v, want it refused naming searches/zeta", err)
	}
}

// TestListBoundsItsRefusals: a folder of many links is named in a bounded
// error whose last line counts the rest.
func TestListBoundsItsRefusals(t *testing.T) {
	root := t.TempDir()
	for i := range 50 {
		if err := os.Symlink("/etc/passwd", filepath.Join(root, fmt.Sprintf("l%02d", i))); err != nil {
			t.Fatal(err)
		}
	}
	_, err := file.NewDir(root).List(context.Background(), "")
	lines := strings.Split(fmt.Sprint(err), "\n")
	if len(lines) != file.MaxRefusals || !strings.Contains(lines[len(lines)-1], "and 31 more links or special files") {
		t.Errorf("%d lines, last %q; want %d ending with a count", len(lines), lines[len(lines)-1], file.MaxRefusals)
	}
}

// TestWalkListsInS3Order: Walk visits keys in the byte order of the whole
// key, as S3's ListObjectsV2 does ("a-c" before "a/b"), stops at a link
// (named), and Open streams what Get reads.
func TestWalkListsInS3Order(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	d := file.NewDir(root)
	for _, k := range []string{"in/a/b", "in/a-c", "in/a0", "in/b", "out/x", "in/.hidden"} {
		if err := d.Put(ctx, k, []byte(k), ""); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	err := d.Walk(ctx, "in/", func(key string, fi fs.FileInfo) error {
		if fi.Size() != int64(len(key)) {
			t.Errorf("%s: size %d", key, fi.Size())
		}
		got = append(got, key)
		return nil
	})
	if want := "in/a-c in/a/b in/a0 in/b"; err != nil || strings.Join(got, " ") != want {
		t.Errorf("Walk: %v, %v; want %s", got, err, want)
	}
	f, fi, err := d.Open(ctx, "in/a/b")
	if err != nil || fi.Size() != 6 {
		t.Fatalf("Open: %v %v", fi, err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "in/a/b" {
		t.Errorf("Open read %q", b)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(root, "in", "a", "c")); err != nil {
		t.Fatal(err)
	}
	var ie *veredicto.InvalidInputError
	if err := d.Walk(ctx, "in/a/", func(string, fs.FileInfo) error { return nil }); !errors.As(err, &ie) || ie.File != "in/a/c" {
		t.Errorf("Walk over a link: %v, want it refused by name", err)
	}
}

// TestPutNeverFollowsALink: a write whose folder is a link (wherever it
// points) is refused by name, and nothing is written where it points.
func TestPutNeverFollowsALink(t *testing.T) {
	ctx := context.Background()
	root, outside := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "reports"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "reports", "acme")); err != nil {
		t.Fatal(err)
	}
	d := file.NewDir(root)
	var ie *veredicto.InvalidInputError
	if err := d.Put(ctx, "reports/acme/run/x.json", []byte("x"), ""); !errors.As(err, &ie) || ie.File != "reports/acme" || ie.Problem != file.ProblemLink {
		t.Errorf("Put through a link: %v, want it refused naming reports/acme", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written where the link points: %v", entries)
	}
	if err := d.Put(ctx, "reports/bravo/run/x.json", []byte("x"), ""); err != nil {
		t.Errorf("a clean Put: %v", err)
	}
}
