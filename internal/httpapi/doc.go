// Package httpapi is the project's HTTP surface: the routes of each service
// (a Group, in the packages internal/httpapi/<service>api) registered on
// one net/http ServeMux with Go 1.22 patterns (New), one authentication
// middleware (Authenticator: Host, SigV4, JWT), one error answer
// (WriteError, with the one table from an error's kind to its status) and
// one JSON decoder (DecodeJSON). The same routes serve the local server
// (`veredicto serve`, every group, behind the Authenticator) and each
// Lambda (its own group) behind API Gateway (Gateway: the principal from
// the claims its JWT authorizer verified) or a streaming Function URL
// (FunctionURL). A Lambda links only the services of the groups it
// registers.
//
// Routes:
//
//	GET  /healthz                                   200 while the server runs
//	POST /                                          the Step Functions API (X-Amz-Target; SigV4, AWS's error shapes)
//	GET  /searches                                  the tenant's searches
//	POST /searches                                  start an uploaded search
//	GET  /searches/{id}                             state, per-candidate stages and decisions, usage
//	GET  /searches/{id}/summary                     summary.json, .md (Accept: text/markdown) or HTML (Accept: text/html)
//	GET  /searches/{id}/candidates/{cid}/report     report.json, .md or HTML, likewise
//	GET  /searches/{id}/sources/{path...}           the text of a document the reports cite
//	GET  /runs                                      the tenant's runs of every workflow
//	POST /flags                                     interview flags for the posted documents (seed 002)
//	POST /debates                                   start a debate (seed 003)
//	GET  /debates/{id}                              its status and, once finished, its debate_log
//	GET  /debates/{id}/report                       debate.md
//	POST /companion/applications                    start a career-companion application (seed 001)
//	GET  /companion/applications/{id}               its context, or report.md (Accept: text/markdown)
//	POST /companion/applications/{id}/{phase}       answer, verify, audit, retro, refine
//	GET  /api/confirmations                         the confirmations the tenant's workflows wait for
//	POST /api/confirmations                         decide one (the principal is recorded as the decider)
//	POST /api/chat                                  a turn of the delegation chat (seed 004)
//	GET  /api/chat/metrics                          delegation counters per agent
//	POST /api/chat/feedback                         a person's answer to a turn's question, a labelled example
//	GET  /api/chat/agents                           the specialists a request may go to
//	GET  /api/events?execution=…|chat=…             an execution's or conversation's events (Server-Sent Events)
//	GET  /, /config.js, /assets/…                   the web console
//
// Every route but /healthz, the console's files and the Step Functions API
// needs a principal acting for a tenant (RequireTenant): a bearer JWT, or
// a request signed with a tenant's access key. Another tenant's object
// answers exactly like a missing one. An unknown path is 404, a known path
// asked with another method 405 with Allow.
//
// Files:
//
//	doc.go             this map
//	api.go             Group and New: the route table; Route, SiteRoutes
//	mux.go             Mux: the ServeMux with JSON 404/405
//	respond.go         WriteError (the status table), WriteJSON, DecodeJSON
//	authn.go           Authenticator (Host, SigV4, JWT) and RequireTenant
//	gateway.go         Gateway: API Gateway HTTP API (payload 2.0) events
//	functionurl.go     FunctionURL: a streaming Lambda Function URL
//
// Groups:
//
//	searchapi          /searches…, /runs; SFNRuns, the runs on AWS
//	flagsapi           /flags
//	debateapi          /debates…
//	companionapi       /companion/applications…
//	confirmapi         /api/confirmations
//	chatapi            /api/chat…
//	eventsapi          /api/events (Server-Sent Events); EventStream
package httpapi
