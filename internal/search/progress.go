package search

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/veredicto/veredicto"
)

// Stage records live under one prefix per tenant and search:
//
//	stage/<tenant>/<search>/<candidate>/<agent>.<attempt>.<hash>
//
// with "-" for an empty tenant (a one-machine run) and for the candidate of a
// search-level stage (gem5). Only this package writes and reads that layout.
// A record is one key under its candidate: in a folder, one file in the
// candidate's folder, where it was a file two folders down until
// 2026-11-27 (stage/<tenant>/<search>/<candidate>/<agent>/<attempt>/<hash>,
// legacyStageKey) — three new files or folders per stage, each costly on
// a busy disk. Records kept in that layout are still read (a re-run of an
// earlier output folder, a replay of an earlier record) and listed.
func stagePrefix(tenant, searchID string) string {
	if tenant == "" {
		tenant = "-"
	}
	return "stage/" + tenant + "/" + searchID + "/"
}

// stageKeyParts reads a stage record key (either layout) back into its
// candidate, agent and attempt.
func stageKeyParts(key string) (candidateID, agent string, attempt int, ok bool) {
	parts := strings.Split(key, "/")
	if parts[0] != "stage" {
		return "", "", 0, false
	}
	var n string
	switch len(parts) {
	case 5:
		name := strings.Split(parts[4], ".")
		if len(name) != 3 || name[2] == "" {
			return "", "", 0, false
		}
		agent, n = name[0], name[1]
	case 7:
		agent, n = parts[4], parts[5]
	default:
		return "", "", 0, false
	}
	attempt, err := strconv.Atoi(n)
	if err != nil || attempt < 0 || agent == "" {
		return "", "", 0, false
	}
	return parts[3], agent, attempt, true
}

// ParseStageKey reads a stage record key back: the candidate ("-" for
// search-level stages such as gem5) and the stage name as reports show it
// ("gem4_retry_1", "correction_1", "gem3_reask").
func ParseStageKey(key string) (candidateID, stage string, ok bool) {
	cand, agent, attempt, ok := stageKeyParts(key)
	if !ok {
		return "", "", false
	}
	return cand, stageName(agent, attempt), true
}

// stageRank orders a candidate's stages as the protocol runs them: GEM1,
// GEM2, GEM3 and its re-ask, then GEM4 with each correction before the audit
// it leads to (gem4, correction_1, gem4_retry_1, correction_2, …), however
// many QA retries the search allows.
func stageRank(agent string, attempt int) [2]int {
	switch agent {
	case AgentGem5:
		return [2]int{0, 0}
	case AgentGem1:
		return [2]int{1, 0}
	case AgentGem2:
		return [2]int{2, 0}
	case AgentGem3:
		return [2]int{3, attempt}
	case AgentGem4:
		return [2]int{4, 2 * attempt}
	case AgentCorrection:
		return [2]int{4, 2*attempt - 1}
	}
	return [2]int{5, attempt}
}

// CandidateProgress is one candidate's finished stages, in protocol order.
type CandidateProgress struct {
	CandidateID string
	Stages      []string
}

// SearchProgress is what the context store holds about a search's run.
type SearchProgress struct {
	// Stages are the search-level stages (gem5).
	Stages []string
	// Candidates are sorted by id.
	Candidates []CandidateProgress
	// Usage is the LLM usage booked so far.
	Usage veredicto.Usage
}

// ProgressStore is the part of the context store Progress reads.
type ProgressStore interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	List(ctx context.Context, prefix string) ([]string, error)
}

// UsageReader is the optional usage ledger of the context store (DynamoDB):
// with one, usage is a single read instead of a sum over stage records.
type UsageReader interface {
	Usage(ctx context.Context, tenant, searchID string) (veredicto.Usage, error)
}

// Progress reads the stages a tenant's search has finished, per candidate
// and in the protocol's order, and the usage booked so far. A search with
// no stored stage yields an empty progress, not an error.
func Progress(ctx context.Context, st ProgressStore, tenant, searchID string) (SearchProgress, error) {
	prefix := stagePrefix(tenant, searchID)
	keys, err := st.List(ctx, prefix)
	if err != nil {
		return SearchProgress{}, fmt.Errorf("list stages of %s: %w", searchID, err)
	}
	var p SearchProgress
	ledger, _ := st.(UsageReader)
	if ledger != nil {
		if p.Usage, err = ledger.Usage(ctx, tenant, searchID); err != nil {
			return SearchProgress{}, fmt.Errorf("read usage of %s: %w", searchID, err)
		}
	}
	type done struct {
		agent   string
		attempt int
	}
	byCand := map[string][]done{}
	for _, k := range keys {
		cand, agent, attempt, ok := stageKeyParts(k)
		if !ok || !strings.HasPrefix(k, prefix) {
			continue
		}
		if ledger == nil {
			b, ok, err := st.Get(ctx, k)
			if err != nil {
				return SearchProgress{}, fmt.Errorf("read %s: %w", k, err)
			}
			var r StageRecord
			if ok && json.Unmarshal(b, &r) == nil {
				p.Usage.Add(r.Usage)
			}
		}
		byCand[cand] = append(byCand[cand], done{agent, attempt})
	}
	names := func(ds []done) []string {
		sort.SliceStable(ds, func(i, j int) bool {
			a, b := stageRank(ds[i].agent, ds[i].attempt), stageRank(ds[j].agent, ds[j].attempt)
			return a[0] < b[0] || a[0] == b[0] && a[1] < b[1]
		})
		out := []string{}
		for _, d := range ds {
			// A stage re-run on changed inputs has a second record under a
			// new hash; it is still one stage.
			if n := stageName(d.agent, d.attempt); !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		return out
	}
	p.Stages = names(byCand["-"])
	delete(byCand, "-")
	ids := make([]string, 0, len(byCand))
	for id := range byCand {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	p.Candidates = []CandidateProgress{}
	for _, id := range ids {
		p.Candidates = append(p.Candidates, CandidateProgress{CandidateID: id, Stages: names(byCand[id])})
	}
	return p, nil
}
