package httpapi

import (
	"net/http"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/flags"
)

// flagRoutes serves interview flags (seed 002).
type flagRoutes struct {
	judge  flags.ContradictionJudge
	now    func() time.Time
	record *FlagsRecord
}

// FlagsRecord keeps the audit record of each classification POST /flags
// makes (issue 30): an execution of its own, named in the response's
// Veredicto-Execution header, whose output is stored in Reports at
// flags/<tenant>/<execution>/flags.json (DATA/reports under serve) and
// whose record Audit opens (DATA/reports/audit/<tenant>/<execution>/).
type FlagsRecord struct {
	Audit   flags.Auditor
	Reports flags.BlobWriter
	// Model names the contradiction judge in the record.
	Model veredicto.ModelInfo
}

// FlagsOutputKey is where POST /flags stores a recorded classification's
// output.
func FlagsOutputKey(tenant, execution string) string {
	return "flags/" + tenant + "/" + execution + "/flags.json"
}

func (f flagRoutes) register(m *Mux) {
	m.Handle("POST /flags", RequireTenant(f.classify))
}

// classify answers the Flags document of the posted documents. Bad
// documents are a 400 that names the document and field; a judge failure
// is a 502.
func (f flagRoutes) classify(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	var body flags.Request
	if err := DecodeJSON(w, r, &body, `{"questions": {…}, "transcripts": [{…}], "context": {…}}`, 0); err != nil {
		WriteError(w, r, err)
		return
	}
	res, warnings, err := f.evaluate(r, body, p.Tenant, w.Header())
	switch {
	case veredicto.Kind(err) == veredicto.NameInvalidInput:
		WriteError(w, r, err)
		return
	case err != nil:
		WriteError(w, r, &Error{Name: NameUpstreamFailed, Message: "the contradiction judge failed; retry later"})
		return
	}
	WriteJSON(w, http.StatusOK, struct {
		flags.Flags
		Warnings []string `json:"warnings"`
	}{res, append([]string{}, warnings...)})
}

// evaluate classifies the request's documents, in an audit record of its
// own when the routes keep one (its execution named in header).
func (f flagRoutes) evaluate(r *http.Request, body flags.Request, tenant string, header http.Header) (flags.Flags, []string, error) {
	if f.record == nil {
		return flags.Evaluate(r.Context(), body, f.judge, f.now)
	}
	in, err := body.Inputs()
	if err != nil {
		return flags.Flags{}, nil, err
	}
	execution := flags.NewExecution()
	ctx, err := flags.Open(r.Context(), f.record.Audit, tenant, execution, f.record.Model, nil)
	if err != nil {
		return flags.Flags{}, nil, err
	}
	header.Set("Veredicto-Execution", execution)
	res, warnings, _, err := flags.RunRecorded(ctx, in, f.judge, f.now, tenant, FlagsOutputKey(tenant, execution), f.record.Reports)
	return res, warnings, err
}
