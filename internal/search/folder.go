package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/veredicto/veredicto/internal/blob/file"
)

// Folder reads a search folder on this machine: a file.Dir rooted at it,
// so a document is read only if it is a regular file inside the folder (a
// symbolic link, a device, a named pipe, a socket or a folder is refused by
// name, never followed) and only up to the per-document limit plus one
// byte (the loader reads through GetAtMost), plus the candidate folders
// with no file, which the loader names in a warning. Safe for concurrent
// use.
type Folder struct {
	*file.Dir
	root string
}

var _ BlobReader = (*Folder)(nil)

// NewFolder returns a reader of the search folder root.
func NewFolder(root string) *Folder {
	return &Folder{Dir: file.NewDir(root), root: root}
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
