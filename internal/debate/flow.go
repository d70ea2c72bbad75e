package debate

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/veredicto/veredicto"
)

// Flow is the state the debate's steps pass along: the result so far and
// the bookkeeping of the loop.
type Flow struct {
	Tenant string `json:"tenant"`
	// Execution is the execution's name (Prepare's $$.Execution.Name): its
	// audit record's.
	Execution       string        `json:"execution,omitempty"`
	Knowledge       []string      `json:"knowledge"`
	OptionalCouncil bool          `json:"optional_council"`
	Participants    []Participant `json:"participants"`
	// Library holds each retrieved chunk once; Chunks names, per
	// participant, the ids its own queries brought (the state stays small:
	// no text is repeated). With a log store the library lives there,
	// LibraryRefs naming its batches, and Library is read back only within
	// a step (library.go).
	Library     map[string]Chunk    `json:"library,omitempty"`
	LibraryRefs []string            `json:"library_refs,omitempty"`
	Chunks      map[string][]string `json:"chunks"`
	stored      map[string]bool     // the chunks read from LibraryRefs (see openLibrary)
	// KnowledgeChunks is the size of the knowledge base (for the checklist).
	KnowledgeChunks int    `json:"knowledge_chunks"`
	LoopCounter     int    `json:"loop_counter"`
	LastHash        string `json:"last_hash"`
	// Next is the state machine's branch: rebuttal, refine, synthesize,
	// council, human or finish. Index is the next agent of the sequential
	// round or the item of a Map.
	Next       string    `json:"next"`
	Index      int       `json:"index"`
	RoundStart time.Time `json:"round_start"`
	Current    []Answer  `json:"current"`
	// Rebuttals and Invalid collect the sequential round in progress.
	Rebuttals map[string]*Rebuttal `json:"rebuttals,omitempty"`
	Invalid   []string             `json:"invalid,omitempty"`
	// Roster and Council are the Map states' items: who speaks, and the
	// names of the seed's TIMEOUT line when a Task times out.
	Roster  []RosterItem `json:"roster"`
	Members []RosterItem `json:"members"`
	Preview *Preview     `json:"preview,omitempty"`
	// TaskTimeoutSeconds bounds each agent Task in the state machine (a
	// second line behind the step's own per-agent timeout);
	// CouncilTimeoutSeconds each council vote, behind timeout.council.
	TaskTimeoutSeconds    int    `json:"task_timeout_seconds"`
	CouncilTimeoutSeconds int    `json:"council_timeout_seconds"`
	HumanTimeoutSeconds   int    `json:"human_timeout_seconds"`
	Result                Result `json:"result"`
}

// Preview is what the person sees in the debate_decision confirmation.
type Preview struct {
	DebateID    string   `json:"debate_id"`
	Question    string   `json:"question"`
	Options     []string `json:"options"`
	Proposed    string   `json:"proposed_decision"`
	Confidence  float64  `json:"confidence"`
	Summary     string   `json:"summary"`
	Divergences []string `json:"divergences"`
	Reasons     []string `json:"reasons"`
}

// RosterItem is one Map item: the agent's index, id, CARGO and FASE.
type RosterItem struct {
	Index int    `json:"index"`
	ID    string `json:"id"`
	Cargo string `json:"cargo"`
	Fase  string `json:"fase"`
}

func roster(ps []Participant, where string) []RosterItem {
	out := make([]RosterItem, len(ps))
	for i, p := range ps {
		out[i] = RosterItem{Index: i, ID: p.ID, Cargo: strings.ToUpper(p.ID), Fase: where}
	}
	return out
}

// Turn is one Map item: the flow and the index of the agent or member.
type Turn struct {
	Flow  Flow `json:"flow"`
	Index int  `json:"index"`
}

// TurnOutput is an agent's answer in a Map, and what its use of the
// retrieval tool brought: the query's counts, the chunk ids, and the
// chunks themselves — in the log store (LibraryRef names the batch) when
// there is one, else in Chunks.
type TurnOutput struct {
	Answer     Answer          `json:"answer"`
	Vote       *Vote           `json:"vote,omitempty"`
	Invalid    bool            `json:"invalid"`
	Event      string          `json:"event,omitempty"`
	Notes      []string        `json:"notes,omitempty"`
	Usage      veredicto.Usage `json:"usage"`
	RAG        RAGStats        `json:"rag"`
	Retrieved  []string        `json:"retrieved,omitempty"`
	LibraryRef string          `json:"library_ref,omitempty"`
	Chunks     []Chunk         `json:"chunks,omitempty"`
}

// RoundInput closes a parallel round: the flow and the Map's outputs.
type RoundInput struct {
	Flow  Flow         `json:"flow"`
	Turns []TurnOutput `json:"turns"`
}

// question re-reads the flow's question (QUESTION.yaml's fields).
func (f *Flow) question() Question { return f.Result.Question }

// StateBudget bounds the debate's state (the Flow) at a round's close for
// another round to start: Step Functions carries at most 256 KiB between
// states, and a round adds up to one answer per participant (each bounded
// by AgentMaxTokens), then the synthesis and the council add theirs. A
// debate whose state reaches it goes to the synthesis with what it has,
// as when it reaches max_rounds, and its report says why.
const StateBudget = 128 << 10

func flowSize(f *Flow) int {
	b, err := json.Marshal(f)
	if err != nil { // never: a Flow is plain data
		return 0
	}
	return len(b)
}

// keep adds chunks to the library and returns their ids.
func (f *Flow) keep(cs []Chunk) []string {
	if f.Library == nil {
		f.Library = map[string]Chunk{}
	}
	ids := make([]string, len(cs))
	for i, c := range cs {
		f.Library[c.ID] = c
		ids[i] = c.ID
	}
	return ids
}

// chunks returns the library's chunks of ids, in order.
func (f *Flow) chunks(ids []string) []Chunk {
	out := make([]Chunk, 0, len(ids))
	for _, id := range ids {
		if c, ok := f.Library[id]; ok {
			out = append(out, c)
		}
	}
	return out
}
