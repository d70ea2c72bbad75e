package chat

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/veredicto/veredicto/internal/awsretry"
	"github.com/veredicto/veredicto/internal/stream"
)

// On AWS no process follows a linked workflow: Step Functions puts each
// change of an execution's status on EventBridge ("Step Functions
// Execution Status Change"), and ChatLinkFunction hands those of the
// project's machines to Links.HandleStatusChange, which says them in the
// conversations linked to the execution: its start as a progress step,
// its end as the linked-finished message serve's follower says. Step
// Functions emits nothing for a state, so on AWS a conversation's
// progress of a linked workflow is these status changes plus the
// confirmations it waits on (the execution's origin brings those).

// StatusChangeDetailType is the detail-type of the events HandleStatusChange
// takes.
const StatusChangeDetailType = "Step Functions Execution Status Change"

// StatusChangeEvent is the EventBridge event Step Functions sends when an
// execution changes status. Detail (a StatusChange) is decoded by the
// handler, so that a detail it cannot read is dropped and logged, not
// retried: it would fail the same way again.
type StatusChangeEvent struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Account    string          `json:"account"`
	Time       string          `json:"time"`
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

// StatusChange is the detail of a StatusChangeEvent: the execution as
// DescribeExecution shows it. Input and Output are JSON text, null when
// over EventBridge's size bound (InputDetails/OutputDetails say so);
// Error is the error's name, Cause its text (never read here: it may
// quote the documents).
type StatusChange struct {
	ExecutionARN        string       `json:"executionArn"`
	StateMachineARN     string       `json:"stateMachineArn"`
	Name                string       `json:"name"`
	Status              string       `json:"status"`
	StartDate           int64        `json:"startDate"`
	StopDate            *int64       `json:"stopDate"`
	Input               *string      `json:"input"`
	InputDetails        *DataDetails `json:"inputDetails"`
	Output              *string      `json:"output"`
	OutputDetails       *DataDetails `json:"outputDetails"`
	Error               *string      `json:"error"`
	Cause               *string      `json:"cause"`
	RedriveCount        int          `json:"redriveCount"`
	RedriveDate         *int64       `json:"redriveDate"`
	RedriveStatus       string       `json:"redriveStatus"`
	RedriveStatusReason string       `json:"redriveStatusReason"`
}

// ended reports whether the execution has ended as c describes it: not
// running, not waiting for a redrive (nor unknown).
func (c StatusChange) ended() bool {
	return c.Status != "" && c.Status != "RUNNING" && c.Status != "PENDING_REDRIVE"
}

// DataDetails says whether an execution's input or output is included.
type DataDetails struct {
	Included bool `json:"included"`
}

// tenant is the tenant the execution's input names ("" when none: an
// operator's own run is nobody's conversation).
func (c StatusChange) tenant() string {
	var in struct {
		Tenant string `json:"tenant"`
	}
	if c.Input == nil || json.Unmarshal([]byte(*c.Input), &in) != nil {
		return ""
	}
	return in.Tenant
}

// StatusChangeResult is what HandleStatusChange did: the conversations
// linked to the execution and how many messages it appended to them (0
// for a repeated delivery).
type StatusChangeResult struct {
	Execution string `json:"execution,omitempty"`
	Status    string `json:"status,omitempty"`
	Linked    int    `json:"linked"`
	Said      int    `json:"said"`
}

// HandleStatusChange says an execution's status change in every
// conversation of the execution's tenant linked to it: RUNNING as the
// execution's start (a progress step, within MaxLinkedSteps), SUCCEEDED,
// FAILED, TIMED_OUT and ABORTED as its end, in Spanish, with where its
// report is (the words serve's follower says). EventBridge delivers at
// least once: what the conversation's stream already holds of the link
// (the end, this event's step) is not said again, an ended link is left
// alone, and an event delivered twice at once is appended once (its key).
//
// An execution no conversation started — most — is no error, nor is an
// event whose detail cannot be read (logged, dropped: it would fail the
// same way again); a damaged link is set aside and named in the log.
// A failure to read or write the stores is returned, a *TransientError
// when worth retrying, and Lambda delivers the event again.
func (l *Links) HandleStatusChange(ctx context.Context, ev StatusChangeEvent) (StatusChangeResult, error) {
	log := l.logger().With("event_id", ev.ID)
	var ch StatusChange
	if err := json.Unmarshal(ev.Detail, &ch); err != nil || ch.ExecutionARN == "" || ch.Status == "" {
		problem := "no executionArn or status"
		if err != nil {
			problem = err.Error()
		}
		log.ErrorContext(ctx, "an execution status change that cannot be read is dropped", "detail_type", ev.DetailType, "problem", problem)
		return StatusChangeResult{}, nil
	}
	res := StatusChangeResult{Execution: ch.ExecutionARN, Status: ch.Status}
	log = log.With("execution", ch.ExecutionARN, "status", ch.Status)
	// EventBridge leaves out an input or output over its size bound: the
	// input names the tenant (described at once), a succeeded output
	// whether it escalated (described once a conversation follows it).
	described := false
	describe := func() error {
		d, err := l.Describe(ctx, ch.ExecutionARN)
		if err != nil {
			return boundary(fmt.Errorf("describe %s, whose status change left out its input or output: %w", ch.ExecutionARN, err))
		}
		described = true
		if ch.Input == nil {
			ch.Input = d.Input
		}
		if ch.Output == nil && d.Status == ch.Status {
			ch.Output = d.Output
		}
		return nil
	}
	if l.Describe != nil && ch.Input == nil {
		if err := describe(); err != nil {
			return res, err
		}
	}
	tenant := ch.tenant()
	if tenant == "" && ch.Input == nil {
		log.WarnContext(ctx, "the status change left out the execution's input and nothing describes it: its conversations, if any, are not told")
		return res, nil
	}
	if tenant == "" {
		log.DebugContext(ctx, "the execution's input names no tenant: no conversation follows it")
		return res, nil
	}
	lks, err := l.linkedTo(ctx, tenant, ch.ExecutionARN)
	if err != nil {
		return res, boundary(err)
	}
	if len(lks) == 0 {
		log.DebugContext(ctx, "no conversation follows this execution", "tenant", tenant)
		return res, nil
	}
	res.Linked = len(lks)
	if l.Describe != nil && !described && ch.Status == "SUCCEEDED" && ch.Output == nil {
		if err := describe(); err != nil {
			return res, err
		}
	}
	var errs []error
	for _, lk := range lks {
		said, err := l.statusChanged(ctx, lk, ev.ID, ch)
		res.Said += said
		if said > 0 {
			log.InfoContext(ctx, "an execution's status change said in its conversation", "tenant", tenant, "chat_id", lk.ChatID)
		}
		if err != nil {
			log.WarnContext(ctx, "say an execution's status change in its conversation", "tenant", tenant, "chat_id", lk.ChatID, "error", err)
			errs = append(errs, err)
		}
	}
	return res, boundary(errors.Join(errs...))
}

// boundary names err for Lambda: a store failure worth retrying is a
// *veredicto.TransientError, a typed error keeps its type.
func boundary(err error) error {
	if err == nil {
		return nil
	}
	return awsretry.Classify(err)
}

// linkedTo lists tenant's links to the execution arn, through the index
// Add keeps. Another tenant's links are under another prefix: not found,
// like missing ones. A link that cannot be read or does not say what its
// key says is set aside, named in the log.
func (l *Links) linkedTo(ctx context.Context, tenant, arn string) ([]Link, error) {
	prefix := linkedPrefix(tenant, arn)
	keys, err := l.Store.List(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("list the conversations linked to %s: %w", arn, err)
	}
	var out []Link
	for _, k := range keys {
		chatID, ok := strings.CutSuffix(strings.TrimPrefix(k, prefix), "/linked")
		if !ok || !ValidChatID(chatID) {
			continue
		}
		want := Link{ID: LinkID(tenant, chatID, arn), Tenant: tenant, ChatID: chatID, Execution: arn}
		key := linkKey(want)
		b, found, err := l.Store.Get(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", key, err)
		}
		if !found {
			l.logger().DebugContext(ctx, "an execution's index names a link that is gone", "key", key)
			continue
		}
		var lk Link
		if err := json.Unmarshal(b, &lk); err != nil || lk.ID != want.ID || lk.ChatID != chatID || lk.Execution != arn {
			l.logger().WarnContext(ctx, "a damaged chat link is set aside", "key", key)
			continue
		}
		if lk.Tenant != tenant { // another tenant's is nobody's here
			l.logger().DebugContext(ctx, "a chat link of another tenant is not followed", "key", key)
			continue
		}
		out = append(out, lk)
	}
	return out, nil
}

// statusChanged says one status change in lk's conversation, unless the
// conversation's stream holds it already or lk has ended; said counts the
// messages appended.
func (l *Links) statusChanged(ctx context.Context, lk Link, eventID string, ch StatusChange) (said int, err error) {
	if _, ended, err := l.Store.Get(ctx, linkEndKey(lk)); err != nil || ended {
		return 0, err
	}
	c, err := l.resume(ctx, lk)
	if err != nil {
		return 0, fmt.Errorf("read chat %s: %w", lk.ChatID, err)
	}
	if c.ended != nil { // said, not kept: keep it
		l.keepEnd(ctx, lk, *c.ended)
		return 0, nil
	}
	switch ch.Status {
	case "RUNNING":
		// The start as serve's recorder maps it: ExecutionStarted is
		// the first event of every history.
		st, _ := stream.FromHistory(stream.Event{ID: 1, Type: "ExecutionStarted"})
		key := "x" + lk.ID + ":" + cmp.Or(eventID, fmt.Sprintf("%s-%d-%d", ch.Status, ch.StartDate, ch.RedriveCount))
		if c.keys[key] || c.steps > MaxLinkedSteps {
			return 0, nil
		}
		err = l.copyStep(ctx, lk, st, key, 0, &c.steps)
	case "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED":
		var output json.RawMessage
		if ch.Status == "SUCCEEDED" && ch.Output != nil && json.Valid([]byte(*ch.Output)) {
			output = json.RawMessage(*ch.Output)
		}
		var errName string // never ch.Cause: it may quote the documents
		if ch.Error != nil {
			errName = *ch.Error
		}
		err = l.end(ctx, lk, LinkEnd{Outcome: outcomeOfStatus(ch.Status), Status: ch.Status}, errName, output)
	default: // PENDING_REDRIVE and whatever comes: nothing to say
		return 0, nil
	}
	switch {
	case l.closed(ctx, lk, err):
		return 0, nil
	case err != nil:
		return 0, err
	}
	return 1, nil
}

// Describer describes an execution: the aws-sdk-go-v2 sfn client's
// method.
type Describer interface {
	DescribeExecution(ctx context.Context, in *sfn.DescribeExecutionInput, opts ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error)
}

// DescribeWith is Links.Describe on Step Functions (ChatTurnFunction's
// links and ChatLinkFunction's): the execution as its status change would
// carry it, never the error's cause (it may quote the documents).
func DescribeWith(client Describer) func(context.Context, string) (StatusChange, error) {
	return func(ctx context.Context, arn string) (StatusChange, error) {
		out, err := client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		if err != nil {
			return StatusChange{}, fmt.Errorf("describe execution %s: %w", arn, err)
		}
		return StatusChange{ExecutionARN: arn, StateMachineARN: aws.ToString(out.StateMachineArn), Name: aws.ToString(out.Name),
			Status: string(out.Status), Input: out.Input, Output: out.Output, Error: out.Error}, nil
	}
}
