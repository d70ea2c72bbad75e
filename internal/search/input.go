package search

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"math"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/blob"
	"github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/yamldoc"
)

// BlobReader reads the search's documents (a folder locally, S3 in AWS).
type BlobReader interface {
	Get(ctx context.Context, key string) ([]byte, error)
	List(ctx context.Context, prefix string) ([]string, error)
}

// Gates are the protocol thresholds (seed §5 defaults 6/6/6/7, 2 QA retries).
type Gates struct {
	Gem1         int `yaml:"gem1" json:"gem1"`
	Gem2         int `yaml:"gem2" json:"gem2"`
	Gem3         int `yaml:"gem3" json:"gem3"`
	Gem4         int `yaml:"gem4" json:"gem4"`
	MaxQARetries int `yaml:"max_qa_retries" json:"max_qa_retries"`
}

// DefaultGates are the seed's thresholds.
var DefaultGates = Gates{Gem1: 6, Gem2: 6, Gem3: 6, Gem4: 7, MaxQARetries: 2}

// Config is search.yaml.
type Config struct {
	SearchID string `yaml:"search_id"`
	Client   string `yaml:"client"`
	Role     string `yaml:"role"`
	Gates    *struct {
		// Read as numbers so a fractional threshold is refused by name
		// rather than truncated or reported as a YAML type error.
		Gem1         *float64 `yaml:"gem1"`
		Gem2         *float64 `yaml:"gem2"`
		Gem3         *float64 `yaml:"gem3"`
		Gem4         *float64 `yaml:"gem4"`
		MaxQARetries *float64 `yaml:"max_qa_retries"`
	} `yaml:"gates"`
}

// Search is a loaded search folder: its documents, candidates and the
// sources index every citation is checked against.
type Search struct {
	// Tenant owns the search (set by the loading service): stage keys and
	// the usage ledger are scoped by it.
	Tenant     string
	Prefix     string
	Docs       SearchDocs
	Gates      Gates
	Candidates []CandidateDocs
	// Index holds the id of every document present.
	Index map[string]bool
	// Hashes maps each present document id to the SHA-256 of its text.
	Hashes map[string]string
	// Texts maps each present document id to its text, for the quotation
	// check.
	Texts map[string]string
	// Warnings are problems that do not stop the search (ignored files).
	Warnings []string
	// Version fingerprints the documents and search.yaml it was loaded
	// from: a re-upload changes it.
	Version string
	// Config is search.yaml's text ("" without one).
	Config string
	// sorted holds Index's ids in order (GEM4's sources index), sorted
	// once at load rather than by every task.
	sorted []string
	// stages are the stage records of this search the process has read
	// or stored.
	stages stageCache
}

// Document file names.
const (
	FileConfig     = "search.yaml"
	FileJD         = "jd.md"
	FileKickoff    = "kickoff.md"
	FileCompany    = "company.md"
	FileCulture    = "culture.md"
	FileCV         = "cv.md"
	FileInterview  = "interview.md"
	FileTests      = "tests.md"
	FileCase       = "case.md"
	FileReferences = "references.md"
	dirCandidates  = "candidates"
)

var candidateFiles = map[string]bool{FileCV: true, FileInterview: true, FileTests: true, FileCase: true, FileReferences: true}

// candidateFileList names the candidate documents for messages.
const candidateFileList = "cv.md, interview.md, tests.md, case.md or references.md"

// candidateDirLister is a reader that can also list candidate folders
// with no files (Folder), so the loader names them.
type candidateDirLister interface {
	CandidateDirs(ctx context.Context) ([]string, error)
}

// Limits bound what a search may load, so an oversized or runaway upload
// is refused with a clear error before any agent runs.
type Limits struct {
	// DocumentBytes is the largest document accepted.
	DocumentBytes int64
	// SearchBytes is the largest total of a search's documents.
	SearchBytes int64
}

// DefaultLimits: 512 KiB per document (a long CV or interview transcript is
// under 100 KiB) and 8 MiB per search.
var DefaultLimits = Limits{DocumentBytes: 512 << 10, SearchBytes: 8 << 20}

func (l Limits) orDefault() Limits {
	if l.DocumentBytes <= 0 {
		l.DocumentBytes = DefaultLimits.DocumentBytes
	}
	if l.SearchBytes <= 0 {
		l.SearchBytes = DefaultLimits.SearchBytes
	}
	return l
}

// kib renders a byte count for a person.
func kib(n int64) string {
	if n < 1<<10 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%d KiB", (n+(1<<10)-1)>>10)
}

// Load reads the search under prefix with DefaultLimits (LoadWithin).
func Load(ctx context.Context, r BlobReader, prefix, defaultID string) (*Search, error) {
	return LoadWithin(ctx, r, prefix, defaultID, DefaultLimits)
}

// LoadWithin reads the search under prefix ("" for a folder's root,
// "searches/<id>/" in S3). defaultID names the search when search.yaml does
// not. Every document is decoded to UTF-8 text (DecodeText) and checked
// against lim; candidate folders without a usable document are skipped with
// a warning naming them.
func LoadWithin(ctx context.Context, r BlobReader, prefix, defaultID string, lim Limits) (*Search, error) {
	lim = lim.orDefault()
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	keys, err := r.List(ctx, prefix)
	if err != nil {
		if named := inSearch(prefix, err); named != nil {
			return nil, named // links and special files, by name
		}
		return nil, fmt.Errorf("load search %s: %w", prefix, err)
	}
	if len(keys) > MaxSearchFiles {
		return nil, &veredicto.InvalidInputError{File: searchWhere(prefix), Problem: fmt.Sprintf("holds %d files; a search reads at most %d", len(keys), MaxSearchFiles)}
	}
	s := &Search{Prefix: prefix, Gates: DefaultGates, Index: map[string]bool{}, Hashes: map[string]string{}, Texts: map[string]string{}}
	present := map[string]bool{}
	cands := map[string]bool{}
	seen := map[string]bool{}     // candidate folders with any file
	folders := map[string]error{} // documents that are folders
	for _, k := range keys {
		rel := strings.TrimPrefix(k, prefix)
		present[rel] = true
		parts := strings.Split(rel, "/")
		if doc := folderDocument(parts); doc != "" {
			folders[doc] = &veredicto.InvalidInputError{File: doc, Problem: file.ProblemFolder}
			continue
		}
		switch {
		case len(parts) == 1:
			switch rel {
			case FileConfig, FileJD, FileKickoff, FileCompany, FileCulture, "READY":
			default:
				s.Warnings = append(s.Warnings, fmt.Sprintf("%s: not a search document, ignored", rel))
			}
		case len(parts) >= 2 && parts[0] == dirCandidates && !(len(parts) == 3 && candidateFiles[parts[2]]):
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: not a candidate document (want %s), ignored", rel, candidateFileList))
			if len(parts) == 3 {
				seen[parts[1]] = true
			}
		case len(parts) == 3 && parts[0] == dirCandidates:
			if !veredicto.ValidID(parts[1]) {
				return nil, &veredicto.InvalidInputError{File: rel, Problem: fmt.Sprintf("candidate folder name %q must be %s", parts[1], veredicto.IDRule)}
			}
			cands[parts[1]] = true
		default:
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: not a search document, ignored", rel))
		}
	}
	if len(folders) > 0 {
		docs := slices.Sorted(maps.Keys(folders))
		errs := make([]error, len(docs))
		for i, d := range docs {
			errs[i] = folders[d]
		}
		return nil, errors.Join(errs...)
	}
	if len(cands) > MaxCandidates {
		return nil, &veredicto.InvalidInputError{File: dirCandidates + "/", Problem: fmt.Sprintf("holds %d candidate folders; a search evaluates at most %d: split them into several searches", len(cands), MaxCandidates)}
	}
	var missing []string
	for _, f := range []string{FileJD, FileKickoff} {
		if !present[f] {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return nil, &veredicto.MissingInputError{Files: missing}
	}

	cfg := Config{}
	configText := ""
	if present[FileConfig] {
		text, _, err := ReadDocument(ctx, r, prefix, FileConfig, lim)
		if errors.As(err, new(*veredicto.NotFoundError)) {
			return nil, fmt.Errorf("load %s: %w", FileConfig, err) // listed, then gone
		}
		if err != nil {
			return nil, err
		}
		if err := parseConfig([]byte(text), &cfg, &s.Gates); err != nil {
			return nil, err
		}
		configText = text
	}
	if cfg.SearchID == "" {
		cfg.SearchID = defaultID
	}
	if !veredicto.ValidID(cfg.SearchID) {
		return nil, &veredicto.InvalidInputError{File: FileConfig, Field: "search_id", Problem: fmt.Sprintf("%q must be %s", cfg.SearchID, veredicto.IDRule)}
	}

	var total int64
	doc := func(id string) (Doc, error) {
		if !present[id] {
			return Doc{ID: id, Missing: true}, nil
		}
		text, n, err := ReadDocument(ctx, r, prefix, id, lim)
		if errors.As(err, new(*veredicto.NotFoundError)) {
			return Doc{ID: id, Missing: true}, nil
		}
		if err != nil {
			return Doc{}, err
		}
		total += n
		text = strings.TrimSpace(text)
		if text == "" {
			return Doc{ID: id, Missing: true}, nil
		}
		sum := sha256.Sum256([]byte(text))
		s.Index[id] = true
		s.Hashes[id] = hex.EncodeToString(sum[:])
		s.Texts[id] = text
		return Doc{ID: id, Text: text}, nil
	}
	var errs []error
	get := func(id string) Doc {
		d, err := doc(id)
		if err != nil {
			errs = append(errs, err)
		}
		return d
	}
	s.Docs = SearchDocs{SearchID: cfg.SearchID, Client: cfg.Client, Role: cfg.Role,
		JD: get(FileJD), Kickoff: get(FileKickoff), Company: get(FileCompany), Culture: get(FileCulture)}
	if s.Docs.JD.Missing || s.Docs.Kickoff.Missing {
		var empty []string
		for _, d := range []Doc{s.Docs.JD, s.Docs.Kickoff} {
			if d.Missing {
				empty = append(empty, d.ID+" (empty)")
			}
		}
		return nil, &veredicto.MissingInputError{Files: empty}
	}
	ids := make([]string, 0, len(cands))
	for id := range cands {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		p := func(f string) string { return path.Join(dirCandidates, id, f) }
		c := CandidateDocs{CandidateID: id,
			CV: get(p(FileCV)), Interview: get(p(FileInterview)), Tests: get(p(FileTests)),
			Case: get(p(FileCase)), References: get(p(FileReferences))}
		usable := false
		for _, d := range c.All() {
			usable = usable || !d.Missing
		}
		if !usable {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s/%s: every candidate document is empty; candidate skipped", dirCandidates, id))
			continue
		}
		s.Candidates = append(s.Candidates, c)
	}
	if d, ok := r.(candidateDirLister); ok && prefix == "" {
		dirs, err := d.CandidateDirs(ctx)
		if err != nil {
			return nil, err
		}
		for _, id := range dirs {
			if !cands[id] && !seen[id] {
				s.Warnings = append(s.Warnings, fmt.Sprintf("%s/%s: empty folder; candidate skipped", dirCandidates, id))
			}
		}
	}
	var skipped []string
	for id := range seen {
		if !cands[id] {
			skipped = append(skipped, id)
		}
	}
	sort.Strings(skipped)
	for _, id := range skipped {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s/%s: no %s; candidate skipped", dirCandidates, id, candidateFileList))
	}
	if total > lim.SearchBytes {
		where := searchWhere(prefix)
		errs = append(errs, &veredicto.InvalidInputError{File: where, Problem: fmt.Sprintf("the search's documents total %s, over the %s per-search limit", kib(total), kib(lim.SearchBytes))})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if n := len(s.Warnings); n > MaxWarnings {
		s.Warnings = append(s.Warnings[:MaxWarnings-1:MaxWarnings-1], fmt.Sprintf("and %d more files ignored or candidates skipped", n-MaxWarnings+1))
	}
	s.Version, s.Config = s.version(configText), configText
	s.sorted = sortedIndex(s.Index)
	return s, nil
}

// ReadDocument reads document id (its path in the search folder, as
// agents cite it) of the search under prefix: the one way the loader and
// the sources route read a document. It reads through r — whose local
// adapter refuses a symbolic link, a device, a named pipe, a socket or a
// folder by name (file.Dir) — at most lim.DocumentBytes (one byte more
// tells a larger document, which is refused), and decodes the bytes to
// UTF-8 text (DecodeText). A refusal is a *veredicto.InvalidInputError
// naming id in the search folder; a missing document a
// *veredicto.NotFoundError. It returns the text, untrimmed, and the bytes
// read.
func ReadDocument(ctx context.Context, r BlobReader, prefix, id string, lim Limits) (string, int64, error) {
	lim = lim.orDefault()
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	b, err := blob.GetAtMost(ctx, r, prefix+id, lim.DocumentBytes)
	if err != nil {
		if errors.As(err, new(*veredicto.NotFoundError)) {
			return "", 0, err
		}
		if named := inSearch(prefix, err); named != nil {
			return "", 0, named
		}
		return "", 0, fmt.Errorf("load %s: %w", id, err)
	}
	if int64(len(b)) > lim.DocumentBytes {
		return "", 0, &veredicto.InvalidInputError{File: id, Problem: fmt.Sprintf("is larger than the %s per-document limit", kib(lim.DocumentBytes))}
	}
	text, err := DecodeText(b)
	if err != nil {
		return "", 0, &veredicto.InvalidInputError{File: id, Problem: err.Error()}
	}
	return text, int64(len(b)), nil
}

// IsDocument reports whether id names a document the loader reads:
// jd.md, kickoff.md, company.md, culture.md, or a candidate's
// candidates/<id>/cv.md, interview.md, tests.md, case.md or
// references.md.
func IsDocument(id string) bool {
	parts := strings.Split(id, "/")
	switch len(parts) {
	case 1:
		return id == FileJD || id == FileKickoff || id == FileCompany || id == FileCulture
	case 3:
		return parts[0] == dirCandidates && veredicto.ValidID(parts[1]) && candidateFiles[parts[2]]
	}
	return false
}

// folderDocument returns the document a listed path lies under, when the
// path makes that document a folder ("jd.md/x", "candidates/c-1/cv.md/x"),
// or "".
func folderDocument(parts []string) string {
	switch {
	case len(parts) >= 2 && (parts[0] == FileConfig || parts[0] == "READY" || IsDocument(parts[0])):
		return parts[0]
	case len(parts) >= 4 && IsDocument(path.Join(parts[:3]...)):
		return path.Join(parts[:3]...)
	}
	return ""
}

// inSearch names the refusals err holds (blob.Renamed) by their path in
// the search folder under prefix; nil when err holds anything else.
func inSearch(prefix string, err error) error {
	return blob.Renamed(err, func(key string) string {
		if rel, ok := strings.CutPrefix(key, prefix); ok && rel != "" {
			return rel
		}
		return key
	})
}

// version fingerprints what a search was loaded from: search.yaml's text
// and every present document's hash, by id (candidates' included).
func (s *Search) version(config string) string {
	ids := make([]string, 0, len(s.Hashes))
	for id := range s.Hashes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%s\x00", s.Docs.SearchID, len(config), config)
	for _, id := range ids {
		fmt.Fprintf(h, "%s\x00%s\x00", id, s.Hashes[id])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Bounds on what a search folder holds.
const (
	// MaxSearchFiles bounds the files listed under a search (its
	// documents, candidates' documents and anything else there).
	MaxSearchFiles = 5000
	// MaxCandidates bounds the candidate folders of one search.
	MaxCandidates = 500
	// MaxWarnings bounds the warnings kept (and logged) for one load; the
	// last one counts the rest.
	MaxWarnings = 20
)

// searchWhere names a search's location in an error.
func searchWhere(prefix string) string {
	if where := strings.TrimSuffix(prefix, "/"); where != "" {
		return where
	}
	return "search folder"
}

func parseConfig(b []byte, cfg *Config, g *Gates) error {
	if strings.TrimSpace(string(b)) != "" {
		if err := yamldoc.Decode(FileConfig, b, cfg); err != nil {
			return err
		}
	}
	if err := errors.Join(veredicto.CheckLabel(FileConfig, "client", cfg.Client), veredicto.CheckLabel(FileConfig, "role", cfg.Role)); err != nil {
		return err
	}
	if cfg.Gates == nil {
		return nil
	}
	set := func(field string, v *float64, dst *int, lo, hi int) error {
		if v == nil {
			return nil
		}
		if err := CheckThreshold(*v, lo, hi); err != nil {
			problem := err.Error()
			if line := yamldoc.LineOf(b, "gates."+field); line > 0 {
				problem += fmt.Sprintf(" (line %d)", line)
			}
			return &veredicto.InvalidInputError{File: FileConfig, Field: "gates." + field, Problem: problem}
		}
		*dst = int(*v)
		return nil
	}
	return errors.Join(
		set("gem1", cfg.Gates.Gem1, &g.Gem1, 0, 10),
		set("gem2", cfg.Gates.Gem2, &g.Gem2, 0, 10),
		set("gem3", cfg.Gates.Gem3, &g.Gem3, 0, 10),
		set("gem4", cfg.Gates.Gem4, &g.Gem4, 0, 10),
		set("max_qa_retries", cfg.Gates.MaxQARetries, &g.MaxQARetries, 0, 2),
	)
}

// CheckThreshold accepts a gate threshold only as a whole number in lo–hi:
// scores are integers, so a fractional threshold is refused, never
// truncated or rounded behind the user's back.
func CheckThreshold(v float64, lo, hi int) error {
	if err := CheckWhole(v); err != nil {
		return err
	}
	if v < float64(lo) || v > float64(hi) {
		return fmt.Errorf("%v is out of range %d–%d", v, lo, hi)
	}
	return nil
}

// CheckWhole fails for a threshold that is not a whole number: gates
// compare whole scores, so a fraction would silently be truncated.
func CheckWhole(v float64) error {
	if v != math.Trunc(v) || math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Errorf("%v is not a whole number (gates compare whole scores; a fraction would be truncated): use %v or %v", v, math.Floor(v), math.Ceil(v))
	}
	return nil
}
