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
// Its Store's adapters are packages of their own, named by backend:
// internal/confirm/file (a folder: serve and "veredicto confirm"),
// internal/confirm/dynamo (the context table on AWS) and
// internal/confirm/memory (runs that keep no reviews).
//
// The package is organised by concern:
//
//   - confirm.go: statuses, bounds, the Service and its ports (Appender,
//     TaskSender);
//   - record.go: a stored confirmation (Record), its decision and what
//     clients see of it (View);
//   - store.go: the Store port and what its adapters share (NotFound,
//     FirstOpen);
//   - create.go: Confirm, a workflow's request, and confirmation ids;
//   - list.go: a tenant's open confirmations;
//   - resolve.go: Resolve, a person's decision recorded and delivered to
//     the waiting task exactly once;
//   - expire.go: expiring an ended execution's confirmations, and
//     redelivering decisions a crash left undelivered;
//   - events.go: what confirmations put on the event log;
//   - http.go: the /api/confirmations endpoint.
//
// Delivery to an in-process engine (the local composition's) is
// internal/confirm/engine, apart so that the Lambdas link no engine.
package confirm
