package chat

import (
	"context"
	"encoding/json"
	"fmt"
)

// AgentCounters are one agent's delegation counters (seed §8–9): turns
// whose intent reached HintThreshold for it, turns delegated to it, and
// turns that missed it (score ≥ MissedThreshold, nothing delegated).
type AgentCounters struct {
	Intent    int `json:"intent"`
	Delegated int `json:"delegated"`
	Failed    int `json:"failed"`
	Missed    int `json:"missed"`
	// FeedbackMissed counts the answers that said a turn should have gone
	// to this agent and did not (a yes to «¿Faltó delegar?», or a no to
	// «¿Era esto lo que pedías?» naming it); FeedbackWrong the delegations
	// to it that were not what was asked.
	FeedbackMissed int `json:"feedback_missed"`
	FeedbackWrong  int `json:"feedback_wrong"`
}

// FeedbackCounters count a tenant's answers to the turns' questions.
type FeedbackCounters struct {
	// Examples counts the answers stored as labelled examples.
	Examples int `json:"examples"`
	// MissedYes and MissedNo answer «¿Faltó delegar?», RightYes and
	// RightNo «¿Era esto lo que pedías?».
	MissedYes int `json:"missed_yes"`
	MissedNo  int `json:"missed_no"`
	RightYes  int `json:"right_yes"`
	RightNo   int `json:"right_no"`
}

// Metrics are a tenant's delegation counters per agent, computed from its
// stored turns.
type Metrics struct {
	Turns  int                      `json:"turns"`
	Agents map[string]AgentCounters `json:"agents"`
	// Truncated: the tenant has more than MaxMetricTurns turns; the
	// counters cover the first MaxMetricTurns keys.
	Truncated bool `json:"truncated"`
	// Feedback counts the answers to «¿Faltó delegar?» and «¿Era esto lo
	// que pedías?» (at most MaxFeedback).
	Feedback FeedbackCounters `json:"feedback"`
	// Recalibration is the tenant's last recalibration (Recalibrate), if
	// any: whether its candidate was promoted, and the figures.
	Recalibration *Recalibration `json:"recalibration,omitempty"`
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
	last := ""
	for _, k := range keys {
		switch keyKind(k) {
		case "feedback":
			if m.Feedback.Examples < MaxFeedback {
				if err := s.countFeedback(ctx, k, &m); err != nil {
					return m, err
				}
			}
			continue
		case "_recalibration":
			last = max(last, k)
			continue
		case "turn":
		default:
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
	if last != "" {
		if b, ok, err := s.Store.Get(ctx, last); err == nil && ok {
			var rec Recalibration
			if json.Unmarshal(b, &rec) == nil {
				m.Recalibration = &rec
			}
		}
	}
	return m, nil
}

// countFeedback adds one stored answer to the metrics.
func (s *Service) countFeedback(ctx context.Context, key string, m *Metrics) error {
	b, ok, err := s.Store.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("read %s: %w", key, err)
	}
	var f Feedback
	if !ok || json.Unmarshal(b, &f) != nil {
		return nil
	}
	m.Feedback.Examples++
	bump := func(id string, missed, wrong int) {
		if c, ok := m.Agents[id]; ok {
			c.FeedbackMissed += missed
			c.FeedbackWrong += wrong
			m.Agents[id] = c
		}
	}
	switch {
	case f.Question == QuestionMissed && f.Answer == AnswerYes:
		m.Feedback.MissedYes++
		bump(f.Label, 1, 0)
	case f.Question == QuestionMissed:
		m.Feedback.MissedNo++
	case f.Answer == AnswerYes:
		m.Feedback.RightYes++
	default:
		m.Feedback.RightNo++
		bump(f.Delegated, 0, 1)
		bump(f.Label, 1, 0)
	}
	return nil
}
