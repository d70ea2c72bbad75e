package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/eventlog"
	"github.com/veredicto/veredicto/internal/labels"
	"github.com/veredicto/veredicto/internal/stream"
)

// A workflow started from a conversation (a search, a career-companion
// application, a debate) is linked to it (issue 32, seed 004: one stream
// per conversation): the link is kept in the chat's store, the
// execution's progress and the confirmations it waits on are copied to
// the conversation's stream as they come, and when it ends the chat says
// so in Spanish, with where its report is. Links follows them: one
// goroutine per linked execution, at most MaxFollowing in a process and
// MaxPerChat open in a conversation; each stops when its execution ends,
// when the conversation's stream can take no more events, after MaxAge,
// or when the server stops — and the next start resumes the open ones
// from the conversation's stream, where what was copied says how far it
// got. On AWS no process follows them: ChatLinkFunction receives Step
// Functions' execution status changes from EventBridge and says them in
// the conversations linked to the execution (statuschange.go).

// Kinds of the workflows a conversation follows: labels.RunKind codes.
const (
	KindSearch    = "search"
	KindCompanion = "career-companion"
	KindDebate    = "debate"
)

// TypeLinkedFinished is the conversation's message that a workflow it
// started has ended: data {outcome, status, report, message, linked}.
const TypeLinkedFinished = "linked-finished"

// Outcomes of a linked workflow (labels.LinkedOutcome).
const (
	OutcomeSucceeded = "succeeded"
	OutcomeEscalated = "escalated"
	OutcomeFailed    = "failed"
	OutcomeTimedOut  = "timed_out"
	OutcomeAborted   = "aborted"
	// OutcomeUnfollowed: the conversation stopped following it before it
	// ended (MaxAge).
	OutcomeUnfollowed = "unfollowed"
	// OutcomeClosed: the conversation's stream could take no more events;
	// nothing more is said there.
	OutcomeClosed = "closed"
)

// Bounds of the links.
const (
	// DefaultLinksPerChat bounds the workflows a conversation follows at
	// once: a tool that would start one more is refused.
	DefaultLinksPerChat = 8
	// DefaultMaxFollowing bounds the executions one process follows.
	DefaultMaxFollowing = 256
	// MaxLinkedSteps bounds the progress steps copied from one execution
	// (its own stream keeps them all); confirmations and the end are
	// always copied.
	MaxLinkedSteps = 100
)

// DefaultLinkAge is how long a conversation follows a workflow: past a
// senior review's longest wait.
const DefaultLinkAge = confirm.DefaultTimeout + 24*time.Hour

// Workflow is a workflow a tool started, or found already running, from a
// conversation.
type Workflow struct {
	Kind string
	// Subject is what it is about: the search id, the application id, the
	// debate id.
	Subject string
	// Execution is its execution's ARN, or its name (resolved for the
	// conversation's tenant).
	Execution string
}

// Watcher signals appends to a stream made by this process
// (eventlog/file.Log does).
type Watcher interface {
	Watch(tenant, stream string) (<-chan struct{}, func())
}

// Executions finds and describes, for a tenant, the executions a
// conversation follows: another tenant's is not found, like a missing one.
type Executions interface {
	ResolveExecution(ctx context.Context, tenant, ref string) (string, error)
	Describe(ctx context.Context, tenant, arn string) (ExecutionState, error)
}

// ExecutionState is an ended execution as Executions describes it.
type ExecutionState struct {
	Status string
	Output json.RawMessage
}

// Link is a workflow a conversation follows, kept once under
// chatlink/<tenant>/<chat>/<id>/link.
type Link struct {
	ID        string `json:"id"`
	Tenant    string `json:"tenant"`
	ChatID    string `json:"chat_id"`
	Turn      int    `json:"turn"`
	Agent     string `json:"agent"`
	Kind      string `json:"kind"`
	Subject   string `json:"subject"`
	Execution string `json:"execution"`
	// From is the conversation's last event when it was linked: what was
	// copied is after it.
	From int64     `json:"from"`
	At   time.Time `json:"at"`
}

// LinkEnd is how a link ended, kept once under .../<id>/end.
type LinkEnd struct {
	Outcome string    `json:"outcome"`
	Status  string    `json:"status,omitempty"`
	Report  string    `json:"report,omitempty"`
	At      time.Time `json:"at"`
}

// linked marks what the conversation's stream holds of a linked
// execution: its copied events and its end.
type linked struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	Subject   string `json:"subject"`
	Execution string `json:"execution"`
	// Source is the copied event's id in the execution's stream.
	Source int64 `json:"source,omitempty"`
}

func linkPrefix(tenant, chatID string) string { return "chatlink/" + tenant + "/" + chatID + "/" }
func linkKey(l Link) string                   { return linkPrefix(l.Tenant, l.ChatID) + l.ID + "/link" }
func linkEndKey(l Link) string                { return linkPrefix(l.Tenant, l.ChatID) + l.ID + "/end" }

// linkedPrefix is where the conversations linked to an execution are
// indexed, chatlink/<tenant>/~<hash of the ARN>/<chat>/linked: what an
// execution's status change finds its conversations by. "~" starts no
// chat id, so the index never mixes with a conversation's links.
func linkedPrefix(tenant, executionARN string) string {
	return "chatlink/" + tenant + "/~" + hashID(executionARN) + "/"
}
func linkedKey(l Link) string { return linkedPrefix(l.Tenant, l.Execution) + l.ChatID + "/linked" }

// LinkID names the link of a conversation to an execution.
func LinkID(tenant, chatID, executionARN string) string {
	return hashID(fmt.Sprintf("%d:%s|%d:%s|%s", len(tenant), tenant, len(chatID), chatID, executionARN))
}

// Links keeps and follows the workflows conversations started. Its
// fields are set once; it is safe for concurrent use. Nothing is followed
// before Start.
type Links struct {
	// Store keeps the links (the chat's store).
	Store KV
	// Events is where the conversations' streams are appended to; Log
	// reads the executions' streams and the conversations' (to resume),
	// Watch, when set, wakes a follower as soon as its execution's stream
	// grows.
	Events     Appender
	Log        eventlog.Reader
	Watch      Watcher
	Executions Executions
	// Describe, when set (on AWS, where no process follows a link and
	// the executions' status changes say them), describes an execution
	// as its status change would: Add asks it once the link is kept, and
	// an execution that ended before — its status change found no
	// conversation to tell — has its end said then.
	Describe func(ctx context.Context, arn string) (StatusChange, error)
	// Poll is how often an execution's stream is read without a signal
	// (default 1 s); MaxPerChat, MaxFollowing and MaxAge default to
	// DefaultLinksPerChat, DefaultMaxFollowing and DefaultLinkAge.
	Poll         time.Duration
	MaxPerChat   int
	MaxFollowing int
	MaxAge       time.Duration
	Now          func() time.Time
	Logger       *slog.Logger

	mu        sync.Mutex
	base      context.Context // set by Start
	following map[string]bool // by link key
	wg        sync.WaitGroup
}

func (l *Links) now() time.Time {
	if l.Now != nil {
		return l.Now().UTC()
	}
	return time.Now().UTC()
}

func (l *Links) logger() *slog.Logger {
	if l.Logger != nil {
		return l.Logger
	}
	return slog.Default()
}

// Open lists a conversation's links that have not ended, oldest first.
func (l *Links) Open(ctx context.Context, tenant, chatID string) ([]Link, error) {
	return l.open(ctx, linkPrefix(tenant, chatID))
}

func (l *Links) open(ctx context.Context, prefix string) ([]Link, error) {
	keys, err := l.Store.List(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("list links %s: %w", prefix, err)
	}
	ended := map[string]bool{}
	for _, k := range keys {
		if base, ok := strings.CutSuffix(k, "/end"); ok {
			ended[base] = true
		}
	}
	var out []Link
	for _, k := range keys {
		base, ok := strings.CutSuffix(k, "/link")
		if !ok || ended[base] {
			continue
		}
		b, found, err := l.Store.Get(ctx, k)
		if err != nil {
			// one link that cannot be read now does not stop the others
			// (serve's start follows them all): the next look retries it
			l.logger().WarnContext(ctx, "chat link not read; skipped this time", "key", k, "error", err)
			continue
		}
		var lk Link
		if !found || json.Unmarshal(b, &lk) != nil || lk.Execution == "" {
			l.logger().WarnContext(ctx, "unreadable chat link skipped", "key", k)
			continue
		}
		if linkKey(lk) != k || lk.ID != LinkID(lk.Tenant, lk.ChatID, lk.Execution) {
			// a record moved or edited: not the conversation (or the
			// execution) its key names
			l.logger().WarnContext(ctx, "chat link whose record does not match its key skipped", "key", k)
			continue
		}
		out = append(out, lk)
	}
	slices.SortStableFunc(out, func(a, b Link) int { return a.At.Compare(b.At) })
	return out, nil
}

// Room is nil when the conversation may follow one more workflow, and a
// *ToolError saying why not otherwise: asked before a tool starts one. A
// link older than MaxAge takes no room: its follower lets it go (serve),
// and on AWS an end EventBridge never delivered must not keep it forever.
func (l *Links) Room(ctx context.Context, tenant, chatID string) error {
	open, err := l.Open(ctx, tenant, chatID)
	if err != nil {
		return err
	}
	since := l.now().Add(-l.maxAge())
	open = slices.DeleteFunc(open, func(lk Link) bool { return lk.At.Before(since) })
	if n := orDefault(l.MaxPerChat, DefaultLinksPerChat); len(open) >= n {
		return toolErr("esta conversación ya sigue %s en curso, el máximo; espera a que termine alguno o inícialo en otra conversación",
			labels.Count(n, "flujo", "flujos"))
	}
	l.mu.Lock()
	busy := len(l.following) >= orDefault(l.MaxFollowing, DefaultMaxFollowing)
	l.mu.Unlock()
	if busy {
		return toolErr("el servidor ya sigue el máximo de flujos iniciados desde conversaciones; inténtalo cuando termine alguno")
	}
	return nil
}

func (l *Links) maxAge() time.Duration {
	if l.MaxAge > 0 {
		return l.MaxAge
	}
	return DefaultLinkAge
}

func orDefault(v, d int) int {
	if v <= 0 {
		return d
	}
	return v
}

// Add keeps lk, indexed under its execution (so that the execution's
// status changes find it on AWS), and follows it; a conversation linked to
// the same execution already is left as it is. Both writes are
// write-once: a retried Add completes what a failed one began.
func (l *Links) Add(ctx context.Context, lk Link) error {
	b, err := json.Marshal(lk)
	if err != nil {
		return err
	}
	wrote, err := l.Store.PutIfAbsent(ctx, linkKey(lk), b)
	if err != nil {
		return fmt.Errorf("keep link of chat %s to %s: %w", lk.ChatID, lk.Execution, err)
	}
	if _, err := l.Store.PutIfAbsent(ctx, linkedKey(lk), []byte(lk.ID)); err != nil {
		return fmt.Errorf("index link of chat %s to %s: %w", lk.ChatID, lk.Execution, err)
	}
	if wrote {
		l.follow(lk)
	}
	if l.Describe != nil {
		l.catchUp(ctx, lk)
	}
	return nil
}

// catchUp says lk's end when its execution has ended already: the status
// change that said so may have come before the link was kept. Said once,
// whichever comes first (the end's key). The description is asked up to
// catchUpTries times (a throttled call: EventBridge says an end once, and
// one that came before the link is said only here); a failure is then
// logged, not returned: the link is kept, and a status change still to
// come says it.
func (l *Links) catchUp(ctx context.Context, lk Link) {
	ch, err := l.Describe(ctx, lk.Execution)
	for try, wait := 1, 100*time.Millisecond; err != nil && try < catchUpTries && ctx.Err() == nil; try, wait = try+1, 3*wait {
		select {
		case <-ctx.Done():
		case <-time.After(wait):
			ch, err = l.Describe(ctx, lk.Execution)
		}
	}
	if err == nil && !ch.ended() {
		return
	}
	if err == nil {
		_, err = l.statusChanged(ctx, lk, "", ch)
	}
	if err != nil {
		l.logger().WarnContext(ctx, "say the end of a workflow that ended before its conversation linked it", "tenant", lk.Tenant, "chat_id", lk.ChatID, "execution", lk.Execution, "error", err)
	}
}

// catchUpTries bounds the descriptions catchUp asks for (100 ms, then
// 300 ms apart).
const catchUpTries = 3

// RecheckAfter is how old a link is before Recheck describes its
// execution: a younger one's status change may still be on its way.
const RecheckAfter = time.Minute

// Recheck says, on AWS (Describe set; serve's followers need none), the
// end of the workflows the conversation still follows whose end nobody
// said: an end EventBridge delivered when the link's index could not be
// written, or before the link was kept while its description failed, or
// never. Called as a turn starts, so a person asking how a workflow goes
// reads its end first. It describes at most MaxPerChat links older than
// RecheckAfter, oldest first; an execution still running past MaxAge is
// no longer followed (as serve's follower lets it go), and one Step
// Functions no longer knows (its history is kept 90 days) is said so too.
// Failures are logged: the next turn asks again.
func (l *Links) Recheck(ctx context.Context, tenant, chatID string) {
	if l.Describe == nil {
		return
	}
	open, err := l.Open(ctx, tenant, chatID)
	if err != nil {
		l.logger().WarnContext(ctx, "recheck the workflows a conversation follows", "tenant", tenant, "chat_id", chatID, "error", err)
		return
	}
	now := l.now()
	open = slices.DeleteFunc(open, func(lk Link) bool { return lk.At.After(now.Add(-RecheckAfter)) })
	open = open[:min(len(open), orDefault(l.MaxPerChat, DefaultLinksPerChat))]
	// Described together: a turn waits for the slowest, not for the sum.
	var wg sync.WaitGroup
	for _, lk := range open {
		wg.Go(func() { l.recheck(ctx, lk, now) })
	}
	wg.Wait()
}

// recheck describes lk's execution and says its end when it has ended,
// or that it is no longer followed when it is past MaxAge — whatever the
// description says then, a failure included: a link no description
// reaches (its machine replaced, a permission gone) does not stay open,
// described at every turn, for good.
func (l *Links) recheck(ctx context.Context, lk Link, now time.Time) {
	pastAge := lk.At.Add(l.maxAge()).Before(now)
	ch, err := l.Describe(ctx, lk.Execution)
	switch {
	case err == nil && ch.ended():
		_, err = l.statusChanged(ctx, lk, "", ch)
	case isCode(err, "ExecutionDoesNotExist") || pastAge:
		if err != nil {
			l.logger().WarnContext(ctx, "a followed workflow cannot be described; it is no longer followed",
				"tenant", lk.Tenant, "chat_id", lk.ChatID, "execution", lk.Execution, "error", err)
		}
		err = l.end(ctx, lk, LinkEnd{Outcome: OutcomeUnfollowed}, "", nil)
	}
	if err != nil {
		l.logger().WarnContext(ctx, "recheck a workflow a conversation follows", "tenant", lk.Tenant, "chat_id", lk.ChatID, "execution", lk.Execution, "error", err)
	}
}

// isCode reports whether err is an AWS API error with the given code.
func isCode(err error, code string) bool {
	var api interface{ ErrorCode() string }
	return errors.As(err, &api) && api.ErrorCode() == code
}

// Start follows, until ctx ends, the links kept open by an earlier run
// and every link added from now on. The returned function waits for the
// followers to stop once ctx has ended.
func (l *Links) Start(ctx context.Context) (wait func()) {
	l.mu.Lock()
	l.base = ctx
	l.mu.Unlock()
	open, err := l.open(ctx, "chatlink/")
	if err != nil {
		l.logger().WarnContext(ctx, "resume the workflows conversations follow", "error", err)
	}
	for _, lk := range open {
		l.follow(lk)
	}
	if len(open) > 0 {
		l.logger().InfoContext(ctx, "resumed following the workflows conversations started", "count", len(open))
	}
	return l.wg.Wait
}

// follow starts lk's follower unless it runs already, Start has not run,
// or MaxFollowing run (lk stays open: the next start resumes it).
func (l *Links) follow(lk Link) {
	key := linkKey(lk)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.base == nil || l.base.Err() != nil || l.following[key] {
		return
	}
	if len(l.following) >= orDefault(l.MaxFollowing, DefaultMaxFollowing) {
		l.logger().Warn("too many workflows followed; this one is resumed at the next start", "tenant", lk.Tenant, "chat_id", lk.ChatID, "execution", lk.Execution)
		return
	}
	if l.following == nil {
		l.following = map[string]bool{}
	}
	l.following[key] = true
	l.wg.Add(1)
	base := l.base
	go func() {
		defer l.wg.Done()
		defer func() {
			l.mu.Lock()
			delete(l.following, key)
			l.mu.Unlock()
		}()
		l.run(base, lk)
	}()
}

// Following is how many executions this process follows now.
func (l *Links) Following() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.following)
}

// linkBatch is how many of an execution's events one read takes.
const linkBatch = 100

// run copies lk's execution's events to the conversation until it ends.
func (l *Links) run(ctx context.Context, lk Link) {
	log := l.logger().With("tenant", lk.Tenant, "chat_id", lk.ChatID, "execution", lk.Execution)
	c, err := l.resume(ctx, lk)
	if err != nil {
		if ctx.Err() == nil {
			log.WarnContext(ctx, "cannot read the conversation to resume a linked workflow", "error", err)
		}
		return
	}
	if c.ended != nil { // said in the conversation before a crash: keep it
		l.keepEnd(ctx, lk, *c.ended)
		return
	}
	cursor, steps := c.cursor, c.steps
	var wake <-chan struct{}
	if l.Watch != nil {
		ch, cancel := l.Watch.Watch(lk.Tenant, lk.Execution)
		defer cancel()
		wake = ch
	}
	every := l.Poll
	if every <= 0 {
		every = time.Second
	}
	poll := time.NewTicker(every)
	defer poll.Stop()
	expire := time.NewTimer(time.Until(lk.At.Add(l.maxAge())))
	defer expire.Stop()
	for {
		evs, err := l.Log.Read(ctx, lk.Tenant, lk.Execution, cursor, linkBatch)
		if err != nil && ctx.Err() == nil {
			log.WarnContext(ctx, "read a linked execution's stream", "error", err)
		}
		copied := 0
		for _, ev := range evs {
			done, err := l.forward(ctx, lk, ev, &steps)
			if err != nil {
				if l.closed(ctx, lk, err) {
					return
				}
				if ctx.Err() == nil {
					log.WarnContext(ctx, "copy a linked execution's event to the conversation", "event_id", ev.ID, "error", err)
				}
				break // read again from the cursor
			}
			cursor, copied = ev.ID, copied+1
			if done {
				return
			}
		}
		if copied == linkBatch { // more to catch up on; a failure waits
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-poll.C:
		case <-expire.C:
			if err := l.end(ctx, lk, LinkEnd{Outcome: OutcomeUnfollowed}, "", nil); err != nil && ctx.Err() == nil {
				// the link stays open: the next start follows it again
				// and says its expiry then
				log.WarnContext(ctx, "could not say that a linked workflow is no longer followed", "error", err)
			}
			return
		}
	}
}

// copied is what the conversation's stream holds of a linked workflow:
// the cursor in the execution's stream, the steps copied, the keys of the
// events copied, and the end when it was said.
type copied struct {
	cursor int64
	steps  int
	keys   map[string]bool
	ended  *LinkEnd
}

// closed lets lk go when err says its conversation's stream takes no more
// events (a *veredicto.ConflictError): nothing more is said there.
func (l *Links) closed(ctx context.Context, lk Link, err error) bool {
	var ce *veredicto.ConflictError
	if !errors.As(err, &ce) {
		return false
	}
	l.logger().WarnContext(ctx, "the conversation's stream takes no more events; the workflow is no longer followed",
		"tenant", lk.Tenant, "chat_id", lk.ChatID, "execution", lk.Execution, "error", err)
	l.keepEnd(ctx, lk, LinkEnd{Outcome: OutcomeClosed, At: l.now()})
	return true
}

// resume reads the conversation's stream after lk.From for what was
// copied of lk.
func (l *Links) resume(ctx context.Context, lk Link) (copied, error) {
	c := copied{keys: map[string]bool{}}
	after := lk.From
	for {
		evs, err := l.Log.Read(ctx, lk.Tenant, StreamName(lk.ChatID), after, eventlog.MaxReadLimit)
		if err != nil {
			return copied{}, err
		}
		for _, ev := range evs {
			after = ev.ID
			var m struct {
				Linked  *linked `json:"linked"`
				Outcome string  `json:"outcome"`
				Status  string  `json:"status"`
				Report  string  `json:"report"`
			}
			if json.Unmarshal(ev.Data, &m) != nil || m.Linked == nil || m.Linked.ID != lk.ID {
				continue
			}
			if ev.Type == TypeLinkedFinished {
				c.ended = &LinkEnd{Outcome: m.Outcome, Status: m.Status, Report: m.Report, At: ev.Time}
				return c, nil
			}
			c.cursor = max(c.cursor, m.Linked.Source)
			c.keys[ev.Key] = true
			if ev.Type == eventlog.TypeExecutionStep {
				c.steps++
			}
		}
		if len(evs) < eventlog.MaxReadLimit {
			return c, nil
		}
	}
}

// forward copies one event of lk's execution to the conversation: its
// progress (up to MaxLinkedSteps), the confirmations it waits on and
// their outcome (under their own key, so the copy confirm.Service made
// already for the execution's origin is not repeated), and at its finish
// the end, said in Spanish. done is true once the end is said.
func (l *Links) forward(ctx context.Context, lk Link, ev eventlog.Event, steps *int) (done bool, err error) {
	key := "x" + lk.ID + ":" + strconv.FormatInt(ev.ID, 10)
	switch ev.Type {
	case eventlog.TypeExecutionStep:
		var m struct {
			Step stream.Step `json:"step"`
		}
		if json.Unmarshal(ev.Data, &m) != nil || !progress(m.Step) {
			return false, nil
		}
		return false, l.copyStep(ctx, lk, m.Step, key, ev.ID, steps)
	case eventlog.TypePendingConfirmation, eventlog.TypeConfirmationResolved:
		var data map[string]any
		if json.Unmarshal(ev.Data, &data) != nil || data == nil {
			return false, nil
		}
		delete(data, "type")
		if ev.Key != "" {
			key = ev.Key
		}
		return false, l.say(ctx, lk, ev.Type, key, ev.ID, data)
	case eventlog.TypeFinish:
		var f stream.Finish
		_ = json.Unmarshal(ev.Data, &f)
		return true, l.end(ctx, lk, LinkEnd{Outcome: outcomeOfStatus(f.Status), Status: f.Status}, f.Error, nil)
	}
	return false, nil
}

// copyStep copies a progress step of lk's execution to the conversation,
// the MaxLinkedSteps-th followed by one saying where the rest is, and
// nothing after it; steps counts the steps copied so far. key makes the
// copy idempotent; source is the step's id in the execution's stream (0
// when it has none).
func (l *Links) copyStep(ctx context.Context, lk Link, st stream.Step, key string, source int64, steps *int) error {
	switch {
	case *steps < MaxLinkedSteps:
		st.ID = "x" + lk.ID[:8] + "-" + st.ID
	case *steps == MaxLinkedSteps:
		st = stream.Step{ID: "x" + lk.ID[:8] + "-more", Agent: lk.Kind, Action: "more",
			Content: "el resto del avance está en el stream de la ejecución", Metadata: map[string]any{"execution": lk.Execution}}
	default:
		return nil
	}
	*steps++
	return l.say(ctx, lk, eventlog.TypeExecutionStep, key, source, map[string]any{"step": st})
}

// say appends an event of lk's workflow to the conversation's stream,
// marked linked.
func (l *Links) say(ctx context.Context, lk Link, typ, key string, source int64, data map[string]any) error {
	data["chat_id"], data["turn"] = lk.ChatID, lk.Turn
	data["linked"] = linked{ID: lk.ID, Kind: lk.Kind, Subject: lk.Subject, Execution: lk.Execution, Source: source}
	out, err := eventlog.New(typ, key, data)
	if err != nil {
		return err
	}
	_, err = l.Events.Append(ctx, lk.Tenant, StreamName(lk.ChatID), out)
	return err
}

// progress reports whether a step of an execution says how it advances:
// what ended, failed or was retried, and the execution's start; a state's
// start is left to the execution's own stream.
func progress(st stream.Step) bool {
	return st.Action != "started" || st.Agent == "execution"
}

func outcomeOfStatus(status string) string {
	switch status {
	case "SUCCEEDED":
		return OutcomeSucceeded
	case "TIMED_OUT":
		return OutcomeTimedOut
	case "ABORTED":
		return OutcomeAborted
	}
	return OutcomeFailed
}

// end says in the conversation how lk's workflow ended, with where its
// report is, then keeps the end. A succeeded workflow that escalated to a
// person is said so, read from its output: the one given (an execution
// status change carries it), else through Executions. cause is the
// error's name, never its text.
func (l *Links) end(ctx context.Context, lk Link, e LinkEnd, cause string, output json.RawMessage) error {
	detail := ""
	if e.Outcome == OutcomeSucceeded && output == nil && l.Executions != nil {
		st, err := l.ended(ctx, lk)
		if err != nil {
			l.logger().WarnContext(ctx, "describe a linked execution", "tenant", lk.Tenant, "execution", lk.Execution, "error", err)
		} else {
			output = st.Output
		}
	}
	if e.Outcome == OutcomeSucceeded && output != nil {
		e.Outcome, detail = judge(lk.Kind, output)
	}
	if e.Outcome == OutcomeFailed && cause != "" {
		detail = " (error: " + cause + ")"
	}
	e.Report = reportOf(lk, e.Outcome)
	e.At = l.now()
	msg := fmt.Sprintf("%s %s (desde el turno %d): %s%s.", labels.Of(labels.RunKind, lk.Kind), lk.Subject, lk.Turn,
		labels.Of(labels.LinkedOutcome, e.Outcome), detail)
	if e.Report != "" {
		place := "Informe"
		if e.Outcome != OutcomeSucceeded && e.Outcome != OutcomeEscalated {
			place = "Estado"
		}
		msg += " " + place + ": " + e.Report
	}
	if err := l.say(ctx, lk, TypeLinkedFinished, "x"+lk.ID+":end", 0,
		map[string]any{"outcome": e.Outcome, "status": e.Status, "report": e.Report, "message": msg}); err != nil {
		return fmt.Errorf("say the end of %s in chat %s: %w", lk.Execution, lk.ChatID, err)
	}
	l.keepEnd(ctx, lk, e)
	return nil
}

// endedPolls bounds how often ended describes an execution whose finish
// is on its stream before its end is persisted (serve writes the history
// event first), endedPoll apart.
const (
	endedPolls = 50
	endedPoll  = 100 * time.Millisecond
)

// ended describes lk's execution once its end is persisted.
func (l *Links) ended(ctx context.Context, lk Link) (ExecutionState, error) {
	for i := 1; ; i++ {
		st, err := l.Executions.Describe(ctx, lk.Tenant, lk.Execution)
		if err != nil || st.Status != "RUNNING" {
			return st, err
		}
		if i == endedPolls {
			return st, fmt.Errorf("execution %s still RUNNING %s after its finish", lk.Execution, endedPolls*endedPoll)
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-time.After(endedPoll):
		}
	}
}

// keepEnd keeps how lk ended, so it is not resumed; a failure is logged
// (the next start finds the end in the conversation).
func (l *Links) keepEnd(ctx context.Context, lk Link, e LinkEnd) {
	b, _ := json.Marshal(e)
	if _, err := l.Store.PutIfAbsent(ctx, linkEndKey(lk), b); err != nil {
		l.logger().WarnContext(ctx, "keep the end of a linked workflow", "tenant", lk.Tenant, "chat_id", lk.ChatID, "execution", lk.Execution, "error", err)
	}
}

// judge reads a succeeded workflow's output: escalated when it handed
// cases to a person (a search's escalated candidates, a debate's council
// or person), with a detail in Spanish.
func judge(kind string, output json.RawMessage) (outcome, detail string) {
	switch kind {
	case KindSearch:
		// The executive search ends with its state, the summary's
		// metrics under "metrics".
		var out struct {
			Metrics struct {
				Candidates     int     `json:"candidates"`
				EscalationRate float64 `json:"escalation_rate"`
			} `json:"metrics"`
		}
		if json.Unmarshal(output, &out) != nil {
			break
		}
		m := out.Metrics
		if m.EscalationRate > 0 {
			n := int(math.Round(m.EscalationRate * float64(m.Candidates)))
			return OutcomeEscalated, fmt.Sprintf(" (%d de %s al consultor senior)", n, labels.Count(m.Candidates, "candidato", "candidatos"))
		}
		if m.Candidates > 0 {
			return OutcomeSucceeded, fmt.Sprintf(" (%s)", labels.Count(m.Candidates, "candidato evaluado", "candidatos evaluados"))
		}
	case KindDebate:
		var m struct {
			Target   string `json:"escalado_para"`
			Decision string `json:"decision"`
			Pending  bool   `json:"pending"`
		}
		if json.Unmarshal(output, &m) == nil {
			if m.Target != "" && m.Target != "NENHUM" {
				d := " (destino: " + labels.Of(labels.DebateTarget, m.Target)
				switch {
				case m.Pending:
					d += "; sin respuesta todavía"
				case m.Decision != "":
					d += "; decisión: " + m.Decision
				}
				return OutcomeEscalated, d + ")"
			}
			if m.Decision != "" {
				return OutcomeSucceeded, " (decisión: " + m.Decision + ")"
			}
		}
	case KindCompanion:
		var m struct {
			Step struct {
				Status   string `json:"status"`
				Decision string `json:"decision"`
			} `json:"step"`
		}
		if json.Unmarshal(output, &m) == nil && m.Step.Status != "" {
			d := " (postulación " + labels.Of(labels.CompanionStatus, m.Step.Status)
			if m.Step.Decision != "" {
				d += "; " + labels.Phrase(labels.CompanionDecision, m.Step.Decision)
			}
			return OutcomeSucceeded, d + ")"
		}
	}
	return OutcomeSucceeded, ""
}

// reportOf is where a linked workflow's report (or, when it did not end
// well, its state) is read through the HTTP API.
func reportOf(lk Link, outcome string) string {
	ok := outcome == OutcomeSucceeded || outcome == OutcomeEscalated
	switch lk.Kind {
	case KindSearch:
		if ok {
			return "/searches/" + lk.Subject + "/summary"
		}
		return "/searches/" + lk.Subject
	case KindDebate:
		if ok {
			return "/debates/" + lk.Subject + "/report"
		}
		return "/debates/" + lk.Subject
	case KindCompanion:
		return "/companion/applications/" + lk.Subject
	}
	return ""
}
