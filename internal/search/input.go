package search

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/veredicto/veredicto"
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
		Gem1         *int `yaml:"gem1"`
		Gem2         *int `yaml:"gem2"`
		Gem3         *int `yaml:"gem3"`
		Gem4         *int `yaml:"gem4"`
		MaxQARetries *int `yaml:"max_qa_retries"`
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
	// Warnings are problems that do not stop the search (ignored files).
	Warnings []string
}

// MissingInputError: a required search document is absent. The search is
// blocked at once (seed: BLOCK inmediato) and no agent runs.
type MissingInputError struct {
	Files []string
}

func (e *MissingInputError) Error() string {
	return fmt.Sprintf("search blocked: required document(s) missing: %s", strings.Join(e.Files, ", "))
}

// InvalidInputError names a malformed input file and field.
type InvalidInputError struct {
	File    string
	Field   string
	Problem string
}

func (e *InvalidInputError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", e.File, e.Problem)
	}
	return fmt.Sprintf("%s: %s: %s", e.File, e.Field, e.Problem)
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

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ValidID reports whether s is a valid search or candidate id: 1–64
// letters, digits, '.', '_' or '-', starting with a letter or digit.
func ValidID(s string) bool { return idPattern.MatchString(s) }

// Load reads the search under prefix ("" for a folder's root,
// "searches/<id>/" in S3). defaultID names the search when search.yaml
// does not.
func Load(ctx context.Context, r BlobReader, prefix, defaultID string) (*Search, error) {
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	keys, err := r.List(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("load search %s: %w", prefix, err)
	}
	s := &Search{Prefix: prefix, Gates: DefaultGates, Index: map[string]bool{}, Hashes: map[string]string{}}
	present := map[string]bool{}
	cands := map[string]bool{}
	for _, k := range keys {
		rel := strings.TrimPrefix(k, prefix)
		present[rel] = true
		parts := strings.Split(rel, "/")
		switch {
		case len(parts) == 1:
			switch rel {
			case FileConfig, FileJD, FileKickoff, FileCompany, FileCulture, "READY":
			default:
				s.Warnings = append(s.Warnings, fmt.Sprintf("%s: not a search document, ignored", rel))
			}
		case len(parts) == 3 && parts[0] == dirCandidates && candidateFiles[parts[2]]:
			if !idPattern.MatchString(parts[1]) {
				return nil, &InvalidInputError{File: rel, Problem: fmt.Sprintf("candidate folder name %q must be letters, digits, '.', '_' or '-'", parts[1])}
			}
			cands[parts[1]] = true
		default:
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: not a search document, ignored", rel))
		}
	}
	var missing []string
	for _, f := range []string{FileJD, FileKickoff} {
		if !present[f] {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return nil, &MissingInputError{Files: missing}
	}

	cfg := Config{}
	if present[FileConfig] {
		b, err := r.Get(ctx, prefix+FileConfig)
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", FileConfig, err)
		}
		if err := parseConfig(b, &cfg, &s.Gates); err != nil {
			return nil, err
		}
	}
	if cfg.SearchID == "" {
		cfg.SearchID = defaultID
	}
	if !idPattern.MatchString(cfg.SearchID) {
		return nil, &InvalidInputError{File: FileConfig, Field: "search_id", Problem: fmt.Sprintf("%q must be 1–64 letters, digits, '.', '_' or '-'", cfg.SearchID)}
	}

	doc := func(id string) (Doc, error) {
		if !present[id] {
			return Doc{ID: id, Missing: true}, nil
		}
		b, err := r.Get(ctx, prefix+id)
		if err != nil {
			var nf *veredicto.NotFoundError
			if errors.As(err, &nf) {
				return Doc{ID: id, Missing: true}, nil
			}
			return Doc{}, fmt.Errorf("load %s: %w", id, err)
		}
		text := strings.TrimSpace(string(bytes.ToValidUTF8(b, []byte("\uFFFD"))))
		if text == "" {
			return Doc{ID: id, Missing: true}, nil
		}
		sum := sha256.Sum256([]byte(text))
		s.Index[id] = true
		s.Hashes[id] = hex.EncodeToString(sum[:])
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
		return nil, &MissingInputError{Files: empty}
	}
	ids := make([]string, 0, len(cands))
	for id := range cands {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		p := func(f string) string { return path.Join(dirCandidates, id, f) }
		s.Candidates = append(s.Candidates, CandidateDocs{CandidateID: id,
			CV: get(p(FileCV)), Interview: get(p(FileInterview)), Tests: get(p(FileTests)),
			Case: get(p(FileCase)), References: get(p(FileReferences))})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

func parseConfig(b []byte, cfg *Config, g *Gates) error {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return &InvalidInputError{File: FileConfig, Problem: err.Error()}
	}
	if cfg.Gates == nil {
		return nil
	}
	set := func(field string, v *int, dst *int, lo, hi int) error {
		if v == nil {
			return nil
		}
		if *v < lo || *v > hi {
			return &InvalidInputError{File: FileConfig, Field: "gates." + field, Problem: fmt.Sprintf("%d is out of range %d–%d", *v, lo, hi)}
		}
		*dst = *v
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
