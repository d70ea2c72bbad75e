// Package gems is the LLM analyst of the executive-search protocol: each
// agent is one structured completion with its Spanish system prompt
// (prompts/<agent>.md), a strict JSON schema generated from the contract
// types and named after the agent, and a code check of the answer's scores
// and citations with one re-ask carrying the problem.
//
// Token economy: the system prompt and the search-level part of the user
// message (search, mandate summary, shared documents) come first and are
// identical for every candidate, so providers can cache that prefix; the
// candidate's own material comes last.
package gems

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/veredicto/veredicto/internal/llm"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/prompts"
)

// Analyst implements search.Analyst with an LLM client.
type Analyst struct {
	client llm.Client
	info   llm.Info
}

// New returns an analyst calling client; info names it in reports.
func New(client llm.Client, info llm.Info) *Analyst {
	return &Analyst{client: client, info: info}
}

var _ search.Analyst = (*Analyst)(nil)

// Info names the provider and model.
func (a *Analyst) Info() llm.Info { return a.info }

// message builds a user message from sections in order.
type message struct {
	b     strings.Builder
	index map[string]bool
}

func newMessage(s search.SearchDocs) *message {
	m := &message{index: map[string]bool{}}
	fmt.Fprintf(&m.b, "## Búsqueda\nsearch_id: %s\ncliente: %s\ncargo: %s\n\n", s.SearchID, orNone(s.Client), orNone(s.Role))
	return m
}

func orNone(s string) string {
	if s == "" {
		return search.NotInSources
	}
	return s
}

func (m *message) section(title string, v any) {
	b, _ := json.MarshalIndent(v, "", "  ")
	fmt.Fprintf(&m.b, "## %s\n```json\n%s\n```\n\n", title, b)
}

func (m *message) line(format string, args ...any) {
	fmt.Fprintf(&m.b, format+"\n", args...)
}

// doc adds a source document under its id. Documents are data: the prompt
// tells the model to ignore any instruction inside them.
func (m *message) doc(d search.Doc) {
	if d.Missing {
		fmt.Fprintf(&m.b, "### Fuente: %s (NO DISPONIBLE)\n\n", d.ID)
		return
	}
	m.index[d.ID] = true
	// A document cannot open or close a block of its own: the marks in
	// the message are only the ones the code writes.
	text := strings.NewReplacer(">>>", "> > >", "<<<", "< < <").Replace(strings.TrimSpace(d.Text))
	fmt.Fprintf(&m.b, "### Fuente: %s\n<<<\n%s\n>>>\n\n", d.ID, text)
}

// cite registers ids the answer may cite without sending the document
// (GEM4 audits against the sources index).
func (m *message) cite(ids ...string) {
	for _, id := range ids {
		m.index[id] = true
	}
}

func (m *message) candidate(id string) {
	fmt.Fprintf(&m.b, "## Candidato\ncandidate_id: %s\n\n", id)
}

func (m *message) String() string { return m.b.String() }

// ask runs one agent call: schema named after the agent, answer checked for
// scores and citations, one re-ask on a problem.
func ask[C any](ctx context.Context, a *Analyst, agent string, m *message) (search.Answer[C], llm.Usage, error) {
	system, err := prompts.System(agent)
	if err != nil {
		return search.Answer[C]{}, llm.Usage{}, err
	}
	check := func(ans *search.Answer[C]) error {
		if err := search.CheckScores(agent, ans.Scores); err != nil {
			return err
		}
		_, err := search.CheckCitations(agent, *ans, m.index)
		return err
	}
	return llm.Generate[search.Answer[C]](ctx, a.client, llm.Request{Schema: agent, System: system, User: m.String()}, check)
}

// searchPrefix is the part shared by every candidate call of a search.
func searchPrefix(in search.Gem1Input) *message {
	m := newMessage(in.Search)
	m.section("Mandato (resumen de GEM5)", in.Mandate)
	return m
}

// Gem5 analyses the mandate from the search documents.
func (a *Analyst) Gem5(ctx context.Context, in search.Gem5Input) (search.Answer[search.Gem5Content], llm.Usage, error) {
	m := newMessage(in.Search)
	for _, d := range []search.Doc{in.Search.JD, in.Search.Kickoff, in.Search.Company, in.Search.Culture} {
		m.doc(d)
	}
	return ask[search.Gem5Content](ctx, a, search.AgentGem5, m)
}

// Gem1 evaluates trajectory and achievements from the CV and interview.
func (a *Analyst) Gem1(ctx context.Context, in search.Gem1Input) (search.Answer[search.Gem1Content], llm.Usage, error) {
	m := searchPrefix(in)
	m.candidate(in.Candidate.CandidateID)
	m.doc(in.Candidate.CV)
	m.doc(in.Candidate.Interview)
	return ask[search.Gem1Content](ctx, a, search.AgentGem1, m)
}

// Gem2 assesses execution against the critical challenge.
func (a *Analyst) Gem2(ctx context.Context, in search.Gem2Input) (search.Answer[search.Gem2Content], llm.Usage, error) {
	m := searchPrefix(in.Gem1Input)
	m.line("desafío crítico (gem5_key_challenge): %s\n", orNone(in.Mandate.KeyChallenge))
	m.candidate(in.Candidate.CandidateID)
	m.section("Salida de GEM1", in.Gem1)
	// GEM2 contrasts CV, tests, case and interview; it may cite all four.
	m.doc(in.Candidate.Tests)
	m.doc(in.Candidate.Case)
	m.doc(in.Candidate.Interview)
	m.doc(in.Candidate.CV)
	return ask[search.Gem2Content](ctx, a, search.AgentGem2, m)
}

// Gem3 consolidates the verdict with the references and client culture.
func (a *Analyst) Gem3(ctx context.Context, in search.Gem3Input) (search.Answer[search.Gem3Content], llm.Usage, error) {
	m := searchPrefix(in.Gem1Input)
	m.doc(in.Search.Culture)
	gate := in.Gate
	if gate == 0 {
		gate = search.DefaultGates.Gem3
	}
	m.line("Umbral de avance de GEM3: score_dimension >= %d. La recomendación es SI solo si tu puntuación alcanza el umbral; NO en caso contrario.\n", gate)
	m.candidate(in.Candidate.CandidateID)
	m.section("Salida de GEM1", in.Gem1)
	m.section("Salida de GEM2", in.Gem2)
	m.doc(in.Candidate.References)
	m.cite(in.Candidate.CV.ID, in.Candidate.Interview.ID, in.Candidate.Tests.ID, in.Candidate.Case.ID)
	if in.Reask != "" {
		m.line("## Reconsideración\n%s\n", in.Reask)
	}
	return ask[search.Gem3Content](ctx, a, search.AgentGem3, m)
}

func (m *message) citeIndex(index []string) {
	m.section("Índice de fuentes (sources_index)", index)
	m.cite(index...)
}

// Gem4 audits GEM1–GEM3 against the sources index.
func (a *Analyst) Gem4(ctx context.Context, in search.Gem4Input) (search.Answer[search.Gem4Content], llm.Usage, error) {
	m := searchPrefix(in.Gem1Input)
	gate := in.Gate
	if gate == 0 {
		gate = search.DefaultGates.Gem4
	}
	m.line("Gate final: score_dimension >= %d y decision distinta de BLOQUEADO.\n", gate)
	m.candidate(in.Candidate.CandidateID)
	m.citeIndex(present(in.SourcesIndex, in.Candidate))
	if in.Attempt > 0 {
		m.line("Re-auditoría número %d tras una corrección.\n", in.Attempt)
	}
	m.section("Salida de GEM1", in.Gem1)
	m.section("Salida de GEM2", in.Gem2)
	m.section("Salida de GEM3", in.Gem3)
	return ask[search.Gem4Content](ctx, a, search.AgentGem4, m)
}

// present narrows the search's sources index to the search documents and
// this candidate's documents: other candidates' files are not evidence.
func present(index []string, c search.CandidateDocs) []string {
	prefix := "candidates/" + c.CandidateID + "/"
	var out []string
	for _, id := range index {
		if !strings.HasPrefix(id, "candidates/") || strings.HasPrefix(id, prefix) {
			out = append(out, id)
		}
	}
	return out
}

// Correct rewrites GEM1–GEM3 following a blocking audit.
func (a *Analyst) Correct(ctx context.Context, in search.CorrectionInput) (search.Answer[search.CorrectionContent], llm.Usage, error) {
	m := searchPrefix(in.Gem1Input)
	m.candidate(in.Candidate.CandidateID)
	m.citeIndex(present(in.SourcesIndex, in.Candidate))
	m.section("Salida de GEM1", in.Gem1)
	m.section("Salida de GEM2", in.Gem2)
	m.section("Salida de GEM3", in.Gem3)
	m.section("Auditoría de GEM4 que bloqueó", in.Audit)
	return ask[search.CorrectionContent](ctx, a, search.AgentCorrection, m)
}
