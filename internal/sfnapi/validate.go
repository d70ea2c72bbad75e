package sfnapi

import (
	"context"
	"unicode/utf8"

	"github.com/veredicto/veredicto/internal/asl"
)

// maxDiagnostics is ValidateStateMachineDefinition's default and largest
// maxResults.
const maxDiagnostics = 100

func (h *Handler) validateStateMachineDefinition(ctx context.Context, body []byte) (any, error) {
	var in struct {
		Definition string `json:"definition"`
		Type       string `json:"type"`
		Severity   string `json:"severity"`
		MaxResults int    `json:"maxResults"`
	}
	if err := decodeWith(body, &in, "definition", &in.Definition); err != nil {
		return nil, err
	}
	if n := utf8.RuneCountInString(in.Definition); n > 1024*1024 {
		return nil, validation("1 validation error detected: Value at 'definition' failed to satisfy constraint: Member must have length less than or equal to 1048576")
	}
	switch in.Type {
	case "", "STANDARD", "EXPRESS":
	default:
		return nil, validation("1 validation error detected: Value '%s' at 'type' failed to satisfy constraint: Member must satisfy enum value set: [STANDARD, EXPRESS]", in.Type)
	}
	switch in.Severity {
	case "":
		in.Severity = asl.SeverityError
	case asl.SeverityError, asl.SeverityWarning:
	default:
		return nil, validation("1 validation error detected: Value '%s' at 'severity' failed to satisfy constraint: Member must satisfy enum value set: [ERROR, WARNING]", in.Severity)
	}
	if in.MaxResults < 0 || in.MaxResults > maxDiagnostics {
		return nil, validation("1 validation error detected: Value '%d' at 'maxResults' failed to satisfy constraint: Member must have value between 0 and %d", in.MaxResults, maxDiagnostics)
	}
	if in.MaxResults == 0 {
		in.MaxResults = maxDiagnostics
	}
	result := "OK"
	diagnostics := []map[string]any{}
	truncated := false
	for _, d := range h.backend.ValidateDefinition(ctx, in.Definition, in.Type) {
		if d.Severity == asl.SeverityError {
			result = "FAIL"
		}
		if d.Severity == asl.SeverityWarning && in.Severity == asl.SeverityError {
			continue
		}
		if len(diagnostics) == in.MaxResults {
			truncated = true
			continue
		}
		item := map[string]any{"severity": d.Severity, "code": d.Code, "message": d.Message}
		if d.Location != "" {
			item["location"] = d.Location
		}
		diagnostics = append(diagnostics, item)
	}
	return map[string]any{"result": result, "diagnostics": diagnostics, "truncated": truncated}, nil
}

func (h *Handler) describeStateMachineForExecution(ctx context.Context, body []byte) (any, error) {
	var in struct {
		ARN string `json:"executionArn"`
	}
	if err := h.decodeExecution(ctx, body, &in, &in.ARN); err != nil {
		return nil, err
	}
	sm, err := h.backend.StateMachineForExecution(ctx, in.ARN)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"stateMachineArn": sm.ARN, "name": sm.Name, "definition": sm.Definition, "roleArn": sm.RoleARN, "updateDate": epoch(sm.Updated)}
	setConfiguration(out, sm.Configuration)
	return out, nil
}
