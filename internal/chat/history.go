package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// TurnRecord is one stored turn: the history of the prompt and the source
// of the metrics. Keyed chat/<tenant>/<chat>/turn/<n>, written once.
type TurnRecord struct {
	ChatID    string    `json:"chat_id"`
	Turn      int       `json:"turn"`
	At        time.Time `json:"at"`
	User      string    `json:"user"`
	Assistant string    `json:"assistant"`
	Intent    Intent    `json:"intent"`
	// Delegated is the agent delegated to ("" for none); DelegationOK
	// whether the delegation succeeded.
	Delegated    string   `json:"delegated"`
	DelegationOK bool     `json:"delegation_ok"`
	Missed       bool     `json:"missed"`
	Tools        []string `json:"tools"`
	Error        string   `json:"error,omitempty"`
	// PromptVersion is the supervisor prompt's version
	// (prompts.PromptVersion), Model "offline" or the model's kind.
	PromptVersion string `json:"prompt_version"`
	Model         string `json:"model"`
}

// History returns the chat's last n stored turns, oldest first.
func (s *Service) History(ctx context.Context, tenant, chatID string, n int) ([]TurnRecord, error) {
	keys, err := s.Store.List(ctx, turnPrefix(tenant, chatID))
	if err != nil {
		return nil, fmt.Errorf("list history of chat %s: %w", chatID, err)
	}
	if len(keys) > n {
		keys = keys[len(keys)-n:]
	}
	out := make([]TurnRecord, 0, len(keys))
	for _, k := range keys {
		b, ok, err := s.Store.Get(ctx, k)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", k, err)
		}
		var r TurnRecord
		if !ok || json.Unmarshal(b, &r) != nil {
			continue
		}
		out = append(out, r)
	}
	return out, nil
}
