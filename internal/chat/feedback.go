package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/veredicto/veredicto"
)

// The two questions a finished turn offers the person (its finish event
// names one in "feedback"): after a turn that delegated nothing, whether
// it should have; after a delegation, whether it was what was asked.
const (
	QuestionMissed = "missed"
	QuestionRight  = "right"
)

// The questions as people read them.
const (
	QuestionMissedText = "¿Faltó delegar?"
	QuestionRightText  = "¿Era esto lo que pedías?"
)

// Answers.
const (
	AnswerYes = "yes"
	AnswerNo  = "no"
)

// FeedbackRequest is a person's answer to a turn's question (POST
// /api/chat/feedback): yes or no, and the specialist the request should
// have gone to — required for «¿Faltó delegar?» yes, optional for «¿Era
// esto lo que pedías?» no ("" then means it should not have been
// delegated).
type FeedbackRequest struct {
	ChatID string `json:"chat_id"`
	Turn   int    `json:"turn"`
	Answer string `json:"answer"`
	Agent  string `json:"agent"`
}

// Feedback is an answer stored as a labelled example of the tenant: the
// turn's message and the specialist it should have gone to (Label, "" for
// none). The message is personal data: it is kept under the tenant's keys
// (chat/<tenant>/<chat>/feedback/<turn>), never logged, and goes with the
// tenant's data.
type Feedback struct {
	ChatID   string `json:"chat_id"`
	Turn     int    `json:"turn"`
	Question string `json:"question"`
	Answer   string `json:"answer"`
	Agent    string `json:"agent"`
	// Text is the turn's message; Label the specialist it should have
	// gone to according to the answer.
	Text  string `json:"text"`
	Label string `json:"label"`
	// Delegated and Intent are what the turn did and scored.
	Delegated string  `json:"delegated"`
	Target    string  `json:"target"`
	Score     float64 `json:"score"`
	// By is who answered (the token's subject); At when.
	By string    `json:"by"`
	At time.Time `json:"at"`
}

// Labelled is the answer as a corpus request.
func (f Feedback) Labelled() Labelled {
	return Labelled{ID: fmt.Sprintf("%s/%d", f.ChatID, f.Turn), Kind: "feedback", Text: f.Text, Target: f.Label}
}

// MaxFeedback bounds the answers one tenant's read returns (the newest
// first are kept).
const MaxFeedback = 20000

func feedbackKey(tenant, chatID string, n int) string {
	return fmt.Sprintf("chat/%s/%s/feedback/%08d", tenant, chatID, n)
}

// Question is the question a finished turn offers: QuestionRight after a
// delegation, QuestionMissed otherwise.
func Question(delegated string) string {
	if delegated != "" {
		return QuestionRight
	}
	return QuestionMissed
}

// Feedback stores a person's answer to a turn of the tenant's chat as a
// labelled example. The turn must have finished; each turn takes one
// answer (a second is a ConflictError). An agent that is not a specialist,
// a yes to «¿Faltó delegar?» without one, or a no to «¿Era esto lo que
// pedías?» naming the agent delegated to is an InvalidInputError.
func (s *Service) Feedback(ctx context.Context, tenant, by string, req FeedbackRequest) (Feedback, error) {
	bad := func(field, problem string) error {
		return &veredicto.InvalidInputError{File: "body", Field: field, Problem: problem}
	}
	switch {
	case !ValidChatID(req.ChatID):
		return Feedback{}, bad("chat_id", "must be 1-64 letters, digits, '_' or '-'")
	case req.Turn < 1 || req.Turn > MaxTurns:
		return Feedback{}, bad("turn", fmt.Sprintf("must be a turn number, 1 to %d", MaxTurns))
	case req.Answer != AnswerYes && req.Answer != AnswerNo:
		return Feedback{}, bad("answer", `must be "yes" or "no"`)
	}
	if req.Agent != "" {
		if a, ok := s.Registry.Agent(req.Agent); !ok || a.ID == s.Registry.Supervisor {
			return Feedback{}, bad("agent", fmt.Sprintf("must be one of the specialists (%s) or empty", strings.Join(specialistIDs(s.Registry), ", ")))
		}
	}
	b, ok, err := s.Store.Get(ctx, turnKey(tenant, req.ChatID, req.Turn))
	if err != nil {
		return Feedback{}, fmt.Errorf("read turn %d of chat %s: %w", req.Turn, req.ChatID, err)
	}
	var rec TurnRecord
	if !ok || json.Unmarshal(b, &rec) != nil {
		return Feedback{}, &veredicto.NotFoundError{What: fmt.Sprintf("turn %d of chat %s", req.Turn, req.ChatID)}
	}
	f := Feedback{ChatID: req.ChatID, Turn: req.Turn, Question: Question(rec.Delegated), Answer: req.Answer, Agent: req.Agent,
		Text: rec.User, Delegated: rec.Delegated, Target: rec.Intent.Target, Score: rec.Intent.Score, By: by, At: s.now()}
	switch {
	case f.Question == QuestionMissed && req.Answer == AnswerYes:
		if req.Agent == "" {
			return Feedback{}, bad("agent", "is required: the specialist the request should have gone to")
		}
		f.Label = req.Agent
	case f.Question == QuestionMissed:
		if req.Agent != "" {
			return Feedback{}, bad("agent", "must be empty: nothing should have been delegated")
		}
	case req.Answer == AnswerYes:
		if req.Agent != "" && req.Agent != rec.Delegated {
			return Feedback{}, bad("agent", "must be empty or the agent delegated to")
		}
		f.Label = rec.Delegated
	default:
		if req.Agent == rec.Delegated {
			return Feedback{}, bad("agent", "must be another specialist, or empty when nothing should have been delegated")
		}
		f.Label = req.Agent
	}
	out, _ := json.Marshal(f)
	wrote, err := s.Store.PutIfAbsent(ctx, feedbackKey(tenant, req.ChatID, req.Turn), out)
	if err != nil {
		return Feedback{}, fmt.Errorf("store feedback on turn %d of chat %s: %w", req.Turn, req.ChatID, err)
	}
	if !wrote {
		return Feedback{}, &veredicto.ConflictError{What: fmt.Sprintf("feedback on turn %d of chat %s", req.Turn, req.ChatID)}
	}
	// The tenant has answered: the scheduled recalibration visits it.
	if _, err := s.Store.PutIfAbsent(ctx, feedbackIndexKey(tenant), []byte("{}")); err != nil {
		s.logger().WarnContext(ctx, "chat feedback: cannot mark the tenant for recalibration", "tenant", tenant, "error", err)
	}
	s.logger().InfoContext(ctx, "chat feedback", "tenant", tenant, "chat_id", req.ChatID, "turn", req.Turn,
		"question", f.Question, "answer", f.Answer, "label", f.Label, "delegated", f.Delegated)
	return f, nil
}

// FeedbackOf reads the tenant's answers, oldest first, at most
// MaxFeedback (the newest).
func (s *Service) FeedbackOf(ctx context.Context, tenant string) ([]Feedback, error) {
	keys, err := s.Store.List(ctx, "chat/"+tenant+"/")
	if err != nil {
		return nil, fmt.Errorf("list chats of %s: %w", tenant, err)
	}
	var out []Feedback
	for _, k := range keys {
		if keyKind(k) != "feedback" {
			continue
		}
		b, ok, err := s.Store.Get(ctx, k)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", k, err)
		}
		var f Feedback
		if !ok || json.Unmarshal(b, &f) != nil || Check(f.ChatID, f.Text) != nil {
			continue
		}
		out = append(out, f)
	}
	slices.SortStableFunc(out, func(a, b Feedback) int { return a.At.Compare(b.At) })
	if len(out) > MaxFeedback {
		out = out[len(out)-MaxFeedback:]
	}
	return out, nil
}

func specialistIDs(r *Registry) []string {
	var ids []string
	for _, a := range r.Specialists() {
		ids = append(ids, a.ID)
	}
	return ids
}

// keyKind is what a key under chat/<tenant>/ holds: "turn", "asked",
// "claim", "feedback" for chat/<tenant>/<chat>/<kind>/<n>, "_recalibration"
// for chat/<tenant>/_recalibration/<time>, "" otherwise. (A chat's id
// cannot start with '_', so the two never mix.)
func keyKind(key string) string {
	parts := strings.Split(key, "/")
	switch {
	case len(parts) == 5 && parts[0] == "chat":
		return parts[3]
	case len(parts) == 4 && parts[0] == "chat" && parts[2] == "_recalibration":
		return parts[2]
	}
	return ""
}
