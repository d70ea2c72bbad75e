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
	judge flags.ContradictionJudge
	now   func() time.Time
}

func (f flagRoutes) register(m *Mux) {
	m.Handle("POST /flags", RequireTenant(f.classify))
}

// classify answers the Flags document of the posted documents. Bad
// documents are a 400 that names the document and field; a judge failure
// is a 502.
func (f flagRoutes) classify(w http.ResponseWriter, r *http.Request, _ auth.Principal) {
	var body flags.Request
	if err := DecodeJSON(w, r, &body, `{"questions": {…}, "transcripts": [{…}], "context": {…}}`, 0); err != nil {
		WriteError(w, r, err)
		return
	}
	res, warnings, err := flags.Evaluate(r.Context(), body, f.judge, f.now)
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
