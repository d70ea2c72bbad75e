package search

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/blob/file"
)

// Folder reads a search folder on this machine. Unlike a plain file.Dir it
// never reads outside the folder: a symbolic link that leaves it (or points
// nowhere) is refused by name, and a document is read only up to the
// per-document limit plus one byte, so an oversized file is named, not
// loaded. Safe for concurrent use.
type Folder struct {
	dir *file.Dir
	// root is the folder; max the most bytes read from one document.
	root string
	max  int64
}

var _ BlobReader = (*Folder)(nil)

// NewFolder returns a reader of the search folder root that reads at most
// maxDocument bytes of a document (DefaultLimits.DocumentBytes when zero).
func NewFolder(root string, maxDocument int64) *Folder {
	if maxDocument <= 0 {
		maxDocument = DefaultLimits.DocumentBytes
	}
	return &Folder{dir: file.NewDir(root), root: root, max: maxDocument}
}

// List returns the keys under prefix, sorted (symbolic links included, so
// the loader can name them).
func (f *Folder) List(ctx context.Context, prefix string) ([]string, error) {
	return f.dir.List(ctx, prefix)
}

// Get reads key through an os.Root, which refuses any path, symbolic link
// included, that resolves outside the folder.
func (f *Folder) Get(_ context.Context, key string) ([]byte, error) {
	root, err := os.OpenRoot(f.root)
	if err != nil {
		return nil, fmt.Errorf("open search folder: %w", err)
	}
	defer root.Close()
	name := filepath.FromSlash(key)
	file, err := root.Open(name)
	if err != nil {
		if fi, lerr := root.Lstat(name); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, &veredicto.InvalidInputError{File: key, Problem: "is a symbolic link that points outside the search folder (or nowhere); refused and not read: copy the document into the folder"}
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &veredicto.NotFoundError{What: "blob " + key}
		}
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	defer file.Close()
	if fi, err := file.Stat(); err == nil && !fi.Mode().IsRegular() {
		return nil, &veredicto.InvalidInputError{File: key, Problem: "is not a regular file"}
	}
	b, err := io.ReadAll(io.LimitReader(file, f.max+1))
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	return b, nil
}

// CandidateDirs lists the folders under candidates/, files or not, so the
// loader can name an empty one (List sees files only).
func (f *Folder) CandidateDirs(context.Context) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(f.root, dirCandidates))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list candidate folders: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out, nil
}
