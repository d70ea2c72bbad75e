package confirm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/auth"
)

// Handler serves /api/confirmations for the tenant the auth middleware
// verified:
//
//	GET  /api/confirmations   {"confirmations": [View…]} (pending and being delivered)
//	POST /api/confirmations   {"id", "approved", "comment"?} → 200 View
//
// A POST for an unknown id and one for another tenant's id answer the same
// 404; a second decision is 409; an expired confirmation 410; a body that
// is not the expected JSON 400 naming the field; a recorded decision whose
// delivery failed 503 (POST it again to finish delivering it).
type Handler struct {
	Service *Service
	Logger  *slog.Logger
}

// maxBodyBytes bounds a POST body (a comment is at most MaxCommentBytes).
const maxBodyBytes = 16 << 10

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	claims, ok := auth.ClaimsFrom(r.Context())
	if !ok {
		writeJSON(w, http.StatusUnauthorized, errBody("no verified token"))
		return
	}
	switch r.Method {
	case http.MethodGet:
		list, more, err := h.Service.List(r.Context(), claims.Tenant)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		// more: others wait past these, oldest first; they show as these
		// are decided.
		writeJSON(w, http.StatusOK, map[string]any{"confirmations": list, "more": more})
	case http.MethodPost:
		res, err := decodeResolution(r.Body)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		res.By = claims.Subject
		if res.By == "" {
			res.By = "tenant:" + claims.Tenant
		}
		v, err := h.Service.Resolve(r.Context(), claims.Tenant, res)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, v)
	default:
		w.Header().Set("Allow", "GET, POST")
		writeJSON(w, http.StatusMethodNotAllowed, errBody(r.Method+" is not allowed on /api/confirmations"))
	}
}

// decodeResolution reads {"id", "approved", "comment"?}, naming the first
// field that is missing, mistyped or unknown.
func decodeResolution(body io.Reader) (Resolution, error) {
	b, err := io.ReadAll(io.LimitReader(body, maxBodyBytes+1))
	if err != nil {
		return Resolution{}, &veredicto.InvalidInputError{Field: "body", Problem: "cannot be read"}
	}
	if len(b) > maxBodyBytes {
		return Resolution{}, &veredicto.InvalidInputError{Field: "body", Problem: fmt.Sprintf("is over %d bytes", maxBodyBytes)}
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&raw); err != nil || raw == nil {
		return Resolution{}, &veredicto.InvalidInputError{Field: "body", Problem: `must be a JSON object {"id": "...", "approved": true|false, "comment": "..."}`}
	}
	var res Resolution
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
			return Resolution{}, &veredicto.InvalidInputError{Field: k, Problem: "is not a known field (id, approved, comment)"}
		}
		if err != nil {
			want := map[string]string{"id": "a string", "approved": "true or false", "comment": "a string"}[k]
			return Resolution{}, &veredicto.InvalidInputError{Field: k, Problem: "must be " + want}
		}
	}
	switch {
	case res.ID == "":
		return Resolution{}, &veredicto.InvalidInputError{Field: "id", Problem: "is required"}
	case raw["approved"] == nil:
		return Resolution{}, &veredicto.InvalidInputError{Field: "approved", Problem: "is required (true or false)"}
	case len(res.Comment) > MaxCommentBytes:
		return Resolution{}, &veredicto.InvalidInputError{Field: "comment", Problem: fmt.Sprintf("is longer than %d bytes", MaxCommentBytes)}
	}
	return res, nil
}

// Status maps an error of this package to an HTTP status.
func Status(err error) int {
	var (
		ii *veredicto.InvalidInputError
		nf *veredicto.NotFoundError
		cf *veredicto.ConflictError
		ex *ExpiredError
		tr *veredicto.TransientError
	)
	switch {
	case errors.As(err, &ii):
		return http.StatusBadRequest
	case errors.As(err, &nf):
		return http.StatusNotFound
	case errors.As(err, &ex):
		return http.StatusGone
	case errors.As(err, &cf):
		return http.StatusConflict
	case errors.As(err, &tr):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := Status(err)
	msg := err.Error()
	switch status {
	case http.StatusInternalServerError:
		h.logger().ErrorContext(r.Context(), "confirmations request failed", "error", err)
		msg = "internal error"
	case http.StatusServiceUnavailable:
		h.logger().WarnContext(r.Context(), "confirmations request failed", "error", err)
	}
	writeJSON(w, status, errBody(msg))
}

func (h *Handler) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}

func errBody(msg string) map[string]string { return map[string]string{"error": msg} }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
