package control

import "context"

// TokenExecution is the ARN of the execution a task token names; ok is
// false for a token this server could not have handed out.
func TokenExecution(token string) (arn string, ok bool) { return tokenExecution(token) }

// TokenState is the state whose Task waits on token, or the API error for
// a token that is malformed, unknown or no longer waiting.
func (m *Manager) TokenState(ctx context.Context, token string) (string, error) {
	rec, e, err := m.waiting(token)
	if err != nil {
		return "", err
	}
	if e != nil {
		if state, ok := m.parkedState(e, token); ok {
			return state, nil
		}
		return m.TokenState(ctx, token) // resumed meanwhile
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	state, _ := rec.states.get(token)
	return state, nil
}
