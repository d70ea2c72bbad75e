package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// Problem is what Verify found wrong: the chain and entry where it is.
type Problem struct {
	Chain string `json:"chain"`
	Seq   int    `json:"seq"` // -1 for the record as a whole
	What  string `json:"what"`
}

func (p Problem) String() string {
	if p.Seq < 0 {
		return p.Chain + ": " + p.What
	}
	return fmt.Sprintf("%s entry %d: %s", p.Chain, p.Seq, p.What)
}

// Files reads a file the record says was written, by its path.
type Files func(ctx context.Context, path string) ([]byte, error)

// Verify checks a record: every chain links entry to entry from its
// genesis; every text an entry names is there and hashes to its name;
// every report file hashes to what was recorded (when files is set); the
// summary names every chain's head; and no two entries contradict each
// other (a confirmation recorded expired and a decision applied from it).
// It returns the problems found, the first of each chain first; none for
// a sound record. A purged record is sound when its tombstone is, and
// nothing else remains of it.
func Verify(ctx context.Context, store Store, files Files) ([]Problem, error) {
	chains, err := store.Chains(ctx)
	if err != nil {
		return nil, err
	}
	if slices.Contains(chains, TombstoneChain) {
		return verifyTombstone(ctx, store, chains) // a purged record (ReadTombstone says when, by whom)
	}
	if !slices.Contains(chains, MainChain) {
		return []Problem{{Chain: MainChain, Seq: -1, What: "the record has no main chain"}}, nil
	}
	// main first: its summary names the others.
	chains = append([]string{MainChain}, slices.DeleteFunc(slices.Clone(chains), func(c string) bool { return c == MainChain })...)
	var problems []Problem
	hashes := map[string][]string{} // chain → hash of each entry, in order
	var entries []Entry
	broken := map[string]bool{} // chains with a broken link: already named
	last := map[string]Entry{}  // report path → its last entry: a file written again is checked as last written
	for _, chain := range chains {
		lines, err := store.Lines(ctx, chain)
		if err != nil {
			return nil, err
		}
		prev := Genesis(chain)
		for i, line := range lines {
			e, why := parseEntry(line)
			switch {
			case why != "":
			case e.Seq != i:
				why = fmt.Sprintf("is numbered %d (an entry was removed or moved)", e.Seq)
			case e.Chain != chain:
				why = fmt.Sprintf("says it belongs to chain %q", e.Chain)
			case e.Prev != prev && i > 0:
				why = fmt.Sprintf("does not follow entry %d: one of the two was changed, or entries were removed or reordered between them", i-1)
			case e.Prev != prev:
				why = "does not start the chain: it was changed, or entries before it were removed"
			}
			if why != "" {
				problems = append(problems, Problem{Chain: chain, Seq: i, What: why})
				broken[chain] = true
				break // what follows a broken link cannot be trusted
			}
			if why := checkTexts(ctx, store, e); why != "" {
				// The chain still links: the entry stands, its text does not.
				problems = append(problems, Problem{Chain: chain, Seq: i, What: why})
			}
			if e.Kind == KindReport {
				last[reportPath(e)] = e
			}
			prev = Hash(line)
			hashes[chain] = append(hashes[chain], prev)
			entries = append(entries, e)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(last)) {
		if why := checkFile(ctx, files, last[p]); why != "" {
			problems = append(problems, Problem{Chain: last[p].Chain, Seq: last[p].Seq, What: why})
		}
	}
	problems = append(problems, checkSummary(chains, hashes, entries, broken)...)
	problems = append(problems, contradictions(entries)...)
	return problems, nil
}

var knownKinds = []string{KindStart, KindStage, KindModel, KindDecision, KindHuman, KindReport, KindClock, KindSummary, KindTombstone}

func parseEntry(line []byte) (Entry, string) {
	var e Entry
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return e, "is not an entry: " + err.Error()
	}
	if !slices.Contains(knownKinds, e.Kind) {
		return e, fmt.Sprintf("has an unknown kind %q", e.Kind)
	}
	return e, ""
}

// texts lists the texts an entry names: role → hash.
func texts(e Entry) ([][2]string, error) {
	var out [][2]string
	switch e.Kind {
	case KindModel:
		var c ModelCall
		if err := json.Unmarshal(e.Data, &c); err != nil {
			return nil, err
		}
		for _, m := range c.Messages {
			if m.Text == nil {
				out = append(out, [2]string{m.Role + " message", m.Hash})
			} else if Hash([]byte(*m.Text)) != m.Hash {
				return nil, fmt.Errorf("its %s message does not hash to %s", m.Role, short(m.Hash))
			}
		}
	case KindStart:
		var st Start
		if err := json.Unmarshal(e.Data, &st); err != nil {
			return nil, err
		}
		for _, id := range slices.Sorted(maps.Keys(st.Documents)) {
			out = append(out, [2]string{"document " + id, st.Documents[id]})
		}
	case KindStage:
		var st Stage
		if err := json.Unmarshal(e.Data, &st); err != nil {
			return nil, err
		}
		if st.Reused {
			out = append(out, [2]string{"stage record " + st.Stage, st.Record})
		}
	}
	return out, nil
}

// checkTexts checks that the texts an entry names are held and intact.
func checkTexts(ctx context.Context, store Store, e Entry) string {
	ts, err := texts(e)
	if err != nil {
		return fmt.Sprintf("is a %s entry that does not hold together: %v", e.Kind, err)
	}
	for _, t := range ts {
		text, err := store.Text(ctx, t[1])
		if err != nil {
			return fmt.Sprintf("names the %s %s, which the record does not hold", t[0], short(t[1]))
		}
		if Hash(text) != t[1] {
			return fmt.Sprintf("names the %s %s, whose text was changed", t[0], short(t[1]))
		}
	}
	return ""
}

func reportPath(e Entry) string {
	var r Report
	_ = json.Unmarshal(e.Data, &r)
	return r.Path
}

// checkFile checks a report entry against the file.
func checkFile(ctx context.Context, files Files, e Entry) string {
	if e.Kind != KindReport || files == nil {
		return ""
	}
	var r Report
	if err := json.Unmarshal(e.Data, &r); err != nil {
		return "is a report that does not decode: " + err.Error()
	}
	b, err := files(ctx, r.Path)
	if err != nil {
		return fmt.Sprintf("records %s, which cannot be read: %v", r.Path, err)
	}
	if Hash(b) != r.SHA256 {
		return fmt.Sprintf("records %s, which was changed after it was written", r.Path)
	}
	return ""
}

// checkSummary checks that the last summary names every chain's head.
func checkSummary(chains []string, hashes map[string][]string, entries []Entry, broken map[string]bool) []Problem {
	var sum *Summary
	seq := -1
	for _, e := range entries {
		if e.Kind == KindSummary && e.Chain == MainChain {
			s := Summary{}
			if json.Unmarshal(e.Data, &s) == nil {
				sum, seq = &s, e.Seq
			}
		}
	}
	if sum == nil {
		if broken[MainChain] {
			return nil // its break is named
		}
		return []Problem{{Chain: MainChain, Seq: -1, What: "the record has no summary: the execution did not end, or its end was removed"}}
	}
	var out []Problem
	for _, chain := range chains {
		if chain == MainChain || broken[chain] {
			continue
		}
		n, ok := sum.Entries[chain]
		switch {
		case !ok:
			out = append(out, Problem{Chain: MainChain, Seq: seq, What: fmt.Sprintf("the summary does not name chain %s", chain)})
		case n > len(hashes[chain]):
			out = append(out, Problem{Chain: chain, Seq: len(hashes[chain]), What: fmt.Sprintf("the summary counts %d entries; the chain holds %d (an entry was removed)", n, len(hashes[chain]))})
		case n == 0 || hashes[chain][n-1] != sum.Heads[chain]:
			out = append(out, Problem{Chain: chain, Seq: n - 1, What: "is not the head the summary recorded"})
		}
	}
	for chain := range sum.Entries {
		if !slices.Contains(chains, chain) {
			out = append(out, Problem{Chain: chain, Seq: -1, What: "the summary names this chain; the record does not hold it"})
		}
	}
	return out
}

// contradictions finds entries that cannot both be true: two different
// outcomes of one confirmation, or a decision applied from a confirmation
// the record holds as expired, pending or otherwise decided (or not at
// all).
func contradictions(entries []Entry) []Problem {
	type seen struct {
		status string
		chain  string
		seq    int
	}
	outcome := map[string]seen{}
	var out []Problem
	for _, e := range entries {
		if e.Kind != KindHuman {
			continue
		}
		var h HumanDecision
		if json.Unmarshal(e.Data, &h) != nil || h.Confirmation == "" {
			continue
		}
		if prev, ok := outcome[h.Confirmation]; ok && prev.status != h.Status && !openStatus(prev.status) {
			out = append(out, Problem{Chain: e.Chain, Seq: e.Seq, What: fmt.Sprintf("records confirmation %s %s; %s entry %d recorded it %s", h.Confirmation, h.Status, prev.chain, prev.seq, prev.status)})
			continue
		}
		outcome[h.Confirmation] = seen{h.Status, e.Chain, e.Seq}
	}
	for _, e := range entries {
		if e.Kind != KindDecision {
			continue
		}
		var d Decision
		if json.Unmarshal(e.Data, &d) != nil || d.Confirmation == "" {
			continue
		}
		h, ok := outcome[d.Confirmation]
		switch {
		case !ok:
			out = append(out, Problem{Chain: e.Chain, Seq: e.Seq, What: fmt.Sprintf("applies confirmation %s, of which the record holds no decision", d.Confirmation)})
		case h.status != d.Applies:
			out = append(out, Problem{Chain: e.Chain, Seq: e.Seq, What: fmt.Sprintf("applies confirmation %s as %s; %s entry %d recorded it %s", d.Confirmation, d.Applies, h.chain, h.seq, h.status)})
		}
	}
	return out
}

// openStatus: a question not answered yet, which a later entry may answer.
func openStatus(s string) bool { return s == "pending" }

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
