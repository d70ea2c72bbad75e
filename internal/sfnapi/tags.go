package sfnapi

import (
	"context"
	"encoding/json"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/control"
)

// ResourceBackend is what tags, the state machines' configurations,
// validation and DescribeStateMachineForExecution need (a
// *control.Manager).
type ResourceBackend interface {
	CreateStateMachineWith(ctx context.Context, name string, a control.Attributes, create func() error) error
	ConfigureStateMachine(ctx context.Context, arn string, c control.Configuration) (time.Time, error)
	Configuration(arn string) control.Configuration
	TagResource(ctx context.Context, arn string, tags []control.Tag) error
	UntagResource(ctx context.Context, arn string, keys []string) error
	ListTagsForResource(ctx context.Context, arn string) ([]control.Tag, error)
	ValidateDefinition(ctx context.Context, definition, typ string) []asl.Diagnostic
	StateMachineForExecution(ctx context.Context, arn string) (control.ExecutionMachine, error)
}

// configured is a request's tags, tracing and encryption configuration
// (CreateStateMachine, UpdateStateMachine); createStateMachine and
// updateStateMachine read its loggingConfiguration.
type configured struct {
	Tags       []control.Tag                    `json:"tags"`
	Tracing    *control.TracingConfiguration    `json:"tracingConfiguration"`
	Encryption *control.EncryptionConfiguration `json:"encryptionConfiguration"`
}

func (c configured) attributes() control.Attributes {
	return control.Attributes{Tags: c.Tags, Tracing: c.Tracing, Encryption: c.Encryption}
}

func (c configured) configuration() control.Configuration {
	return control.Configuration{Tracing: c.Tracing, Encryption: c.Encryption}
}

// createStateMachineWith serves CreateStateMachine: the machine created
// as createStateMachine creates it, with its tags and configuration.
func (h *Handler) createStateMachineWith(ctx context.Context, body []byte) (any, error) {
	var in struct {
		Name nameField `json:"name"`
		configured
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	var out any
	err := h.backend.CreateStateMachineWith(ctx, string(in.Name), in.attributes(), func() error {
		var err error
		out, err = h.createStateMachine(ctx, body)
		return err
	})
	return out, err
}

// describeStateMachineWith serves DescribeStateMachine: the machine as
// describeStateMachine describes it, with its logging, tracing and
// encryption configuration, Step Functions' defaults for what it was not
// given.
func (h *Handler) describeStateMachineWith(ctx context.Context, body []byte) (any, error) {
	out, err := h.describeStateMachine(ctx, body)
	if d, ok := out.(map[string]any); ok && err == nil {
		arn, _ := d["stateMachineArn"].(string)
		setConfiguration(d, h.backend.Configuration(arn))
	}
	return out, err
}

func setConfiguration(d map[string]any, c control.Configuration) {
	c = c.Effective()
	d["loggingConfiguration"], d["tracingConfiguration"], d["encryptionConfiguration"] = c.Logging, c.Tracing, c.Encryption
}

// updateStateMachineWith serves UpdateStateMachine: what
// updateStateMachine updates (definition, role, logging, a version), and
// the tracing and encryption configuration given; the update's time is
// recorded (DescribeStateMachineForExecution's updateDate).
func (h *Handler) updateStateMachineWith(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ARN         string          `json:"stateMachineArn"`
		Definition  string          `json:"definition"`
		RoleARN     string          `json:"roleArn"`
		Logging     json.RawMessage `json:"loggingConfiguration"`
		Publish     bool            `json:"publish"`
		Description *string         `json:"versionDescription"`
		configured
	}
	if err := decodeWith(body, &in, "stateMachineArn", &in.ARN); err != nil {
		return nil, err
	}
	c := in.configuration()
	if err := c.Check(); err != nil {
		return nil, err
	}
	if c == (control.Configuration{}) || in.Definition != "" || in.RoleARN != "" || in.Logging != nil || in.Publish || in.Description != nil {
		out, err := h.updateStateMachine(ctx, body)
		if err != nil {
			return nil, err
		}
		if _, err := h.backend.ConfigureStateMachine(ctx, in.ARN, c); err != nil {
			return nil, err
		}
		return out, nil
	}
	at, err := h.backend.ConfigureStateMachine(ctx, in.ARN, c)
	if err != nil {
		return nil, err
	}
	return map[string]any{"updateDate": epoch(at)}, nil
}

// resourceOps are the operations on tags, validation and the machine an
// execution ran.
func (h *Handler) resourceOps() map[string]func(context.Context, []byte) (any, error) {
	return map[string]func(context.Context, []byte) (any, error){
		"TagResource":                      h.tagResource,
		"UntagResource":                    h.untagResource,
		"ListTagsForResource":              h.listTagsForResource,
		"ValidateStateMachineDefinition":   h.validateStateMachineDefinition,
		"DescribeStateMachineForExecution": h.describeStateMachineForExecution,
	}
}

// tagAccess refuses a tag operation the caller may not make: a tenant's
// key reads the tags of what it sees and changes those of its own
// activities only; another tenant's activity is a missing resource.
func (h *Handler) tagAccess(ctx context.Context, op, arn string, change bool) error {
	p := principal(ctx)
	if p.Operator {
		return nil
	}
	if !asl.IsActivityARN(arn) {
		if change {
			return accessDenied(p, op)
		}
		return nil
	}
	a, err := h.backend.DescribeActivity(ctx, arn)
	switch {
	case err != nil:
		return nil // the operation answers for an ARN that names no activity
	case a.Tenant != "" && a.Tenant != p.Tenant:
		return control.ResourceNotFound(arn)
	case change && a.Tenant != p.Tenant:
		return accessDenied(p, op)
	}
	return nil
}

func (h *Handler) tagResource(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ARN  string        `json:"resourceArn"`
		Tags []control.Tag `json:"tags"`
	}
	if err := decodeWith(body, &in, "resourceArn", &in.ARN); err != nil {
		return nil, err
	}
	if in.Tags == nil {
		return nil, required("tags", "")
	}
	if err := h.tagAccess(ctx, "TagResource", in.ARN, true); err != nil {
		return nil, err
	}
	return struct{}{}, h.backend.TagResource(ctx, in.ARN, in.Tags)
}

func (h *Handler) untagResource(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ARN  string   `json:"resourceArn"`
		Keys []string `json:"tagKeys"`
	}
	if err := decodeWith(body, &in, "resourceArn", &in.ARN); err != nil {
		return nil, err
	}
	if in.Keys == nil {
		return nil, required("tagKeys", "")
	}
	if err := h.tagAccess(ctx, "UntagResource", in.ARN, true); err != nil {
		return nil, err
	}
	return struct{}{}, h.backend.UntagResource(ctx, in.ARN, in.Keys)
}

func (h *Handler) listTagsForResource(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ARN string `json:"resourceArn"`
	}
	if err := decodeWith(body, &in, "resourceArn", &in.ARN); err != nil {
		return nil, err
	}
	if err := h.tagAccess(ctx, "ListTagsForResource", in.ARN, false); err != nil {
		return nil, err
	}
	tags, err := h.backend.ListTagsForResource(ctx, in.ARN)
	if err != nil {
		return nil, err
	}
	if tags == nil {
		tags = []control.Tag{}
	}
	return map[string]any{"tags": tags}, nil
}
