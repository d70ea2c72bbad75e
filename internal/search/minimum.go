package search

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// minimumInputs are each agent's minimum documents (seed 000 §2,
// "Entradas mínimas"): GEM5 jd_text, kickoff_notes and company_context;
// GEM1 cv_text and interview_notes; GEM2 tests_text and case_notes; GEM3
// references_text and client_culture. The other minimum inputs are the
// upstream agents' outputs, which the workflow's order guarantees, and
// GEM4's sources index, which the loader builds. The supervisor checks
// them before each agent runs (§3): an agent is never sent a candidate
// whose minimum documents are missing.
var minimumInputs = map[string][]string{
	AgentGem5: {FileJD, FileKickoff, FileCompany},
	AgentGem1: {FileCV, FileInterview},
	AgentGem2: {FileTests, FileCase},
	AgentGem3: {FileReferences, FileCulture},
}

// candidateAgents are the agents that evaluate a candidate, in order.
var candidateAgents = []string{AgentGem1, AgentGem2, AgentGem3}

// MinimumInputs lists agent's minimum documents, by file name.
func MinimumInputs(agent string) []string { return append([]string(nil), minimumInputs[agent]...) }

// MissingInputs lists the minimum documents of agent that candidate (""
// for GEM5) lacks, by their path in the search folder; none when the agent
// may run.
func (s *Search) MissingInputs(agent, candidate string) []string {
	var out []string
	for _, f := range minimumInputs[agent] {
		id := f
		if candidateFiles[f] {
			id = path.Join(dirCandidates, candidate, f)
		}
		if !s.Index[id] {
			out = append(out, id)
		}
	}
	return out
}

// firstGap is the first agent of candidate's evaluation whose minimum
// documents are missing, and those documents ("" and none when every
// agent may run).
func (s *Search) firstGap(candidate string) (agent string, missing []string) {
	for _, a := range candidateAgents {
		if m := s.MissingInputs(a, candidate); len(m) > 0 {
			return a, m
		}
	}
	return "", nil
}

// InputGaps lists, for each candidate whose evaluation would stop for
// want of a minimum document, every agent's missing documents: what
// "search run --strict-inputs" refuses a search for.
func (s *Search) InputGaps() map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for _, c := range s.Candidates {
		for _, a := range candidateAgents {
			if m := s.MissingInputs(a, c.CandidateID); len(m) > 0 {
				if out[c.CandidateID] == nil {
					out[c.CandidateID] = map[string][]string{}
				}
				out[c.CandidateID][a] = m
			}
		}
	}
	return out
}

// InputGapsError is a search refused because candidates lack minimum
// documents (search run --strict-inputs): every candidate's gaps, by
// agent.
type InputGapsError struct {
	Gaps map[string]map[string][]string
}

func (e *InputGapsError) Error() string {
	ids := make([]string, 0, len(e.Gaps))
	for id := range e.Gaps {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b strings.Builder
	fmt.Fprintf(&b, "%d candidate(s) lack minimum documents (seed 000 §2):", len(ids))
	for _, id := range ids {
		var parts []string
		for _, a := range candidateAgents {
			if m := e.Gaps[id][a]; len(m) > 0 {
				parts = append(parts, fmt.Sprintf("%s needs %s", strings.ToUpper(a), strings.Join(m, ", ")))
			}
		}
		fmt.Fprintf(&b, "\n  %s: %s", id, strings.Join(parts, "; "))
	}
	return b.String()
}

// ErrorName: the search is refused as an invalid input.
func (*InputGapsError) ErrorName() string { return "InvalidInputError" }
