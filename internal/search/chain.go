package search

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/veredicto/veredicto"
)

func llmID(i veredicto.ModelInfo) string { return i.Provider + "/" + i.Model }

// Mandate condenses GEM5's content for the candidate agents.
func Mandate(c Gem5Content) MandateSummary {
	texts := func(cs []Claim) []string {
		out := make([]string, 0, len(cs))
		for _, c := range cs {
			out = append(out, c.Text)
		}
		return out
	}
	m := MandateSummary{RealProblem: c.RealProblem.Text, KeyChallenge: c.KeyChallenge.Text,
		Requirements: texts(c.Requirements), NoFits: texts(c.NoFits), DecisionCriteria: texts(c.DecisionCriteria), Sources: CitedIDs(c)}
	for _, k := range c.ExpectedSuccesses {
		m.Successes = append(m.Successes, k.Description+" — KPI: "+k.KPI+" ("+k.Horizon+")")
	}
	return m
}

// candidateChain computes (or loads) a candidate's stages in order.
type candidateChain struct {
	svc      *Service
	s        *Search
	cand     CandidateDocs
	gem5Hash string
	mandate  MandateSummary
	gem1     Contract[Gem1Content]
	gem1Hash string
	gem2     Contract[Gem2Content]
	gem2Hash string
	gem3     Contract[Gem3Content]
	gem3Hash string
	records  []StageRecord
	// loadOnly: only read stored stages (the report task must never pay
	// for an agent call); a stage not stored ends the chain with errNotRun.
	loadOnly bool
}

func (svc *Service) chain(ctx context.Context, t CandidateTask) (*candidateChain, error) {
	return svc.newChain(ctx, t, false)
}

// live returns f, or nil in a load-only chain.
func live[C any](loadOnly bool, f func() (Answer[C], veredicto.Usage, error)) func() (Answer[C], veredicto.Usage, error) {
	if loadOnly {
		return nil
	}
	return f
}

func (svc *Service) newChain(ctx context.Context, t CandidateTask, loadOnly bool) (*candidateChain, error) {
	s, err := svc.load(ctx, t.Tenant, t.InputPrefix, t.SearchID, t.InputVersion)
	if err != nil {
		return nil, err
	}
	cand, err := s.candidate(t.CandidateID)
	if err != nil {
		return nil, err
	}
	g5, h5, rec, err := svc.gem5(ctx, s, loadOnly)
	if err != nil {
		return nil, err
	}
	return &candidateChain{svc: svc, s: s, cand: cand, gem5Hash: h5, mandate: Mandate(g5.Content), records: []StageRecord{rec}, loadOnly: loadOnly}, nil
}

func (ch *candidateChain) hash(agent string, upstream string, attempt int, docs ...Doc) string {
	parts := append([]string{agent, ch.svc.PromptVersion(agent), llmID(ch.svc.Analyst.Info()), upstream, strconv.Itoa(attempt)}, docHashes(ch.s, docs...)...)
	return chainHash(parts...)
}

func (ch *candidateChain) input1() Gem1Input {
	return Gem1Input{Search: ch.s.Docs, Mandate: ch.mandate, Candidate: ch.cand}
}

func (ch *candidateChain) runGem1(ctx context.Context) error {
	h := ch.hash(AgentGem1, ch.gem5Hash, 0, ch.cand.CV, ch.cand.Interview)
	c, rec, err := runStage(ctx, ch.svc, ch.s, ch.cand.CandidateID, AgentGem1, 0, h, live(ch.loadOnly, func() (Answer[Gem1Content], veredicto.Usage, error) {
		return ch.svc.Analyst.Gem1(ctx, ch.input1())
	}))
	ch.gem1, ch.gem1Hash = c, h
	ch.records = append(ch.records, rec)
	return err
}

func (ch *candidateChain) input2() Gem2Input {
	return Gem2Input{Gem1Input: ch.input1(), Gem1: answerOf(ch.gem1)}
}

func (ch *candidateChain) runGem2(ctx context.Context) error {
	if err := ch.runGem1(ctx); err != nil {
		return err
	}
	h := ch.hash(AgentGem2, ch.gem1Hash, 0, ch.cand.Tests, ch.cand.Case)
	c, rec, err := runStage(ctx, ch.svc, ch.s, ch.cand.CandidateID, AgentGem2, 0, h, live(ch.loadOnly, func() (Answer[Gem2Content], veredicto.Usage, error) {
		return ch.svc.Analyst.Gem2(ctx, ch.input2())
	}))
	ch.gem2, ch.gem2Hash = c, h
	ch.records = append(ch.records, rec)
	return err
}

// reaskNote explains a GEM3 re-ask (Spanish: it goes into the prompt).
func reaskNote(prev Contract[Gem3Content]) string {
	return fmt.Sprintf("Tu recomendación anterior fue %q con score_dimension %d, y no es coherente con el umbral del gate de GEM3. Revisa la evidencia y emite una recomendación binaria SI/NO coherente con tu puntuación, sin ambigüedad.",
		prev.Content.Recommendation, scoreOf(prev.Scores))
}

func (ch *candidateChain) input3(reask string) Gem3Input {
	return Gem3Input{Gem2Input: ch.input2(), Gem2: answerOf(ch.gem2), Reask: reask, Gate: ch.s.Gates.Gem3}
}

func (ch *candidateChain) runGem3(ctx context.Context, attempt int) error {
	if err := ch.runGem2(ctx); err != nil {
		return err
	}
	upstream, reask := ch.gem2Hash, ""
	for a := 0; a <= attempt; a++ {
		h := ch.hash(AgentGem3, upstream+"|gate="+strconv.Itoa(ch.s.Gates.Gem3), a, ch.cand.References, ch.s.Docs.Culture)
		c, rec, err := runStage(ctx, ch.svc, ch.s, ch.cand.CandidateID, AgentGem3, a, h, live(ch.loadOnly, func() (Answer[Gem3Content], veredicto.Usage, error) {
			return ch.svc.Analyst.Gem3(ctx, ch.input3(reask))
		}))
		if err != nil {
			return err
		}
		ch.gem3, ch.gem3Hash = c, h
		ch.records = append(ch.records, rec)
		upstream, reask = h, reaskNote(c)
	}
	return nil
}

// audited is what GEM4 audits: GEM1–GEM3 as first written or as corrected.
type audited struct {
	gem1 Answer[Gem1Content]
	gem2 Answer[Gem2Content]
	gem3 Answer[Gem3Content]
}

// evidenceless reports whether an evaluation cites no source at all: every
// finding declares "No informado en fuentes" or "Hipótesis no validada",
// or there is none.
func (ch *candidateChain) evidenceless(content any) bool {
	ids, _ := CheckCitations("", content, ch.s.Index)
	return len(ids) == 0
}

// runQA runs GEM4 attempt 0 and, for each later attempt a, the correction a
// that precedes audit a. With finalAudit false it stops after correction
// qaAttempt (the Correction task). It returns the last audit run and what
// it audited.
func (ch *candidateChain) runQA(ctx context.Context, gem3Attempt, qaAttempt int, finalAudit bool) (Contract[Gem4Content], audited, error) {
	if err := ch.runGem3(ctx, gem3Attempt); err != nil {
		return Contract[Gem4Content]{}, audited{}, err
	}
	cur := audited{gem1: answerOf(ch.gem1), gem2: answerOf(ch.gem2), gem3: answerOf(ch.gem3)}
	index := ch.s.sorted
	input := func(a int) Gem4Input {
		in := Gem4Input{Gem3Input: ch.input3(""), Gem3: cur.gem3, SourcesIndex: index, Attempt: a, Gate: ch.s.Gates.Gem4}
		in.Gem1, in.Gem2 = cur.gem1, cur.gem2
		return in
	}
	upstream := ch.gem3Hash
	var audit Contract[Gem4Content]
	for a := 0; a <= qaAttempt; a++ {
		if a > 0 {
			h := ch.hash(AgentCorrection, upstream, a)
			corrIn := CorrectionInput{Gem4Input: input(a - 1), Audit: answerOf(audit)}
			corr, rec, err := runStage(ctx, ch.svc, ch.s, ch.cand.CandidateID, AgentCorrection, a, h, live(ch.loadOnly, func() (Answer[CorrectionContent], veredicto.Usage, error) {
				return ch.svc.Analyst.Correct(ctx, corrIn)
			}))
			if err != nil {
				return audit, cur, err
			}
			ch.records = append(ch.records, rec)
			// Corrections rewrite content only: scores stay the agents'.
			cur.gem1.Content, cur.gem2.Content, cur.gem3.Content = corr.Content.Gem1, corr.Content.Gem2, corr.Content.Gem3
			upstream = h
		}
		if a == qaAttempt && !finalAudit {
			break
		}
		h := ch.hash(AgentGem4, upstream+"|gate="+strconv.Itoa(ch.s.Gates.Gem4), a)
		in := input(a)
		c, rec, err := runStage(ctx, ch.svc, ch.s, ch.cand.CandidateID, AgentGem4, a, h, live(ch.loadOnly, func() (Answer[Gem4Content], veredicto.Usage, error) {
			return ch.svc.Analyst.Gem4(ctx, in)
		}))
		if err != nil {
			return audit, cur, err
		}
		ch.records = append(ch.records, rec)
		audit, upstream = c, h
	}
	return audit, cur, nil
}

func sortedIndex(idx map[string]bool) []string {
	out := make([]string, 0, len(idx))
	for id := range idx {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

func answerOf[C any](c Contract[C]) Answer[C] {
	return Answer[C]{Content: c.Content, Scores: c.Scores, IssuesFound: c.IssuesFound, Blockers: c.Blockers}
}

// lastReused reports whether the chain's last stage, the one its task
// asked for, was read from the store rather than computed.
func (ch *candidateChain) lastReused() bool {
	return len(ch.records) > 0 && ch.records[len(ch.records)-1].Reused
}
