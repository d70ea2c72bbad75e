package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/eventlog"
	"github.com/veredicto/veredicto/prompts"
)

func turnPrefix(tenant, chatID string) string  { return "chat/" + tenant + "/" + chatID + "/turn/" }
func claimPrefix(tenant, chatID string) string { return "chat/" + tenant + "/" + chatID + "/claim/" }
func askedKey(tenant, chatID string, n int) string {
	return fmt.Sprintf("chat/%s/%s/asked/%08d", tenant, chatID, n)
}
func turnKey(tenant, chatID string, n int) string {
	return fmt.Sprintf("%s%08d", turnPrefix(tenant, chatID), n)
}

// Claim reserves the chat's next turn number, so two turns of one chat
// never share one (and a turn's events are keyed by it).
func (s *Service) Claim(ctx context.Context, tenant, chatID string) (int, error) {
	keys, err := s.Store.List(ctx, claimPrefix(tenant, chatID))
	if err != nil {
		return 0, fmt.Errorf("list turns of chat %s: %w", chatID, err)
	}
	for n := len(keys) + 1; n <= MaxTurns; n++ {
		ok, err := s.Store.PutIfAbsent(ctx, fmt.Sprintf("%s%08d", claimPrefix(tenant, chatID), n), []byte(s.now().Format(time.RFC3339Nano)))
		if err != nil {
			return 0, fmt.Errorf("claim turn %d of chat %s: %w", n, chatID, err)
		}
		if ok {
			return n, nil
		}
	}
	return 0, &veredicto.ConflictError{What: "chat " + chatID, Problem: fmt.Sprintf("has reached %d turns; start a new chat", MaxTurns)}
}

// CloseInterrupted ends, at a local server's start, the turns a previous
// process claimed and never finished (killed mid-turn: the local chat has
// no queue to run them again). Each gets its stored record (error
// "Interrupted") and its finish on the chat's stream, and a confirmation
// it was waiting on is rejected on the person's behalf, so a late
// approval gets 409 instead of being recorded against nothing. Only call
// it when no turn runs. It returns how many turns it closed.
func (s *Service) CloseInterrupted(ctx context.Context) (int, error) {
	keys, err := s.Store.List(ctx, "chat/")
	if err != nil {
		return 0, fmt.Errorf("list chats: %w", err)
	}
	type turnID struct {
		tenant, chat string
		n            int
	}
	claimed, stored := map[turnID]bool{}, map[turnID]bool{}
	for _, k := range keys {
		p := strings.Split(k, "/") // chat/<tenant>/<chat>/claim|turn/<n>
		if len(p) != 5 {
			continue
		}
		n, err := strconv.Atoi(p[4])
		if err != nil {
			continue
		}
		switch id := (turnID{p[1], p[2], n}); p[3] {
		case "claim":
			claimed[id] = true
		case "turn":
			stored[id] = true
		}
	}
	closed := 0
	var errs []error
	for id := range claimed {
		if stored[id] {
			continue
		}
		t := &turn{s: s, tenant: id.tenant, chatID: id.chat, n: id.n}
		s.rejectInterrupted(ctx, t)
		_ = t.say(ctx, "Este turno se interrumpió (el servidor se reinició); no se ejecutó ninguna acción pendiente. Vuelve a pedirlo.")
		asked, _, _ := s.Store.Get(ctx, askedKey(id.tenant, id.chat, id.n))
		rec := TurnRecord{ChatID: id.chat, Turn: id.n, At: s.now(), User: string(asked), Assistant: t.text.String(), Tools: []string{}, Error: "Interrupted",
			PromptVersion: prompts.PromptVersion("chat_supervisor"), Model: "none"}
		b, _ := json.Marshal(rec)
		if _, err := s.Store.PutIfAbsent(ctx, turnKey(id.tenant, id.chat, id.n), b); err != nil {
			errs = append(errs, fmt.Errorf("close turn %d of chat %s: %w", id.n, id.chat, err))
			continue
		}
		if err := s.closeInterrupted(ctx, t); err != nil {
			errs = append(errs, fmt.Errorf("close the audit record of turn %d of chat %s: %w", id.n, id.chat, err))
		}
		if err := t.emit(ctx, eventlog.TypeFinish, "finish", map[string]any{"finishReason": "error"}); err != nil {
			errs = append(errs, err)
		}
		closed++
	}
	return closed, errors.Join(errs...)
}

// rejectInterrupted rejects the confirmations an interrupted turn was
// waiting on (keyed chat/<chat>/<turn>/<n>).
func (s *Service) rejectInterrupted(ctx context.Context, t *turn) {
	if _, ok := s.Confirmations.(resolver); !ok || s.ConfirmationStore == nil {
		return
	}
	recs, _, err := s.ConfirmationStore.List(ctx, t.tenant, s.now(), confirm.MaxList)
	if err != nil {
		s.logger().WarnContext(ctx, "list the confirmations of an interrupted turn", "chat_id", t.chatID, "turn", t.n, "error", err)
		return
	}
	prefix := fmt.Sprintf("chat/%s/%d/", t.chatID, t.n)
	for _, rec := range recs {
		if rec.Status != confirm.StatusPending || rec.Execution != StreamName(t.chatID) || !strings.HasPrefix(rec.Key, prefix) {
			continue
		}
		if err := s.rejectOnBehalf(ctx, t.tenant, rec.ID, "el turno que la pidió se interrumpió (el servidor se reinició): la acción no se ejecutó"); err != nil {
			s.logger().WarnContext(ctx, "reject the confirmation of an interrupted turn", "confirmation_id", rec.ID, "error", err)
		}
	}
}
