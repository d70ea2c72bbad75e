// Package chat is the delegation chat of seed 004 (§2, §5–9, §11): a
// supervisor model that may delegate a consultant's request to one of
// Veredicto's specialist agents through delegate_to_<id> tools, guided by a
// lexical intent heuristic (ScoreDelegationIntent), or a model learned
// from a labelled corpus (IntentModel), that never forces it,
// with sensitive actions behind confirmations and everything on the
// conversation's event stream.
//
// The agents are data (prompts/agents.yaml, LoadRegistry): adding one is
// keywords plus a tool (seed §13).
//
// The package is organised by concern:
//
//   - service.go: the Service, its ports (Appender, KV, Confirmations,
//     ConfirmationReader), Options and bounds, and a request's checks;
//   - claim.go: claiming a turn's number, and closing at start the turns
//     a killed server left unfinished;
//   - history.go: the stored turns (TurnRecord) read back as history;
//   - turn.go: Turn, one turn of the supervisor from the request to its
//     finish;
//   - stream.go: what a turn puts on the conversation's stream (text
//     deltas, streamed replies, execution steps, the origin link);
//   - prompt.go: the supervisor's system prompt, the tools it is offered
//     and how a tool's outcome reads to it;
//   - delegate.go: one delegation to a specialist, its arguments checked
//     against the tool's schema;
//   - confirmations.go: a sensitive action's confirmation, asked, awaited,
//     given up on and announced;
//   - registry.go: the agents' registry (prompts/agents.yaml);
//   - intent.go: the lexical delegation-intent score;
//   - corpus.go: a labelled corpus and a scorer's quality on it;
//   - features.go: a request's features for the learned model (negation,
//     status questions, paraphrase groups, stems, character n-grams, the
//     heuristic's own reading);
//   - learn.go: fitting the learned model on labelled requests, and its
//     per-agent calibration;
//   - intentmodel.go: the learned model as data (IntentModel), loaded
//     against its registry, and its score;
//   - intentmodels.go: which scorer a tenant's turns use (its promoted
//     model, the installation's, or the keyword heuristic);
//   - feedback.go: the person's answers to «¿Faltó delegar?» and «¿Era
//     esto lo que pedías?», kept as the tenant's labelled examples;
//   - recalibrate.go: refitting a tenant's model with its answers,
//     promoted only without an F1 loss, and the weekly run;
//   - model.go, offline.go: the supervisor model port, its OpenAI adapter
//     and the offline supervisor;
//   - tools.go, direct.go: the specialists' tools and the supervisor's
//     own;
//   - outbox.go: where sent messages go (a folder, or blobs);
//   - metrics.go: the delegation counters;
//   - queue.go: turns queued on SQS and their handler;
//   - links.go: the workflows a conversation starts, linked to it and
//     followed under serve (progress, confirmations, the end in Spanish);
//   - statuschange.go: the same links on AWS, told by Step Functions'
//     execution status changes (EventBridge → ChatLinkFunction);
//   - http.go: the chat's HTTP endpoint.
package chat
