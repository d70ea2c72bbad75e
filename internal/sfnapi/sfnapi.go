// Package sfnapi serves the Step Functions API over the AWS JSON 1.0
// protocol (POST / with X-Amz-Target: AWSStepFunctions.<Operation>), so the
// AWS CLI and the sfn client of aws-sdk-go-v2 work against the local control
// plane unchanged. Operations are served by a control.Manager; refusals are
// AWS-shaped ({"__type", "message"}, HTTP 400).
package sfnapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/control"
)

// TargetPrefix starts the X-Amz-Target of every Step Functions operation.
const TargetPrefix = "AWSStepFunctions."

// ContentType is the AWS JSON 1.0 media type.
const ContentType = "application/x-amz-json-1.0"

// maxBody bounds a request body: a 1 MiB definition, escaped, fits.
const maxBody = 3 * 1024 * 1024

// Page sizes (Step Functions' maxResults: default 100, at most 1000).
const (
	defaultPage = 100
	maxPage     = 1000
)

// Backend is what the API needs from the control plane (a
// *control.Manager).
type Backend interface {
	CreateStateMachine(ctx context.Context, name, definition, roleARN, typ string) (control.StateMachine, error)
	DescribeStateMachine(ctx context.Context, arn string) (control.StateMachine, error)
	ListStateMachines(ctx context.Context, after string, max int) ([]control.StateMachine, string)
	DeleteStateMachine(ctx context.Context, arn string) error
	UpdateStateMachine(ctx context.Context, arn, definition, roleARN string) (time.Time, error)
	StartExecution(ctx context.Context, smARN, name, input string) (control.Execution, error)
	DescribeExecution(ctx context.Context, arn string) (control.Execution, error)
	ExecutionTenant(ctx context.Context, arn string) (string, error)
	ListExecutions(ctx context.Context, smARN, status, next string, max int, visible func(control.ExecutionSummary) bool) ([]control.ExecutionSummary, string, error)
	History(ctx context.Context, arn, next string, max int, reverse bool) ([]control.HistoryEvent, string, error)
	StopExecution(ctx context.Context, arn, errName, cause string) (time.Time, error)
	SendTaskSuccess(ctx context.Context, token, output string) error
	SendTaskFailure(ctx context.Context, token, errName, cause string) error
	SendTaskHeartbeat(ctx context.Context, token string) error
	TestState(ctx context.Context, req control.TestStateRequest) (control.TestResult, error)
	Versioner
	Expresser
	Redriver
	ActivityBackend
	ResourceBackend
	MapRunner
}

var _ Backend = (*control.Manager)(nil)

// roleARN is the form of an IAM role ARN CreateStateMachine accepts.
var roleARN = regexp.MustCompile(`^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]{1,512}$`)

// checkRole refuses a role that is not an IAM role ARN, as AWS does.
func checkRole(arn string) error {
	if !roleARN.MatchString(arn) {
		return &control.Error{Code: control.CodeInvalidArn, Message: fmt.Sprintf("Invalid Arn: 'Resource type not valid in this context: %s'", arn)}
	}
	return nil
}

// Handler serves the Step Functions API. Every request must come signed
// (see authz.go): behind httpapi.Authenticator, which verifies SigV4.
type Handler struct {
	backend Backend
	log     *slog.Logger
	guard   Guard
	ops     map[string]func(context.Context, []byte) (any, error)
	tokens  pageTokens // ListExecutions' page tokens, sealed to the caller
}

// Options configure a Handler.
type Options struct {
	Logger *slog.Logger
	// Guard, when set, may refuse SendTask* on a token (see Guard).
	Guard Guard
}

// New returns the API handler for backend.
func New(backend Backend, opts Options) *Handler {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	h := &Handler{backend: backend, log: logger, guard: opts.Guard, tokens: newPageTokens()}
	h.ops = map[string]func(context.Context, []byte) (any, error){
		"CreateStateMachine":   h.createStateMachineWith,
		"DescribeStateMachine": h.describeStateMachineWith,
		"ListStateMachines":    h.listStateMachines,
		"DeleteStateMachine":   h.deleteStateMachine,
		"UpdateStateMachine":   h.updateStateMachineWith,
		"StartExecution":       h.startExecution,
		"DescribeExecution":    h.describeExecution,
		"ListExecutions":       h.listExecutions,
		"GetExecutionHistory":  h.getExecutionHistory,
		"StopExecution":        h.stopExecution,
		"SendTaskSuccess":      h.sendTaskSuccess,
		"SendTaskFailure":      h.sendTaskFailure,
		"SendTaskHeartbeat":    h.sendTaskHeartbeat,
		"TestState":            h.testState,
	}
	for _, more := range []map[string]func(context.Context, []byte) (any, error){h.versionOps(), h.expressOps(), h.redriveOps(), h.activityOps(), h.resourceOps(), h.mapRunOps()} {
		for name, op := range more {
			h.ops[name] = op
		}
	}
	return h
}

// apiError is an error response.
type apiError struct {
	status   int
	code     string
	msg      string
	resource string // the resourceName of the errors whose shape has one
}

func (e *apiError) Error() string { return e.code + ": " + e.msg }

func validation(format string, args ...any) error {
	return &apiError{status: http.StatusBadRequest, code: control.CodeValidation, msg: fmt.Sprintf(format, args...)}
}

func required(field, value string) error {
	if value == "" {
		return validation("1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null", field)
	}
	return nil
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeError(w, &apiError{status: http.StatusMethodNotAllowed, code: "UnknownOperationException", msg: "the Step Functions API takes POST requests"})
		return
	}
	p, refused := authenticate(r)
	if refused != nil {
		writeError(w, refused)
		return
	}
	target := r.Header.Get("X-Amz-Target")
	name := strings.TrimPrefix(target, TargetPrefix)
	op, ok := h.ops[name]
	if !ok || !strings.HasPrefix(target, TargetPrefix) {
		writeError(w, &apiError{status: http.StatusBadRequest, code: "UnknownOperationException", msg: fmt.Sprintf("unknown operation %q", target)})
		return
	}
	if !p.Operator && operatorOnly[name] {
		writeError(w, accessDenied(p, name))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		writeError(w, &apiError{status: http.StatusRequestEntityTooLarge, code: control.CodeValidation, msg: fmt.Sprintf("the request body is over %d bytes", maxBody)})
		return
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		body = []byte("{}")
	}
	out, err := op(withPrincipal(r.Context(), p), body)
	if err != nil {
		var ae *apiError
		var ce *control.Error
		switch {
		case errors.As(err, &ae):
		case errors.As(err, &ce):
			ae = &apiError{status: http.StatusBadRequest, code: ce.Code, msg: ce.Message, resource: ce.ResourceName}
			if ce.Code == control.CodeServiceUnavailable {
				ae.status = http.StatusServiceUnavailable
			}
		default:
			h.log.ErrorContext(r.Context(), "step functions operation failed", "operation", target, "error", err)
			ae = &apiError{status: http.StatusInternalServerError, code: "InternalFailure", msg: err.Error()}
		}
		writeError(w, ae)
		return
	}
	b, err := json.Marshal(out)
	if err != nil {
		writeError(w, &apiError{status: http.StatusInternalServerError, code: "InternalFailure", msg: err.Error()})
		return
	}
	w.Header().Set("Content-Type", ContentType)
	w.Write(b)
}

func writeError(w http.ResponseWriter, e *apiError) {
	w.Header().Set("Content-Type", ContentType)
	w.Header().Set("X-Amzn-ErrorType", e.code)
	w.WriteHeader(e.status)
	body := map[string]string{"__type": e.code, "message": e.msg}
	if e.resource != "" {
		body["resourceName"] = e.resource
	}
	b, _ := json.Marshal(body)
	w.Write(b)
}

// decode reads a request into v; malformed JSON is a SerializationException.
func decode(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return &apiError{status: http.StatusBadRequest, code: "SerializationException", msg: fmt.Sprintf("the request body is not a valid %s document: %v", ContentType, err)}
	}
	return nil
}

// nameField is a request's name field (an execution's, a state machine's),
// decoded without repair. encoding/json turns invalid UTF-8, and an escaped
// surrogate with no partner, into U+FFFD, which would make a name Step
// Functions refuses (InvalidName) a valid one; such a name keeps the text
// between its quotes as sent, which control.ValidName refuses.
type nameField string

func (n *nameField) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if len(b) >= 2 && b[0] == '"' && !faithful(b[1:len(b)-1]) {
		s = string(b[1 : len(b)-1])
	}
	*n = nameField(s)
	return nil
}

// faithful reports whether the body of a JSON string (its syntax already
// checked) decodes to exactly the characters it spells: valid UTF-8, and
// every \u escape of a surrogate half paired with the other half.
func faithful(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		i++ // the escaped character: "\\" is skipped whole
		if i+4 >= len(b) || b[i] != 'u' {
			continue
		}
		r, _ := strconv.ParseUint(string(b[i+1:i+5]), 16, 16)
		i += 4
		switch {
		case r < 0xD800 || r > 0xDFFF:
		case r < 0xDC00 && i+6 < len(b) && b[i+1] == '\\' && b[i+2] == 'u':
			lo, _ := strconv.ParseUint(string(b[i+3:i+7]), 16, 16)
			if lo < 0xDC00 || lo > 0xDFFF {
				return false
			}
			i += 6
		default:
			return false
		}
	}
	return true
}

// epoch is a timestamp as AWS JSON 1.0 carries it: seconds since the epoch.
type epoch time.Time

func (t epoch) MarshalJSON() ([]byte, error) {
	ms := time.Time(t).UnixMilli()
	return []byte(fmt.Sprintf("%d.%03d", ms/1000, ms%1000)), nil
}

func epochPtr(t time.Time) *epoch {
	if t.IsZero() {
		return nil
	}
	e := epoch(t)
	return &e
}

func pageSize(n int) (int, error) {
	switch {
	case n == 0:
		return defaultPage, nil
	case n < 0 || n > maxPage:
		return 0, validation("1 validation error detected: Value '%d' at 'maxResults' failed to satisfy constraint: Member must have value between 0 and %d", n, maxPage)
	}
	return n, nil
}

// Operations.

func (h *Handler) createStateMachine(ctx context.Context, body []byte) (any, error) {
	var in struct {
		Name       nameField `json:"name"`
		Definition string    `json:"definition"`
		RoleARN    string    `json:"roleArn"`
		Type       string    `json:"type"`
		versionRequest
		Logging *control.LoggingConfiguration `json:"loggingConfiguration"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := errors.Join(required("name", string(in.Name)), required("definition", in.Definition), required("roleArn", in.RoleARN)); err != nil {
		return nil, firstErr(err)
	}
	if err := errors.Join(checkRole(in.RoleARN), in.versionRequest.check()); err != nil {
		return nil, firstErr(err)
	}
	if in.Logging != nil {
		if err := in.Logging.Check(); err != nil {
			return nil, err
		}
	}
	sm, err := h.backend.CreateStateMachine(ctx, string(in.Name), in.Definition, in.RoleARN, in.Type)
	if err != nil {
		return nil, err
	}
	if _, err := h.logging(ctx, sm.ARN, in.Logging, false); err != nil {
		return nil, err
	}
	out := map[string]any{"stateMachineArn": sm.ARN, "creationDate": epoch(sm.Created)}
	return out, h.publish(ctx, in.versionRequest, sm.ARN, sm.RevisionID, out)
}

func firstErr(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok && len(j.Unwrap()) > 0 {
		return j.Unwrap()[0]
	}
	return err
}

func (h *Handler) describeStateMachine(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ARN string `json:"stateMachineArn"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := required("stateMachineArn", in.ARN); err != nil {
		return nil, err
	}
	sm, err := h.backend.DescribeStateMachine(ctx, in.ARN)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"stateMachineArn": sm.ARN, "name": sm.Name, "status": "ACTIVE", "definition": sm.Definition,
		"roleArn": sm.RoleARN, "type": sm.Type, "creationDate": epoch(sm.Created)}
	if sm.RevisionID != "" {
		out["revisionId"] = sm.RevisionID
	}
	if sm.Description != "" {
		out["description"] = sm.Description
	}
	return out, nil
}

func (h *Handler) listStateMachines(ctx context.Context, body []byte) (any, error) {
	after, max, err := listRequest(body)
	if err != nil {
		return nil, err
	}
	list, next := h.backend.ListStateMachines(ctx, after, max)
	items := make([]map[string]any, 0, len(list))
	for _, sm := range list {
		items = append(items, map[string]any{"stateMachineArn": sm.ARN, "name": sm.Name, "type": sm.Type, "creationDate": epoch(sm.Created)})
	}
	out := map[string]any{"stateMachines": items}
	if next != "" {
		out["nextToken"] = next
	}
	return out, nil
}

func (h *Handler) deleteStateMachine(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ARN string `json:"stateMachineArn"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := required("stateMachineArn", in.ARN); err != nil {
		return nil, err
	}
	return struct{}{}, h.backend.DeleteStateMachine(ctx, in.ARN)
}

func (h *Handler) updateStateMachine(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ARN        string `json:"stateMachineArn"`
		Definition string `json:"definition"`
		RoleARN    string `json:"roleArn"`
		versionRequest
		Logging *control.LoggingConfiguration `json:"loggingConfiguration"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := required("stateMachineArn", in.ARN); err != nil {
		return nil, err
	}
	if err := in.versionRequest.check(); err != nil {
		return nil, err
	}
	if in.RoleARN != "" {
		if err := checkRole(in.RoleARN); err != nil {
			return nil, err
		}
	}
	if in.Logging != nil {
		if err := in.Logging.Check(); err != nil {
			return nil, err
		}
	}
	var at time.Time
	if in.Definition != "" || in.RoleARN != "" || in.Logging == nil {
		var err error
		if at, err = h.backend.UpdateStateMachine(ctx, in.ARN, in.Definition, in.RoleARN); err != nil {
			return nil, err
		}
	}
	if logged, err := h.logging(ctx, in.ARN, in.Logging, true); err != nil {
		return nil, err
	} else if at.IsZero() {
		at = logged
	}
	out := map[string]any{"updateDate": epoch(at)}
	sm, err := h.backend.DescribeStateMachine(ctx, in.ARN)
	if err != nil {
		return nil, err
	}
	if sm.RevisionID != "" {
		out["revisionId"] = sm.RevisionID
	}
	return out, h.publish(ctx, in.versionRequest, in.ARN, sm.RevisionID, out)
}

// startRequest is what StartExecution and StartSyncExecution take.
type startRequest struct {
	ARN         string    `json:"stateMachineArn"`
	Name        nameField `json:"name"`
	Input       *string   `json:"input"`
	TraceHeader string    `json:"traceHeader"`
}

// decodeStart reads a start and its input ("{}" when none), scoped to the
// caller's tenant.
func decodeStart(ctx context.Context, body []byte) (startRequest, string, error) {
	var in startRequest
	if err := decodeWith(body, &in, "stateMachineArn", &in.ARN); err != nil {
		return in, "", err
	}
	input := "{}"
	if in.Input != nil {
		input = *in.Input
	}
	input, err := scopeInput(principal(ctx), input)
	return in, input, err
}

// decodeWith reads a request into in and refuses it without the field
// whose value, once decoded, is at value.
func decodeWith(body []byte, in any, field string, value *string) error {
	if err := decode(body, in); err != nil {
		return err
	}
	return required(field, *value)
}

// decodeExecution reads a request on one execution, whose ARN is at arn
// once decoded, and refuses an execution the caller may not see as a
// missing one.
func (h *Handler) decodeExecution(ctx context.Context, body []byte, in any, arn *string) error {
	if err := decodeWith(body, in, "executionArn", arn); err != nil {
		return err
	}
	return h.visibleExecution(ctx, *arn)
}

func (h *Handler) startExecution(ctx context.Context, body []byte) (any, error) {
	in, input, err := decodeStart(ctx, body)
	if err != nil {
		return nil, err
	}
	x, err := h.backend.StartExecution(ctx, in.ARN, string(in.Name), input)
	if err != nil {
		return nil, err
	}
	return map[string]any{"executionArn": x.ARN, "startDate": epoch(x.Start)}, nil
}

func (h *Handler) describeExecution(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ARN string `json:"executionArn"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := required("executionArn", in.ARN); err != nil {
		return nil, err
	}
	x, err := h.describe(ctx, in.ARN) // another tenant's: as a missing one
	if err != nil {
		return nil, err
	}
	out := map[string]any{"executionArn": x.ARN, "stateMachineArn": x.StateMachineARN, "name": x.Name, "status": x.Status,
		"startDate": epoch(x.Start), "input": string(x.Input), "inputDetails": map[string]bool{"included": true}}
	redrive(out, x.Redrive)
	if x.MapRunARN != "" {
		out["mapRunArn"] = x.MapRunARN
	}
	if s := epochPtr(x.Stop); s != nil {
		out["stopDate"] = s
	}
	if x.Output != nil {
		out["outputDetails"] = map[string]bool{"included": true}
	}
	errName, cause := x.Error, x.Cause
	if x.Status == asl.StatusTimedOut {
		// AWS describes an execution past its TimeoutSeconds with neither
		// (recorded on AWS: LocalStack snapshot
		// timeouts/test_timeouts.snapshot.json, test_global_timeout).
		errName, cause = "", ""
	}
	outcome(out, x.Output, errName, cause)
	qualifiers(out, x.VersionARN, x.AliasARN)
	return out, nil
}

// outcome adds what a run ended with: its output, or its error and
// cause, each only when there is one.
func outcome(out map[string]any, output json.RawMessage, errName, cause string) {
	if output != nil {
		out["output"] = string(output)
	}
	if errName != "" {
		out["error"] = errName
	}
	if cause != "" {
		out["cause"] = cause
	}
}

// qualifiers adds the version and alias an execution was started
// through, as DescribeExecution and ListExecutions report them.
func qualifiers(out map[string]any, versionARN, aliasARN string) {
	if versionARN != "" {
		out["stateMachineVersionArn"] = versionARN
	}
	if aliasARN != "" {
		out["stateMachineAliasArn"] = aliasARN
	}
}

// statuses are the statusFilter values ListExecutions takes: Step
// Functions' own, and control.StatusDamaged, this server's status for an
// execution whose metadata could not be read.
var statuses = map[string]bool{"RUNNING": true, "SUCCEEDED": true, "FAILED": true, "TIMED_OUT": true, "ABORTED": true, "PENDING_REDRIVE": true,
	control.StatusDamaged: true}

func (h *Handler) listExecutions(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ARN        string `json:"stateMachineArn"`
		MapRunARN  string `json:"mapRunArn"`
		Status     string `json:"statusFilter"`
		MaxResults int    `json:"maxResults"`
		NextToken  string `json:"nextToken"`
		Redrive    string `json:"redriveFilter"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	switch {
	case in.ARN != "" && in.MapRunARN != "":
		return nil, validation("Only one of stateMachineArn or mapRunArn may be specified")
	case in.ARN == "" && in.MapRunARN == "":
		return nil, validation("Must specify either stateMachineArn or mapRunArn")
	}
	keep, ok := redriveFilters[in.Redrive]
	if !ok {
		return nil, validation("1 validation error detected: Value '%s' at 'redriveFilter' failed to satisfy constraint: Member must satisfy enum value set: [REDRIVEN, NOT_REDRIVEN]", in.Redrive)
	}
	if in.Status != "" && !statuses[in.Status] {
		return nil, validation("1 validation error detected: Value '%s' at 'statusFilter' failed to satisfy constraint: Member must satisfy enum value set: [RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED, PENDING_REDRIVE, DAMAGED]", in.Status)
	}
	max, err := pageSize(in.MaxResults)
	if err != nil {
		return nil, err
	}
	var list []control.ExecutionSummary
	var next string
	p := principal(ctx)
	after, err := h.tokens.open(p, in.NextToken)
	if err != nil {
		return nil, err
	}
	// Another tenant's execution is not listed, as if it did not exist;
	// redriven or not, as redriveFilter asks. A machine's listing applies
	// it before the paging, so no page or token counts what the caller does
	// not see; a map run's children (its execution's tenant, checked
	// first) are filtered as they come.
	visible := func(x control.ExecutionSummary) bool { return (p.Operator || x.Tenant == p.Tenant) && keep(x) }
	if in.MapRunARN != "" {
		if _, err = h.visibleMapRun(ctx, in.MapRunARN); err != nil {
			return nil, err
		}
		list, next, err = h.backend.ListMapRunExecutions(ctx, in.MapRunARN, in.Status, after, max)
	} else {
		list, next, err = h.backend.ListExecutions(ctx, in.ARN, in.Status, after, max, visible)
	}
	if err != nil {
		return nil, err
	}
	items := make([]map[string]any, 0, len(list))
	for _, x := range list {
		if !visible(x) {
			continue
		}
		it := map[string]any{"executionArn": x.ARN, "stateMachineArn": x.StateMachineARN, "name": x.Name, "status": x.Status, "startDate": epoch(x.Start)}
		if s := epochPtr(x.Stop); s != nil {
			it["stopDate"] = s
		}
		qualifiers(it, x.VersionARN, x.AliasARN)
		if x.MapRunARN != "" {
			it["mapRunArn"] = x.MapRunARN
		}
		if x.RedriveCount > 0 {
			it["redriveCount"], it["redriveDate"] = x.RedriveCount, epoch(x.RedriveDate)
		}
		items = append(items, it)
	}
	out := map[string]any{"executions": items}
	if next != "" {
		out["nextToken"] = h.tokens.seal(p, next)
	}
	return out, nil
}

func (h *Handler) getExecutionHistory(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ARN         string `json:"executionArn"`
		MaxResults  int    `json:"maxResults"`
		NextToken   string `json:"nextToken"`
		Reverse     bool   `json:"reverseOrder"`
		IncludeData *bool  `json:"includeExecutionData"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	if err := required("executionArn", in.ARN); err != nil {
		return nil, err
	}
	max, err := pageSize(in.MaxResults)
	if err != nil {
		return nil, err
	}
	if err := h.visibleExecution(ctx, in.ARN); err != nil {
		return nil, err
	}
	events, next, err := h.backend.History(ctx, in.ARN, in.NextToken, max, in.Reverse)
	if err != nil {
		return nil, err
	}
	data := in.IncludeData == nil || *in.IncludeData
	role := ""
	for _, ev := range events {
		if ev.Type == "ExecutionStarted" {
			role = h.roleOf(ctx, in.ARN)
		}
	}
	items := make([]map[string]any, 0, len(events))
	for _, ev := range events {
		items = append(items, historyEvent(ev, data, role))
	}
	out := map[string]any{"events": items}
	if next != "" {
		out["nextToken"] = next
	}
	return out, nil
}

// roleOf is the role of the machine an execution ran, as
// ExecutionStarted names it; the local role when the machine is gone.
func (h *Handler) roleOf(ctx context.Context, executionARN string) string {
	if e, err := h.backend.DescribeExecution(ctx, executionARN); err == nil {
		if sm, err := h.backend.DescribeStateMachine(ctx, e.StateMachineARN); err == nil && sm.RoleARN != "" {
			return sm.RoleARN
		}
	}
	return "arn:aws:iam::" + control.Account + ":role/local"
}

func (h *Handler) stopExecution(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ARN   string `json:"executionArn"`
		Error string `json:"error"`
		Cause string `json:"cause"`
	}
	if err := h.decodeExecution(ctx, body, &in, &in.ARN); err != nil {
		return nil, err
	}
	stop, err := h.backend.StopExecution(ctx, in.ARN, in.Error, in.Cause)
	if err != nil {
		return nil, err
	}
	return map[string]any{"stopDate": epoch(stop)}, nil
}

type taskRequest struct {
	Token  string  `json:"taskToken"`
	Output *string `json:"output"`
	Error  string  `json:"error"`
	Cause  string  `json:"cause"`
}

func (h *Handler) decodeTask(ctx context.Context, body []byte, resolves bool) (taskRequest, error) {
	var in taskRequest
	if err := decode(body, &in); err != nil {
		return in, err
	}
	if err := required("taskToken", in.Token); err != nil {
		return in, err
	}
	return in, h.visibleToken(ctx, in.Token, resolves)
}

func (h *Handler) sendTaskSuccess(ctx context.Context, body []byte) (any, error) {
	in, err := h.decodeTask(ctx, body, true)
	if err != nil {
		return nil, err
	}
	if in.Output == nil {
		return nil, required("output", "")
	}
	return struct{}{}, h.backend.SendTaskSuccess(ctx, in.Token, *in.Output)
}

func (h *Handler) sendTaskFailure(ctx context.Context, body []byte) (any, error) {
	in, err := h.decodeTask(ctx, body, true)
	if err != nil {
		return nil, err
	}
	return struct{}{}, h.backend.SendTaskFailure(ctx, in.Token, in.Error, in.Cause)
}

func (h *Handler) sendTaskHeartbeat(ctx context.Context, body []byte) (any, error) {
	in, err := h.decodeTask(ctx, body, false)
	if err != nil {
		return nil, err
	}
	return struct{}{}, h.backend.SendTaskHeartbeat(ctx, in.Token)
}
