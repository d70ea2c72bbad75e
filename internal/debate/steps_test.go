package debate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/internal/store/file"
	"github.com/veredicto/veredicto/statemachines"
)

func TestValidateStart(t *testing.T) {
	q := json.RawMessage(`{"question": "¿Avanzamos?", "options": ["a", "b"], "participants": [{"id": "cfo", "brief": "x"}]}`)
	tests := []struct {
		name  string
		in    StartInput
		field string
	}{
		{"ok", StartInput{Tenant: "acme", DebateID: "d-1", Question: q}, ""},
		{"no tenant", StartInput{DebateID: "d-1", Question: q}, "tenant"},
		{"bad id", StartInput{Tenant: "acme", DebateID: "d/1", Question: q}, "debate_id"},
		{"no question", StartInput{Tenant: "acme", DebateID: "d-1"}, "question"},
		{"bad question", StartInput{Tenant: "acme", DebateID: "d-1", Question: json.RawMessage(`{"question": "x"}`)}, "options"},
		{"human timeout", StartInput{Tenant: "acme", DebateID: "d-1", Question: q, HumanTimeoutSeconds: -1}, "human_timeout_seconds"},
	}
	for _, tt := range tests {
		err := ValidateStart(tt.in)
		var ie *veredicto.InvalidInputError
		switch {
		case tt.field == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.field != "" && (!errors.As(err, &ie) || ie.Field != tt.field):
			t.Errorf("%s: err = %v, want InvalidInputError on %s", tt.name, err, tt.field)
		}
	}
}

// TestKnowledgePrefixesStayInTheTenant: a knowledge prefix outside the
// tenant's own namespace is refused before anything is read, by
// ValidateStart (POST /debates) and by Prepare alike, naming the field and
// the prefix.
func TestKnowledgePrefixesStayInTheTenant(t *testing.T) {
	q := json.RawMessage(`{"question": "¿Avanzamos?", "options": ["a", "b"], "participants": [{"id": "cfo", "brief": "x"}]}`)
	for _, ok := range []string{"knowledge/acme/", "knowledge/acme/policies/", "searches/acme/s-1/", "reports/acme/s-1/c-5/", "knowledge/acme/kb/big.md"} {
		if err := ValidateKnowledge("acme", []string{ok}); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{
		"../../auth/", "knowledge/acme/../../auth/", "knowledge/acme/./x/", "knowledge/globex/", "knowledge/acme-2/",
		"knowledge/acme", "/knowledge/acme/", "/etc/passwd", "knowledge//acme/", "knowledge/acme//x/", "//acme/",
		"", "acme/", "acme/knowledge/", "knowledge\\acme\\", "knowledge/acme/\x00/", "k n/acme/",
	} {
		err := ValidateKnowledge("acme", []string{"knowledge/acme/", bad})
		var ie *veredicto.InvalidInputError
		if !errors.As(err, &ie) || ie.Field != "knowledge" || !strings.Contains(ie.Problem, fmt.Sprintf("%q", bad)) {
			t.Errorf("%q: err = %v, want InvalidInputError on knowledge naming the prefix", bad, err)
		}
	}
	reads := 0
	s := &Steps{Agents: &funcAgents{}, Knowledge: knowledgeReads{&reads}, Logger: quiet()}
	in := StartInput{Tenant: "acme", DebateID: "d-1", Question: q, Knowledge: []string{"../../auth/"}}
	for name, err := range map[string]error{"ValidateStart": ValidateStart(in), "Prepare": func() error { _, err := s.Prepare(context.Background(), in); return err }()} {
		var ie *veredicto.InvalidInputError
		if !errors.As(err, &ie) || ie.Field != "knowledge" || !strings.Contains(err.Error(), `"../../auth/"`) {
			t.Errorf("%s: %v, want InvalidInputError on knowledge naming the prefix", name, err)
		}
	}
	if reads != 0 {
		t.Errorf("%d reads of the knowledge store, want none", reads)
	}
}

// knowledgeReads counts reads of the knowledge base and finds nothing.
type knowledgeReads struct{ n *int }

func (c knowledgeReads) List(context.Context, string) ([]string, error) { *c.n++; return nil, nil }
func (c knowledgeReads) Get(context.Context, string) ([]byte, error)    { *c.n++; return nil, nil }

// TestStepsBoundAgentsByTheRound: an agent step that starts after its
// round's time is spent is a TIMEOUT without waiting for the model.
func TestStepsBoundAgentsByTheRound(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	called := false
	agents := &funcAgents{position: func(ctx context.Context, in PositionInput) (Position, error) {
		called = true
		<-ctx.Done()
		return Position{}, ctx.Err()
	}}
	s := &Steps{Agents: agents, Now: func() time.Time { return now }, Logger: quiet()}
	q := json.RawMessage(`{"question": "¿Avanzamos?", "options": ["a", "b"], "participants": [{"id": "cfo", "brief": "x"}, {"id": "ceo", "brief": "y"}]}`)
	f, err := s.Prepare(context.Background(), StartInput{Tenant: "acme", DebateID: "d-1", Question: q})
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(121 * time.Second) // past timeout.per_round (120 s), within the total (300 s)
	out, err := s.Position(context.Background(), Turn{Flow: f, Index: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Answer.TimedOut || out.Event != "TIMEOUT: CEO en la ronda 1" || !called {
		t.Errorf("turn %+v (called %v), want a TIMEOUT of CEO in round 1", out, called)
	}
}

// A debate whose state could no longer carry another round goes to the
// synthesis with what it has, naming the bound, instead of failing the
// state machine with States.DataLimitExceeded.
func TestARoundThatFillsTheStateGoesToTheSynthesis(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := &Steps{Agents: &funcAgents{}, Now: func() time.Time { return now }, Logger: quiet()}
	q := json.RawMessage(`{"question": "¿Avanzamos?", "options": ["a", "b"], "participants": [{"id": "cfo", "brief": "x"}, {"id": "ceo", "brief": "y"}]}`)
	for _, tc := range []struct {
		name      string
		reasoning int
		next      string
	}{
		{"small answers", 2_000, "rebuttal"},
		{"answers that fill the state", StateBudget / 2, "synthesize"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := s.Prepare(context.Background(), StartInput{Tenant: "acme", DebateID: "d-1", Question: q})
			if err != nil {
				t.Fatal(err)
			}
			// The two disagree on everything: the round does not converge.
			turn := func(id, rec, timing, risk string) TurnOutput {
				return TurnOutput{Answer: Answer{Participant: id, Position: &Position{Recommendation: rec, Position: "p",
					Reasoning: strings.Repeat("r", tc.reasoning), Timing: timing, Confidence: 70,
					Premises: []string{"[RAG:" + id + "]"}, Risks: []Risk{{Category: risk, Description: "d"}}}}}
			}
			out, err := s.CloseRound(context.Background(), RoundInput{Flow: f,
				Turns: []TurnOutput{turn("cfo", "a", "30d", "legal"), turn("ceo", "b", "later", "people")}})
			if err != nil {
				t.Fatal(err)
			}
			if out.Next != tc.next {
				t.Fatalf("next %q, want %q (state %d bytes)", out.Next, tc.next, flowSize(&out))
			}
			if tc.next == "synthesize" {
				if tr := out.Result.Trip; tr == nil || tr.Trigger != TriggerStateSize || !strings.Contains(tr.Condition, "128 KiB") {
					t.Errorf("trip %+v, want the state-size bound", tr)
				}
				if out.Current != nil {
					t.Errorf("the sequential round's answers are still carried")
				}
			}
		})
	}
}

// Rounds before the last leave the state for the log store and come back
// for the report; an archived round the store lost fails the step, naming
// it, instead of a report without it.
func TestRoundsBeforeTheLastLeaveTheState(t *testing.T) {
	logs := file.NewMemory()
	s := &Steps{Agents: &funcAgents{}, Logs: logs, Now: func() time.Time { return time.Unix(1_800_000_000, 0) }, Logger: quiet()}
	f := Flow{Tenant: "acme", Result: Result{SessionID: "d-1"}}
	for n := 1; n <= 3; n++ {
		f.Result.Rounds = append(f.Result.Rounds, Round{Number: n, Answers: []Answer{{Participant: "cfo", Position: &Position{Recommendation: "a"}}}})
		if err := s.archive(context.Background(), &f); err != nil {
			t.Fatal(err)
		}
	}
	for i, rd := range f.Result.Rounds {
		if last := i == 2; rd.Archived == last || (len(rd.Answers) == 0) != !last {
			t.Errorf("round %d: archived %v with %d answers", rd.Number, rd.Archived, len(rd.Answers))
		}
	}
	kept := f
	kept.Result.Rounds = append([]Round(nil), f.Result.Rounds...)
	if err := s.restore(context.Background(), &kept); err != nil {
		t.Fatal(err)
	}
	for _, rd := range kept.Result.Rounds {
		if rd.Archived || len(rd.Answers) != 1 || rd.Answers[0].Position.Recommendation != "a" {
			t.Errorf("restored round %d: %+v", rd.Number, rd)
		}
	}

	lost := &Steps{Logs: file.NewMemory()}
	err := lost.restore(context.Background(), &f)
	if err == nil || !strings.Contains(err.Error(), "round 1 is archived but missing") {
		t.Errorf("restore from a store without the rounds: %v", err)
	}
}

// The tenant and debate id of a Flow make log-store keys: one that could
// reach another tenant's or another debate's keys is refused, naming it.
func TestFlowKeysAreChecked(t *testing.T) {
	s := &Steps{Agents: &funcAgents{}, Logs: file.NewMemory(), Logger: quiet()}
	rounds := []Round{{Number: 1}, {Number: 2}}
	for _, tc := range []struct{ tenant, id, field string }{
		{"acme/d-1/rounds", "1", "tenant"},
		{"acme", "../globex", "result.SessionID"},
	} {
		f := Flow{Tenant: tc.tenant, Result: Result{SessionID: tc.id, Rounds: append([]Round(nil), rounds...)}}
		var ie *veredicto.InvalidInputError
		if err := s.archive(context.Background(), &f); !errors.As(err, &ie) || ie.Field != tc.field {
			t.Errorf("archive %q/%q: %v, want an invalid %s", tc.tenant, tc.id, err, tc.field)
		}
		if _, err := s.Finish(context.Background(), FinishInput{Flow: f}); !errors.As(err, &ie) || ie.Field != tc.field {
			t.Errorf("finish %q/%q: %v, want an invalid %s", tc.tenant, tc.id, err, tc.field)
		}
	}
}

// The library leaves the state for the log store in content-named batches
// and comes back within the steps that need it; a batch the store lost or
// that changed fails the step, naming it, instead of agents without their
// evidence.
func TestTheLibraryTravelsInTheLogStore(t *testing.T) {
	ctx := context.Background()
	logs := file.NewMemory()
	s := &Steps{Logs: logs, Logger: quiet()}
	lib := map[string]Chunk{
		"a_001": {ID: "a_001", Source: "a.md", Text: "primero"},
		"b_001": {ID: "b_001", Source: "b.md", Text: "segundo"},
	}
	f := Flow{Tenant: "acme", Library: maps.Clone(lib), Result: Result{SessionID: "d-1"}}
	if err := s.closeLibrary(ctx, &f); err != nil {
		t.Fatal(err)
	}
	if f.Library != nil || len(f.LibraryRefs) != 1 {
		t.Fatalf("after close: library %v, refs %v", f.Library, f.LibraryRefs)
	}
	if b, _ := json.Marshal(f); strings.Contains(string(b), "primero") {
		t.Errorf("the state still carries a chunk's text: %s", b)
	}
	// A retried step stores the same batch under the same name.
	again := Flow{Tenant: "acme", Library: maps.Clone(lib), Result: Result{SessionID: "d-1"}}
	if err := s.closeLibrary(ctx, &again); err != nil || !slices.Equal(again.LibraryRefs, f.LibraryRefs) {
		t.Errorf("retried close: refs %v (%v), want %v", again.LibraryRefs, err, f.LibraryRefs)
	}
	// A step that adds chunks stores only those, as a second batch.
	if err := s.openLibrary(ctx, &f); err != nil || !maps.Equal(f.Library, lib) {
		t.Fatalf("open: %v (%v)", f.Library, err)
	}
	f.keep([]Chunk{{ID: "c_001", Source: "c.md", Text: "tercero"}})
	if err := s.closeLibrary(ctx, &f); err != nil || len(f.LibraryRefs) != 2 {
		t.Fatalf("close with an added chunk: refs %v (%v)", f.LibraryRefs, err)
	}
	if b, ok, _ := logs.Get(ctx, LibraryKey("acme", "d-1", f.LibraryRefs[1])); !ok || strings.Contains(string(b), "primero") || !strings.Contains(string(b), "tercero") {
		t.Errorf("second batch %s, want only the added chunk", b)
	}
	reopened := Flow{Tenant: "acme", LibraryRefs: f.LibraryRefs, Result: Result{SessionID: "d-1"}}
	if err := s.openLibrary(ctx, &reopened); err != nil || len(reopened.Library) != 3 {
		t.Fatalf("reopen: %v (%v)", reopened.Library, err)
	}

	var ie *veredicto.InvalidInputError
	for _, tc := range []struct {
		name string
		refs []string
		prep func()
		want string
	}{
		{"lost", []string{strings.Repeat("0", 32)}, func() {}, "missing from the log store"},
		{"changed", f.LibraryRefs[:1], func() {
			// no Put on a write-once store: a store that answers other
			// content under the batch's key
			s.Logs = changedStore{logs, LibraryKey("acme", "d-1", f.LibraryRefs[0])}
		}, "is damaged"},
		{"not a name", []string{"../rounds/1"}, func() {}, "library_refs"},
	} {
		s.Logs = logs
		tc.prep()
		g := Flow{Tenant: "acme", LibraryRefs: tc.refs, Result: Result{SessionID: "d-1"}}
		err := s.openLibrary(ctx, &g)
		if err == nil || !strings.Contains(err.Error(), tc.want) && !(errors.As(err, &ie) && ie.Field == tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	unread := Flow{Tenant: "acme", LibraryRefs: f.LibraryRefs, Result: Result{SessionID: "d-1"}}
	if err := (&Steps{Logger: quiet()}).openLibrary(ctx, &unread); err == nil || !strings.Contains(err.Error(), "no log store") && !strings.Contains(err.Error(), "there is none") {
		t.Errorf("open without a log store: %v", err)
	}
	// A step reads the batches once, however many of its parts need them.
	counting := &countingStore{LogStore: logs}
	once := Flow{Tenant: "acme", LibraryRefs: f.LibraryRefs, Result: Result{SessionID: "d-1"}}
	for range 2 {
		if err := (&Steps{Logs: counting, Logger: quiet()}).openLibrary(ctx, &once); err != nil {
			t.Fatal(err)
		}
	}
	if counting.gets != len(f.LibraryRefs) {
		t.Errorf("%d reads for %d batches opened twice, want one each", counting.gets, len(f.LibraryRefs))
	}
}

type countingStore struct {
	LogStore
	gets int
}

func (c *countingStore) Get(ctx context.Context, key string) ([]byte, bool, error) {
	c.gets++
	return c.LogStore.Get(ctx, key)
}

type changedStore struct {
	LogStore
	key string
}

func (c changedStore) Get(ctx context.Context, key string) ([]byte, bool, error) {
	if key == c.key {
		return []byte(`[{"chunk_id":"a_001","source":"a.md","text":"otro"}]`), true, nil
	}
	return c.LogStore.Get(ctx, key)
}

// TestCouncilVotesAreBoundByTheCouncilTimeout: the state machine bounds
// each council vote by timeout.council (180 s by default, plus a margin),
// not by the per-agent bound a position gets (30 s).
func TestCouncilVotesAreBoundByTheCouncilTimeout(t *testing.T) {
	s := &Steps{Agents: &funcAgents{}, Logger: quiet()}
	q := json.RawMessage(`{"question": "¿Avanzamos?", "options": ["a", "b"], "participants": [{"id": "cfo", "brief": "x"}]}`)
	f, err := s.Prepare(context.Background(), StartInput{Tenant: "acme", DebateID: "d-1", Question: q})
	if err != nil {
		t.Fatal(err)
	}
	if f.CouncilTimeoutSeconds != 180+30 || f.TaskTimeoutSeconds != 30+30 {
		t.Errorf("council %d s, agents %d s; want 210 and 60", f.CouncilTimeoutSeconds, f.TaskTimeoutSeconds)
	}
	var def struct {
		States map[string]struct {
			ItemProcessor struct {
				States map[string]struct {
					Resource, TimeoutSecondsPath string
				}
			}
		}
	}
	if err := json.Unmarshal(statemachines.Debate, &def); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, st := range def.States {
		for _, inner := range st.ItemProcessor.States {
			if inner.Resource == "${DebateVoteFunctionArn}" {
				found = true
				if inner.TimeoutSecondsPath != "$.flow.council_timeout_seconds" {
					t.Errorf("the Vote task is bounded by %s, want $.flow.council_timeout_seconds", inner.TimeoutSecondsPath)
				}
			}
		}
	}
	if !found {
		t.Error("no Vote task in debate.asl.json")
	}
}

// refusingBlobs lists one document and refuses to read it as too large,
// as the S3 store does past its cap.
type refusingBlobs struct{}

func (refusingBlobs) List(context.Context, string) ([]string, error) {
	return []string{"knowledge/acme/kb/big.md"}, nil
}

func (refusingBlobs) Get(_ context.Context, key string) ([]byte, error) {
	return nil, &veredicto.InvalidInputError{File: key, Problem: "is larger than 32 MiB"}
}

// TestKnowledgeTooLargeIsNotTransient: a knowledge document the store
// refuses to read keeps its InvalidInputError name; wrapped as a
// TransientError the workflow would retry it for nothing.
func TestKnowledgeTooLargeIsNotTransient(t *testing.T) {
	s := &Steps{Knowledge: refusingBlobs{}, Logger: quiet()}
	_, err := s.loadKnowledge(t.Context(), "acme", []string{"knowledge/acme/kb/"})
	if name := veredicto.ErrorName(err); name != veredicto.NameInvalidInput {
		t.Errorf("error %v named %s, want %s", err, name, veredicto.NameInvalidInput)
	}
}

// mapBlobs is a knowledge base in memory.
type mapBlobs map[string]string

func (m mapBlobs) List(_ context.Context, prefix string) ([]string, error) {
	var out []string
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (m mapBlobs) Get(_ context.Context, key string) ([]byte, error) {
	v, ok := m[key]
	if !ok {
		return nil, &veredicto.NotFoundError{What: key}
	}
	return []byte(v), nil
}

// TestStepsRound3Retrieves is the Lambda path of the RAG budget: four
// roles, nothing retrieved by Prepare, each round-1 agent queries through
// its Map turn's tool (4), round 2 adds none, and round 3's first agent
// still has the fifth query. The chunks reach the library (in the log
// store) and the agent's holdings; the checklist finds the limit kept.
func TestStepsRound3Retrieves(t *testing.T) {
	ctx := context.Background()
	kb := mapBlobs{
		"knowledge/acme/policies/band.md":   "La banda salarial del cargo CFO llega a 40.000 BRL mensuales.",
		"knowledge/acme/policies/offers.md": "Ninguna oferta se emite con contradicciones abiertas: primero se piden referencias.",
	}
	var mu sync.Mutex
	tooled := map[int][]string{}
	agents := &funcAgents{position: func(ctx context.Context, in PositionInput) (Position, error) {
		if in.Tool != nil {
			got, err := in.Tool.Query(ctx, "banda salarial referencias")
			if err != nil || len(got) == 0 {
				t.Errorf("%s round %d: the tool brought %v (%v)", in.Participant.ID, in.Round, got, err)
			}
			in.Chunks = append(in.Chunks, got...)
			mu.Lock()
			tooled[in.Round] = append(tooled[in.Round], in.Participant.ID)
			mu.Unlock()
		}
		rec, timing := "a", "30d"
		if in.Participant.ID == "chro" || in.Participant.ID == "cto" {
			rec, timing = "b", "90d"
		}
		var premises []string
		if len(in.Chunks) > 0 {
			premises = []string{"[RAG:" + in.Chunks[0].ID + "]"}
		}
		return Position{Recommendation: rec, Timing: timing, Confidence: 60 + in.Round, Position: "p", Premises: premises}, nil
	}}
	logs := file.NewMemory()
	s := &Steps{Agents: agents, Knowledge: kb, Logs: logs, Now: func() time.Time { return time.Unix(1_800_000_000, 0) }, Logger: quiet()}
	q := json.RawMessage(`{"question": "¿Avanzamos con la oferta?", "options": ["a", "b"], "participants": [{"id": "cfo", "brief": "x"}, {"id": "chro", "brief": "y"}, {"id": "ceo", "brief": "z"}, {"id": "cto", "brief": "w"}]}`)
	f, err := s.Prepare(ctx, StartInput{Tenant: "acme", DebateID: "d-1", Question: q, Knowledge: []string{"knowledge/acme/policies/"}})
	if err != nil {
		t.Fatal(err)
	}
	if f.Result.RAG.Total != 0 || len(f.LibraryRefs) != 0 || f.KnowledgeChunks != 2 {
		t.Fatalf("Prepare retrieved ahead: rag %+v refs %v", f.Result.RAG, f.LibraryRefs)
	}
	parallel := func(f Flow) Flow {
		t.Helper()
		turns := make([]TurnOutput, len(f.Participants))
		for i := range f.Participants {
			if turns[i], err = s.Position(ctx, Turn{Flow: f, Index: i}); err != nil {
				t.Fatal(err)
			}
			if b, _ := json.Marshal(turns[i]); strings.Contains(string(b), "40.000 BRL") {
				t.Errorf("turn %d carries a chunk's text in the state: %s", i, b)
			}
		}
		if f, err = s.CloseRound(ctx, RoundInput{Flow: f, Turns: turns}); err != nil {
			t.Fatal(err)
		}
		return f
	}
	f = parallel(f)
	if f.Result.RAG.Total != 4 || f.Next != "rebuttal" || len(f.Chunks["cto"]) == 0 {
		t.Fatalf("after round 1: rag %+v next %s chunks %v", f.Result.RAG, f.Next, f.Chunks)
	}
	for f.Next == "rebuttal" {
		if f, err = s.Rebuttal(ctx, RebuttalStep{Flow: f}); err != nil {
			t.Fatal(err)
		}
	}
	if f.Next != "refine" {
		t.Fatalf("after round 2: next %s", f.Next)
	}
	f = parallel(f)
	if got := tooled[3]; len(got) != 1 || got[0] != "cfo" || len(tooled[1]) != 4 {
		t.Errorf("tool used by round %v, want all four in round 1 and cfo in round 3", tooled)
	}
	if f.Result.RAG != (RAGStats{Total: 5, Succeeded: 5}) {
		t.Errorf("rag %+v, want 5 queries, none refused", f.Result.RAG)
	}
	if f, err = s.Synthesize(ctx, f); err != nil {
		t.Fatal(err)
	}
	if c := checkOf(t, Checklists(&f.Result, f.KnowledgeChunks), "¿Consultas RAG"); !c.OK {
		t.Errorf("the checklist flags the RAG limit: %s", c.Note)
	}
	if err := s.openLibrary(ctx, &f); err != nil || len(f.Library) != 2 {
		t.Errorf("library %v (%v), want both chunks", f.Library, err)
	}
}

// TestStepsNoProposalAndInvalidVotes is the Lambda path of two
// escalations: a round where no agent answered validly proposes nothing
// and goes to a person (the preview has no proposal), and a council vote
// that stayed invalid (or failed in the state machine) is recorded as
// invalid, not as a TIMEOUT.
func TestStepsNoProposalAndInvalidVotes(t *testing.T) {
	ctx := context.Background()
	invalid := &llm.InvalidOutputError{Schema: SchemaPosition, Problem: "x"}
	s := &Steps{Agents: &funcAgents{position: func(context.Context, PositionInput) (Position, error) { return Position{}, invalid }}, Logger: quiet()}
	q := json.RawMessage(`{"question": "¿Avanzamos?", "options": ["a", "b"], "participants": [{"id": "cfo", "brief": "x"}, {"id": "ceo", "brief": "y"}], "mode": "council"}`)
	f, err := s.Prepare(ctx, StartInput{Tenant: "acme", DebateID: "d-1", Question: q})
	if err != nil {
		t.Fatal(err)
	}
	var turns []TurnOutput
	for i := range f.Participants {
		out, err := s.Position(ctx, Turn{Flow: f, Index: i})
		if err != nil {
			t.Fatal(err)
		}
		turns = append(turns, out)
	}
	if f, err = s.CloseRound(ctx, RoundInput{Flow: f, Turns: turns}); err != nil {
		t.Fatal(err)
	}
	g, err := s.Synthesize(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	if g.Next != "human" || g.Result.Decision != "" || g.Preview == nil || g.Preview.Proposed != "" || g.Result.Council != nil {
		t.Errorf("next %s decision %q preview %+v: want a person with no proposal", g.Next, g.Result.Decision, g.Preview)
	}

	// A council after valid positions: one vote invalid, one failed in
	// the state machine (VoteFailed: invalid), one in time.
	f.Result.Rounds[0].Answers = []Answer{{Participant: "cfo", Position: &Position{Recommendation: "a", Confidence: 60}}, {Participant: "ceo", Position: &Position{Recommendation: "a", Confidence: 60}}}
	s.Agents = &funcAgents{vote: func(_ context.Context, in VoteInput) (Vote, error) {
		if in.Member.ID == DefaultCouncil[0].ID {
			return Vote{}, &llm.InvalidOutputError{Schema: SchemaVote, Problem: "x"}
		}
		return Vote{Vote: "a", Confidence: 90}, nil
	}}
	if f, err = s.Synthesize(ctx, f); err != nil || f.Next != "council" {
		t.Fatalf("synthesize: next %s (%v)", f.Next, err)
	}
	v0, err := s.Vote(ctx, Turn{Flow: f, Index: 0})
	if err != nil || !v0.Invalid || v0.Vote != nil || v0.Event != invalidEvent(DefaultCouncil[0].ID, faseCouncil) {
		t.Fatalf("invalid vote turn %+v (%v)", v0, err)
	}
	v2, _ := s.Vote(ctx, Turn{Flow: f, Index: 2})
	failed := TurnOutput{Invalid: true, Event: "FALLO: CONSEJO-NEGOCIO en el consejo (ProviderError)"}
	g, err = s.Council(ctx, RoundInput{Flow: f, Turns: []TurnOutput{v0, failed, v2}})
	if err != nil {
		t.Fatal(err)
	}
	c := g.Result.Council
	if c.TimedOut || len(c.Invalid) != 2 || c.Invalid[0] != DefaultCouncil[0].ID || c.Invalid[1] != DefaultCouncil[1].ID {
		t.Errorf("council %+v: want two invalid votes and no timeout", c)
	}
	if md := g.Result.Markdown(); strings.Contains(md, "| "+DefaultCouncil[0].ID+" | TIMEOUT") || !strings.Contains(md, "| "+DefaultCouncil[1].ID+" | RESPUESTA INVÁLIDA") {
		t.Errorf("council table:\n%s", md)
	}
}
