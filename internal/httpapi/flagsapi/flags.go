// Package flagsapi is the HTTP API's interview flags (seed 002): POST
// /flags, with the audit record of each classification.
package flagsapi

import (
	"net/http"
	"time"

	"github.com/veredicto/veredicto/internal/httpapi"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/flags"
)

// Routes serves interview flags (seed 002).
type Routes struct {
	Judge flags.ContradictionJudge
	// Now stamps flags documents (time.Now when nil).
	Now func() time.Time
	// Record keeps the audit records of POST /flags (none when nil).
	Record *Record
}

// Record keeps the audit record of each classification POST /flags
// makes (issue 30): an execution of its own, named in the response's
// Veredicto-Execution header, whose output is stored in Reports at
// flags/<tenant>/<execution>/flags.json (DATA/reports under serve) and
// whose record Audit opens (DATA/reports/audit/<tenant>/<execution>/).
type Record struct {
	Audit   flags.Auditor
	Reports flags.BlobWriter
	// Model names the contradiction judge in the record.
	Model veredicto.ModelInfo
}

// OutputKey is where POST /flags stores a recorded classification's
// output.
func OutputKey(tenant, execution string) string {
	return "flags/" + tenant + "/" + execution + "/flags.json"
}

func (f Routes) Register(m *httpapi.Mux) {
	m.Handle("POST /flags", httpapi.RequireTenant(f.classify))
}

// classify answers the Flags document of the posted documents. Bad
// documents are a 400 that names the document and field; a judge failure
// is a 502.
func (f Routes) classify(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var body flags.Request
	if err := httpapi.DecodeJSON(w, r, &body, `{"questions": {…}, "transcripts": [{…}], "context": {…}}`, 0); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	res, warnings, err := f.evaluate(r, body, p.Tenant, w.Header())
	switch {
	case veredicto.Kind(err) == veredicto.NameInvalidInput:
		httpapi.WriteError(w, r, err)
		return
	case err != nil:
		httpapi.WriteError(w, r, &httpapi.Error{Name: httpapi.NameUpstreamFailed, Message: "the contradiction judge failed; retry later"})
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, struct {
		flags.Flags
		Warnings []string `json:"warnings"`
	}{res, append([]string{}, warnings...)})
}

// evaluate classifies the request's documents, in an audit record of its
// own when the routes keep one (its execution named in header).
func (f Routes) evaluate(r *http.Request, body flags.Request, tenant string, header http.Header) (flags.Flags, []string, error) {
	if f.Record == nil {
		return flags.Evaluate(r.Context(), body, f.Judge, f.Now)
	}
	in, err := body.Inputs()
	if err != nil {
		return flags.Flags{}, nil, err
	}
	execution := flags.NewExecution()
	ctx, err := flags.Open(r.Context(), f.Record.Audit, tenant, execution, f.Record.Model, nil)
	if err != nil {
		return flags.Flags{}, nil, err
	}
	header.Set("Veredicto-Execution", execution)
	res, warnings, _, err := flags.RunRecorded(ctx, in, f.Judge, f.Now, tenant, OutputKey(tenant, execution), f.Record.Reports)
	return res, warnings, err
}
