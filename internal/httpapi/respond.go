package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/auth"
)

// Error names of the HTTP surface besides the vocabulary's: what the
// authentication middleware and the routes refuse with.
const (
	NameUnauthorized       = auth.NameUnauthorized
	NameForbidden          = auth.NameForbidden
	NameMisdirected        = auth.NameMisdirected
	NameExpired            = "ExpiredError"
	NameTooLarge           = "TooLargeError"
	NameTooManyRequests    = "TooManyRequestsError"
	NameMethodNotAllowed   = "MethodNotAllowedError"
	NameUpstreamFailed     = "UpstreamError"
	NameServiceUnavailable = "ServiceUnavailableError"
)

// statusOf is the one table from an error's kind to its HTTP status. An
// error of no kind here is a 500 that says nothing of the internals.
var statusOf = map[string]int{
	veredicto.NameInvalidInput: http.StatusBadRequest,
	NameUnauthorized:           http.StatusUnauthorized,
	NameForbidden:              http.StatusForbidden,
	veredicto.NameNotFound:     http.StatusNotFound,
	NameMethodNotAllowed:       http.StatusMethodNotAllowed,
	veredicto.NameConflict:     http.StatusConflict,
	veredicto.NameDamaged:      http.StatusConflict, // the record's state, not the request, is wrong: no retry helps
	NameExpired:                http.StatusGone,
	NameTooLarge:               http.StatusRequestEntityTooLarge,
	NameMisdirected:            http.StatusMisdirectedRequest,
	veredicto.NameMissingInput: http.StatusUnprocessableEntity,
	NameTooManyRequests:        http.StatusTooManyRequests,
	NameUpstreamFailed:         http.StatusBadGateway,
	veredicto.NameTransient:    http.StatusServiceUnavailable,
	NameServiceUnavailable:     http.StatusServiceUnavailable,
}

// kinds lists statusOf's names, for Kind.
var kinds = func() []string {
	out := make([]string, 0, len(statusOf))
	for k := range statusOf {
		out = append(out, k)
	}
	return out
}()

// Error is a refusal of the HTTP surface itself (a route, a method, a size,
// a rate), named so WriteError gives it its status.
type Error struct {
	Name    string
	Message string
	// Header is set on the response (Allow, Retry-After, WWW-Authenticate).
	Header http.Header
}

func (e *Error) Error() string     { return e.Message }
func (e *Error) ErrorName() string { return e.Name }

// Errorf returns an *Error of kind name.
func Errorf(name, format string, args ...any) *Error {
	return &Error{Name: name, Message: fmt.Sprintf(format, args...)}
}

// StatusOf is err's HTTP status: its kind's, 500 when it has none.
func StatusOf(err error) int {
	if s, ok := statusOf[veredicto.Kind(err, kinds...)]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// errorBody is every error's body; Problems lists each problem of a
// request that has several.
type errorBody struct {
	Error    string   `json:"error"`
	Problems []string `json:"problems,omitempty"`
}

// problemLister is an error that lists several problems (a refused start).
type problemLister interface{ ProblemList() []string }

// WriteError answers err as JSON with its kind's status. An outage worth
// retrying says so; an error of no kind is logged and answered "internal
// error": neither shows the internals.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	status := StatusOf(err)
	body := errorBody{Error: err.Error()}
	logger := LoggerOf(r)
	switch status {
	case http.StatusInternalServerError:
		logger.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "error", err)
		body.Error = "internal error"
	case http.StatusServiceUnavailable:
		logger.WarnContext(r.Context(), "request failed, retryable", "method", r.Method, "path", r.URL.Path, "error", err)
		body.Error = "temporarily unavailable; retry later"
		if veredicto.Kind(err, NameServiceUnavailable) != "" {
			body.Error = err.Error() // said for the caller, in words
		}
	case http.StatusBadGateway:
		logger.ErrorContext(r.Context(), "upstream failed", "method", r.Method, "path", r.URL.Path, "error_type", veredicto.ErrorName(err))
	}
	var pl problemLister
	if errors.As(err, &pl) && status < 500 {
		body.Problems = pl.ProblemList()
	}
	var he *Error
	if errors.As(err, &he) {
		for k, v := range he.Header {
			w.Header()[k] = v
		}
	}
	WriteJSON(w, status, body)
}

// WriteJSON answers v as indented JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error": "internal error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// WriteBody answers a document of the given content type, then each
// header of extra (name, value, name, value…).
func WriteBody(w http.ResponseWriter, contentType string, b []byte, extra ...string) {
	w.Header().Set("Content-Type", contentType)
	for i := 0; i+1 < len(extra); i += 2 {
		w.Header().Set(extra[i], extra[i+1])
	}
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

// MaxBody bounds a request body (API Gateway bounds its own at 10 MiB).
const MaxBody = 10 << 20

// DecodeJSON reads r's body (at most limit bytes; MaxBody when 0) strictly
// into v: one JSON value, no unknown field. Its error names the field and
// what is wrong in a sentence, never a Go type; shape shows the expected
// body.
func DecodeJSON(w http.ResponseWriter, r *http.Request, v any, shape string, limit int64) error {
	if limit <= 0 {
		limit = MaxBody
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return Errorf(NameTooLarge, "the request body is over %d bytes", limit)
		}
		return &veredicto.InvalidInputError{File: "body", Problem: "cannot be read"}
	}
	return decodeStrict(b, v, shape)
}

// DecodeOptionalJSON is DecodeJSON for a body that may be empty (v keeps
// its zero value then).
func DecodeOptionalJSON(w http.ResponseWriter, r *http.Request, v any, shape string, limit int64) error {
	if limit <= 0 {
		limit = MaxBody
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		return Errorf(NameTooLarge, "the request body is over %d bytes", limit)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	return decodeStrict(b, v, shape)
}

func decodeStrict(b []byte, v any, shape string) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("trailing data after the JSON value")
	}
	if err == nil {
		return nil
	}
	var (
		syn   *json.SyntaxError
		typ   *json.UnmarshalTypeError
		why   string
		field string
	)
	switch {
	case errors.As(err, &syn):
		why = fmt.Sprintf("not valid JSON (at byte %d)", syn.Offset)
	case errors.As(err, &typ) && typ.Field != "":
		field = typ.Field
		why = fmt.Sprintf("must be %s, not a JSON %s", kindName(typ.Type.Kind().String()), typ.Value)
	case errors.As(err, &typ):
		why = fmt.Sprintf("must be a JSON object, not a JSON %s", typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field = strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		why = "is not a known field"
	case errors.Is(err, io.EOF):
		why = "is empty"
	case errors.Is(err, io.ErrUnexpectedEOF):
		why = "not valid JSON (it ends before the value does)"
	default:
		why = strings.TrimPrefix(err.Error(), "json: ")
	}
	problem := why
	if shape != "" {
		problem = why + " (expected " + shape + ")"
	}
	return &veredicto.InvalidInputError{File: "body", Field: field, Problem: problem}
}

func kindName(k string) string {
	switch {
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "uint"):
		return "a whole number"
	case strings.HasPrefix(k, "float"):
		return "a number"
	case k == "string":
		return "a string"
	case k == "map", k == "struct":
		return "an object"
	case k == "slice", k == "array":
		return "a list"
	case k == "bool":
		return "true or false"
	}
	return "another type"
}

type loggerKey struct{}

// withLogger returns r carrying the logger WriteError logs with.
func withLogger(r *http.Request, l *slog.Logger) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), loggerKey{}, l))
}

// LoggerOf is the logger the Mux serving r logs with (slog.Default when
// none).
func LoggerOf(r *http.Request) *slog.Logger {
	if l, ok := r.Context().Value(loggerKey{}).(*slog.Logger); ok && l != nil {
		return l
	}
	return slog.Default()
}

// Wants reads the Accept header of r: HTML, else Markdown, else JSON.
func Wants(r *http.Request) (asHTML, md bool) {
	accept := r.Header.Get("Accept")
	return strings.Contains(accept, "text/html"), strings.Contains(accept, "text/markdown")
}
