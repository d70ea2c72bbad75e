package debate

import (
	"errors"
	"strings"
	"testing"

	"github.com/veredicto/veredicto"
)

const goodQuestion = `question: ¿Avanzamos con la oferta a c-005?
options: [avanzar, no avanzar, pedir referencias]
participants:
  - {id: cfo, brief: Costo total y retorno de la contratación}
  - {id: chro, brief: Cultura y retención}
value_at_risk: {amount: 250000}
config:
  timeout: {per_agent: 10, total: 200}
  convergence: {threshold: 75}
  debate: {rounds: {max: 4}}
`

func TestParseQuestionDefaults(t *testing.T) {
	q, err := ParseQuestion("QUESTION.yaml", []byte(goodQuestion))
	if err != nil {
		t.Fatal(err)
	}
	if q.Mode != ModeAuto || q.ValueAtRisk.Currency != "BRL" {
		t.Errorf("mode %q currency %q, want auto and BRL", q.Mode, q.ValueAtRisk.Currency)
	}
	c := q.Config
	if c.Timeout.PerAgent != 10 || c.Timeout.Total != 200 || c.Timeout.PerRound != 120 || c.Timeout.Council != 180 {
		t.Errorf("timeouts %+v, want overrides 10/200 and defaults 120/180", c.Timeout)
	}
	if c.Convergence.Threshold != 75 || c.Debate.Rounds.Max != 4 || c.Debate.Rounds.Min != 1 {
		t.Errorf("convergence %v rounds %+v", c.Convergence.Threshold, c.Debate.Rounds)
	}
	if c.RAG.MaxQueries != 5 || c.RAG.Timeout != 15 || c.CircuitBreaker.MaxIterations != 5 || c.CircuitBreaker.MaxRefinements != 2 {
		t.Errorf("rag %+v breaker %+v, want the seed's 5/15s and 5/2", c.RAG, c.CircuitBreaker)
	}
	if c.Escalation.ValueThreshold != 100_000 {
		t.Errorf("value threshold %v, want 100000", c.Escalation.ValueThreshold)
	}
}

func TestParseQuestionErrors(t *testing.T) {
	tests := []struct {
		name, yaml, field, problem string
	}{
		{"empty", "", "", "empty"},
		{"unknown field", goodQuestion + "extra: 1\n", "extra", "not a known field"},
		{"unknown config field", strings.Replace(goodQuestion, "timeout: {per_agent: 10, total: 200}", "timeout:\n    per_agnet: 10", 1), "config.timeout.per_agnet", "not a known field"},
		{"text timeout", strings.Replace(goodQuestion, "timeout: {per_agent: 10, total: 200}", "timeout:\n    per_agent: diez", 1), "config.timeout.per_agent", "text where a number"},
		{"no question", strings.Replace(goodQuestion, "question: ¿Avanzamos con la oferta a c-005?", "question: ''", 1), "question", "required"},
		{"one option", strings.Replace(goodQuestion, "[avanzar, no avanzar, pedir referencias]", "[avanzar]", 1), "options", "at least two"},
		{"duplicate option", strings.Replace(goodQuestion, "pedir referencias]", "avanzar]", 1), "options[2]", "repeats"},
		{"bad id", strings.Replace(goodQuestion, "id: cfo", "id: c f o", 1), "participants[0].id", "letters"},
		{"duplicate id", strings.Replace(goodQuestion, "id: chro", "id: cfo", 1), "participants[1].id", "repeats"},
		{"no brief", strings.Replace(goodQuestion, "brief: Cultura y retención", "brief: ''", 1), "participants[1].brief", "required"},
		{"bad mode", goodQuestion + "mode: vote\n", "mode", "auto, simple"},
		{"bad risk", goodQuestion + "risk_level: enorme\n", "risk_level", "CATASTROFICO"},
		{"threshold over 100", strings.Replace(goodQuestion, "threshold: 75", "threshold: 170", 1), "config.convergence.threshold", "percentage"},
		{"negative timeout", strings.Replace(goodQuestion, "per_agent: 10", "per_agent: -1", 1), "config.timeout.per_agent", "between"},
		{"rounds over bound", strings.Replace(goodQuestion, "max: 4", "max: 99", 1), "config.debate.rounds.max", "between"},
		{"negative value", strings.Replace(goodQuestion, "amount: 250000", "amount: -5", 1), "value_at_risk.amount", "negative"},
		{"bad currency", strings.Replace(goodQuestion, "amount: 250000", "amount: 5, currency: reais", 1), "value_at_risk.currency", "three-letter"},
		{"another currency without its threshold", strings.Replace(goodQuestion, "amount: 250000", "amount: 90000, currency: USD", 1), "config.escalation.value_threshold", "is required when value_at_risk.currency is USD"},
		{"currency of marks", strings.Replace(goodQuestion, "amount: 250000", "amount: 5, currency: \"<<<\"", 1), "value_at_risk.currency", "three-letter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseQuestion("q.yaml", []byte(tt.yaml))
			var ie *veredicto.InvalidInputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want *InvalidInputError", err)
			}
			if ie.File != "q.yaml" || ie.Field != tt.field || !strings.Contains(ie.Problem, tt.problem) {
				t.Errorf("err = %q (file %q field %q), want field %q and a problem with %q", err, ie.File, ie.Field, tt.field, tt.problem)
			}
		})
	}
}

// TestValueAtRiskInAnotherCurrency: a USD question with its threshold in
// USD routes to the mandatory council by the USD amount.
func TestValueAtRiskInAnotherCurrency(t *testing.T) {
	q, err := ParseQuestion("q.yaml", []byte(strings.Replace(goodQuestion, "value_at_risk: {amount: 250000}",
		"value_at_risk: {amount: 30000, currency: usd}", 1)+"  escalation: {value_threshold: 20000}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if q.ValueAtRisk.Currency != "USD" || q.Config.Escalation.ValueThreshold != 20000 {
		t.Fatalf("question %+v %+v", q.ValueAtRisk, q.Config.Escalation)
	}
	if mode, _ := Route(q); mode != ModeCouncil {
		t.Errorf("USD 30 000 over a USD 20 000 threshold routed to %s, want council", mode)
	}
}
