package sfnapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/control"
)

// Who may do what, as IAM would decide it on AWS:
//   - every request is signed (SigV4) with one of the server's keys;
//   - an operator key manages state machines, tests states and sees every
//     tenant's executions (their tenant is the input's "tenant");
//   - a tenant key describes and lists state machines, starts executions
//     (they belong to its tenant: an input naming another tenant is
//     refused) and sees and acts on its tenant's executions only; another
//     tenant's execution or task answers exactly as a missing one;
//   - activities are shared or a tenant's own, and a task goes only to a
//     worker of its execution's tenant (see activities.go).

// Guard may refuse a SendTask* on a token beyond tenancy: the server's
// confirmations are resolved through the confirmation service only, so a
// decision always names the person who took it.
type Guard func(ctx context.Context, p auth.Principal, token string) error

// operatorOnly lists the operations a tenant key may not call.
var operatorOnly = map[string]bool{
	"CreateStateMachine": true, "UpdateStateMachine": true, "DeleteStateMachine": true, "TestState": true,
	"PublishStateMachineVersion": true, "DeleteStateMachineVersion": true,
	"CreateStateMachineAlias": true, "UpdateStateMachineAlias": true, "DeleteStateMachineAlias": true,
}

// authenticate is the principal of a signed request, or the AWS-shaped
// refusal of one that is not.
func authenticate(r *http.Request) (auth.Principal, *apiError) {
	p, ok := auth.PrincipalFrom(r.Context())
	if ok && p.Via == auth.ViaSigV4 {
		return p, nil
	}
	var se *auth.SigV4Error
	switch err := auth.FailureFrom(r.Context()); {
	case errors.As(err, &se):
		status := http.StatusBadRequest
		if se.Code == auth.CodeMissingAuthenticationToken {
			status = http.StatusForbidden
		}
		return auth.Principal{}, &apiError{status: status, code: se.Code, msg: se.Message}
	case ok || err != nil:
		return auth.Principal{}, &apiError{status: http.StatusForbidden, code: auth.CodeMissingAuthenticationToken,
			msg: "Missing Authentication Token: the Step Functions API takes requests signed with Signature Version 4 (veredicto credentials prints a key), not bearer tokens"}
	}
	return auth.Principal{}, &apiError{status: http.StatusForbidden, code: auth.CodeMissingAuthenticationToken, msg: "Missing Authentication Token"}
}

func accessDenied(p auth.Principal, op string) *apiError {
	return &apiError{status: http.StatusBadRequest, code: auth.CodeAccessDenied,
		msg: fmt.Sprintf("User: %s is not authorized to perform: states:%s (a tenant key of %s; state machines are managed with an operator key)", p.Name, op, p.Tenant)}
}

type principalKey struct{}

func withPrincipal(ctx context.Context, p auth.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// principal is the caller of an operation; the zero Principal (no scope)
// when the handler runs without authentication (never under serve).
func principal(ctx context.Context) auth.Principal {
	p, _ := ctx.Value(principalKey{}).(auth.Principal)
	return p
}

// executionDoesNotExist is the answer for a missing execution, and for
// another tenant's.
func executionDoesNotExist(arn string) error {
	return &control.Error{Code: control.CodeExecutionDoesNotExist, Message: fmt.Sprintf("Execution Does Not Exist: '%s'", arn)}
}

// visibleExecution refuses an execution the caller may not see, exactly as
// a missing one.
func (h *Handler) visibleExecution(ctx context.Context, arn string) error {
	p := principal(ctx)
	if p.Operator {
		return nil
	}
	_, err := h.describe(ctx, arn) // its own: a damaged one is named
	return err
}

// describe is the backend's DescribeExecution for the caller. Whether a
// tenant may see the execution is decided from memory first, before its
// files are read: another tenant's answers as a missing one, as fast and
// even when its files cannot be read. So a damaged execution
// (control.IsDamaged) is named only to an operator or to its tenant, when
// its history still says which that is; to anyone else it does not
// exist, as another tenant's execution.
func (h *Handler) describe(ctx context.Context, arn string) (control.Execution, error) {
	if p := principal(ctx); !p.Operator {
		tenant, err := h.backend.ExecutionTenant(ctx, arn)
		if err != nil {
			return control.Execution{}, err
		}
		if tenant != p.Tenant {
			return control.Execution{}, executionDoesNotExist(arn)
		}
	}
	return h.backend.DescribeExecution(ctx, arn)
}

// visibleToken refuses a task token of an execution the caller may not
// see, as a token of no task, and, for a call that resolves its task, any
// the guard refuses.
func (h *Handler) visibleToken(ctx context.Context, token string, resolves bool) error {
	p := principal(ctx)
	if !p.Operator {
		arn, ok := control.TokenExecution(token)
		if !ok {
			return &control.Error{Code: control.CodeInvalidToken, Message: "Invalid Token: 'Invalid token'"}
		}
		if tenant, err := h.backend.ExecutionTenant(ctx, arn); err != nil || tenant != p.Tenant {
			return &control.Error{Code: control.CodeTaskDoesNotExist, Message: "Task Does Not Exist: 'Provided task does not exist'"}
		}
	}
	if h.guard != nil && resolves {
		return h.guard(ctx, p, token)
	}
	return nil
}

// scopeInput makes a tenant's execution input its own: a JSON object
// whose "tenant" is the key's tenant (added when absent). An input naming
// another tenant, or naming one twice, is refused. A member named
// "tenant" in any case ("Tenant", "TENANT") is the tenant too: Go's JSON
// decoding, in the control plane (TenantOf) and in every function that
// reads its input, matches member names without regard to case and takes
// the last, so {"Tenant":"other"} would run as the other tenant.
func scopeInput(p auth.Principal, input string) (string, error) {
	if p.Operator {
		return input, nil
	}
	refuse := func(why string) error {
		return &control.Error{Code: control.CodeInvalidExecutionInput, Message: "Invalid State Machine Execution Input: '" + why + "'"}
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(input)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", refuse("a tenant's execution input must be a JSON object (its tenant is recorded in it)")
	}
	seen := 0
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return "", refuse("the input is not valid JSON")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return "", refuse("the input is not valid JSON")
		}
		name, _ := k.(string)
		if !strings.EqualFold(name, "tenant") {
			continue
		}
		if seen++; seen > 1 {
			return "", refuse("the input names its tenant twice")
		}
		if name != "tenant" {
			return "", refuse(fmt.Sprintf("the input names its tenant %q: spell it \"tenant\"", name))
		}
		var t string
		if json.Unmarshal(v, &t) != nil || t != p.Tenant {
			return "", refuse(fmt.Sprintf("the input's tenant is not %s, the tenant of this key", p.Tenant))
		}
	}
	if seen == 1 {
		return input, nil
	}
	name, _ := json.Marshal(p.Tenant)
	rest := bytes.TrimSpace([]byte(input))[1:]
	if len(bytes.TrimSpace(rest)) > 1 { // not "{}"
		return `{"tenant":` + string(name) + "," + string(rest), nil
	}
	return `{"tenant":` + string(name) + "}", nil
}
