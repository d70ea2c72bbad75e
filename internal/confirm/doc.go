// Package confirm is the confirmations domain (seed 004 §3): a workflow asks
// a person before a sensitive action with a .waitForTaskToken Task on
// ConfirmFunction; the person approves or rejects through
// /api/confirmations (or "veredicto confirm"), which resumes the workflow
// with SendTaskSuccess or fails its Task with ConfirmationRejected.
//
// Every confirmation is stored per tenant with its task token, which stays
// server-side: clients only ever see the confirmation's id, derived from
// the token by a hash.
//
// The package is organised by concern:
//
//   - confirm.go: statuses, bounds, the Service and its ports (Appender,
//     TaskSender);
//   - record.go: a stored confirmation (Record), its decision and what
//     clients see of it (View);
//   - store.go: the Store port and what its adapters share;
//   - create.go: Confirm, a workflow's request, and confirmation ids;
//   - list.go: a tenant's open confirmations;
//   - resolve.go: Resolve, a person's decision recorded and delivered to
//     the waiting task exactly once;
//   - expire.go: expiring an ended execution's confirmations, and
//     redelivering decisions a crash left undelivered;
//   - events.go: what confirmations put on the event log;
//   - engine.go: EngineTasks, delivery to an in-process engine;
//   - file.go, dynamo.go, memory.go: the Store's adapters (a folder,
//     DynamoDB, memory);
//   - http.go: the /api/confirmations endpoint.
package confirm
