package debate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/veredicto/veredicto"
)

// The retrieved chunks (the library) are the largest part of a debate's
// state: up to the RAG budget's queries, each adding its chunks' text. With
// a log store they travel outside it: each batch of chunks a step adds is
// stored once under LibraryKey, named by its content's hash (so a retried
// step stores the same batch under the same key), and the Flow carries the
// batches' names (LibraryRefs) and the chunk ids. The steps that hand chunks
// to an agent or to the report read the batches back (openLibrary); the
// steps that add chunks store them and drop the library from the state
// again (closeLibrary). Without a log store the library stays in the state.

// LibraryKey is where the log store keeps a batch of debate id's library.
func LibraryKey(tenant, id, ref string) string {
	return LogKey(tenant, id) + "/library/" + ref
}

// openLibrary reads the stored batches into f.Library, once per step (a
// Flow without LibraryRefs carries its library in the state already).
func (s *Steps) openLibrary(ctx context.Context, f *Flow) error {
	if len(f.LibraryRefs) == 0 || f.stored != nil {
		return nil
	}
	if s.Logs == nil {
		return fmt.Errorf("debate %s: the library is in the log store and there is none to read it from", f.Result.SessionID)
	}
	if err := f.checkKeys(); err != nil {
		return err
	}
	if f.Library == nil {
		f.Library = map[string]Chunk{}
	}
	f.stored = map[string]bool{}
	for _, ref := range f.LibraryRefs {
		if !validRef(ref) {
			return &veredicto.InvalidInputError{File: "state input", Field: "library_refs", Problem: fmt.Sprintf("%q is not a library batch name", ref)}
		}
		b, ok, err := s.Logs.Get(ctx, LibraryKey(f.Tenant, f.Result.SessionID, ref))
		if err != nil {
			return &veredicto.TransientError{Op: fmt.Sprintf("read debate %s library %s", f.Result.SessionID, ref), Err: err}
		}
		if !ok {
			return fmt.Errorf("debate %s: library batch %s is missing from the log store", f.Result.SessionID, ref)
		}
		var batch []Chunk
		if err := json.Unmarshal(b, &batch); err != nil || libraryRef(b) != ref {
			return fmt.Errorf("debate %s: library batch %s is damaged", f.Result.SessionID, ref)
		}
		for _, c := range batch {
			f.Library[c.ID] = c
			f.stored[c.ID] = true
		}
	}
	return nil
}

// closeLibrary stores the chunks added since openLibrary (or since the
// start) as one more batch and drops the library from the state. Without a
// log store it does nothing.
func (s *Steps) closeLibrary(ctx context.Context, f *Flow) error {
	if s.Logs == nil || f.Library == nil {
		return nil
	}
	if err := f.checkKeys(); err != nil {
		return err
	}
	var added []Chunk
	for id, c := range f.Library {
		if !f.stored[id] {
			added = append(added, c)
		}
	}
	if len(added) > 0 {
		ref, err := s.storeBatch(ctx, f, added)
		if err != nil {
			return err
		}
		f.addRef(ref)
	}
	f.Library, f.stored = nil, nil
	return nil
}

// storeBatch stores chunks as one batch of f's library in the log store
// (which the caller has) and returns its name.
func (s *Steps) storeBatch(ctx context.Context, f *Flow, chunks []Chunk) (string, error) {
	if err := f.checkKeys(); err != nil {
		return "", err
	}
	chunks = slices.Clone(chunks)
	slices.SortFunc(chunks, func(a, b Chunk) int { return strings.Compare(a.ID, b.ID) })
	b, err := json.Marshal(chunks)
	if err != nil {
		return "", fmt.Errorf("encode debate %s library: %w", f.Result.SessionID, err)
	}
	ref := libraryRef(b)
	if _, err := s.Logs.PutIfAbsent(ctx, LibraryKey(f.Tenant, f.Result.SessionID, ref), b); err != nil {
		return "", &veredicto.TransientError{Op: fmt.Sprintf("store debate %s library", f.Result.SessionID), Err: err}
	}
	return ref, nil
}

func (f *Flow) addRef(ref string) {
	if !slices.Contains(f.LibraryRefs, ref) {
		f.LibraryRefs = append(f.LibraryRefs, ref)
	}
}

// dropLibrary drops from the state a library read from the log store (a
// step that adds no chunk writes nothing).
func (f *Flow) dropLibrary() {
	if len(f.LibraryRefs) > 0 {
		f.Library, f.stored = nil, nil
	}
}

// libraryRef names a batch by its content.
func libraryRef(batch []byte) string {
	sum := sha256.Sum256(batch)
	return hex.EncodeToString(sum[:16])
}

func validRef(ref string) bool {
	if len(ref) != 32 {
		return false
	}
	for i := 0; i < len(ref); i++ {
		if c := ref[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
