// Package asl is Veredicto's in-process Amazon States Language engine: it
// loads the definitions in statemachines/ and runs them the way AWS Step
// Functions (Standard workflows) does, binding each Task to the same Go
// handler its Lambda function wraps. Both query languages run: JSONPath
// (the default) and JSONata (QueryLanguage, per machine or per state, with
// the evaluator of package jsonata), and workflow variables (Assign, $name)
// in both.
//
// Parse loads and validates a definition into a StateMachine. An Engine runs
// StateMachines; its Registry maps Task resources to Handlers
// ("${Gem1FunctionArn}" → the handler registered as "Gem1Function"). Errors
// cross the Task boundary by name, exactly as the Go Lambda runtime names
// them (see ErrorName), so Retry and Catch match the same strings in both
// runtimes.
//
// The engine is organised by concern:
//
//   - engine.go: the Engine, its options, binding checks and Start/Run;
//   - execution.go: an Execution, its history and the run loop that moves
//     from state to state, with InputPath/Parameters/ResultPath/OutputPath;
//   - states.go: Pass, Wait, Succeed, Fail and Choice;
//   - task.go: Task states, handler invocation and task tokens
//     (.waitForTaskToken, SendTaskSuccess, SendTaskFailure);
//   - activity.go: Task states served by activity workers (WithActivities);
//   - retry.go: Retry and Catch, and ErrorEquals matching;
//   - durable.go, park.go: resuming a recorded execution by replay
//     (Durable), and parking one that can only wait (Durable.Park);
//   - fanout.go: Parallel branches and Map iterations;
//   - distributed.go, maprun.go, mapbatch.go, itemreader.go,
//     resultwriter.go: Distributed Map states — loading them, their map
//     runs and child executions (MapRunner: control's records each
//     child), reading items from Buckets (a listing, JSON, JSON Lines or
//     CSV objects, streamed), batching them, tolerated failures and the
//     ResultWriter's files;
//   - teststate.go: TestState's hooks (StartOptions.Test): what a tested
//     state reports between its processing steps, and the mock that may
//     stand for its work;
//   - definition.go, path.go, template.go, choice.go, intrinsic.go: loading
//     a definition, JSONPath, payload templates, Choice rules and intrinsic
//     functions;
//   - vars.go: variable scopes, their size limits and scope rules;
//   - value.go, decode.go, encode.go, size.go: the engine's JSON values,
//     read, written and measured; raw.go, overlay.go: the lazy values (a
//     Task result kept as text; an object ResultPath overlays; a small
//     payload or parsed object held as an overlay of its members) and
//     where they may stand;
//   - query.go, jsonata_states.go, jsonata_functions.go: JSONata values
//     ({% … %}), JSONata states and the functions Step Functions adds.
//
// Step Functions' quotas are enforced: payloads between states are limited
// to MaxPayloadBytes (States.DataLimitExceeded) and an execution's history to
// MaxHistoryEvents (States.Runtime, which no Catch handles), so a definition
// that loops without end fails in bounded time and memory. Parallel and Map
// states nest at most MaxNestingDepth levels (refused by Parse).
package asl
