package chat

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/llm"
)

func (s *Service) refuse(ctx context.Context, t *turn, call ToolCall, why string) string {
	_ = t.emit(ctx, TypeToolInvocation, "tool:"+call.ID+":refused", map[string]any{"toolInvocation": map[string]any{
		"toolCallId": call.ID, "toolName": call.Name, "state": "error", "error": why}})
	return toolMessage(map[string]any{"ok": false, "error": why})
}

// arguments checks a delegation's arguments against the tool's strict
// schema and decodes them; problem says what is wrong.
func (s *Service) arguments(agent *Agent, call ToolCall) (any, string) {
	tool := s.Tools[agent.Action]
	params, err := schemaOf(tool)
	if err != nil {
		return nil, "la herramienta no está disponible"
	}
	argPtr := tool.Args()
	if err := llm.Validate(params, call.Arguments); err != nil {
		return nil, err.Error()
	}
	if err := json.Unmarshal(call.Arguments, argPtr); err != nil {
		return nil, err.Error()
	}
	return argPtr, ""
}

// delegate runs one delegation: the brief reason to the person, the
// tool-invocation call and result, the tool's steps. ok is false when the
// tool failed.
func (s *Service) delegate(ctx context.Context, t *turn, agent *Agent, call ToolCall, argPtr any) (string, bool) {
	tool := s.Tools[agent.Action]
	d := reasonOf(argPtr)
	reason := truncateRunes(oneLine(d.Reason), maxReasonRunes)
	if reason == "" {
		reason = oneLine(agent.Description)
	}
	name := agent.Name
	if name == "" {
		name = agent.ID
	}
	if err := t.say(ctx, fmt.Sprintf("→ Delego en %s: %s\n", name, reason)); err != nil {
		return s.refuse(ctx, t, call, "no se pudo anunciar la delegación"), false
	}
	_ = t.emit(ctx, TypeToolInvocation, "tool:"+call.ID+":call", map[string]any{"toolInvocation": map[string]any{
		"toolCallId": call.ID, "toolName": call.Name, "state": "call", "agent": agent.ID, "args": json.RawMessage(call.Arguments)}})
	t.step(ctx, agent.ID, "delegated", "delegado en "+cmp.Or(agent.Name, agent.ID), map[string]any{"tool": call.Name})
	c := Call{Tenant: t.tenant, ChatID: t.chatID, Turn: t.n, Agent: agent, Args: argPtr,
		Step:    func(action, content string, md map[string]any) { t.step(ctx, agent.ID, action, content, md) },
		Confirm: func(ctx context.Context, sv Sensitive) (bool, error) { return s.confirm(ctx, t, sv) },
		Room:    func(ctx context.Context) error { return s.room(ctx, t) },
		Started: func(ctx context.Context, w Workflow) bool { return s.follow(ctx, t, agent.ID, w) },
	}
	res, err := tool.Run(ctx, c)
	if err != nil {
		var te *ToolError
		msg := "el especialista falló por un error interno"
		if errors.As(err, &te) {
			msg = te.Message
		} else {
			s.logger().ErrorContext(ctx, "delegation failed", "tenant", t.tenant, "chat_id", t.chatID, "turn", t.n, "agent", agent.ID, "error", err)
		}
		_ = t.emit(ctx, TypeToolInvocation, "tool:"+call.ID+":result", map[string]any{"toolInvocation": map[string]any{
			"toolCallId": call.ID, "toolName": call.Name, "state": "error", "agent": agent.ID, "error": msg}})
		t.step(ctx, agent.ID, "failed", "la delegación falló", map[string]any{"tool": call.Name, "error": veredicto.ErrorName(err)})
		return toolMessage(map[string]any{"ok": false, "error": msg, "critical": agent.Critical}), false
	}
	inv := map[string]any{"toolCallId": call.ID, "toolName": call.Name, "state": "result", "agent": agent.ID, "result": res}
	if err := t.emit(ctx, TypeToolInvocation, "tool:"+call.ID+":result", map[string]any{"toolInvocation": inv}); err != nil {
		// Over the event size bound: the stream gets the summary only.
		inv["result"] = map[string]any{"summary": res.Summary, "data_omitted": true}
		if err := t.emit(ctx, TypeToolInvocation, "tool:"+call.ID+":result", map[string]any{"toolInvocation": inv}); err != nil {
			s.logger().WarnContext(ctx, "cannot append tool result", "chat_id", t.chatID, "turn", t.n, "error", err)
		}
	}
	return toolMessage(map[string]any{"ok": true, "summary": res.Summary, "data": res.Data}), true
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
