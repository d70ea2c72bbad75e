package main

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/veredicto/veredicto/internal/chat"
	"github.com/veredicto/veredicto/internal/console/browsertest"
)

// TestBrowserChatFeedback drives the console's conversation page in
// headless Chromium against the whole "serve" (offline supervisor): a turn
// that delegates nothing offers «¿Faltó delegar?» and one click answers it
// with the agent it should have gone to; a delegation offers «¿Era esto lo
// que pedías?», answered «Sí» once the senior review the delegated search
// raised (shown over the page) is left for later; both answers reach the
// tenant's metrics.
func TestBrowserChatFeedback(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, srv := startChatServer(ctx, t, nil, chat.Options{ConfirmPoll: 20 * time.Millisecond})
	// What "veredicto serve" starts once it listens: the conversation
	// follows the workflows it starts.
	t.Cleanup(srv.Start(ctx))
	tok := l.token(t, "acme", "consultora-ana")
	b := browsertest.New(t, 1100, 900)

	b.Run("open", 30*time.Second, chromedp.Navigate(l.base+"/"), chromedp.WaitVisible(chromedp.ID("token")))
	b.Run("sign in", 30*time.Second,
		chromedp.SendKeys(chromedp.ID("token"), tok),
		chromedp.Click(chromedp.ID("signin-submit")),
		chromedp.WaitVisible(chromedp.ID("runs-table")))
	b.Run("open the conversation", 30*time.Second, chromedp.Click(chromedp.ID("chat-link")), chromedp.WaitVisible(chromedp.ID("chat-input")))

	// say sends a message and returns the question its turn offers.
	say := func(turn int, msg string) string {
		t.Helper()
		q := fmt.Sprintf(`.feedback[data-turn="%d"] .question`, turn)
		b.Run(fmt.Sprintf("turn %d", turn), 30*time.Second, chromedp.SendKeys(chromedp.ID("chat-input"), msg), chromedp.Click(chromedp.ID("chat-send")))
		b.WaitFor(fmt.Sprintf("question %d", turn), `document.querySelector('`+q+`') !== null`, 30*time.Second)
		return browsertest.Eval[string](b, `document.querySelector('`+q+`').textContent`)
	}

	// A turn the keywords do not delegate: «¿Faltó delegar?».
	if q := say(1, "Contrástame a las dos finalistas"); q != chat.QuestionMissedText {
		t.Errorf("question after turn 1 = %q, want %q", q, chat.QuestionMissedText)
	}
	b.Shot("missed-question")
	b.Run("answer: the analyst", 10*time.Second, chromedp.Click(chromedp.CSS(`.feedback[data-turn="1"] button[data-agent="search-analyst"]`)))
	b.WaitFor("recorded", `(document.querySelector('.feedback[data-turn="1"] .done') || {}).textContent === 'Gracias: anotado.'`, 10*time.Second)

	// A delegation: «¿Era esto lo que pedías?», answered yes.
	if q := say(2, "Lanza la evaluación de la búsqueda demo-cfo-andina"); q != chat.QuestionRightText {
		t.Errorf("question after turn 2 = %q, want %q", q, chat.QuestionRightText)
	}
	if n := browsertest.Eval[int](b, `document.querySelectorAll('.feedback[data-turn="2"] button[data-agent="search-analyst"]').length`); n != 0 {
		t.Errorf("«No» offers the agent delegated to (%d buttons)", n)
	}
	b.Shot("right-question")
	// The search the turn started reports back to the conversation: its
	// end is said there, and the demo's senior review of c-005 opens as
	// the confirmation dialog over the page. The consultant leaves it for
	// later before answering the question below it.
	b.WaitFor("the search's end", `document.querySelector('#chat-log li.linked') !== null`, 30*time.Second)
	b.WaitFor("the senior review", `document.getElementById('confirm-dialog').open && document.getElementById('cf-candidate').textContent.indexOf('c-005') === 0`, 10*time.Second)
	b.Shot("senior-review")
	b.Run("decide later", 10*time.Second, chromedp.Click(chromedp.ID("cf-later")))
	b.WaitFor("the dialog closed", `!document.getElementById('confirm-dialog').open`, 10*time.Second)
	b.Run("answer: yes", 10*time.Second, chromedp.Click(chromedp.CSS(`.feedback[data-turn="2"] button[data-answer="yes"]`)))
	b.WaitFor("recorded again", `(document.querySelector('.feedback[data-turn="2"] .done') || {}).textContent === 'Gracias: anotado.'`, 10*time.Second)
	b.Shot("answered")

	_, body := l.call(ctx, t, "GET", "/api/chat/metrics", tok, "")
	var m chat.Metrics
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	if m.Feedback != (chat.FeedbackCounters{Examples: 2, MissedYes: 1, RightYes: 1}) || m.Agents["search-analyst"].FeedbackMissed != 1 {
		t.Errorf("metrics after the clicks: %+v / %+v", m.Feedback, m.Agents["search-analyst"])
	}
}
