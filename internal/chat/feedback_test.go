package chat

import (
	"errors"
	"testing"

	"github.com/veredicto/veredicto"
)

// TestFeedbackLabels: each answer to each question becomes the labelled
// example a consultant would expect, with the turn's own message.
func TestFeedbackLabels(t *testing.T) {
	r := newRig(t, nil, Options{})
	r.turn(t, "fb", "Contrástame a las dos finalistas")                           // 1: not delegated by the keywords
	r.turn(t, "fb", "Hola, ¿qué tal?")                                            // 2: not delegated
	r.turn(t, "fb", "Compara a c-001 con c-006 en deuda en la búsqueda cfo-2026") // 3: delegated to the analyst
	r.turn(t, "fb", "Compara a c-001 con c-006 en la búsqueda cfo-2026")          // 4: delegated to the analyst
	r.turn(t, "fb", "Compara a c-001 y c-006, cfo-2026, y manda el informe")      // 5: delegated
	ctx := t.Context()
	tests := []struct {
		req               FeedbackRequest
		question, label   string
		wantErr           string // error name
		wantField, reason string
	}{
		{FeedbackRequest{ChatID: "fb", Turn: 1, Answer: AnswerYes, Agent: "search-analyst"}, QuestionMissed, "search-analyst", "", "", "missed, should have gone to the analyst"},
		{FeedbackRequest{ChatID: "fb", Turn: 2, Answer: AnswerNo}, QuestionMissed, "", "", "", "rightly not delegated"},
		{FeedbackRequest{ChatID: "fb", Turn: 3, Answer: AnswerYes}, QuestionRight, "search-analyst", "", "", "right delegation"},
		{FeedbackRequest{ChatID: "fb", Turn: 4, Answer: AnswerNo}, QuestionRight, "", "", "", "should not have been delegated"},
		{FeedbackRequest{ChatID: "fb", Turn: 5, Answer: AnswerNo, Agent: "reports"}, QuestionRight, "reports", "", "", "another agent"},
		// Refused.
		{FeedbackRequest{ChatID: "fb", Turn: 1, Answer: AnswerNo}, "", "", veredicto.NameConflict, "", "a second answer"},
		{FeedbackRequest{ChatID: "fb", Turn: 9, Answer: AnswerNo}, "", "", veredicto.NameNotFound, "", "a turn that never ran"},
		{FeedbackRequest{ChatID: "fb", Turn: 1, Answer: "maybe"}, "", "", veredicto.NameInvalidInput, "answer", "an unknown answer"},
		{FeedbackRequest{ChatID: "fb", Turn: 1, Answer: AnswerYes, Agent: "veredicto"}, "", "", veredicto.NameInvalidInput, "agent", "the supervisor"},
		{FeedbackRequest{ChatID: "fb/x", Turn: 1, Answer: AnswerYes}, "", "", veredicto.NameInvalidInput, "chat_id", "a bad chat id"},
		{FeedbackRequest{ChatID: "fb", Turn: 0, Answer: AnswerYes}, "", "", veredicto.NameInvalidInput, "turn", "turn 0"},
	}
	for _, tc := range tests {
		t.Run(tc.reason, func(t *testing.T) {
			f, err := r.svc.Feedback(ctx, "acme", "ana", tc.req)
			if tc.wantErr != "" {
				var ie *veredicto.InvalidInputError
				if veredicto.ErrorName(err) != tc.wantErr || (tc.wantField != "" && (!errors.As(err, &ie) || ie.Field != tc.wantField)) {
					t.Errorf("err = %v (%s), want %s on %q", err, veredicto.ErrorName(err), tc.wantErr, tc.wantField)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.Question != tc.question || f.Label != tc.label || f.By != "ana" || f.Text == "" {
				t.Errorf("feedback = %+v, want question %s label %q", f, tc.question, tc.label)
			}
		})
	}
	// Wrong combinations of question and agent.
	r.turn(t, "fb", "Hola otra vez") // 6
	for _, req := range []FeedbackRequest{
		{ChatID: "fb", Turn: 6, Answer: AnswerYes},                  // which agent?
		{ChatID: "fb", Turn: 6, Answer: AnswerNo, Agent: "reports"}, // no, but an agent
	} {
		var ie *veredicto.InvalidInputError
		if _, err := r.svc.Feedback(ctx, "acme", "ana", req); !errors.As(err, &ie) || ie.Field != "agent" {
			t.Errorf("%+v: err = %v, want agent refused", req, err)
		}
	}
	// Another tenant's turn does not exist for acme's neighbour.
	if _, err := r.svc.Feedback(ctx, "zeta", "bob", FeedbackRequest{ChatID: "fb", Turn: 6, Answer: AnswerNo}); veredicto.ErrorName(err) != veredicto.NameNotFound {
		t.Errorf("another tenant's answer: err = %v, want NotFound", err)
	}

	got, err := r.svc.FeedbackOf(ctx, "acme")
	if err != nil || len(got) != 5 {
		t.Fatalf("FeedbackOf = %d, %v; want 5", len(got), err)
	}
	if l := got[0].Labelled(); l.Text != "Contrástame a las dos finalistas" || l.Target != "search-analyst" || l.Kind != "feedback" {
		t.Errorf("first example = %+v", l)
	}
	if others, _ := r.svc.FeedbackOf(ctx, "zeta"); len(others) != 0 {
		t.Errorf("zeta sees %d of acme's examples", len(others))
	}

	m, err := r.svc.Metrics(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if m.Feedback != (FeedbackCounters{Examples: 5, MissedYes: 1, MissedNo: 1, RightYes: 1, RightNo: 2}) {
		t.Errorf("feedback counters = %+v", m.Feedback)
	}
	if a := m.Agents["search-analyst"]; a.FeedbackMissed != 1 || a.FeedbackWrong != 2 {
		t.Errorf("analyst counters = %+v, want 1 missed, 2 wrong", a)
	}
	if a := m.Agents["reports"]; a.FeedbackMissed != 1 {
		t.Errorf("reports counters = %+v, want 1 missed", a)
	}
	if m.Turns != 6 {
		t.Errorf("turns = %d, want 6 (answers are not turns)", m.Turns)
	}
}

// TestFinishOffersTheQuestion: the finish event names the turn's question.
func TestFinishOffersTheQuestion(t *testing.T) {
	r := newRig(t, nil, Options{})
	r.turn(t, "q", "Hola")
	r.turn(t, "q", "Compara a c-001 con c-006 en deuda en la búsqueda cfo-2026")
	var got []string
	for _, ev := range r.eventsOf(t, "q") {
		if ev["type"] == "finish" {
			got = append(got, ev["feedback"].(string)+":"+ev["delegated"].(string))
		}
	}
	if len(got) != 2 || got[0] != "missed:" || got[1] != "right:search-analyst" {
		t.Errorf("finish events offer %v, want missed: then right:search-analyst", got)
	}
}
