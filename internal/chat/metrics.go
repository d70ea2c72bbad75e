package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// AgentCounters are one agent's delegation counters (seed §8–9): turns
// whose intent reached HintThreshold for it, turns delegated to it, and
// turns that missed it (score ≥ MissedThreshold, nothing delegated).
type AgentCounters struct {
	Intent    int `json:"intent"`
	Delegated int `json:"delegated"`
	Failed    int `json:"failed"`
	Missed    int `json:"missed"`
}

// Metrics are a tenant's delegation counters per agent, computed from its
// stored turns.
type Metrics struct {
	Turns  int                      `json:"turns"`
	Agents map[string]AgentCounters `json:"agents"`
	// Truncated: the tenant has more than MaxMetricTurns turns; the
	// counters cover the first MaxMetricTurns keys.
	Truncated bool `json:"truncated"`
}

// MaxMetricTurns bounds the turns one metrics request reads.
const MaxMetricTurns = 20000

// Metrics counts the tenant's turns per agent.
func (s *Service) Metrics(ctx context.Context, tenant string) (Metrics, error) {
	m := Metrics{Agents: map[string]AgentCounters{}}
	for _, a := range s.Registry.Specialists() {
		m.Agents[a.ID] = AgentCounters{}
	}
	keys, err := s.Store.List(ctx, "chat/"+tenant+"/")
	if err != nil {
		return m, fmt.Errorf("list chats: %w", err)
	}
	for _, k := range keys {
		if !strings.Contains(k, "/turn/") {
			continue
		}
		if m.Turns == MaxMetricTurns {
			m.Truncated = true
			break
		}
		b, ok, err := s.Store.Get(ctx, k)
		if err != nil {
			return m, fmt.Errorf("read %s: %w", k, err)
		}
		var r TurnRecord
		if !ok || json.Unmarshal(b, &r) != nil {
			continue
		}
		m.Turns++
		if r.Intent.Target != "" && r.Intent.Score >= HintThreshold {
			c := m.Agents[r.Intent.Target]
			c.Intent++
			m.Agents[r.Intent.Target] = c
		}
		if r.Delegated != "" {
			c := m.Agents[r.Delegated]
			c.Delegated++
			if !r.DelegationOK {
				c.Failed++
			}
			m.Agents[r.Delegated] = c
		}
		if r.Missed && r.Intent.Target != "" {
			c := m.Agents[r.Intent.Target]
			c.Missed++
			m.Agents[r.Intent.Target] = c
		}
	}
	return m, nil
}
