package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
// a sound record.
func Verify(ctx context.Context, store Store, files Files) ([]Problem, error) {
	chains, err := store.Chains(ctx)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(chains, MainChain) {
		return []Problem{{Chain: MainChain, Seq: -1, What: "the record has no main chain"}}, nil
	}
	// main first: its summary names the others.
	chains = append([]string{MainChain}, slices.DeleteFunc(slices.Clone(chains), func(c string) bool { return c == MainChain })...)
	var problems []Problem
	hashes := map[string][]string{} // chain → hash of each entry, in order
	var entries []Entry
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
			case e.Prev != prev:
				why = "does not follow the entry before it (it or an earlier one was changed, removed or reordered)"
			}
			if why != "" {
				problems = append(problems, Problem{Chain: chain, Seq: i, What: why})
				break // what follows a broken link cannot be trusted
			}
			if why := checkTexts(ctx, store, e); why != "" {
				problems = append(problems, Problem{Chain: chain, Seq: i, What: why})
				break
			}
			if why := checkFile(ctx, files, e); why != "" {
				problems = append(problems, Problem{Chain: chain, Seq: i, What: why})
			}
			prev = Hash(line)
			hashes[chain] = append(hashes[chain], prev)
			entries = append(entries, e)
		}
	}
	problems = append(problems, checkSummary(chains, hashes, entries)...)
	problems = append(problems, contradictions(entries)...)
	return problems, nil
}

var knownKinds = []string{KindStart, KindModel, KindDecision, KindHuman, KindReport, KindClock, KindSummary, KindTombstone}

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

// checkTexts checks the texts a model call names.
func checkTexts(ctx context.Context, store Store, e Entry) string {
	if e.Kind != KindModel {
		return ""
	}
	var c ModelCall
	if err := json.Unmarshal(e.Data, &c); err != nil {
		return "is a model call that does not decode: " + err.Error()
	}
	for _, m := range c.Messages {
		text, err := store.Text(ctx, m.Hash)
		if err != nil {
			return fmt.Sprintf("names the %s message %s, which the record does not hold", m.Role, short(m.Hash))
		}
		if Hash(text) != m.Hash {
			return fmt.Sprintf("names the %s message %s, whose text was changed", m.Role, short(m.Hash))
		}
	}
	return ""
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
func checkSummary(chains []string, hashes map[string][]string, entries []Entry) []Problem {
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
		return []Problem{{Chain: MainChain, Seq: -1, What: "the record has no summary: the execution did not end, or its end was removed"}}
	}
	var out []Problem
	for _, chain := range chains {
		if chain == MainChain {
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

// contradictions finds entries that cannot both be true: a confirmation
// recorded expired (or pending) and a decision applied from it, or two
// different outcomes of one confirmation.
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
		if json.Unmarshal(e.Data, &h) != nil || h.Confirmation == "" || h.Status == "pending" {
			continue
		}
		if prev, ok := outcome[h.Confirmation]; ok && prev.status != h.Status {
			out = append(out, Problem{Chain: e.Chain, Seq: e.Seq, What: fmt.Sprintf("records confirmation %s %s; %s entry %d recorded it %s", h.Confirmation, h.Status, prev.chain, prev.seq, prev.status)})
			continue
		}
		outcome[h.Confirmation] = seen{h.Status, e.Chain, e.Seq}
	}
	return out
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
