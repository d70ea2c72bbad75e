package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/veredicto/veredicto/internal/companion"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/flags"
	"github.com/veredicto/veredicto/internal/intake"
)

// Routes are the services the HTTP surface serves. A nil one leaves its
// routes out, so each Lambda serves its own and the local server all of
// them, from the one table New registers.
type Routes struct {
	Searches      *intake.Service          // /searches…, /runs
	Runs          RunLister                // other workflows' runs on GET /runs
	Judge         flags.ContradictionJudge // POST /flags
	Now           func() time.Time         // stamps flags documents (time.Now when nil)
	FlagsRecord   *FlagsRecord             // audit records of POST /flags (none when nil)
	Companion     *companion.API           // /companion/applications…
	Debates       *Debates                 // /debates…
	Confirmations *confirm.Service         // /api/confirmations
	Chat          *Chat                    // /api/chat, /api/chat/metrics
	Events        *Events                  // GET /api/events (Server-Sent Events)
	// StepFunctions is the Step Functions API (POST / with X-Amz-Target):
	// the local server's control plane.
	StepFunctions http.Handler
	// Lambda is the Lambda Invoke API (POST
	// /2015-03-31/functions/{name}/invocations): the project's functions.
	Lambda http.Handler
	// Console is the web console: its files at the paths it lists.
	Console Site
	Logger  *slog.Logger
}

// Site is a handler of fixed paths (the web console's page and assets).
type Site interface {
	http.Handler
	Paths() []string
}

// New registers every route of rt's services on one Mux.
func New(rt Routes) *Mux {
	m := NewMux(rt.Logger)
	m.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	if rt.Searches != nil || rt.Runs != nil {
		searchRoutes{svc: rt.Searches, runs: rt.Runs}.register(m)
	}
	if rt.Judge != nil {
		flagRoutes{judge: rt.Judge, now: rt.Now, record: rt.FlagsRecord}.register(m)
	}
	if rt.Companion != nil {
		companionRoutes{api: rt.Companion}.register(m)
	}
	if rt.Debates != nil {
		rt.Debates.register(m)
	}
	if rt.Confirmations != nil {
		confirmationRoutes{svc: rt.Confirmations}.register(m)
	}
	if rt.Chat != nil {
		rt.Chat.register(m)
	}
	if rt.Events != nil {
		rt.Events.register(m)
	}
	if rt.StepFunctions != nil {
		m.Handle("POST /{$}", rt.StepFunctions)
	}
	if rt.Lambda != nil {
		m.Handle(LambdaInvokeRoute, rt.Lambda)
	}
	if rt.Console != nil {
		for _, p := range rt.Console.Paths() {
			if p == "/" {
				p = "/{$}"
			}
			m.Handle("GET "+p, rt.Console)
		}
	}
	return m
}
