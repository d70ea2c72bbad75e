package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/veredicto/veredicto/internal/chat"
)

// chatAgentName is a specialist as GET /api/chat/agents lists it.
type chatAgentName struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// maxFeedbackTries bounds how often an unclear agent choice is asked again.
const maxFeedbackTries = 3

// askFeedback asks the finished turn's question («¿Faltó delegar?» or «¿Era
// esto lo que pedías?») and sends the answer. Enter skips it; anything but
// an answer is the person's next message, which it returns.
func (c *chatClient) askFeedback(ctx context.Context, turn int, finish map[string]any, in *bufio.Scanner) string {
	question, _ := finish["feedback"].(string)
	delegated, _ := finish["delegated"].(string)
	text := chat.QuestionMissedText
	switch question {
	case chat.QuestionMissed:
	case chat.QuestionRight:
		text = chat.QuestionRightText
	default:
		return ""
	}
	fmt.Fprintf(c.out, "%s [s/n, Enter para seguir]: ", text)
	if !in.Scan() {
		return ""
	}
	line := strings.TrimSpace(in.Text())
	var yes bool
	switch strings.ToLower(line) {
	case "":
		return ""
	case "s", "si", "sí", "y", "yes":
		yes = true
	case "n", "no":
	default:
		return line // not an answer: the next message
	}
	req := chat.FeedbackRequest{ChatID: c.cfg.chatID, Turn: turn, Answer: chat.AnswerNo}
	if yes {
		req.Answer = chat.AnswerYes
	}
	switch {
	case question == chat.QuestionMissed && yes:
		agent, ok := c.chooseAgent(ctx, in, "¿A quién debí delegarlo?", "", false)
		if !ok {
			fmt.Fprintln(c.out, "[sin respuesta: no se anotó]")
			return ""
		}
		req.Agent = agent
	case question == chat.QuestionRight && !yes:
		agent, ok := c.chooseAgent(ctx, in, "¿A quién debió ir?", delegated, true)
		if !ok {
			fmt.Fprintln(c.out, "[sin respuesta: no se anotó]")
			return ""
		}
		req.Agent = agent
	}
	b, _ := json.Marshal(req)
	st, body, err := c.do(ctx, "POST", "/api/chat/feedback", b)
	switch {
	case err != nil:
		fmt.Fprintf(c.out, "[error] %v\n", err)
	case st != http.StatusCreated:
		fmt.Fprintf(c.out, "[error] %d %s\n", st, strings.TrimSpace(string(body)))
	default:
		fmt.Fprintln(c.out, "[gracias: anotado]")
	}
	return ""
}

// chooseAgent lists the specialists (but skip) by number and reads one: a
// number or an id; with none, 0 is «a nadie» and Enter means it too.
// Without none, Enter gives up. Unclear answers are asked again, at most
// maxFeedbackTries times.
func (c *chatClient) chooseAgent(ctx context.Context, in *bufio.Scanner, prompt, skip string, none bool) (string, bool) {
	if c.agents == nil {
		st, body, err := c.do(ctx, "GET", "/api/chat/agents", nil)
		var out struct {
			Agents []chatAgentName `json:"agents"`
		}
		if err != nil || st != http.StatusOK || json.Unmarshal(body, &out) != nil {
			fmt.Fprintln(c.out, "[error] no se pudo leer la lista de agentes")
			return "", false
		}
		c.agents = out.Agents
	}
	var options []chatAgentName
	for _, a := range c.agents {
		if a.ID != skip {
			options = append(options, a)
		}
	}
	if none {
		fmt.Fprintln(c.out, "  0) a nadie: no había que delegar")
	}
	for i, a := range options {
		fmt.Fprintf(c.out, "  %d) %s (%s)\n", i+1, a.Name, a.ID)
	}
	hint := "número o id, Enter para omitir"
	if none {
		hint = "número o id, Enter: a nadie"
	}
	for range maxFeedbackTries {
		fmt.Fprintf(c.out, "%s [%s]: ", prompt, hint)
		if !in.Scan() {
			return "", false
		}
		line := strings.TrimSpace(in.Text())
		if line == "" || (none && line == "0") {
			return "", none
		}
		if n, err := strconv.Atoi(line); err == nil && n >= 1 && n <= len(options) {
			return options[n-1].ID, true
		}
		for _, a := range options {
			if strings.EqualFold(line, a.ID) {
				return a.ID, true
			}
		}
	}
	return "", false
}
