package chat

import (
	"context"
	"encoding/json"
	"time"
)

// directTool is a tool the supervisor uses itself (no delegation).
// Basic ones stay under CHAT_DELEGATION_ONLY (seed §9).
type directTool struct {
	name, description string
	params            json.RawMessage
	basic             bool
	run               func(ctx context.Context, s *Service, t *turn, args json.RawMessage) (any, error)
}

var directTools = []directTool{
	{
		name:        "current_time",
		description: "Fecha y hora actuales (UTC) del servidor.",
		params:      json.RawMessage(`{"type":"object","properties":{},"required":[],"additionalProperties":false}`),
		basic:       true,
		run: func(_ context.Context, s *Service, _ *turn, _ json.RawMessage) (any, error) {
			return map[string]string{"utc": s.now().Format(time.RFC3339)}, nil
		},
	},
	{
		name:        "recent_turns",
		description: "Resumen de los últimos turnos de esta conversación (delegaciones y herramientas usadas), para recordar lo hecho.",
		params:      json.RawMessage(`{"type":"object","properties":{},"required":[],"additionalProperties":false}`),
		run: func(ctx context.Context, s *Service, t *turn, _ json.RawMessage) (any, error) {
			hist, err := s.History(ctx, t.tenant, t.chatID, DefaultHistoryTurns)
			if err != nil {
				return nil, err
			}
			type row struct {
				Turn      int      `json:"turn"`
				Delegated string   `json:"delegated"`
				Tools     []string `json:"tools"`
			}
			out := []row{}
			for _, h := range hist {
				out = append(out, row{h.Turn, h.Delegated, h.Tools})
			}
			return out, nil
		},
	},
}

// direct runs a non-delegation tool; an unknown or not-offered one is
// refused.
func (s *Service) direct(ctx context.Context, t *turn, call ToolCall) string {
	for _, d := range directTools {
		if d.name != call.Name || (s.Options.DelegationOnly && !d.basic) {
			continue
		}
		_ = t.emit(ctx, TypeToolInvocation, "tool:"+call.ID+":call", map[string]any{"toolInvocation": map[string]any{
			"toolCallId": call.ID, "toolName": call.Name, "state": "call"}})
		res, err := d.run(ctx, s, t, call.Arguments)
		if err != nil {
			s.logger().ErrorContext(ctx, "chat tool failed", "tool", call.Name, "chat_id", t.chatID, "error", err)
			return s.refuse(ctx, t, call, "la herramienta falló")
		}
		_ = t.emit(ctx, TypeToolInvocation, "tool:"+call.ID+":result", map[string]any{"toolInvocation": map[string]any{
			"toolCallId": call.ID, "toolName": call.Name, "state": "result", "result": res}})
		return toolMessage(map[string]any{"ok": true, "data": res})
	}
	return s.refuse(ctx, t, call, "La herramienta "+call.Name+" no existe o no está disponible.")
}
