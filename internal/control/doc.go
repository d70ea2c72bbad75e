// Package control is the local Step Functions control plane behind
// `veredicto serve`: state machines, durable executions and task tokens.
// Executions run on the project's engine (internal/asl); their metadata,
// history and task tokens are persisted under a folder, and after a restart
// (even a kill -9) every RUNNING execution resumes by deterministic replay
// of its recorded history: a Task that had completed is not invoked again,
// a Wait keeps its remaining time, and a task token still waits and is still
// accepted. The Task that was in flight at the crash is invoked again, so
// handlers must be safe to retry (they are: see STYLE.md).
//
// Every write to an execution's files goes first to a journal shared by
// all of them (journal.go): a committer gathers the writes that arrive
// while the disk syncs the previous batch and makes each batch durable
// with one fdatasync (group commit), then writes the files without a
// sync of their own; after a crash Open writes them again from the
// journal. A start is acknowledged once its metadata is durable there. A
// history event that the replay would emit again by itself (a Pass or a
// Choice state's, the start) does not wait for the disk; anything a
// restart cannot recompute (a Task's schedule and outcome, a task token
// and its resolution, a Wait's start, the end) is durable before the
// engine goes on, and OnHistory hears of events only once durable.
//
// An execution that can only wait — in a Wait state or on a Task's token
// — is parked: it holds no goroutine, only its index entry and a small
// record, and the same replay resumes it when its token is answered or
// its time comes (park.go). A restart indexes parked executions instead
// of replaying them.
//
// An execution's status changes only once its closing event and its
// metadata are durable. When the disk cannot take a history
// event or the end (a full disk), the execution is halted where its
// history ends and stays RUNNING, the failure named in DescribeExecution's
// cause and in the log; the next start resumes it from that history, so a
// Task whose completion was persisted does not run again. StopExecution
// closes it once the disk takes writes again.
//
// Damaged records are contained: metadata that no longer decodes is moved
// to DATA/quarantine/sfn and replaced by metadata naming the damage; the
// execution keeps its name (status DAMAGED, see StatusDamaged) and is
// refused by name, never forgotten.
//
// Hooks for the rest of the server (the event stream, confirmations) are
// Config.OnHistory and Config.OnStatus. Task tokens are resolved through
// SendTaskSuccess / SendTaskFailure, which the sfnapi package serves as the
// Step Functions API, so the sfn client has one code path on AWS and here.
//
// The package is organised by concern:
//
//   - manager.go: Config, Status, the Manager and its Open and Close;
//   - arn.go: the local account and region, ARNs and names;
//   - machines.go: state machines (register, create, update, describe,
//     list, delete);
//   - executions.go: starting, describing, listing and stopping executions,
//     and an execution's end (durable before reported, or stalled);
//   - history.go: an execution's history, by page;
//   - tokens.go: task tokens and SendTaskSuccess, SendTaskFailure and
//     SendTaskHeartbeat;
//   - load.go: loading state machines and executions at Open, and resuming
//     the executions that were running;
//   - recorder.go: an execution's recorder (persisting its history,
//     deterministic replay and its task tokens);
//   - park.go: parked executions: their records, the one timer heap that
//     wakes them, and what answers, heartbeats, stops and activity
//     workers do to them;
//   - store.go: the on-disk layout and atomic, fsynced writes;
//   - journal.go: the executions' write-ahead journal (group commit, the
//     replay after a crash, checkpoints);
//   - damage.go: damaged executions (quarantined metadata, reserved
//     names) and the read-only scan "veredicto doctor" runs;
//   - versions.go: state machine versions and aliases, and what a start
//     through one runs;
//   - express.go: Express executions (in memory, five minutes, logged
//     through Config.ExecutionLog) and StartSyncExecution;
//   - redrive.go: RedriveExecution, and what of a history is run again;
//   - mapruns.go: the map runs of Distributed Map states and their child
//     executions (DescribeMapRun, ListMapRuns, UpdateMapRun, ListExecutions
//     by map run), resumed and redriven with their parent;
//   - buckets.go: the local buckets a Distributed Map's ItemReader and
//     ResultWriter reach, confined to the execution's tenant:
//     veredicto-inputs is DATA/inputs and veredicto-reports DATA/reports
//     (keys <kind>/<tenant>/… only), any other bucket B is
//     DATA/buckets/<tenant>/B; outside is AccessDenied;
//   - teststate.go: TestState, one state run on its own;
//   - activities.go, activitytasks.go: activities and their tasks
//     (GetActivityTask, the workers waiting, ActivityStarted);
//   - attributes.go: tags and the state machines' logging, tracing and
//     encryption configuration;
//   - definitions.go: ValidateStateMachineDefinition's diagnostics and
//     the state machine an execution ran;
//   - errors.go: the Step Functions error codes the manager returns.
package control
