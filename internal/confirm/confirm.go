// Package confirm is the confirmations domain (seed 004 §3): a workflow asks
// a person before a sensitive action with a .waitForTaskToken Task on
// ConfirmFunction; the person approves or rejects through
// /api/confirmations (or "veredicto confirm"), which resumes the workflow
// with SendTaskSuccess or fails its Task with ConfirmationRejected.
//
// Every confirmation is stored per tenant with its task token, which stays
// server-side: clients only ever see the confirmation's id, derived from
// the token by a hash.
package confirm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/smithy-go"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/eventlog"
)

// Status of a confirmation.
const (
	StatusPending = "pending"
	// StatusResolving: a decision is recorded and being delivered to the
	// workflow; a later POST (or Redeliver) finishes the delivery.
	StatusResolving = "resolving"
	StatusApproved  = "approved"
	StatusRejected  = "rejected"
	// StatusExpired: the workflow stopped waiting (Task TimeoutSeconds,
	// or the execution ended) before a decision reached it.
	StatusExpired = "expired"
)

// DefaultTimeout is how long a confirmation waits when the request does
// not say: the default TimeoutSeconds of a confirmation Task.
const DefaultTimeout = 7 * 24 * time.Hour

// Bounds.
const (
	MaxPreviewBytes = 32 << 10
	MaxCommentBytes = 2000
	MaxTokenBytes   = 1024 // Step Functions task tokens are at most 1024 characters
	MaxList         = 500
	// deliveryLease bounds one SendTask attempt: no second delivery of the
	// same decision starts before it lapses.
	deliveryLease = 30 * time.Second
	// Retention is how long a resolved confirmation is kept (DynamoDB TTL,
	// pruned locally).
	Retention   = 30 * 24 * time.Hour
	MaxKeyBytes = 512
)

// DeliveryNextRun marks a decision that no waiting task received: it was
// taken on a keyed confirmation no execution was waiting for, and the next
// execution that asks the same question (same key and preview) applies it.
const DeliveryNextRun = "next_run"

// DeliveryPolled marks a decision on a chat turn's confirmation (its
// execution is the conversation's stream, chat/<id>): the waiting turn
// reads it from the store; no task token carries it.
const DeliveryPolled = "polled"

// Request is ConfirmFunction's input: the Payload of a
// "arn:aws:states:::lambda:invoke.waitForTaskToken" Task.
type Request struct {
	TaskToken   string          `json:"task_token"`
	ToolName    string          `json:"toolName"`
	Category    string          `json:"category"`
	Sensitivity string          `json:"sensitivity"`
	Undoable    *bool           `json:"undoable"`
	Preview     json.RawMessage `json:"preview"`
	// Tenant defaults to "default".
	Tenant string `json:"tenant,omitempty"`
	// Execution is the execution ARN ("execution.$": "$$.Execution.Id");
	// the local engine supplies it when absent.
	Execution string `json:"execution,omitempty"`
	// TimeoutSeconds should repeat the Task's TimeoutSeconds, so the
	// confirmation shows as expired when the workflow stops waiting.
	TimeoutSeconds int64 `json:"timeout_seconds,omitempty"`
	// Key names the question rather than one wait for its answer (e.g.
	// "senior_review/<search>/<candidate>"). With a key the id derives
	// from the tenant, the key and the preview, so every execution asking
	// the same question about the same preview finds one record, and a
	// decision taken once applies to all of them. The task token is then
	// optional: without one (a plain lambda:invoke) the request records the
	// question and its Response carries any decision already taken; with
	// one, the waiting task is attached to that record.
	Key string `json:"key,omitempty"`
}

// Response is ConfirmFunction's output. Step Functions ignores it (the
// Task waits for the token), but it names the confirmation in logs and in
// "lambda invoke".
type Response struct {
	ID      string `json:"id"`
	Created bool   `json:"created"`
	// Status and Decision: the record's state after the request (pending,
	// or for a keyed question already answered, approved or rejected with
	// the decision; null otherwise).
	Status   string    `json:"status"`
	Decision *Decision `json:"decision"`
}

// Decision is what a person decided.
type Decision struct {
	Approved  bool      `json:"approved"`
	DecidedBy string    `json:"decided_by"`
	DecidedAt time.Time `json:"decided_at"`
	Comment   string    `json:"comment,omitempty"`
}

// Record is a stored confirmation, token included. Version increases by
// one with every write; stores write conditionally on it.
type Record struct {
	ID          string          `json:"id"`
	Tenant      string          `json:"tenant"`
	Execution   string          `json:"execution"`
	ToolName    string          `json:"toolName"`
	Category    string          `json:"category"`
	Sensitivity string          `json:"sensitivity"`
	Undoable    bool            `json:"undoable"`
	Preview     json.RawMessage `json:"preview"`
	CreatedAt   time.Time       `json:"created_at"`
	ExpiresAt   time.Time       `json:"expires_at"`
	Status      string          `json:"status"`
	Decision    *Decision       `json:"decision,omitempty"`
	// Attempts counts deliveries started (SendTask calls about to be made).
	Attempts int `json:"attempts,omitempty"`
	// LeaseUntil: a delivery is under way until then; no other may start
	// (it is released when an attempt fails, and lapses after a crash).
	LeaseUntil time.Time `json:"lease_until,omitzero"`
	// Delivery is "unconfirmed" when a redelivery found the token used and
	// an earlier attempt may have delivered the decision, DeliveryNextRun
	// when no task was waiting for it.
	Delivery string `json:"delivery,omitempty"`
	// Key is the question a keyed confirmation answers (Request.Key).
	Key string `json:"key,omitempty"`
	// Resolver names the process that delivers decisions to this record's
	// task when that is not a Step Functions API (a "veredicto search run
	// --review" waiting in its own engine: Service.Resolver); empty for
	// serve and AWS.
	Resolver   string    `json:"resolver,omitempty"`
	ResolvedAt time.Time `json:"resolved_at,omitzero"`
	TaskToken  string    `json:"task_token"`
	Version    int       `json:"version"`
}

// View is a confirmation as clients see it: never the task token.
type View struct {
	ID          string          `json:"id"`
	Execution   string          `json:"execution"`
	ToolName    string          `json:"toolName"`
	Category    string          `json:"category"`
	Sensitivity string          `json:"sensitivity"`
	Undoable    bool            `json:"undoable"`
	Preview     json.RawMessage `json:"preview"`
	CreatedAt   time.Time       `json:"created_at"`
	ExpiresAt   time.Time       `json:"expires_at"`
	Status      string          `json:"status"`
	Approved    *bool           `json:"approved,omitempty"`
	DecidedBy   string          `json:"decided_by,omitempty"`
	DecidedAt   *time.Time      `json:"decided_at,omitempty"`
	Comment     string          `json:"comment,omitempty"`
	Delivery    string          `json:"delivery,omitempty"`
	Resolver    string          `json:"resolver,omitempty"`
}

// View returns what clients see of r at now (a pending confirmation past
// its expiry shows as expired).
func (r Record) View(now time.Time) View {
	v := View{ID: r.ID, Execution: r.Execution, ToolName: r.ToolName, Category: r.Category,
		Sensitivity: r.Sensitivity, Undoable: r.Undoable, Preview: r.Preview,
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, Status: r.Status, Delivery: r.Delivery, Resolver: r.Resolver}
	if r.Status == StatusPending && !now.Before(r.ExpiresAt) {
		v.Status = StatusExpired
	}
	if d := r.Decision; d != nil && r.Status != StatusExpired {
		v.Approved, v.DecidedBy, v.DecidedAt, v.Comment = &d.Approved, d.DecidedBy, &d.DecidedAt, d.Comment
	}
	return v
}

// Store keeps confirmations, keyed by tenant and id.
type Store interface {
	// Get returns a confirmation; a *veredicto.NotFoundError when the
	// tenant has none with that id.
	Get(ctx context.Context, tenant, id string) (Record, error)
	// List returns the tenant's open confirmations (Open at now), oldest
	// first (by CreatedAt, then id), at most limit (MaxList when limit is
	// not in 1–MaxList); more reports open ones past them or left unread.
	List(ctx context.Context, tenant string, now time.Time, limit int) (recs []Record, more bool, err error)
	// Put writes r with Version expect+1 if the stored version is expect
	// (0: absent), else returns a *veredicto.ConflictError.
	Put(ctx context.Context, r Record, expect int) error
}

// Appender appends to the event log.
type Appender interface {
	Append(ctx context.Context, tenant, stream string, ev eventlog.Event) (eventlog.Event, error)
}

// TaskSender resumes waiting Tasks: the methods of the aws-sdk-go-v2 sfn
// client, so the real client serves in AWS and against "veredicto serve".
type TaskSender interface {
	SendTaskSuccess(ctx context.Context, in *sfn.SendTaskSuccessInput, optFns ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error)
	SendTaskFailure(ctx context.Context, in *sfn.SendTaskFailureInput, optFns ...func(*sfn.Options)) (*sfn.SendTaskFailureOutput, error)
}

var _ TaskSender = (*sfn.Client)(nil)

// Service creates and resolves confirmations. Its fields are set once;
// it is safe for concurrent use.
type Service struct {
	Store  Store
	Events Appender
	// Tasks is needed to resolve, not to create.
	Tasks  TaskSender
	Now    func() time.Time
	Logger *slog.Logger
	// Resolver, when set, names this process as the one that delivers
	// decisions to the tasks it creates confirmations for (its own
	// engine): Resolve elsewhere records the decision and leaves its
	// delivery to this process's Redeliver (Record.Resolver).
	Resolver string
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Service) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// ExpiredError is a confirmation whose workflow stopped waiting.
type ExpiredError struct{ ID string }

func (e *ExpiredError) Error() string {
	return "confirmation " + e.ID + " expired: its workflow stopped waiting (timeout or end of execution)"
}

var (
	namePattern   = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)
	tenantPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
	idPattern     = regexp.MustCompile(`^cf_[0-9a-f]{32}$`)
)

// ValidID reports whether id has the shape of a confirmation id.
func ValidID(id string) bool { return idPattern.MatchString(id) }

// IDFor derives a confirmation's id from its tenant and task token, so a
// retried ConfirmFunction invoke lands on the same record.
func IDFor(tenant, token string) string {
	sum := sha256.Sum256([]byte(tenant + "\x00" + token))
	return "cf_" + hex.EncodeToString(sum[:16])
}

func bad(field, problem string) error {
	return &veredicto.InvalidInputError{File: "ConfirmFunction payload", Field: field, Problem: problem}
}

// KeyID derives a keyed confirmation's id from its tenant, key and
// preview (compared as JSON values, so key order and spacing do not
// matter).
func KeyID(tenant, key string, preview json.RawMessage) string {
	canon := []byte(preview)
	var v any
	if json.Unmarshal(preview, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			canon = b
		}
	}
	sum := sha256.Sum256(append([]byte(tenant+"\x00key\x00"+key+"\x00"), canon...))
	return "cf_" + hex.EncodeToString(sum[:16])
}

func validKey(k string) bool {
	return len(k) <= MaxKeyBytes && utf8.ValidString(k) && strings.IndexFunc(k, unicode.IsControl) < 0
}

// validate checks every field of the request and fills defaults.
func (s *Service) validate(ctx context.Context, in *Request) error {
	switch {
	case in.Key != "" && !validKey(in.Key):
		return bad("key", fmt.Sprintf("must be at most %d bytes of UTF-8 text without control characters", MaxKeyBytes))
	case in.TaskToken == "" && in.Key == "":
		return bad("task_token", `is required ("task_token.$": "$$.Task.Token") unless a key is given`)
	case len(in.TaskToken) > MaxTokenBytes:
		return bad("task_token", fmt.Sprintf("is longer than %d characters", MaxTokenBytes))
	case !namePattern.MatchString(in.ToolName):
		return bad("toolName", "is required: 1-64 letters, digits or _.:-")
	case !namePattern.MatchString(in.Category):
		return bad("category", "is required: 1-64 letters, digits or _.:- (e.g. data_write, email_send, decision)")
	case in.Sensitivity != "low" && in.Sensitivity != "medium" && in.Sensitivity != "high":
		return bad("sensitivity", "must be low, medium or high")
	case in.Undoable == nil:
		return bad("undoable", "is required (true or false)")
	case len(in.Preview) == 0 || string(in.Preview) == "null":
		return bad("preview", "is required: what the person is asked to confirm")
	case len(in.Preview) > MaxPreviewBytes:
		return bad("preview", fmt.Sprintf("is %d bytes, over %d", len(in.Preview), MaxPreviewBytes))
	case in.Tenant != "" && !tenantPattern.MatchString(in.Tenant):
		return bad("tenant", "must be 1-64 letters, digits or _.-")
	case len(in.Execution) > 2048:
		return bad("execution", "is longer than 2048 characters")
	case in.TimeoutSeconds < 0 || in.TimeoutSeconds > 366*24*3600:
		return bad("timeout_seconds", "must be between 0 (default: 7 days) and one year")
	}
	if in.Tenant == "" {
		in.Tenant = "default"
	}
	if in.Execution == "" {
		if ti, ok := asl.TaskFromContext(ctx); ok {
			in.Execution = ti.ExecutionID
		}
	}
	if in.Execution == "" {
		return bad("execution", `is required on AWS ("execution.$": "$$.Execution.Id")`)
	}
	return nil
}

// Confirm is ConfirmFunction: it stores a pending confirmation (once per
// task token, however often Step Functions invokes it) and announces it on
// the execution's event stream.
func (s *Service) Confirm(ctx context.Context, in Request) (Response, error) {
	if err := s.validate(ctx, &in); err != nil {
		return Response{}, err
	}
	now := s.now()
	timeout := DefaultTimeout
	if in.TimeoutSeconds > 0 {
		timeout = time.Duration(in.TimeoutSeconds) * time.Second
	}
	rec := Record{
		ID: IDFor(in.Tenant, in.TaskToken), Tenant: in.Tenant, Execution: in.Execution,
		ToolName: in.ToolName, Category: in.Category, Sensitivity: in.Sensitivity,
		Undoable: *in.Undoable, Preview: in.Preview, CreatedAt: now, ExpiresAt: now.Add(timeout),
		Status: StatusPending, TaskToken: in.TaskToken, Key: in.Key,
	}
	if in.Key != "" {
		rec.ID = KeyID(in.Tenant, in.Key, in.Preview)
	}
	if in.TaskToken != "" {
		rec.Resolver = s.Resolver
	}
	created := true
	if err := s.Store.Put(ctx, rec, 0); err != nil {
		var ce *veredicto.ConflictError
		if !errors.As(err, &ce) {
			return Response{}, &veredicto.TransientError{Op: "store confirmation " + rec.ID, Err: err}
		}
		// A retried invoke (the first one stored it), or a keyed question
		// asked before.
		if rec, err = s.Store.Get(ctx, in.Tenant, rec.ID); err != nil {
			return Response{}, &veredicto.TransientError{Op: "read confirmation " + rec.ID, Err: err}
		}
		created = false
		if in.Key != "" {
			if rec, err = s.rejoin(ctx, rec, in, now, timeout); err != nil {
				return Response{}, err
			}
		}
	}
	if rec.Status != StatusPending {
		// A keyed question already answered: nothing waits, nothing to announce.
		s.logger().InfoContext(ctx, "confirmation already decided", "confirmation_id", rec.ID, "tenant", rec.Tenant,
			"execution", in.Execution, "status", rec.Status)
		return Response{ID: rec.ID, Status: rec.Status, Decision: rec.Decision}, nil
	}
	// Appended even when the record existed: a crash between the two
	// writes must not lose the event; its key makes it appear once.
	if err := s.emit(ctx, rec, eventlog.TypePendingConfirmation, "pending:"+rec.ID, pendingEvent(rec)); err != nil {
		return Response{}, &veredicto.TransientError{Op: "announce confirmation " + rec.ID, Err: err}
	}
	s.logger().InfoContext(ctx, "confirmation pending", "confirmation_id", rec.ID, "tenant", rec.Tenant,
		"execution", rec.Execution, "tool", rec.ToolName, "sensitivity", rec.Sensitivity, "created", created)
	return Response{ID: rec.ID, Created: created, Status: rec.Status}, nil
}

// rejoin is a keyed request meeting the record of its question:
//   - answered (approved or rejected): returned as is, for the caller to
//     apply; a task token cannot wait for it (ConflictError: look it up);
//   - decided but never delivered (resolving) and asked by another
//     execution: the execution that was to receive it is gone, so the
//     decision is final here (DeliveryNextRun) and the asker applies it;
//   - pending or expired: taken over by the asking execution, with its
//     task token if it waits (replacing a token whose task no longer
//     waits), a new expiry, and any earlier token dropped.
//
// Every write is conditional on the version read, so two executions
// cannot both take a record over unnoticed.
func (s *Service) rejoin(ctx context.Context, rec Record, in Request, now time.Time, timeout time.Duration) (Record, error) {
	decided := func() error {
		if in.TaskToken == "" {
			return nil
		}
		return &veredicto.ConflictError{What: "confirmation " + rec.ID, Problem: "already " + rec.Status + "; look it up without a task token to apply the decision"}
	}
	switch rec.Status {
	case StatusApproved, StatusRejected:
		return rec, decided()
	case StatusResolving:
		if rec.Execution == in.Execution {
			return rec, nil // a retried invoke of the execution that waits
		}
		rec.Status, rec.Delivery, rec.ResolvedAt, rec.LeaseUntil = StatusRejected, DeliveryNextRun, now, time.Time{}
		if rec.Decision.Approved {
			rec.Status = StatusApproved
		}
		if err := s.put(ctx, &rec); err != nil {
			return rec, err
		}
		return rec, decided()
	}
	if rec.Status == StatusPending && rec.Execution == in.Execution && rec.TaskToken == in.TaskToken {
		return rec, nil // a retried invoke
	}
	rec.Status, rec.Decision, rec.Delivery, rec.Attempts = StatusPending, nil, "", 0
	rec.Execution, rec.TaskToken, rec.Resolver = in.Execution, in.TaskToken, ""
	if in.TaskToken != "" {
		rec.Resolver = s.Resolver
	}
	rec.ExpiresAt, rec.ResolvedAt, rec.LeaseUntil = now.Add(timeout), time.Time{}, time.Time{}
	if err := s.put(ctx, &rec); err != nil {
		return rec, err
	}
	return rec, nil
}

type pending struct {
	ID          string          `json:"id"`
	Execution   string          `json:"execution"`
	ToolName    string          `json:"toolName"`
	Category    string          `json:"category"`
	Sensitivity string          `json:"sensitivity"`
	Undoable    bool            `json:"undoable"`
	Preview     json.RawMessage `json:"preview"`
	CreatedAt   time.Time       `json:"created_at"`
	ExpiresAt   time.Time       `json:"expires_at"`
}

func pendingEvent(r Record) pending {
	return pending{ID: r.ID, Execution: r.Execution, ToolName: r.ToolName, Category: r.Category,
		Sensitivity: r.Sensitivity, Undoable: r.Undoable, Preview: r.Preview, CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt}
}

type resolved struct {
	ID        string     `json:"id"`
	Approved  bool       `json:"approved"`
	Status    string     `json:"status"`
	DecidedBy string     `json:"decided_by,omitempty"`
	DecidedAt *time.Time `json:"decided_at,omitempty"`
	Comment   string     `json:"comment,omitempty"`
}

func (s *Service) emit(ctx context.Context, r Record, typ, key string, v any) error {
	if s.Events == nil {
		return nil
	}
	ev, err := eventlog.New(typ, key, v)
	if err != nil {
		return err
	}
	if _, err = s.Events.Append(ctx, r.Tenant, r.Execution, ev); err != nil {
		return err
	}
	// An execution a conversation started reports its confirmations on
	// the conversation's stream too (seed 004: one stream); the same key
	// keeps a retried emit single there as well.
	if origin := s.originOf(ctx, r); origin != "" {
		_, err = s.Events.Append(ctx, r.Tenant, origin, ev)
	}
	return err
}

// originReader reads the origin stream (eventlog.File and eventlog.Dynamo
// do).
type originReader interface {
	Read(ctx context.Context, tenant, stream string, after int64, limit int) ([]eventlog.Event, error)
}

// originOf is the stream that started r's execution ("" for none).
func (s *Service) originOf(ctx context.Context, r Record) string {
	rd, ok := s.Events.(originReader)
	if !ok || r.Execution == "" {
		return ""
	}
	evs, err := rd.Read(ctx, r.Tenant, eventlog.OriginStream(r.Execution), 0, 1)
	if err != nil || len(evs) == 0 || evs[0].Type != eventlog.TypeOrigin {
		return ""
	}
	var o struct {
		Stream string `json:"stream"`
	}
	if json.Unmarshal(evs[0].Data, &o) != nil || o.Stream == r.Execution {
		return ""
	}
	return o.Stream
}

// List returns the tenant's confirmations awaiting a decision or its
// delivery, oldest first, at most MaxList; more reports others past them
// (they show once older ones are decided). Expired ones are left out.
func (s *Service) List(ctx context.Context, tenant string) (views []View, more bool, err error) {
	now := s.now()
	recs, more, err := s.Store.List(ctx, tenant, now, MaxList)
	if err != nil {
		return nil, false, &veredicto.TransientError{Op: "list confirmations", Err: err}
	}
	views = make([]View, 0, len(recs))
	for _, r := range recs {
		views = append(views, r.View(now))
	}
	return views, more, nil
}

// Open reports whether r still awaits a decision (pending and not
// expired at now) or the delivery of one (resolving).
func (r Record) Open(now time.Time) bool {
	return r.Status == StatusResolving || r.Status == StatusPending && now.Before(r.ExpiresAt)
}

// endedAt is when r stopped being open: its resolution, or the expiry of
// a pending confirmation nobody decided (zero while it is open). Stores
// keep a confirmation for Retention after it.
func (r Record) endedAt() time.Time {
	if !r.ResolvedAt.IsZero() {
		return r.ResolvedAt
	}
	if r.Status == StatusPending {
		return r.ExpiresAt
	}
	return time.Time{}
}

// listLimit is a Store's page size for a List limit.
func listLimit(limit int) int {
	if limit <= 0 || limit > MaxList {
		return MaxList
	}
	return limit
}

// firstOpen sorts the open records of rs oldest first and keeps at most
// limit; more reports whether it cut any.
func firstOpen(rs []Record, now time.Time, limit int) ([]Record, bool) {
	open := rs[:0:0]
	for _, r := range rs {
		if r.Open(now) {
			open = append(open, r)
		}
	}
	sort.Slice(open, func(i, j int) bool {
		if !open[i].CreatedAt.Equal(open[j].CreatedAt) {
			return open[i].CreatedAt.Before(open[j].CreatedAt)
		}
		return open[i].ID < open[j].ID
	})
	if limit = listLimit(limit); len(open) > limit {
		return open[:limit], true
	}
	return open, false
}

// Resolution is a person's answer to one confirmation.
type Resolution struct {
	ID       string
	Approved bool
	Comment  string
	// By names who decided (the token's subject, the CLI user).
	By string
}

// Resolve records a decision and delivers it to the waiting workflow,
// exactly once:
//
//  1. the decision is written first (pending → resolving, conditional on
//     the version read), so two concurrent POSTs cannot both win and a
//     crash after this point does not lose the decision;
//  2. the attempt counter and a short delivery lease are written
//     (conditional) before each SendTask call, so two deliveries never run
//     at once;
//  3. SendTaskSuccess / SendTaskFailure is called;
//  4. the outcome is written (resolving → approved | rejected | expired).
//
// confirmation-resolved is appended between 2 and 3 (keyed, so once
// however often delivery is retried): the stream shows the decision before
// anything the resumed workflow does.
//
// If SendTask fails for a transient reason the record stays resolving and
// Resolve returns a TransientError; the same POST again (or Redeliver)
// resumes at step 2 with the recorded decision, not a new one. A task token
// is accepted by Step Functions once, so a redelivery can never resume the
// workflow twice. If a redelivery finds the token already used (TaskTimedOut
// / InvalidToken), an earlier attempt may have reached the workflow just
// before a crash: the decision is kept and marked delivery "unconfirmed".
// On the first attempt the same answer means the workflow stopped waiting:
// the confirmation is expired (ExpiredError, HTTP 410).
func (s *Service) Resolve(ctx context.Context, tenant string, res Resolution) (View, error) {
	if !ValidID(res.ID) {
		return View{}, &veredicto.NotFoundError{What: "confirmation " + res.ID}
	}
	if len(res.Comment) > MaxCommentBytes {
		return View{}, &veredicto.InvalidInputError{Field: "comment", Problem: fmt.Sprintf("is longer than %d bytes", MaxCommentBytes)}
	}
	for attempt := 1; ; attempt++ {
		view, again, err := s.resolveOnce(ctx, tenant, res)
		if !again || attempt == maxResolveAttempts {
			return view, err
		}
	}
}

// maxResolveAttempts bounds how often Resolve reads a pending confirmation
// again after another writer changed it under it.
const maxResolveAttempts = 3

// resolveOnce is one read-decide-write of Resolve. again reports that the
// record changed between the read and the write while it was pending (the
// workflow asking the same keyed question again with its task token, or
// another decision): reading it again shows which.
func (s *Service) resolveOnce(ctx context.Context, tenant string, res Resolution) (view View, again bool, err error) {
	rec, err := s.Store.Get(ctx, tenant, res.ID)
	if err != nil {
		return View{}, false, err
	}
	now := s.now()
	switch rec.Status {
	case StatusPending:
		if !now.Before(rec.ExpiresAt) {
			rec.Status, rec.ResolvedAt = StatusExpired, now
			if err := s.Store.Put(ctx, rec, rec.Version); err != nil {
				var ce *veredicto.ConflictError
				return View{}, errors.As(err, &ce), err
			}
			s.emitResolved(ctx, rec)
			return View{}, false, &ExpiredError{ID: rec.ID}
		}
		rec.Status = StatusResolving
		rec.Decision = &Decision{Approved: res.Approved, DecidedBy: res.By, DecidedAt: now, Comment: res.Comment}
		if err := s.put(ctx, &rec); err != nil {
			var ce *veredicto.ConflictError
			return View{}, errors.As(err, &ce), err // changed under us: read it again
		}
		s.logger().InfoContext(ctx, "confirmation decided", "confirmation_id", rec.ID, "tenant", tenant, "approved", res.Approved)
		view, err := s.handOver(ctx, rec)
		return view, false, err
	case StatusResolving:
		d := rec.Decision
		if d.Approved != res.Approved || d.DecidedBy != res.By {
			return View{}, false, conflict(rec)
		}
		view, err := s.handOver(ctx, rec) // the same decision again: finish delivering it
		return view, false, err
	case StatusExpired:
		return View{}, false, &ExpiredError{ID: rec.ID}
	default:
		s.emitResolved(ctx, rec) // in case a crash lost it; keyed, so once
		return View{}, false, conflict(rec)
	}
}

func conflict(r Record) error {
	d := r.Decision
	verb := "rejected"
	if d.Approved {
		verb = "approved"
	}
	return &veredicto.ConflictError{What: "confirmation " + r.ID,
		Problem: fmt.Sprintf("already %s by %s at %s", verb, d.DecidedBy, d.DecidedAt.Format(time.RFC3339))}
}

// put writes rec conditionally on its version and bumps it.
func (s *Service) put(ctx context.Context, rec *Record) error {
	if err := s.Store.Put(ctx, *rec, rec.Version); err != nil {
		return err
	}
	rec.Version++
	return nil
}

// handOver takes a recorded decision (status resolving) to its task: no
// task waits for a keyed confirmation without a token, so the decision is
// final and applies when the question is asked again (DeliveryNextRun);
// another process's task is left to that process (Record.Resolver: the
// record stays resolving until its Redeliver); otherwise deliver.
func (s *Service) handOver(ctx context.Context, rec Record) (View, error) {
	switch {
	case rec.TaskToken == "":
		now := s.now()
		rec.Status, rec.Delivery, rec.ResolvedAt = StatusRejected, DeliveryNextRun, now
		if strings.HasPrefix(rec.Execution, "chat/") {
			rec.Delivery = DeliveryPolled
		}
		if rec.Decision.Approved {
			rec.Status = StatusApproved
		}
		if err := s.put(ctx, &rec); err != nil {
			return View{}, err
		}
		s.emitResolved(ctx, rec)
		s.logger().InfoContext(ctx, "confirmation resolved", "confirmation_id", rec.ID, "tenant", rec.Tenant, "status", rec.Status, "delivery", rec.Delivery)
		return rec.View(now), nil
	case rec.Resolver != "" && rec.Resolver != s.Resolver:
		return rec.View(s.now()), nil
	}
	return s.deliver(ctx, rec)
}

// Redeliver finishes the delivery of a recorded decision (a confirmation
// left resolving by a crash or a failed SendTask).
func (s *Service) Redeliver(ctx context.Context, tenant, id string) (View, error) {
	rec, err := s.Store.Get(ctx, tenant, id)
	if err != nil {
		return View{}, err
	}
	if rec.Status != StatusResolving {
		return rec.View(s.now()), nil
	}
	return s.deliver(ctx, rec)
}

func (s *Service) deliver(ctx context.Context, rec Record) (View, error) {
	if s.Tasks == nil {
		return View{}, errors.New("confirm: no TaskSender configured")
	}
	if start := s.now(); start.Before(rec.LeaseUntil) {
		return View{}, &veredicto.ConflictError{What: "confirmation " + rec.ID, Problem: "its decision is being delivered; retry shortly"}
	}
	rec.Attempts++
	rec.LeaseUntil = s.now().Add(deliveryLease)
	if err := s.put(ctx, &rec); err != nil {
		return View{}, err
	}
	// The decision is announced before the workflow resumes, so the stream
	// shows it ahead of what the workflow does next (and before its finish,
	// after which the stream closes). Keyed: a redelivery does not repeat it.
	s.emitResolved(ctx, rec)
	d := rec.Decision
	var err error
	if d.Approved {
		out, _ := json.Marshal(map[string]any{"approved": true, "decided_by": d.DecidedBy, "decided_at": d.DecidedAt, "comment": d.Comment})
		_, err = s.Tasks.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: &rec.TaskToken, Output: ptr(string(out))})
	} else {
		cause, _ := json.Marshal(map[string]any{"id": rec.ID, "approved": false, "decided_by": d.DecidedBy, "decided_at": d.DecidedAt, "comment": d.Comment})
		_, err = s.Tasks.SendTaskFailure(ctx, &sfn.SendTaskFailureInput{TaskToken: &rec.TaskToken,
			Error: ptr(veredicto.NameConfirmationRejected), Cause: ptr(string(cause))})
	}
	now := s.now()
	switch {
	case err == nil:
		rec.Status = StatusRejected
		if d.Approved {
			rec.Status = StatusApproved
		}
	case tokenGone(err) && rec.Attempts > 1:
		rec.Status, rec.Delivery = StatusRejected, "unconfirmed"
		if d.Approved {
			rec.Status = StatusApproved
		}
	case tokenGone(err):
		rec.Status = StatusExpired
	default:
		s.logger().WarnContext(ctx, "confirmation delivery failed; the decision is kept", "confirmation_id", rec.ID, "attempt", rec.Attempts, "error", err)
		rec.LeaseUntil = time.Time{}
		_ = s.put(ctx, &rec) // release the lease; if this fails it lapses
		return View{}, &veredicto.TransientError{Op: "deliver confirmation " + rec.ID + " (decision recorded; retry to deliver it)", Err: err}
	}
	rec.ResolvedAt, rec.LeaseUntil = now, time.Time{}
	if err := s.put(ctx, &rec); err != nil {
		return View{}, err
	}
	if rec.Status == StatusExpired {
		s.emitResolved(ctx, rec) // the decision came too late: say so
	}
	s.logger().InfoContext(ctx, "confirmation resolved", "confirmation_id", rec.ID, "tenant", rec.Tenant, "status", rec.Status, "attempt", rec.Attempts)
	if rec.Status == StatusExpired {
		return View{}, &ExpiredError{ID: rec.ID}
	}
	return rec.View(now), nil
}

// emitResolved appends confirmation-resolved: the decision (status
// approved or rejected, keyed "resolved:<id>") as soon as it is recorded,
// or that the confirmation expired (keyed "expired:<id>"), so each is on
// the stream once. The record is the source of truth: a failed append is
// logged, not returned.
func (s *Service) emitResolved(ctx context.Context, rec Record) {
	ev := resolved{ID: rec.ID, Status: StatusExpired}
	key := "expired:" + rec.ID
	if d := rec.Decision; d != nil && rec.Status != StatusExpired {
		ev.Status, key = StatusRejected, "resolved:"+rec.ID
		if d.Approved {
			ev.Status = StatusApproved
		}
		ev.Approved, ev.DecidedBy, ev.DecidedAt, ev.Comment = d.Approved, d.DecidedBy, &d.DecidedAt, d.Comment
	}
	if err := s.emit(ctx, rec, eventlog.TypeConfirmationResolved, key, ev); err != nil {
		s.logger().ErrorContext(ctx, "cannot append confirmation-resolved", "confirmation_id", rec.ID, "error", err)
	}
}

// tokenGone reports whether Step Functions refused the token because its
// task no longer waits (timed out, execution ended, token used).
func tokenGone(err error) bool {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "TaskTimedOut", "InvalidToken", "TaskDoesNotExist":
			return true
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }

// ExpireExecution expires the pending confirmations whose task waited in
// the execution executionARN, which has ended (stopped, failed, or went on
// without them): nobody should be asked to decide for a task that no longer
// waits. Confirmations without a task token (a keyed question a later run
// applies) stay. It returns how many it expired; each is announced on the
// event log like any expiry.
func (s *Service) ExpireExecution(ctx context.Context, tenant, executionARN string) (int, error) {
	now := s.now()
	recs, _, err := s.Store.List(ctx, tenant, now, MaxList)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, rec := range recs {
		if rec.Execution != executionARN || rec.Status != StatusPending || rec.TaskToken == "" {
			continue
		}
		rec.Status, rec.ResolvedAt = StatusExpired, now
		if err := s.Store.Put(ctx, rec, rec.Version); err != nil {
			var ce *veredicto.ConflictError
			if !errors.As(err, &ce) { // a concurrent decision or re-ask won: leave it to that
				errs = append(errs, fmt.Errorf("confirmation %s: %w", rec.ID, err))
			}
			continue
		}
		s.emitResolved(ctx, rec)
		n++
	}
	return n, errors.Join(errs...)
}

// RedeliverAll finishes, for each tenant, the deliveries this process owns
// (Record.Resolver) that a crash or a failed SendTask left resolving: the
// decision was recorded, the waiting task never heard it. A server calls it
// once it can take SendTask calls again, after a restart. It returns how
// many decisions it delivered; errors are per confirmation and joined.
func (s *Service) RedeliverAll(ctx context.Context, tenants []string) (int, error) {
	delivered := 0
	var errs []error
	for _, tenant := range tenants {
		recs, more, err := s.Store.List(ctx, tenant, s.now(), MaxList)
		if err != nil {
			errs = append(errs, fmt.Errorf("tenant %q: %w", tenant, err))
			continue
		}
		if more {
			s.logger().WarnContext(ctx, "more open confirmations than one pass reads; deliveries among the newer ones wait for a later start", "tenant", tenant, "read", len(recs))
		}
		for _, r := range recs {
			if r.Status != StatusResolving || r.Resolver != s.Resolver {
				continue
			}
			v, err := s.Redeliver(ctx, tenant, r.ID)
			if err != nil {
				errs = append(errs, fmt.Errorf("confirmation %s: %w", r.ID, err))
				continue
			}
			if v.Status != StatusResolving {
				delivered++
			}
		}
	}
	return delivered, errors.Join(errs...)
}
