// Package confirmapi is the HTTP API's confirmations (seed 004 §3): GET and
// POST /api/confirmations.
package confirmapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/veredicto/veredicto/internal/httpapi"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/confirm"
)

// Routes serve the confirmations a tenant's workflows wait for
// (seed 004 §3):
//
//	GET  /api/confirmations   {"confirmations": [View…], "more"} (pending, being delivered, damaged)
//	POST /api/confirmations   {"id", "approved", "comment"?} → 200 View
//
// A POST for an unknown id and one for another tenant's id answer the same
// 404; a second decision is 409, and so is a decision on a damaged
// confirmation (status "damaged": its record could not be read; the
// message names the damage); an expired confirmation 410; a body that
// is not the expected JSON 400 naming the field; a recorded decision whose
// delivery failed 503 (POST it again to finish delivering it). The decision
// records the authenticated principal, never a name from the body.
type Routes struct{ Service *confirm.Service }

func (c Routes) Register(m *httpapi.Mux) {
	m.Handle("GET /api/confirmations", httpapi.RequireTenant(c.list))
	m.Handle("POST /api/confirmations", httpapi.RequireTenant(c.resolve))
}

// maxResolutionBytes bounds a POST body (a comment is at most
// confirm.MaxCommentBytes).
const maxResolutionBytes = 16 << 10

func (c Routes) list(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	list, more, err := c.Service.List(r.Context(), p.Tenant)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	// more: others wait past these, oldest first; they show as these are
	// decided.
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"confirmations": list, "more": more})
}

func (c Routes) resolve(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	res, err := decodeResolution(w, r)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	res.By = p.Name
	v, err := c.Service.Resolve(r.Context(), p.Tenant, res)
	if err != nil && veredicto.Kind(err) == veredicto.NameTransient {
		httpapi.LoggerOf(r).WarnContext(r.Context(), "confirmation delivery failed; the decision is kept", "confirmation_id", res.ID, "error", err)
		err = httpapi.Errorf(httpapi.NameServiceUnavailable, "confirmation %s: decision recorded, not yet delivered to the workflow; POST it again to deliver it", res.ID)
	}
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, v)
}

// decodeResolution reads {"id", "approved", "comment"?}, naming the first
// field that is missing, mistyped or unknown.
func decodeResolution(w http.ResponseWriter, r *http.Request) (confirm.Resolution, error) {
	const shape = `{"id": "...", "approved": true|false, "comment": "..."}`
	var raw map[string]json.RawMessage
	if err := httpapi.DecodeJSON(w, r, &raw, shape, maxResolutionBytes); err != nil {
		return confirm.Resolution{}, err
	}
	if raw == nil {
		return confirm.Resolution{}, &veredicto.InvalidInputError{File: "body", Problem: "must be a JSON object " + shape}
	}
	var res confirm.Resolution
	for k, v := range raw {
		var err error
		switch k {
		case "id":
			err = json.Unmarshal(v, &res.ID)
		case "approved":
			if string(v) == "null" {
				err = errors.New("null")
			} else {
				err = json.Unmarshal(v, &res.Approved)
			}
		case "comment":
			err = json.Unmarshal(v, &res.Comment)
		default:
			return confirm.Resolution{}, &veredicto.InvalidInputError{Field: k, Problem: "is not a known field (id, approved, comment)"}
		}
		if err != nil {
			want := map[string]string{"id": "a string", "approved": "true or false", "comment": "a string"}[k]
			return confirm.Resolution{}, &veredicto.InvalidInputError{Field: k, Problem: "must be " + want}
		}
	}
	switch {
	case res.ID == "":
		return confirm.Resolution{}, &veredicto.InvalidInputError{Field: "id", Problem: "is required"}
	case raw["approved"] == nil:
		return confirm.Resolution{}, &veredicto.InvalidInputError{Field: "approved", Problem: "is required (true or false)"}
	case len(res.Comment) > confirm.MaxCommentBytes:
		return confirm.Resolution{}, &veredicto.InvalidInputError{Field: "comment", Problem: fmt.Sprintf("is longer than %d bytes", confirm.MaxCommentBytes)}
	}
	return res, nil
}
