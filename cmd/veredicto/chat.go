package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/chat"
	"github.com/veredicto/veredicto/internal/labels"
)

const chatUsage = `Usage: veredicto chat [--endpoint URL] [--events URL] [--chat ID] [--token TOK | --tenant T --data DIR] [--debug]

An interactive terminal client of the delegation chat of a running
"veredicto serve" (or the HTTP API on AWS): each line you type is one turn
(POST /api/chat); the answer streams from the conversation's event stream
(GET /api/events?chat=ID): the text as it arrives, the tools the
supervisor delegates to and their steps, and a y/n question for every
sensitive action waiting for your confirmation (POST /api/confirmations).
After each turn it asks «¿Faltó delegar?» (when nothing was delegated) or
«¿Era esto lo que pedías?» (after a delegation): answer s/y or n, then the
agent it should have gone to, or press Enter (or type your next message) to
skip; the answer is stored on the server as a labelled example of your
tenant (POST /api/chat/feedback). --feedback=false never asks.
Type /exit (or end the input) to leave; the chat's history stays on the
server, so --chat ID resumes it. On AWS, --endpoint is the HTTP API and
--events the event stream's Function URL (its root serves the stream).

The server is --endpoint, else the one "veredicto serve --data DIR" is
running on (recorded under DIR); without either the chat stops before
sending anything. The token is --token, else $VEREDICTO_TOKEN, else one
signed for --tenant with that server's key under --data (as "veredicto
token" does), which is only ever sent to the server found under --data.

Flags:
`

type chatCLIConfig struct {
	endpoint, events, chatID, token, tenant, data string
	// debug shows the heuristic's delegation-intent and delegation-missed
	// events (analytics, not for the person by default).
	debug bool
	// turnTimeout bounds the wait for one turn's finish.
	turnTimeout time.Duration
	// feedback asks the turn's question after each turn.
	feedback bool
}

func (m *Main) runChat(ctx context.Context, args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "evaluate":
			return m.runChatEvaluate(ctx, args[1:])
		case "learn":
			return m.runChatLearn(ctx, args[1:])
		case "recalibrate":
			return m.runChatRecalibrate(ctx, args[1:])
		}
	}
	cfg := chatCLIConfig{}
	fs := subcommandFlags("chat", chatUsage, m.Stderr)
	fs.StringVar(&cfg.endpoint, "endpoint", "", "base URL of the server (default: the one running on --data)")
	fs.StringVar(&cfg.events, "events", "", "base URL of the event stream (default: --endpoint; on AWS the stream's Function URL)")
	fs.StringVar(&cfg.chatID, "chat", "", "chat id to start or resume (default: a new one)")
	fs.StringVar(&cfg.token, "token", "", "bearer token (default: $VEREDICTO_TOKEN, else signed locally)")
	fs.StringVar(&cfg.tenant, "tenant", "default", "tenant of a locally signed token")
	fs.StringVar(&cfg.data, "data", app.DefaultDataDir, "data folder of the local server (its key signs the token)")
	fs.DurationVar(&cfg.turnTimeout, "turn-timeout", 20*time.Minute, "how long to wait for one turn")
	fs.BoolVar(&cfg.debug, "debug", false, "also show delegation-intent and delegation-missed events")
	fs.BoolVar(&cfg.feedback, "feedback", true, "after each turn, ask whether a delegation was missed or right")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(m.Stderr, "veredicto chat: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if cfg.chatID == "" {
		cfg.chatID = fmt.Sprintf("cli-%d", time.Now().Unix())
	}
	if !chat.ValidChatID(cfg.chatID) {
		fmt.Fprintln(m.Stderr, "veredicto chat: --chat must be 1-64 letters, digits, '_' or '-'")
		return exitUsage
	}
	if cfg.endpoint == "" {
		e, ok := app.ReadEndpoint(cfg.data)
		if !ok {
			fmt.Fprintf(m.Stderr, "veredicto chat: no server is running on %s: start \"veredicto serve --data %s\" or give --endpoint\n", cfg.data, cfg.data)
			return exitFailed
		}
		cfg.endpoint = e
	}
	if cfg.events == "" {
		cfg.events = cfg.endpoint
	}
	if cfg.token == "" {
		cfg.token = os.Getenv("VEREDICTO_TOKEN")
	}
	if cfg.token == "" {
		if found, _ := app.ReadEndpoint(cfg.data); found != cfg.endpoint {
			// The local key signs tokens for the server on --data only.
			fmt.Fprintf(m.Stderr, "veredicto chat: %s is not the server running on %s: give its token with --token or $VEREDICTO_TOKEN\n", cfg.endpoint, cfg.data)
			return exitFailed
		}
		var err error
		if cfg.token, err = app.SignLocalToken(cfg.data, cfg.tenant, "local:"+localUser(), 12*time.Hour); err != nil {
			fmt.Fprintf(m.Stderr, "veredicto chat: %v\n", err)
			return exitFailed
		}
	}
	c := &chatClient{cfg: cfg, out: m.Stdout, http: &http.Client{}}
	if err := c.run(ctx, m.Stdin); err != nil {
		fmt.Fprintf(m.Stderr, "veredicto chat: %v\n", err)
		return exitFailed
	}
	return exitOK
}

type chatClient struct {
	cfg    chatCLIConfig
	out    io.Writer
	http   *http.Client
	events chan map[string]any
	errc   chan error
	lastID string
	agents []chatAgentName // the specialists, read once for the feedback
	// deferred are the confirmations of workflows this conversation
	// started that came during a turn: asked once it has finished.
	deferred []map[string]any
}

func (c *chatClient) run(ctx context.Context, stdin io.Reader) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.events, c.errc = make(chan map[string]any, 256), make(chan error, 1)
	go c.follow(ctx)
	in := bufio.NewScanner(stdin)
	in.Buffer(make([]byte, chat.MaxMessageBytes), chat.MaxMessageBytes)
	fmt.Fprintf(c.out, "Chat %s en %s. Escribe tu mensaje (/exit para salir).\n", c.cfg.chatID, c.cfg.endpoint)
	c.catchUp(ctx)
	next := "" // a message typed at the feedback question
	for {
		line := next
		next = ""
		if line == "" {
			// What the workflows this conversation started said since the
			// last turn (an empty line shows it too).
			if err := c.drainLinked(ctx, in); errors.Is(err, errInputEnded) {
				fmt.Fprintln(c.out, "\n[la confirmación queda pendiente]")
				return nil
			} else if err != nil {
				return err
			}
			fmt.Fprint(c.out, "tú> ")
			if !in.Scan() {
				fmt.Fprintln(c.out)
				return in.Err()
			}
			line = strings.TrimSpace(in.Text())
		}
		switch line {
		case "":
			continue
		case "/exit", "/salir", "/quit":
			return nil
		}
		turn, err := c.post(ctx, line)
		if err != nil {
			fmt.Fprintf(c.out, "[error] %v\n", err)
			continue
		}
		finish, err := c.await(ctx, turn, in)
		if err != nil {
			return err
		}
		if c.cfg.feedback && finish != nil {
			next = c.askFeedback(ctx, turn, finish, in)
		}
	}
}

// post sends one message and returns its turn.
func (c *chatClient) post(ctx context.Context, msg string) (int, error) {
	b, _ := json.Marshal(chat.Request{ChatID: c.cfg.chatID, Message: msg})
	status, body, err := c.do(ctx, "POST", "/api/chat", b)
	if err != nil {
		return 0, err
	}
	var a chat.Accepted
	if status != http.StatusAccepted && status != http.StatusOK || json.Unmarshal(body, &a) != nil {
		return 0, fmt.Errorf("POST /api/chat: %d %s", status, strings.TrimSpace(string(body)))
	}
	return a.Turn, nil
}

func (c *chatClient) do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.cfg.endpoint, "/")+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.cfg.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, b, err
}

// follow reads the conversation's stream into c.events, reconnecting
// with the last id it saw (at most maxReconnects times in a row).
func (c *chatClient) follow(ctx context.Context) {
	const maxReconnects = 5
	for failures := 0; failures < maxReconnects; {
		err := c.readStream(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			failures++
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(failures) * 500 * time.Millisecond):
		}
	}
	c.errc <- errors.New("the event stream is unreachable")
}

func (c *chatClient) readStream(ctx context.Context) error {
	q := url.Values{"chat": {c.cfg.chatID}, "access_token": {c.cfg.token}}
	if c.lastID != "" {
		q.Set("lastEventId", c.lastID)
	}
	base := strings.TrimSuffix(c.cfg.events, "/")
	if base == strings.TrimSuffix(c.cfg.endpoint, "/") {
		base += "/api/events" // the local server serves the stream on its own route
	}
	req, err := http.NewRequestWithContext(ctx, "GET", base+"?"+q.Encode(), nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("event stream: %s", resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if id, ok := strings.CutPrefix(line, "id: "); ok {
			c.lastID = id
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			var ev map[string]any
			if json.Unmarshal([]byte(d), &ev) == nil {
				select {
				case c.events <- ev:
				case <-ctx.Done():
					return nil
				}
			}
		}
	}
	return sc.Err()
}

// await prints turn's events until its finish, asking for confirmations,
// and returns the finish event (nil when the turn did not finish in time).
func (c *chatClient) await(ctx context.Context, turn int, in *bufio.Scanner) (map[string]any, error) {
	timeout := time.NewTimer(c.cfg.turnTimeout)
	defer timeout.Stop()
	for {
		var ev map[string]any
		select {
		case ev = <-c.events:
		case err := <-c.errc:
			return nil, err
		case <-timeout.C:
			fmt.Fprintln(c.out, "\n[aviso] el turno no terminó a tiempo")
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if ofWorkflow(ev) { // a workflow this conversation started
			if ev["type"] == "pending-confirmation" {
				c.deferred = append(c.deferred, ev) // asked once the turn has finished
				continue
			}
			if err := c.linkedEvent(ctx, ev, in); err != nil {
				return nil, err
			}
			continue
		}
		t, hasTurn := ev["turn"].(float64)
		if hasTurn && int(t) != turn {
			continue // an earlier turn replayed on connect
		}
		switch ev["type"] {
		case chat.TypeTextDelta:
			fmt.Fprint(c.out, ev["delta"])
		case chat.TypeToolInvocation:
			ti, _ := ev["toolInvocation"].(map[string]any)
			switch ti["state"] {
			case "call":
				fmt.Fprintf(c.out, "\n[herramienta] %v…\n", labels.Of(labels.ChatTool, fmt.Sprint(ti["toolName"])))
			case "result":
				summary := ""
				if r, ok := ti["result"].(map[string]any); ok {
					summary, _ = r["summary"].(string)
				}
				fmt.Fprintf(c.out, "[✓ %v] %s\n", labels.Of(labels.ChatTool, fmt.Sprint(ti["toolName"])), summary)
			case "error":
				fmt.Fprintf(c.out, "[✗ %v] %v\n", labels.Of(labels.ChatTool, fmt.Sprint(ti["toolName"])), ti["error"])
			}
		case "execution-step":
			st, _ := ev["step"].(map[string]any)
			fmt.Fprintf(c.out, "  · %v: %v\n", st["agent"], st["content"])
		case "pending-confirmation":
			if err := c.confirm(ctx, ev, in); err != nil {
				return nil, err
			}
		case "confirmation-resolved":
			fmt.Fprintf(c.out, "[confirmación %s]\n", labels.Phrase(labels.ConfirmationStatus, fmt.Sprint(ev["status"])))
		case chat.TypeDelegationMissed:
			if c.cfg.debug {
				fmt.Fprintf(c.out, "\n[debug] delegación perdida: %v %v\n", ev["target"], ev["score"])
			}
		case chat.TypeDelegationIntent:
			if c.cfg.debug {
				fmt.Fprintf(c.out, "[debug] intención: %v %v\n", ev["target"], ev["score"])
			}
		case "finish":
			fmt.Fprintln(c.out)
			return ev, nil
		}
	}
}

// ofWorkflow reports whether ev is a workflow's the conversation started
// rather than a turn's: marked linked, or a confirmation of an execution
// (a turn's own are asked on the conversation's stream, chat/<id>).
func ofWorkflow(ev map[string]any) bool {
	if ev["linked"] != nil {
		return true
	}
	switch ev["type"] {
	case "pending-confirmation", "confirmation-resolved":
		x, _ := ev["execution"].(string)
		return strings.HasPrefix(x, "arn:")
	}
	return false
}

// catchUp reads what the conversation's stream replays on connect, until
// it pauses (at most catchUpMax), so what the workflows it started said
// before this session that still matters — a confirmation still waiting,
// how each ended — is shown before the first prompt, not in the middle of
// the first turn.
func (c *chatClient) catchUp(ctx context.Context) {
	const quiet, catchUpMax = 300 * time.Millisecond, 3 * time.Second
	deadline := time.After(catchUpMax)
	for {
		select {
		case ev := <-c.events:
			// A review still waiting, and how each workflow ended; the
			// rest is history.
			if ofWorkflow(ev) && (ev["type"] == "pending-confirmation" || ev["type"] == chat.TypeLinkedFinished) {
				c.deferred = append(c.deferred, ev)
			}
		case <-time.After(quiet):
			return
		case <-deadline:
			return
		case <-ctx.Done():
			return
		}
	}
}

// drainLinked shows what the workflows the conversation started said
// since the last turn: what came during it, then what came since; the
// rest (earlier turns replayed on connect) is skipped. It is
// errInputEnded when the input ends at a confirmation (it stays pending).
func (c *chatClient) drainLinked(ctx context.Context, in *bufio.Scanner) error {
	for {
		var ev map[string]any
		if len(c.deferred) > 0 {
			ev, c.deferred = c.deferred[0], c.deferred[1:]
		} else {
			select {
			case ev = <-c.events:
			default:
				return nil
			}
		}
		if !ofWorkflow(ev) {
			continue
		}
		if err := c.linkedEvent(ctx, ev, in); err != nil {
			return err
		}
	}
}

// linkedEvent shows one event of a workflow the conversation started:
// its progress, the confirmations it waits on (asked here), its end.
func (c *chatClient) linkedEvent(ctx context.Context, ev map[string]any, in *bufio.Scanner) error {
	lk, _ := ev["linked"].(map[string]any)
	switch ev["type"] {
	case chat.TypeLinkedFinished:
		fmt.Fprintf(c.out, "[aviso] %v\n", ev["message"])
	case "execution-step":
		// In a terminal, the workflow's own start and end and what went
		// wrong (a retry, a failure); its end is said below, its whole
		// progress is on the console and in its stream.
		st, _ := ev["step"].(map[string]any)
		switch st["action"] {
		case "finished", "started", "succeeded", "iteration-started", "iteration-succeeded":
			if st["agent"] != "execution" || st["action"] == "succeeded" {
				return nil
			}
		}
		fmt.Fprintf(c.out, "  · %s %v: %v\n", labels.Of(labels.RunKind, fmt.Sprint(lk["kind"])), lk["subject"], st["content"])
	case "pending-confirmation":
		return c.confirm(ctx, ev, in)
	case "confirmation-resolved":
		fmt.Fprintf(c.out, "[confirmación %s]\n", labels.Phrase(labels.ConfirmationStatus, fmt.Sprint(ev["status"])))
	}
	return nil
}

// errInputEnded: the input ended at a confirmation, which stays pending.
var errInputEnded = errors.New("input ended during a confirmation (it stays pending)")

// confirm asks the person about a pending confirmation that is still
// pending (a replayed one already decided is skipped).
func (c *chatClient) confirm(ctx context.Context, ev map[string]any, in *bufio.Scanner) error {
	id, _ := ev["id"].(string)
	status, body, err := c.do(ctx, "GET", "/api/confirmations", nil)
	if err != nil || status != http.StatusOK || !bytes.Contains(body, []byte(`"`+id+`"`)) {
		return nil
	}
	preview, _ := json.Marshal(ev["preview"])
	undo := "no se puede deshacer"
	if ev["undoable"] == true {
		undo = "se puede deshacer"
	}
	tool, category, sensitivity := fmt.Sprint(ev["toolName"]), fmt.Sprint(ev["category"]), fmt.Sprint(ev["sensitivity"])
	fmt.Fprintf(c.out, "\n[confirmación] %s (%s, sensibilidad %s, %s)\n", labels.Of(labels.Tool, tool), labels.Of(labels.Category, category), labels.Of(labels.Sensitivity, sensitivity), undo)
	if q, ok := labels.Lookup(labels.Question, tool); ok {
		fmt.Fprintf(c.out, "  %s\n", q)
	}
	fmt.Fprint(c.out, labels.PreviewText(preview, "  "))
	for {
		fmt.Fprint(c.out, "¿Confirmas? [s/n]: ")
		if !in.Scan() {
			return errInputEnded
		}
		var approved bool
		switch strings.ToLower(strings.TrimSpace(in.Text())) {
		case "s", "si", "sí", "y", "yes":
			approved = true
		case "n", "no":
		default:
			continue
		}
		b, _ := json.Marshal(map[string]any{"id": id, "approved": approved})
		st, body, err := c.do(ctx, "POST", "/api/confirmations", b)
		if err != nil {
			return err
		}
		if st != http.StatusOK {
			fmt.Fprintf(c.out, "[error] %d %s\n", st, strings.TrimSpace(string(body)))
		}
		return nil
	}
}
