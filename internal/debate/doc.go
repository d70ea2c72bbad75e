// Package debate implements seed 003, the debate-dynamics protocol: a
// committee of role agents (CFO, CHRO, CEO, consultor senior, …) answers one
// hiring question in bounded rounds, the code measures their convergence,
// stops loops with a circuit breaker and escalates to a council of three or
// to a person.
//
// The language model only writes positions, rebuttals, syntheses and votes
// (strict schemas debate_position, debate_rebuttal, debate_synthesis,
// council_vote); every number and rule of the seed is code in this package:
// routing (Route), convergence (Convergence), loop hashing (PositionsHash),
// the circuit breaker (Breaker), the synthesis and council confidences and
// the escalation tables (Escalate, AfterCouncil). Agents cite the internal
// knowledge base as [RAG:<chunk_id>]; a citation of a chunk the agent was not
// given is rejected with one re-ask. Agents retrieve during the rounds,
// through the tool each turn offers, within the debate's budget of queries.
//
// The package is organised by concern:
//
//   - question.go: QUESTION.yaml (Question, its Config and defaults) and
//     its validation;
//   - contract.go: what the agents write (Position, Rebuttal, Synthesis,
//     Vote, RAGRequest), its bounds and when it says nothing (Vacuous);
//   - rules.go: the seed's rules as code (routing, convergence, loop
//     hashing, the circuit breaker, decision, confidences, escalation);
//   - engine.go: the Agents port and Engine.Run, the whole debate in one
//     process;
//   - tool.go: the retrieval tool a turn offers (Retrieval) and the
//     budget's rule for who has it (OfferedInParallel);
//   - ask.go: what the engine and the steps share about a turn: the
//     synthesis and rebuttal re-asked once when they say nothing, and the
//     Spanish lines of the incidents;
//   - agents.go: LLMAgents, the agents on a language model;
//   - offline.go: Offline, the agents without a model (the baseline);
//   - knowledge.go: the knowledge base (chunks, the index, RAG queries);
//   - report.go: the debate log, the checklists and debate.md;
//   - search.go: a debate asked from a search's candidate (FromSearch);
//   - steps.go: the AWS shape, one Lambda per step: the Steps, their ports
//     (BlobReader, BlobWriter, LogStore) and what the steps share (agent
//     deadlines, a turn's outcome, the error boundary);
//   - flow.go: Flow, the state the steps pass along, its Map items and
//     its size bound;
//   - prepare.go: Prepare (and ValidateStart), loading the knowledge
//     base and a step's retrieval tool;
//   - rounds.go: Position, CloseRound and Rebuttal, and the convergence
//     checkpoint that ends each round;
//   - archive.go: the rounds moved out of the Flow to the log store and
//     read back;
//   - library.go: the Flow's chunk library kept in the log store;
//   - synthesize.go: Synthesize and the person's preview;
//   - council.go: Vote and Council;
//   - finish.go: Finish, which writes the debate, and ReadLog.
package debate
