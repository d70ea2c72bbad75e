package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/veredicto/veredicto"
)

// TombstoneChain is the one chain a purged record keeps: a single
// tombstone entry in place of every chain and text that was erased.
const TombstoneChain = "tombstone"

// Tombstone is what remains of an execution's record after erasure (the
// right to erasure, GDPR Art. 17): the hashes only. Each erased chain's
// head and length, the hashes of the texts its entries named and of the
// reports it recorded let whoever kept a copy of the record or of a
// report prove it is the one that was here; no text, document, answer or
// report path remains.
type Tombstone struct {
	Execution string    `json:"execution"`
	Workflow  string    `json:"workflow,omitempty"`
	Tenant    string    `json:"tenant,omitempty"`
	Search    string    `json:"search_id,omitempty"`
	PurgedAt  time.Time `json:"purged_at"`
	// PurgedBy is who ran the purge; Reason why (the request it answers).
	PurgedBy string `json:"purged_by"`
	Reason   string `json:"reason"`
	// Heads and Entries are every erased chain's last hash and length.
	Heads   map[string]string `json:"heads"`
	Entries map[string]int    `json:"entries"`
	// Texts and Reports are the sorted SHA-256 of the texts the entries
	// named and of the report files they recorded.
	Texts   []string `json:"texts"`
	Reports []string `json:"reports"`
}

// EntryCount is how many entries the erased chains held.
func (t *Tombstone) EntryCount() int {
	n := 0
	for _, e := range t.Entries {
		n += e
	}
	return n
}

// Eraser removes a record's chains and texts: all of them but the chain
// keep. Dir is one; so is the reports bucket's store on AWS.
type Eraser interface {
	Erase(ctx context.Context, keep string) error
}

// Purge erases the record in st, leaving a tombstone: it computes the
// tombstone from the record, writes it as the only entry of
// TombstoneChain, then erases every other chain and every text. Written
// first, the tombstone survives a purge cut short; purging again finishes
// the erasure and returns the tombstone already written. by carries who,
// when and why (PurgedBy, PurgedAt, Reason); the rest is read from the
// record. A store holding no record is a *veredicto.NotFoundError.
func Purge(ctx context.Context, st Store, er Eraser, by Tombstone) (*Tombstone, error) {
	if by.PurgedBy == "" || by.Reason == "" || by.PurgedAt.IsZero() {
		return nil, fmt.Errorf("audit purge: the tombstone needs who purged, when and why")
	}
	for attempt := 0; ; attempt++ {
		t, err := ReadTombstone(ctx, st)
		if err != nil {
			return nil, err
		}
		if t == nil {
			if t, err = tombstoneOf(ctx, st, by); err != nil {
				return nil, err
			}
			err = appendTombstone(ctx, st, t)
			if errors.As(err, new(*veredicto.ConflictError)) && attempt == 0 {
				continue // another purge wrote it first: finish that one
			}
			if err != nil {
				return nil, err
			}
		}
		if err := er.Erase(ctx, TombstoneChain); err != nil {
			return nil, fmt.Errorf("audit purge of %s: erase the record (its tombstone is written; purge again to finish): %w", t.Execution, err)
		}
		return t, nil
	}
}

// tombstoneOf reads the record's hashes into a tombstone.
func tombstoneOf(ctx context.Context, st Store, by Tombstone) (*Tombstone, error) {
	chains, err := st.Chains(ctx)
	if err != nil {
		return nil, err
	}
	if len(chains) == 0 {
		return nil, &veredicto.NotFoundError{What: "audit record"}
	}
	t := by
	t.Heads, t.Entries = map[string]string{}, map[string]int{}
	named, reports := map[string]bool{}, map[string]bool{}
	for _, chain := range chains {
		lines, err := st.Lines(ctx, chain)
		if err != nil {
			return nil, err
		}
		if len(lines) == 0 {
			continue
		}
		t.Heads[chain], t.Entries[chain] = Hash(lines[len(lines)-1]), len(lines)
		for _, line := range lines {
			// A damaged entry still counts in its chain's head: the
			// tombstone keeps what was there, sound or not.
			e, why := parseEntry(line)
			if why != "" {
				continue
			}
			ts, _ := texts(e)
			for _, h := range ts {
				named[h[1]] = true
			}
			switch e.Kind {
			case KindReport:
				var r Report
				if json.Unmarshal(e.Data, &r) == nil && r.SHA256 != "" {
					reports[r.SHA256] = true
				}
			case KindStart:
				var s Start
				if json.Unmarshal(e.Data, &s) == nil && chain == MainChain && t.Workflow == "" {
					t.Workflow, t.Tenant, t.Search = s.Workflow, s.Tenant, SearchOf(s)
					if t.Execution == "" {
						t.Execution = s.Execution
					}
				}
			}
		}
	}
	t.Texts, t.Reports = slices.Sorted(maps.Keys(named)), slices.Sorted(maps.Keys(reports))
	return &t, nil
}

// SearchOf is the search id a start entry's input names ("" when none).
func SearchOf(s Start) string {
	var in struct {
		SearchID string `json:"search_id"`
	}
	_ = json.Unmarshal(s.Input, &in)
	return in.SearchID
}

func appendTombstone(ctx context.Context, st Store, t *Tombstone) error {
	data, err := json.Marshal(t)
	if err != nil {
		return err
	}
	line, err := json.Marshal(Entry{Seq: 0, Chain: TombstoneChain, Kind: KindTombstone, At: t.PurgedAt.UTC(), Data: data, Prev: Genesis(TombstoneChain)})
	if err != nil {
		return err
	}
	if err := st.Append(ctx, TombstoneChain, 0, line); err != nil {
		return fmt.Errorf("audit purge of %s: write the tombstone: %w", t.Execution, err)
	}
	return nil
}

// ReadTombstone is the tombstone of a purged record; nil for a record
// that was not purged. A tombstone chain that does not hold exactly one
// sound tombstone is an error saying so.
func ReadTombstone(ctx context.Context, st Store) (*Tombstone, error) {
	lines, err := st.Lines(ctx, TombstoneChain)
	if err != nil {
		return nil, err
	}
	if len(lines) == 0 {
		return nil, nil
	}
	t, why := parseTombstone(lines)
	if why != "" {
		return nil, &veredicto.DamagedError{What: "audit tombstone", Reason: why}
	}
	return t, nil
}

func parseTombstone(lines [][]byte) (*Tombstone, string) {
	if len(lines) != 1 {
		return nil, fmt.Sprintf("the tombstone chain holds %d entries; a purge writes one", len(lines))
	}
	e, why := parseEntry(lines[0])
	switch {
	case why != "":
		return nil, why
	case e.Kind != KindTombstone || e.Seq != 0 || e.Chain != TombstoneChain:
		return nil, fmt.Sprintf("is a %s entry numbered %d of chain %q, not the tombstone", e.Kind, e.Seq, e.Chain)
	case e.Prev != Genesis(TombstoneChain):
		return nil, "does not start the tombstone chain: it was changed"
	}
	var t Tombstone
	dec := json.NewDecoder(bytes.NewReader(e.Data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return nil, "is a tombstone that does not decode: " + err.Error()
	}
	if t.PurgedAt.IsZero() || t.Heads == nil || t.Entries == nil {
		return nil, "is a tombstone without its time or hashes"
	}
	return &t, ""
}

// verifyTombstone checks a purged record: one sound tombstone and nothing
// else left of the chains it replaced.
func verifyTombstone(ctx context.Context, store Store, chains []string) ([]Problem, error) {
	lines, err := store.Lines(ctx, TombstoneChain)
	if err != nil {
		return nil, err
	}
	var problems []Problem
	if _, why := parseTombstone(lines); why != "" {
		problems = append(problems, Problem{Chain: TombstoneChain, Seq: 0, What: why})
	}
	for _, c := range chains {
		if c != TombstoneChain {
			problems = append(problems, Problem{Chain: c, Seq: -1,
				What: "the record was purged, yet this chain remains: the purge did not finish (purge again) or entries were written after it"})
		}
	}
	return problems, nil
}

// Erase removes every chain of the folder's record but keep, and every
// text.
func (d *Dir) Erase(_ context.Context, keep string) error {
	if err := os.RemoveAll(filepath.Join(d.root, "texts")); err != nil {
		return err
	}
	ents, err := os.ReadDir(filepath.Join(d.root, "chains"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.Name() == url.PathEscape(keep)+".jsonl" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(d.root, "chains", e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// Executions lists the executions whose records Folders keeps for tenant,
// sorted (none in Single mode, which keeps one unnamed record).
func (f *Folders) Executions(tenant string) ([]string, error) {
	if f.Single {
		return nil, nil
	}
	return escapedNames(filepath.Dir(f.Path(tenant, "x")), func(e fs.DirEntry) (string, bool) { return e.Name(), e.IsDir() })
}
