package debate

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/llm"
)

// funcAgents is a scripted Agents for engine tests without HTTP.
type funcAgents struct {
	position  func(ctx context.Context, in PositionInput) (Position, error)
	rebuttal  func(ctx context.Context, in RebuttalInput) (Rebuttal, error)
	vote      func(ctx context.Context, in VoteInput) (Vote, error)
	synthesis func(ctx context.Context, in SynthesisInput) (Synthesis, error)
	mu        sync.Mutex
	calls     []string
}

func (f *funcAgents) note(s string) {
	f.mu.Lock()
	f.calls = append(f.calls, s)
	f.mu.Unlock()
}

func (f *funcAgents) Position(ctx context.Context, in PositionInput) (Position, veredicto.Usage, error) {
	f.note("position")
	p, err := f.position(ctx, in)
	return p, veredicto.Usage{Calls: 1}, err
}

func (f *funcAgents) Rebuttal(ctx context.Context, in RebuttalInput) (Rebuttal, veredicto.Usage, error) {
	f.note("rebuttal")
	if f.rebuttal == nil {
		p, err := f.position(ctx, PositionInput{Question: in.Question, Participant: in.Participant, Round: 2, Previous: &in.Own})
		return Rebuttal{KeepsPosition: KeepYes, Stance: p}, veredicto.Usage{Calls: 1}, err
	}
	r, err := f.rebuttal(ctx, in)
	return r, veredicto.Usage{Calls: 1}, err
}

func (f *funcAgents) Synthesis(ctx context.Context, in SynthesisInput) (Synthesis, veredicto.Usage, error) {
	f.note("synthesis")
	if f.synthesis != nil {
		s, err := f.synthesis(ctx, in)
		return s, veredicto.Usage{Calls: 1}, err
	}
	s, _, err := Offline{}.Synthesis(ctx, in)
	return s, veredicto.Usage{Calls: 1}, err
}

func (f *funcAgents) Vote(ctx context.Context, in VoteInput) (Vote, veredicto.Usage, error) {
	f.note("vote")
	if f.vote == nil {
		return Vote{Vote: in.Decision, Confidence: 90}, veredicto.Usage{Calls: 1}, nil
	}
	v, err := f.vote(ctx, in)
	return v, veredicto.Usage{Calls: 1}, err
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// diverging never converges and never repeats itself: each round raises
// the confidence, so the loop detector stays quiet.
func diverging(ctx context.Context, in PositionInput) (Position, error) {
	rec, timing := "avanzar", "30d"
	if in.Participant.ID == "chro" {
		rec, timing = "no avanzar", "90d"
	}
	return Position{Recommendation: rec, Timing: timing, Confidence: 50 + in.Round, Position: "p"}, nil
}

func TestEngineBreakerMaxIterationsGoesToHuman(t *testing.T) {
	f := &funcAgents{position: diverging}
	e := &Engine{Agents: f, Logger: quiet(), OptionalCouncil: true}
	q := question(t, "config:\n  debate:\n    rounds:\n      max: 8\n  circuit_breaker:\n    max_refinements: 8\n", "cfo", "chro")
	r, err := e.Run(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if r.Trip == nil || r.Trip.Trigger != TriggerIterations || len(r.Rounds) != 5 {
		t.Fatalf("trip %+v after %d rounds, want max_iterations after 5", r.Trip, len(r.Rounds))
	}
	if r.Target != TargetHuman || !r.Pending || r.Council != nil {
		t.Errorf("target %s pending %v council %v, want straight to a person", r.Target, r.Pending, r.Council)
	}
}

func TestEngineBreakerRefinementsImpasse(t *testing.T) {
	f := &funcAgents{position: diverging}
	e := &Engine{Agents: f, Logger: quiet(), OptionalCouncil: true}
	r, err := e.Run(context.Background(), question(t, "config:\n  debate:\n    rounds:\n      max: 5\n", "cfo", "chro"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Trip == nil || r.Trip.Trigger != TriggerRefinements || len(r.Rounds) != 4 || !r.Escalation.Impasse || r.Council == nil {
		t.Fatalf("trip %+v after %d rounds, escalation %+v", r.Trip, len(r.Rounds), r.Escalation)
	}
	if k := r.Rounds[2].Kind + "," + r.Rounds[3].Kind; k != "refinamento,refinamento" {
		t.Errorf("round kinds %s", k)
	}
	if len(r.Rounds[2].Focus) == 0 || !strings.HasPrefix(r.Rounds[2].Focus[0], "recomendación — ") {
		t.Errorf("round 3 focus %v, want the open divergence on the recommendation", r.Rounds[2].Focus)
	}
}

func TestEngineBreakerMaxRoundsForcesSynthesis(t *testing.T) {
	f := &funcAgents{position: diverging}
	e := &Engine{Agents: f, Logger: quiet(), OptionalCouncil: true}
	r, err := e.Run(context.Background(), question(t, "", "cfo", "chro"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Trip == nil || r.Trip.Trigger != TriggerRounds || len(r.Rounds) != 3 {
		t.Fatalf("trip %+v after %d rounds", r.Trip, len(r.Rounds))
	}
	// Forced synthesis: one of two agents behind the decision at 53 → 26.5% < 50: a person decides.
	if r.Target != TargetHuman || !r.Pending || r.Escalation.Impasse || r.Confidence != 26.5 {
		t.Errorf("target %s final %q escalation %+v", r.Target, r.Final, r.Escalation)
	}
}

func TestEngineTotalTimeoutReducesConfidence(t *testing.T) {
	f := &funcAgents{
		position: diverging,
		rebuttal: func(ctx context.Context, in RebuttalInput) (Rebuttal, error) {
			<-ctx.Done() // never answers: the total timeout ends the debate
			return Rebuttal{}, ctx.Err()
		},
	}
	e := &Engine{Agents: f, Logger: quiet(), OptionalCouncil: true}
	r, err := e.Run(context.Background(), question(t, "config:\n  timeout:\n    total: 0.05\n", "cfo", "chro"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Trip == nil || r.Trip.Trigger != TriggerTimeout || !r.ReducedByTimeout {
		t.Fatalf("trip %+v reduced %v", r.Trip, r.ReducedByTimeout)
	}
	rd := r.Rounds[1]
	if len(rd.TimedOut()) != 2 || rd.Answers[0].Position == nil {
		t.Errorf("round 2 timeouts %v; the partial (previous) positions must be kept", rd.TimedOut())
	}
	if !strings.Contains(r.Markdown(), "(reducida por tiempo agotado)") || !strings.Contains(r.Markdown(), "MOTIVO: tiempo total del debate ≥ 0.05 s") {
		t.Error("debate.md does not mark the confidence as reduced by timeout")
	}
	// 25.5% < 50: the abort escalates to a person.
	if r.Target != TargetHuman || !r.Pending || !strings.Contains(r.Markdown(), "Escalado a: una persona") {
		t.Errorf("target %s pending %v, want a person", r.Target, r.Pending)
	}
	for _, c := range f.calls {
		if c == "synthesis" {
			t.Error("a synthesis call was made after the total timeout")
		}
	}
}

// TestEngineTotalTimeoutAlwaysEscalates: seed 003's "timeout_total >=
// 300s → abortar e escalar com estado atual". At 90% the abort goes to
// the council (never straight to a decision), and the breaker block names
// where it went.
func TestEngineTotalTimeoutAlwaysEscalates(t *testing.T) {
	f := &funcAgents{
		position: func(ctx context.Context, in PositionInput) (Position, error) {
			// Same recommendation, different risks and timing: 50%.
			if in.Participant.ID == "chro" {
				return Position{Recommendation: "avanzar", Timing: "90d", Confidence: 90, Position: "p", Risks: []Risk{{Category: "people"}}}, nil
			}
			return Position{Recommendation: "avanzar", Timing: "30d", Confidence: 90, Position: "p", Risks: []Risk{{Category: "financial"}}}, nil
		},
		rebuttal: func(ctx context.Context, in RebuttalInput) (Rebuttal, error) {
			<-ctx.Done()
			return Rebuttal{}, ctx.Err()
		},
	}
	e := &Engine{Agents: f, Logger: quiet(), OptionalCouncil: false}
	r, err := e.Run(context.Background(), question(t, "config:\n  timeout:\n    total: 0.05\n", "cfo", "chro"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Trip == nil || r.Trip.Trigger != TriggerTimeout || r.Confidence != 90 {
		t.Fatalf("trip %+v confidence %v", r.Trip, r.Confidence)
	}
	if r.Escalation.Target != TargetCouncil || !r.Escalation.Mandatory || r.Council == nil || r.Target != TargetCouncil || r.Final != "avanzar" {
		t.Errorf("escalation %+v council %v target %s final %q, want the council, mandatory", r.Escalation, r.Council, r.Target, r.Final)
	}
	md := r.Markdown()
	if strings.Contains(md, "NENHUM") || !strings.Contains(md, "ACCIÓN: Abortar y escalar con el estado actual. Escalado a: el consejo de tres miembros") {
		t.Errorf("breaker block:\n%s", md)
	}
}

// TestEngineNoValidAnswerNoProposal: when every agent stays invalid there
// is no proposal (never the first option at 0%) and a person decides.
func TestEngineNoValidAnswerNoProposal(t *testing.T) {
	invalid := &llm.InvalidOutputError{Schema: SchemaPosition, Problem: "x"}
	f := &funcAgents{position: func(ctx context.Context, in PositionInput) (Position, error) { return Position{}, invalid }}
	h := &fakeHuman{ans: HumanDecision{Approved: true, Decision: "no avanzar"}}
	e := &Engine{Agents: f, Logger: quiet(), OptionalCouncil: true, Human: h}
	r, err := e.Run(context.Background(), question(t, "", "cfo", "chro"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Decision != "" || r.Confidence != 0 || r.Target != TargetHuman || r.Council != nil {
		t.Fatalf("decision %q confidence %v target %s council %v, want no proposal and a person", r.Decision, r.Confidence, r.Target, r.Council)
	}
	if h.got.Proposed != "" || r.Final != "no avanzar" {
		t.Errorf("the person was proposed %q; final %q", h.got.Proposed, r.Final)
	}
	for _, c := range f.calls {
		if c == "synthesis" {
			t.Error("the synthesizer was asked to write a decision nobody proposed")
		}
	}
	if !strings.Contains(r.Synthesis.Summary, "no hay propuesta") {
		t.Errorf("synthesis %q", r.Synthesis.Summary)
	}
	h2 := &Engine{Agents: f, Logger: quiet(), OptionalCouncil: true}
	r, _ = h2.Run(context.Background(), question(t, "", "cfo", "chro"))
	if md := r.Markdown(); !strings.Contains(md, "Sin propuesta: ningún participante dio una respuesta válida") || strings.Contains(md, "Propuesta: **avanzar**") {
		t.Errorf("pending report:\n%s", md)
	}
}

// TestEngineInvalidVotesAreNotTimeouts: a council member whose vote stays
// invalid is labelled so, not TIMEOUT.
func TestEngineInvalidVotesAreNotTimeouts(t *testing.T) {
	f := &funcAgents{
		position: func(ctx context.Context, in PositionInput) (Position, error) {
			return Position{Recommendation: "avanzar", Timing: "30d", Confidence: 60, Position: "p"}, nil
		},
		vote: func(ctx context.Context, in VoteInput) (Vote, error) {
			if in.Member.ID == "consejo-riesgo" {
				return Vote{}, &llm.InvalidOutputError{Schema: SchemaVote, Problem: "x"}
			}
			return Vote{Vote: "avanzar", Confidence: 90}, nil
		},
	}
	e := &Engine{Agents: f, Logger: quiet(), OptionalCouncil: true}
	r, err := e.Run(context.Background(), question(t, "", "cfo", "chro"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Council == nil || r.Council.TimedOut || len(r.Council.Invalid) != 1 || r.Council.Invalid[0] != "consejo-riesgo" {
		t.Fatalf("council %+v", r.Council)
	}
	md := r.Markdown()
	if !strings.Contains(md, "| consejo-riesgo | RESPUESTA INVÁLIDA (tras una repregunta) |") || strings.Contains(md, "| consejo-riesgo | TIMEOUT") {
		t.Errorf("council table:\n%s", md)
	}
	if !contains(r.Events, "RESPUESTA INVÁLIDA: CONSEJO-RIESGO en el consejo, tras una repregunta") {
		t.Errorf("events %v", r.Events)
	}
}

func TestEngineRoundTimeout(t *testing.T) {
	f := &funcAgents{position: func(ctx context.Context, in PositionInput) (Position, error) {
		if in.Participant.ID == "ceo" {
			<-ctx.Done()
			return Position{}, ctx.Err()
		}
		return Position{Recommendation: "avanzar", Timing: "30d", Confidence: 80, Position: "p"}, nil
	}}
	e := &Engine{Agents: f, Logger: quiet()}
	r, err := e.Run(context.Background(), question(t, "config:\n  timeout:\n    per_round: 0.05\n", "cfo", "chro", "ceo"))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Rounds[0].TimedOut(); len(got) != 1 || got[0] != "ceo" || r.Final != "avanzar" {
		t.Errorf("timeouts %v final %q", got, r.Final)
	}
}

func TestEngineSimpleRoute(t *testing.T) {
	f := &funcAgents{position: func(ctx context.Context, in PositionInput) (Position, error) {
		return Position{Recommendation: "no avanzar", Timing: "90d", Confidence: 75, Position: "p"}, nil
	}}
	e := &Engine{Agents: f, Logger: quiet()}
	r, err := e.Run(context.Background(), question(t, "mode: simple\n", "cfo", "chro"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Mode != ModeSimple || len(r.Rounds) != 1 || len(r.Rounds[0].Answers) != 1 || r.Final != "no avanzar" || r.Confidence != 75 {
		t.Errorf("mode %s rounds %d answers %d final %q confidence %v", r.Mode, len(r.Rounds), len(r.Rounds[0].Answers), r.Final, r.Confidence)
	}
}

func TestEngineCouncilTimeoutForcesSynthesis(t *testing.T) {
	f := &funcAgents{
		position: func(ctx context.Context, in PositionInput) (Position, error) {
			return Position{Recommendation: "avanzar", Timing: "30d", Confidence: 60, Position: "p"}, nil
		},
		vote: func(ctx context.Context, in VoteInput) (Vote, error) {
			<-ctx.Done()
			return Vote{}, ctx.Err()
		},
	}
	e := &Engine{Agents: f, Logger: quiet(), OptionalCouncil: true}
	r, err := e.Run(context.Background(), question(t, "config:\n  timeout:\n    council: 0.05\n", "cfo", "chro"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Council == nil || !r.Council.TimedOut || r.Target != TargetCouncil || r.Final != "avanzar" {
		t.Errorf("council %+v target %s final %q, want the synthesis forced", r.Council, r.Target, r.Final)
	}
}

func TestEngineNoOptionalCouncil(t *testing.T) {
	f := &funcAgents{position: func(ctx context.Context, in PositionInput) (Position, error) {
		return Position{Recommendation: "avanzar", Timing: "30d", Confidence: 60, Position: "p"}, nil
	}}
	e := &Engine{Agents: f, Logger: quiet(), OptionalCouncil: false}
	r, err := e.Run(context.Background(), question(t, "", "cfo", "chro"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Council != nil || r.Target != TargetNone || r.Final != "avanzar" {
		t.Errorf("council %v target %s final %q", r.Council, r.Target, r.Final)
	}
}

func TestOfflineIsDeterministicAndLabelled(t *testing.T) {
	chunks, err := LoadKnowledge("../../examples/debate/knowledge")
	if err != nil {
		t.Fatal(err)
	}
	ix := NewIndex(chunks)
	run := func() *Result {
		e := &Engine{Agents: Offline{}, Retriever: IndexRetriever{ix}, Chunks: ix.Len(), Logger: quiet(), OptionalCouncil: true,
			Now: func() time.Time { return time.Unix(0, 0) }, NewID: func() string { return "s" }}
		q := question(t, "", "cfo", "chro", "ceo")
		r, err := e.Run(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := run().Markdown(), run().Markdown()
	if a != b {
		t.Error("two offline runs differ")
	}
	if !strings.Contains(a, OfflineLabel) {
		t.Error("the offline report is not labelled")
	}
}

func TestOfflineRebuttalFollowsStrictMajority(t *testing.T) {
	q := question(t, "", "a", "b", "c")
	own := Position{Recommendation: "avanzar"}
	others := []Stance{{Participant: "b", Position: Position{Recommendation: "no avanzar"}}, {Participant: "c", Position: Position{Recommendation: "no avanzar"}}}
	r, _, _ := Offline{}.Rebuttal(context.Background(), RebuttalInput{Question: q, Participant: q.Participants[0], Own: own, Others: others})
	if r.Stance.Recommendation != "no avanzar" || r.KeepsPosition != KeepNo {
		t.Errorf("rebuttal %+v, want to follow the majority", r)
	}
	others[1].Position.Recommendation = "avanzar"
	r, _, _ = Offline{}.Rebuttal(context.Background(), RebuttalInput{Question: q, Participant: q.Participants[0], Own: own, Others: others})
	if r.Stance.Recommendation != "avanzar" || r.KeepsPosition != KeepYes {
		t.Errorf("rebuttal %+v, want to keep without a strict majority against", r)
	}
}

type fakeHuman struct {
	got HumanRequest
	ans HumanDecision
}

func (h *fakeHuman) Decide(_ context.Context, req HumanRequest) (HumanDecision, error) {
	h.got = req
	return h.ans, nil
}

func TestEngineHumanDecides(t *testing.T) {
	low := func(ctx context.Context, in PositionInput) (Position, error) {
		return Position{Recommendation: "avanzar", Timing: "30d", Confidence: 40, Position: "p"}, nil
	}
	for _, tt := range []struct {
		ans   HumanDecision
		final string
	}{
		{HumanDecision{Approved: true}, "avanzar"},
		{HumanDecision{Approved: true, Decision: "no avanzar"}, "no avanzar"},
		{HumanDecision{Approved: false, Comment: "no"}, ""},
	} {
		h := &fakeHuman{ans: tt.ans}
		e := &Engine{Agents: &funcAgents{position: low}, Logger: quiet(), Human: h}
		r, err := e.Run(context.Background(), question(t, "", "cfo", "chro"))
		if err != nil {
			t.Fatal(err)
		}
		if r.Target != TargetHuman || r.Pending || r.Final != tt.final {
			t.Errorf("%+v: target %s pending %v final %q, want %q", tt.ans, r.Target, r.Pending, r.Final, tt.final)
		}
		if h.got.Proposed != "avanzar" || h.got.Confidence != 40 || len(h.got.Reasons) == 0 {
			t.Errorf("the person saw %+v", h.got)
		}
	}
}

// TestEngineEmptySynthesisIsReaskedThenNamed: a synthesis or divergence
// with no claim and no citation is re-asked once (saying what was empty),
// then named: the code writes an empty summary, an empty divergence goes.
func TestEngineEmptySynthesisIsReaskedThenNamed(t *testing.T) {
	good := Synthesis{Summary: "El comité recomienda avanzar: la oferta está dentro de la banda.", Consensus: []string{}, Divergences: []string{}, Action: "avanzar"}
	empty := Synthesis{Summary: "N/A", Consensus: []string{}, Divergences: []string{}, Action: "avanzar"}
	emptyDiv := good
	emptyDiv.Divergences = []string{"El CFO y el CHRO difieren en el plazo", "—"}
	tests := []struct {
		name    string
		answers []Synthesis
		summary string // a prefix
		divs    int
		event   string
	}{
		{"fixed on the re-ask", []Synthesis{empty, good}, "El comité recomienda", 0, ""},
		{"empty twice: the code writes it", []Synthesis{empty, empty}, OfflineLabel, 0, "SÍNTESIS VACÍA"},
		{"empty divergence twice: dropped", []Synthesis{emptyDiv, emptyDiv}, "El comité recomienda", 1, "DIVERGENCIA VACÍA en la síntesis"},
		{"good at once: one call", []Synthesis{good}, "El comité recomienda", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reasks []string
			n := 0
			f := &funcAgents{
				position: func(ctx context.Context, in PositionInput) (Position, error) {
					return Position{Recommendation: "avanzar", Timing: "30d", Confidence: 80, Position: "p"}, nil
				},
				synthesis: func(ctx context.Context, in SynthesisInput) (Synthesis, error) {
					reasks = append(reasks, in.Reask)
					n++
					return tt.answers[n-1], nil
				},
			}
			r, err := (&Engine{Agents: f, Logger: quiet()}).Run(context.Background(), question(t, "", "cfo", "chro"))
			if err != nil {
				t.Fatal(err)
			}
			if n != len(tt.answers) || reasks[0] != "" || (n == 2 && reasks[1] == "") {
				t.Errorf("%d synthesis calls, re-asks %q", n, reasks)
			}
			if !strings.HasPrefix(r.Synthesis.Summary, tt.summary) || len(r.Synthesis.Divergences) != tt.divs {
				t.Errorf("synthesis %+v", r.Synthesis)
			}
			named := false
			for _, ev := range r.Events {
				named = named || tt.event != "" && strings.HasPrefix(ev, tt.event)
			}
			if named != (tt.event != "") {
				t.Errorf("events %v, want one starting %q", r.Events, tt.event)
			}
		})
	}
}

// TestEngineEmptyRebuttalDivergence: a rebuttal's divergence that says
// nothing is re-asked once, then dropped and named.
func TestEngineEmptyRebuttalDivergence(t *testing.T) {
	calls := map[string]int{}
	var mu sync.Mutex
	f := &funcAgents{
		position: diverging,
		rebuttal: func(ctx context.Context, in RebuttalInput) (Rebuttal, error) {
			mu.Lock()
			calls[in.Participant.ID]++
			mu.Unlock()
			p, _ := diverging(ctx, PositionInput{Participant: in.Participant, Round: 2})
			divs := []string{"ninguna"}
			if in.Participant.ID == "chro" && in.Reask != "" {
				divs = []string{"El CFO subestima el riesgo de referencias"}
			}
			return Rebuttal{KeepsPosition: KeepYes, Divergences: divs, Stance: p}, nil
		},
	}
	r, err := (&Engine{Agents: f, Logger: quiet(), OptionalCouncil: true}).Run(context.Background(), question(t, "", "cfo", "chro"))
	if err != nil {
		t.Fatal(err)
	}
	if calls["cfo"] != 2 || calls["chro"] != 2 {
		t.Errorf("rebuttal calls %v, want one re-ask each", calls)
	}
	rebs := r.Rounds[1].Rebuttals
	if len(rebs["cfo"].Divergences) != 0 || len(rebs["chro"].Divergences) != 1 {
		t.Errorf("divergences cfo %q chro %q", rebs["cfo"].Divergences, rebs["chro"].Divergences)
	}
	if !contains(r.Events, "DIVERGENCIA VACÍA: CFO en la ronda 2, sin afirmación ni cita tampoco tras una repregunta: descartadas 1") {
		t.Errorf("events %v", r.Events)
	}
}
