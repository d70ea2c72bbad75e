package lambdaapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/httpapi"
)

// Route is the Invoke API's route (a Go 1.22 ServeMux pattern), as the
// server's route table has it.
const Route = httpapi.LambdaInvokeRoute

// Lambda's payload limits: 6 MB for a synchronous invocation, request and
// response, 256 KB for an asynchronous one.
const (
	MaxSyncPayload  = 6 * 1024 * 1024
	MaxEventPayload = 256 * 1024
)

// DefaultMaxEvents bounds the Event invocations running at once.
const DefaultMaxEvents = 64

// invocationTimeout bounds one invocation: Lambda's longest timeout.
const invocationTimeout = 15 * time.Minute

// Config configures a Handler.
type Config struct {
	// Functions are the functions served, by name: typed handlers as
	// lambda.Start takes them (func(ctx, In) (Out, error)…).
	Functions map[string]any
	// Region and Account are this server's: the functions' ARNs are
	// arn:aws:lambda:<Region>:<Account>:function:<name>.
	Region, Account string
	// TenantFunctions are the functions a tenant's key may invoke, its
	// tenant in the event (CheckTenant): the Tasks of the workflows, whose
	// event is a Task's payload. The others are an operator's: a function
	// an event source invokes (S3 through SQS, EventBridge, API Gateway
	// with its authorizer's claims) takes its identity from that source —
	// a tenant could write another tenant inside an SQS body, an S3 key or
	// a JWT claim — and ConfirmFunction records a person's question.
	TenantFunctions map[string]bool
	// MaxEvents bounds the Event invocations running at once
	// (DefaultMaxEvents when 0); past it, TooManyRequestsException.
	MaxEvents int
	Logger    *slog.Logger
}

// Handler serves the Invoke API. Every request must come signed (SigV4,
// service "lambda") with one of the server's keys, as the Step Functions
// API's: an operator's key invokes any function with any event; a
// tenant's only with its own tenant in the event (CheckTenant), else
// AccessDeniedException. It is safe for concurrent use; Close waits for
// the Event invocations still running.
type Handler struct {
	cfg       Config
	log       *slog.Logger
	functions map[string]lambda.Handler
	events    chan struct{} // a slot per Event invocation running
	root      context.Context
	stop      context.CancelFunc
	wg        sync.WaitGroup
}

// New returns the Invoke API's handler for cfg's functions.
func New(cfg Config) *Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxEvents <= 0 {
		cfg.MaxEvents = DefaultMaxEvents
	}
	root, stop := context.WithCancel(context.Background())
	h := &Handler{cfg: cfg, log: cfg.Logger, functions: map[string]lambda.Handler{}, events: make(chan struct{}, cfg.MaxEvents), root: root, stop: stop}
	for name, fn := range cfg.Functions {
		h.functions[name] = lambda.NewHandler(fn)
	}
	return h
}

// Names lists the functions served, sorted.
func (h *Handler) Names() []string { return slices.Sorted(maps.Keys(h.functions)) }

// Close cancels the Event invocations still running and waits for them.
func (h *Handler) Close() {
	h.stop()
	h.wg.Wait()
}

// apiError is a refusal in Lambda's REST-JSON shape.
type apiError struct {
	status int
	code   string
	msg    string
}

func (e *apiError) Error() string { return e.code + ": " + e.msg }

func refuse(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, msg: fmt.Sprintf(format, args...)}
}

func writeError(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", e.code)
	w.WriteHeader(e.status)
	b, _ := json.Marshal(map[string]string{"Type": "User", "message": e.msg})
	w.Write(b)
}

// Invocation types.
const (
	invokeSync  = "RequestResponse"
	invokeEvent = "Event"
	invokeDry   = "DryRun"
)

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	requestID := newRequestID()
	w.Header().Set("X-Amzn-Requestid", requestID)
	p, refused := authenticate(r)
	if refused != nil {
		writeError(w, refused)
		return
	}
	name := r.PathValue("name")
	f, ok := ParseFunction(name)
	if !ok {
		writeError(w, refuse(http.StatusBadRequest, "ValidationException",
			"1 validation error detected: Value '%s' at 'functionName' failed to satisfy constraint: Member must satisfy regular expression pattern: "+
				`(arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{2}(-gov)?-[a-z]+-\d{1}:)?(\d{12}:)?(function:)?([a-zA-Z0-9-_\.]+)(:(\$LATEST|[a-zA-Z0-9-_]+))?`, name))
		return
	}
	if q := r.URL.Query().Get("Qualifier"); q != "" {
		if f.Qualifier != "" && f.Qualifier != q {
			writeError(w, refuse(http.StatusBadRequest, "InvalidParameterValueException", "The derived qualifier from the function name does not match the specified qualifier."))
			return
		}
		f.Qualifier = q
	}
	typ := r.Header.Get("X-Amz-Invocation-Type")
	if typ == "" {
		typ = invokeSync
	}
	if typ != invokeSync && typ != invokeEvent && typ != invokeDry {
		writeError(w, refuse(http.StatusBadRequest, "ValidationException",
			"1 validation error detected: Value '%s' at 'invocationType' failed to satisfy constraint: Member must satisfy enum value set: [Event, RequestResponse, DryRun]", typ))
		return
	}
	arn := f.ARN(h.cfg.Region, h.cfg.Account)
	fn, ok := h.functions[f.Name]
	if !ok || (f.Region != "" && f.Region != h.cfg.Region) || (f.Account != "" && f.Account != h.cfg.Account) || (f.Qualifier != "" && f.Qualifier != "$LATEST") {
		writeError(w, refuse(http.StatusNotFound, "ResourceNotFoundException", "Function not found: %s", arn))
		return
	}
	limit := MaxSyncPayload
	if typ == invokeEvent {
		limit = MaxEventPayload
	}
	payload, err := io.ReadAll(io.LimitReader(r.Body, int64(limit)+1))
	if err != nil {
		writeError(w, refuse(http.StatusBadRequest, "InvalidRequestContentException", "Could not read the request body: %v", err))
		return
	}
	if len(payload) > limit {
		writeError(w, refuse(http.StatusRequestEntityTooLarge, "RequestTooLargeException", "Request must be smaller than %d bytes for the %s invocation type", limit, typ))
		return
	}
	if len(payload) == 0 {
		payload = []byte("{}")
	}
	if err := asl.CheckJSON(payload); err != nil {
		writeError(w, refuse(http.StatusBadRequest, "InvalidRequestContentException", "Could not parse request body into json: Could not parse payload into json: %v", err))
		return
	}
	if !p.Operator && !h.cfg.TenantFunctions[f.Name] {
		writeError(w, refuse(http.StatusForbidden, auth.CodeAccessDenied,
			"User: %s is not authorized to perform: lambda:InvokeFunction on resource: %s because its events come from an event source or a person's decision, not from a tenant's key (an operator's key may invoke it)", p.Name, arn))
		return
	}
	if !p.Operator {
		if err := CheckTenant(payload, p.Tenant); err != nil {
			writeError(w, refuse(http.StatusForbidden, auth.CodeAccessDenied,
				"User: %s is not authorized to perform: lambda:InvokeFunction on resource: %s because %v", p.Name, arn, err))
			return
		}
	}
	w.Header().Set("X-Amz-Executed-Version", "$LATEST")
	switch typ {
	case invokeDry:
		w.WriteHeader(http.StatusNoContent)
	case invokeEvent:
		h.event(w, fn, f.Name, arn, requestID, payload)
	default:
		h.sync(w, r.Context(), fn, arn, requestID, payload)
	}
}

// sync runs a RequestResponse invocation and writes its answer: the
// function's output, or its error with X-Amz-Function-Error: Unhandled
// (status 200, as Lambda answers a function error).
func (h *Handler) sync(w http.ResponseWriter, ctx context.Context, fn lambda.Handler, arn, requestID string, payload []byte) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), invocationTimeout)
	defer cancel()
	out, ferr := invoke(ctx, fn, arn, requestID, payload)
	if ferr == nil && len(out) > MaxSyncPayload {
		ferr = &messages.InvokeResponse_Error{Type: "Function.ResponseSizeTooLarge",
			Message: fmt.Sprintf("Response payload size (%d bytes) exceeded maximum allowed payload size (%d bytes).", len(out), MaxSyncPayload)}
	}
	w.Header().Set("Content-Type", "application/json")
	if ferr != nil {
		w.Header().Set("X-Amz-Function-Error", "Unhandled")
		out, _ = json.Marshal(ferr)
	}
	w.Write(out)
}

// event starts an Event invocation in the background and answers 202 at
// once; at most MaxEvents run at a time.
func (h *Handler) event(w http.ResponseWriter, fn lambda.Handler, name, arn, requestID string, payload []byte) {
	select {
	case h.events <- struct{}{}:
	default:
		writeError(w, refuse(http.StatusTooManyRequests, "TooManyRequestsException", "Rate Exceeded."))
		return
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer func() { <-h.events }()
		ctx, cancel := context.WithTimeout(h.root, invocationTimeout)
		defer cancel()
		if _, ferr := invoke(ctx, fn, arn, requestID, payload); ferr != nil {
			h.log.WarnContext(ctx, "event invocation failed", "function", name, "request_id", requestID, "error_type", ferr.Type)
		}
	}()
	w.WriteHeader(http.StatusAccepted)
}

// invoke runs fn on payload as the Lambda runtime does; a function error
// (or a panic) is its {errorMessage, errorType}.
func invoke(ctx context.Context, fn lambda.Handler, arn, requestID string, payload []byte) (out []byte, ferr *messages.InvokeResponse_Error) {
	defer func() {
		if v := recover(); v != nil {
			t := reflect.TypeOf(v)
			if t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			ferr = &messages.InvokeResponse_Error{Type: t.Name(), Message: fmt.Sprint(v)}
		}
	}()
	ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: requestID, InvokedFunctionArn: arn})
	out, err := fn.Invoke(ctx, payload)
	if err != nil {
		var ir messages.InvokeResponse_Error
		if !errors.As(err, &ir) {
			ir = messages.InvokeResponse_Error{Message: err.Error(), Type: asl.ErrorName(err)}
		}
		return nil, &ir
	}
	return out, nil
}

// authenticate is the principal of a signed request, or the Lambda-shaped
// refusal of one that is not (all 403, as Lambda answers them).
func authenticate(r *http.Request) (auth.Principal, *apiError) {
	p, ok := auth.PrincipalFrom(r.Context())
	if ok && p.Via == auth.ViaSigV4 {
		return p, nil
	}
	var se *auth.SigV4Error
	if err := auth.FailureFrom(r.Context()); errors.As(err, &se) {
		return p, refuse(http.StatusForbidden, se.Code, "%s", se.Message)
	}
	return p, refuse(http.StatusForbidden, auth.CodeMissingAuthenticationToken,
		"Missing Authentication Token: the Lambda API takes requests signed with Signature Version 4 (veredicto credentials prints a key)")
}

func newRequestID() string {
	var b [16]byte
	rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
