package sfnapi

import (
	"context"
	"time"

	"github.com/veredicto/veredicto/internal/control"
)

// Versioner is what the API needs from the control plane for versions and
// aliases (a *control.Manager).
type Versioner interface {
	PublishStateMachineVersion(ctx context.Context, machineARN, revisionID, description string) (control.Version, error)
	ListStateMachineVersions(ctx context.Context, machineARN, next string, max int) ([]control.Version, string, error)
	DeleteStateMachineVersion(ctx context.Context, arn string) error
	CreateStateMachineAlias(ctx context.Context, name, description string, routing []control.Route) (control.Alias, error)
	DescribeStateMachineAlias(ctx context.Context, arn string) (control.Alias, error)
	ListStateMachineAliases(ctx context.Context, arn, next string, max int) ([]control.Alias, string, error)
	UpdateStateMachineAlias(ctx context.Context, arn string, description *string, routing []control.Route) (time.Time, error)
	DeleteStateMachineAlias(ctx context.Context, arn string) error
}

var _ Versioner = (*control.Manager)(nil)

// versionOps are the operations on versions and aliases. Versions and
// aliases belong to their machine: every key may read them, as it may
// read machines; only an operator's publishes, deletes or routes (see
// operatorOnly).
func (h *Handler) versionOps() map[string]func(context.Context, []byte) (any, error) {
	return map[string]func(context.Context, []byte) (any, error){
		"PublishStateMachineVersion": h.publishStateMachineVersion,
		"ListStateMachineVersions":   h.listStateMachineVersions,
		"DeleteStateMachineVersion":  h.deleteStateMachineVersion,
		"CreateStateMachineAlias":    h.createStateMachineAlias,
		"DescribeStateMachineAlias":  h.describeStateMachineAlias,
		"ListStateMachineAliases":    h.listStateMachineAliases,
		"UpdateStateMachineAlias":    h.updateStateMachineAlias,
		"DeleteStateMachineAlias":    h.deleteStateMachineAlias,
	}
}

// versionRequest is what CreateStateMachine and UpdateStateMachine take to
// publish a version of the machine they leave.
type versionRequest struct {
	Publish     bool    `json:"publish"`
	Description *string `json:"versionDescription"`
}

// check refuses a description without publish, as Step Functions does.
func (v versionRequest) check() error {
	if v.Description != nil && !v.Publish {
		return validation("Version description can only be set when publish is true")
	}
	if v.Description != nil && len(*v.Description) > 256 {
		return validation("1 validation error detected: Value at 'versionDescription' failed to satisfy constraint: Member must have length less than or equal to 256")
	}
	return nil
}

// publish publishes revision of machineARN when asked, adding its ARN to
// out.
func (h *Handler) publish(ctx context.Context, v versionRequest, machineARN, revision string, out map[string]any) error {
	if !v.Publish {
		return nil
	}
	if revision == "" {
		revision = "INITIAL"
	}
	desc := ""
	if v.Description != nil {
		desc = *v.Description
	}
	ver, err := h.backend.PublishStateMachineVersion(ctx, machineARN, revision, desc)
	if err != nil {
		return err
	}
	out["stateMachineVersionArn"] = ver.ARN
	return nil
}

// checkToken bounds a nextToken as Step Functions does.
func checkToken(next string, max int) error {
	if len(next) > max {
		return validation("1 validation error detected: Value '%s' at 'nextToken' failed to satisfy constraint: Member must have length less than or equal to %d", next, max)
	}
	return nil
}

// listPage is the request of a paginated list by state machine ARN.
type listPage struct {
	ARN        string `json:"stateMachineArn"`
	MaxResults int    `json:"maxResults"`
	NextToken  string `json:"nextToken"`
}

func decodePage(body []byte) (listPage, int, error) {
	var in listPage
	if err := decodeWith(body, &in, "stateMachineArn", &in.ARN); err != nil {
		return in, 0, err
	}
	max, err := pageSize(in.MaxResults)
	if err != nil {
		return in, 0, err
	}
	return in, max, checkToken(in.NextToken, 1024)
}

func withNext(out map[string]any, next string) map[string]any {
	if next != "" {
		out["nextToken"] = next
	}
	return out
}

func (h *Handler) publishStateMachineVersion(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ARN         string `json:"stateMachineArn"`
		RevisionID  string `json:"revisionId"`
		Description string `json:"description"`
	}
	if err := decodeWith(body, &in, "stateMachineArn", &in.ARN); err != nil {
		return nil, err
	}
	v, err := h.backend.PublishStateMachineVersion(ctx, in.ARN, in.RevisionID, in.Description)
	if err != nil {
		return nil, err
	}
	return map[string]any{"stateMachineVersionArn": v.ARN, "creationDate": epoch(v.Created)}, nil
}

func (h *Handler) listStateMachineVersions(ctx context.Context, body []byte) (any, error) {
	in, max, err := decodePage(body)
	if err != nil {
		return nil, err
	}
	list, next, err := h.backend.ListStateMachineVersions(ctx, in.ARN, in.NextToken, max)
	if err != nil {
		return nil, err
	}
	items := make([]map[string]any, 0, len(list))
	for _, v := range list {
		items = append(items, map[string]any{"stateMachineVersionArn": v.ARN, "creationDate": epoch(v.Created)})
	}
	return withNext(map[string]any{"stateMachineVersions": items}, next), nil
}

func (h *Handler) deleteStateMachineVersion(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ARN string `json:"stateMachineVersionArn"`
	}
	if err := decodeWith(body, &in, "stateMachineVersionArn", &in.ARN); err != nil {
		return nil, err
	}
	return struct{}{}, h.backend.DeleteStateMachineVersion(ctx, in.ARN)
}

// routing is a routingConfiguration as the request carries it: a missing
// one is nil, an empty one is not.
func routing(items *[]control.Route) []control.Route {
	if items == nil {
		return nil
	}
	if *items == nil {
		return []control.Route{}
	}
	return *items
}

func (h *Handler) createStateMachineAlias(ctx context.Context, body []byte) (any, error) {
	var in struct {
		Name        string           `json:"name"`
		Description string           `json:"description"`
		Routing     *[]control.Route `json:"routingConfiguration"`
	}
	if err := decodeWith(body, &in, "name", &in.Name); err != nil {
		return nil, err
	}
	if in.Routing == nil {
		return nil, required("routingConfiguration", "")
	}
	a, err := h.backend.CreateStateMachineAlias(ctx, in.Name, in.Description, routing(in.Routing))
	if err != nil {
		return nil, err
	}
	return map[string]any{"stateMachineAliasArn": a.ARN, "creationDate": epoch(a.Created)}, nil
}

type aliasRequest struct {
	ARN string `json:"stateMachineAliasArn"`
}

func (h *Handler) describeStateMachineAlias(ctx context.Context, body []byte) (any, error) {
	var in aliasRequest
	if err := decodeWith(body, &in, "stateMachineAliasArn", &in.ARN); err != nil {
		return nil, err
	}
	a, err := h.backend.DescribeStateMachineAlias(ctx, in.ARN)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"stateMachineAliasArn": a.ARN, "name": a.Name, "routingConfiguration": a.Routing,
		"creationDate": epoch(a.Created), "updateDate": epoch(a.Updated)}
	if a.Description != "" {
		out["description"] = a.Description
	}
	return out, nil
}

func (h *Handler) listStateMachineAliases(ctx context.Context, body []byte) (any, error) {
	in, max, err := decodePage(body)
	if err != nil {
		return nil, err
	}
	list, next, err := h.backend.ListStateMachineAliases(ctx, in.ARN, in.NextToken, max)
	if err != nil {
		return nil, err
	}
	items := make([]map[string]any, 0, len(list))
	for _, a := range list {
		items = append(items, map[string]any{"stateMachineAliasArn": a.ARN, "creationDate": epoch(a.Created)})
	}
	return withNext(map[string]any{"stateMachineAliases": items}, next), nil
}

func (h *Handler) updateStateMachineAlias(ctx context.Context, body []byte) (any, error) {
	var in struct {
		aliasRequest
		Description *string          `json:"description"`
		Routing     *[]control.Route `json:"routingConfiguration"`
	}
	if err := decodeWith(body, &in, "stateMachineAliasArn", &in.ARN); err != nil {
		return nil, err
	}
	at, err := h.backend.UpdateStateMachineAlias(ctx, in.ARN, in.Description, routing(in.Routing))
	if err != nil {
		return nil, err
	}
	return map[string]any{"updateDate": epoch(at)}, nil
}

func (h *Handler) deleteStateMachineAlias(ctx context.Context, body []byte) (any, error) {
	var in aliasRequest
	if err := decodeWith(body, &in, "stateMachineAliasArn", &in.ARN); err != nil {
		return nil, err
	}
	return struct{}{}, h.backend.DeleteStateMachineAlias(ctx, in.ARN)
}
