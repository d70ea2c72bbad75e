package intake

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/search"
)

// What the web console reads besides a search's state: the list of runs
// with their status and decisions so far, the search summary, and the
// source documents the reports cite.

// Run is one execution in a tenant's list of runs. Kind says which
// workflow it is ("search" here; other workflows list theirs through the
// same shape), ID names it within its kind.
type Run struct {
	Kind      string `json:"kind"`
	ID        string `json:"id"`
	Execution string `json:"execution"`
	Status    string `json:"status"`
	StartedAt string `json:"started_at,omitempty"`
	StoppedAt string `json:"stopped_at,omitempty"`
	// DurationSeconds is stopped − started, or now − started while it runs.
	DurationSeconds float64 `json:"duration_seconds"`
	// Candidates counts the subjects with any progress; Decisions counts
	// the decisions taken so far by decision.
	Candidates int            `json:"candidates"`
	Decisions  map[string]int `json:"decisions"`
	Error      string         `json:"error,omitempty"`
	// Reruns are a search's runs before its latest, newest first (at most
	// MaxEarlierRuns): the search shows as one row with them grouped.
	Reruns []Run `json:"reruns,omitempty"`
}

// MaxEarlierRuns bounds the earlier runs a search's row lists.
const MaxEarlierRuns = 10

// MaxRuns bounds Runs: the most recent searches are listed.
const MaxRuns = 100

// Runs lists the tenant's most recent searches (at most MaxRuns, newest
// first) with status, times and decisions so far.
func (s *Service) Runs(ctx context.Context, tenant string) ([]Run, error) {
	items, err := s.List(ctx, tenant)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].CreatedAt > items[j].CreatedAt })
	if len(items) > MaxRuns {
		items = items[:MaxRuns]
	}
	out := make([]Run, 0, len(items))
	for _, it := range items {
		st, err := s.State(ctx, tenant, it.SearchID)
		if errors.As(err, new(*veredicto.NotFoundError)) {
			continue // removed since it was listed
		}
		if err != nil {
			return nil, err
		}
		r := runOf(st, st.Execution, s.now())
		if r.Reruns, err = s.earlierRuns(ctx, tenant, it.SearchID, st.Execution); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// earlierRuns lists a search's runs before latest, newest first, at most
// MaxEarlierRuns: the first run under the search's record, then each
// rerun recorded since.
func (s *Service) earlierRuns(ctx context.Context, tenant, searchID, latest string) ([]Run, error) {
	rec, ok, err := s.record(ctx, tenant, searchID)
	if err != nil || !ok {
		return nil, err
	}
	keys, err := s.Records.List(ctx, fmt.Sprintf("searchrun/%s/%s/", tenant, searchID))
	if err != nil {
		return nil, fmt.Errorf("list runs of search %s: %w", searchID, err)
	}
	names := []string{rec.Execution}
	for _, k := range keys {
		b, ok, err := s.Records.Get(ctx, k)
		if err != nil {
			return nil, fmt.Errorf("read run %s: %w", k, err)
		}
		if ok {
			names = append(names, string(b))
		}
	}
	var out []Run
	for i := len(names) - 1; i >= 0 && len(out) < MaxEarlierRuns; i-- {
		if names[i] == latest || names[i] == "" {
			continue
		}
		r := Run{Kind: "search", ID: searchID, Execution: names[i], Status: "PENDING", Decisions: map[string]int{}}
		ex, err := s.Starter.Describe(ctx, names[i])
		switch {
		case errors.As(err, new(*veredicto.NotFoundError)):
			continue
		case err != nil:
			return nil, err
		}
		r.Status, r.Error = ex.Status, ex.Error
		if !ex.StartedAt.IsZero() {
			r.StartedAt = ex.StartedAt.UTC().Format(time.RFC3339)
			end := s.now()
			if !ex.StoppedAt.IsZero() {
				end = ex.StoppedAt
				r.StoppedAt = ex.StoppedAt.UTC().Format(time.RFC3339)
			}
			r.DurationSeconds = end.Sub(ex.StartedAt).Round(time.Second).Seconds()
		}
		out = append(out, r)
	}
	return out, nil
}

// Roster is what the console names a search's people with: its client
// and role, and each candidate in the order the workflow evaluates them
// (its Map's items), with the name the first heading of the CV gives and
// the documents the loader read.
type Roster struct {
	SearchID   string            `json:"search_id"`
	Client     string            `json:"client,omitempty"`
	Role       string            `json:"role,omitempty"`
	Candidates []RosterCandidate `json:"candidates"`
}

// RosterCandidate is one candidate of a Roster.
type RosterCandidate struct {
	CandidateID string   `json:"candidate_id"`
	Name        string   `json:"name,omitempty"`
	Documents   []string `json:"documents"`
}

// Roster reads a started search's folder through the loader (the order and
// documents the workflow sees) and names each candidate from its CV.
func (s *Service) Roster(ctx context.Context, tenant, searchID string) (Roster, error) {
	rec, err := s.visible(ctx, tenant, searchID)
	if err != nil {
		return Roster{}, err
	}
	sr, err := search.LoadWithin(ctx, s.Inputs, rec.Input.InputPrefix, searchID, s.Limits)
	if err != nil {
		return Roster{}, err
	}
	out := Roster{SearchID: searchID, Client: sr.Docs.Client, Role: sr.Docs.Role, Candidates: []RosterCandidate{}}
	for _, c := range sr.Candidates {
		rc := RosterCandidate{CandidateID: c.CandidateID, Name: NameOf(c.CV.Text), Documents: []string{}}
		for _, d := range c.All() {
			if !d.Missing {
				rc.Documents = append(rc.Documents, d.ID)
			}
		}
		out.Candidates = append(out.Candidates, rc)
	}
	return out, nil
}

// NameOf is a candidate's name as a CV opens: its first Markdown heading
// ("# Mariana Rojas") if that comes before any other text and is one short
// line; "" otherwise.
func NameOf(cv string) string {
	for _, line := range strings.Split(cv, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, ok := strings.CutPrefix(line, "# ")
		name = strings.TrimSpace(name)
		if !ok || name == "" || len([]rune(name)) > 80 {
			return ""
		}
		return name
	}
	return ""
}

func runOf(st SearchState, execution string, now time.Time) Run {
	r := Run{Kind: "search", ID: st.SearchID, Execution: execution, Status: st.Status, StartedAt: st.StartedAt,
		StoppedAt: st.StoppedAt, Candidates: len(st.Candidates), Decisions: map[string]int{}, Error: st.Error}
	if start, err := time.Parse(time.RFC3339, st.StartedAt); err == nil {
		end := now
		if stop, err := time.Parse(time.RFC3339, st.StoppedAt); err == nil {
			end = stop
		}
		r.DurationSeconds = end.Sub(start).Round(time.Second).Seconds()
	}
	for _, c := range st.Candidates {
		if c.Decision != "" {
			r.Decisions[c.Decision]++
		}
	}
	return r
}

// Summary returns a search's summary.json, or summary.md when markdown;
// NotFound until the search has finished.
func (s *Service) Summary(ctx context.Context, tenant, searchID string, markdown bool) ([]byte, error) {
	rec, err := s.visible(ctx, tenant, searchID)
	if err != nil {
		return nil, err
	}
	name := "summary.json"
	if markdown {
		name = "summary.md"
	}
	b, err := s.Reports.Get(ctx, path.Join(rec.Input.ReportPrefix, name))
	if errors.As(err, new(*veredicto.NotFoundError)) {
		return nil, &veredicto.NotFoundError{What: "summary of search " + searchID}
	}
	return b, err
}

// Source returns the text of a document of a search by its source id, the
// path relative to the search folder that agents cite
// ("candidates/c-005/cv.md"), exactly as the loader read it: only a
// document the loader reads (search.IsDocument), through the loader's own
// search.ReadDocument with the same limits — the decoded UTF-8 text,
// trimmed as the loader keeps it. A file the loader refuses (a symbolic
// link, a special file, too large, not text) is refused with the loader's
// message. An id that leaves the folder is invalid; one that names no
// document, or nothing, is NotFound, like another tenant's.
func (s *Service) Source(ctx context.Context, tenant, searchID, id string) ([]byte, error) {
	rec, err := s.visible(ctx, tenant, searchID)
	if err != nil {
		return nil, err
	}
	if !ValidSourceID(id) {
		return nil, &veredicto.InvalidInputError{File: "request path", Field: "source", Problem: fmt.Sprintf("%q is not a document path inside the search", id)}
	}
	missing := &veredicto.NotFoundError{What: fmt.Sprintf("source %s of search %s", id, searchID)}
	if !search.IsDocument(id) {
		return nil, missing
	}
	text, _, err := search.ReadDocument(ctx, s.Inputs, rec.Input.InputPrefix, id, s.Limits)
	switch {
	case errors.As(err, new(*veredicto.NotFoundError)):
		return nil, missing
	case errors.As(err, new(*veredicto.InvalidInputError)):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("read source %s of search %s: %w", id, searchID, err)
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, missing // the loader declares it missing
	}
	return []byte(text), nil
}

// ValidSourceID reports whether id can name a document inside a search
// folder: a clean relative path of ordinary segments, none hidden, with
// no backslash and no control character, ending in a file name.
func ValidSourceID(id string) bool {
	if id == "" || len(id) > 512 || path.Clean(id) != id || path.IsAbs(id) || strings.ContainsAny(id, "\\:") {
		return false
	}
	for _, seg := range strings.Split(id, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.HasPrefix(seg, ".") {
			return false
		}
		for _, r := range seg {
			if r < 0x20 || r == 0x7f {
				return false
			}
		}
	}
	return id != ReadyMarker
}
