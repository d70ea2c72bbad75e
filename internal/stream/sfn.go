package stream

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/eventlog"
)

// ExecutionsAPI is the part of the sfn client the AWS stream uses.
type ExecutionsAPI interface {
	DescribeExecution(ctx context.Context, in *sfn.DescribeExecutionInput, optFns ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error)
	GetExecutionHistory(ctx context.Context, in *sfn.GetExecutionHistoryInput, optFns ...func(*sfn.Options)) (*sfn.GetExecutionHistoryOutput, error)
}

var _ ExecutionsAPI = (*sfn.Client)(nil)

// Reader reads a stream of the event log.
type Reader interface {
	Read(ctx context.Context, tenant, stream string, after int64, limit int) ([]eventlog.Event, error)
}

// Resolver maps an execution parameter (an ARN or a name) to the execution
// ARN whose stream to serve, for the caller's tenant; another tenant's
// execution is a *veredicto.NotFoundError, like a missing one.
type Resolver interface {
	ResolveExecution(ctx context.Context, tenant, ref string) (string, error)
}

// Refresher brings a stream up to date before the handler reads it.
type Refresher interface {
	Refresh(ctx context.Context, tenant, stream string) error
}

// Executions is the AWS side of the stream's executions. As a Resolver it
// accepts an execution ARN or name of one of StateMachines and checks the
// execution belongs to the caller's tenant (the "tenant" field of its
// input, "default" without one), as serve does. As a Refresher it mirrors
// the execution's Step Functions history into the event log through the
// Recorder, so the stream carries execution-step and finish messages on
// AWS too: at most once per MinInterval per stream and Lambda instance,
// and no longer once the execution has ended. Safe for concurrent use.
type Executions struct {
	API           ExecutionsAPI
	Recorder      *Recorder
	Log           Reader
	StateMachines []string
	// MinInterval spaces history reads of one stream (default 2 s):
	// GetExecutionHistory is throttled per account.
	MinInterval time.Duration
	Now         func() time.Time

	mu      sync.Mutex
	mirrors map[string]*mirror // by tenant and ARN; at most maxMirrors
}

type mirror struct {
	mu   sync.Mutex
	seen int64 // highest history id recorded; -1 until read from the log
	at   time.Time
	done bool
}

const (
	maxMirrors     = 1024
	maxHistoryPage = 1000
	// maxHistoryPages bounds one refresh (Step Functions bounds a history
	// at 25 000 events).
	maxHistoryPages = 25
)

var _ Resolver = (*Executions)(nil)
var _ Refresher = (*Executions)(nil)

// ResolveExecution finds ref (an execution ARN or name) among the
// project's state machines for tenant.
func (e *Executions) ResolveExecution(ctx context.Context, tenant, ref string) (string, error) {
	notFound := &veredicto.NotFoundError{What: "execution " + ref}
	var candidates []string
	if strings.HasPrefix(ref, "arn:") {
		for _, sm := range e.StateMachines {
			if MachineOf(ref) == sm {
				candidates = append(candidates, ref)
			}
		}
	} else if ref != "" && !strings.Contains(ref, ":") {
		for _, sm := range e.StateMachines {
			candidates = append(candidates, strings.Replace(sm, ":stateMachine:", ":execution:", 1)+":"+ref)
		}
	}
	for _, arn := range candidates {
		out, err := e.API.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		var missing *types.ExecutionDoesNotExist
		if errors.As(err, &missing) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("describe execution %s: %w", arn, err)
		}
		var in struct {
			Tenant string `json:"tenant"`
		}
		_ = json.Unmarshal([]byte(aws.ToString(out.Input)), &in)
		// An execution whose input names no tenant (an operator's own run)
		// is nobody's here: "default" is a tenant a token can carry.
		if in.Tenant != "" && in.Tenant == tenant {
			return arn, nil
		}
	}
	return "", notFound
}

// MachineOf is the state machine ARN of an execution ARN.
func MachineOf(executionARN string) string {
	i := strings.LastIndex(executionARN, ":")
	if i < 0 {
		return ""
	}
	return strings.Replace(executionARN[:i], ":execution:", ":stateMachine:", 1)
}

func (e *Executions) mirrorOf(key string) *mirror {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.mirrors == nil {
		e.mirrors = map[string]*mirror{}
	}
	m, ok := e.mirrors[key]
	if !ok {
		if len(e.mirrors) >= maxMirrors {
			for k := range e.mirrors {
				delete(e.mirrors, k)
				break
			}
		}
		m = &mirror{seen: -1}
		e.mirrors[key] = m
	}
	return m
}

// Refresh records the history events of executionARN not yet on its stream.
func (e *Executions) Refresh(ctx context.Context, tenant, executionARN string) error {
	m := e.mirrorOf(tenant + "\x00" + executionARN)
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	if e.Now != nil {
		now = e.Now()
	}
	if m.done || (!m.at.IsZero() && now.Sub(m.at) < cmp.Or(e.MinInterval, 2*time.Second)) {
		return nil
	}
	m.at = now
	if m.seen < 0 { // first refresh in this instance: what is recorded already
		seen, err := e.recorded(ctx, tenant, executionARN)
		if err != nil {
			return err
		}
		m.seen = seen
	}
	history, err := e.history(ctx, executionARN)
	if err != nil {
		return err
	}
	for _, ev := range history {
		if int64(ev.ID) > m.seen {
			if err := e.Recorder.Record(ctx, tenant, executionARN, ev); err != nil {
				return err
			}
			m.seen = int64(ev.ID)
		}
		switch ev.Type {
		case "ExecutionSucceeded", "ExecutionFailed", "ExecutionTimedOut", "ExecutionAborted":
			m.done = true
		}
	}
	return nil
}

// recorded is the highest history id on the stream.
func (e *Executions) recorded(ctx context.Context, tenant, stream string) (int64, error) {
	var seen, after int64
	for range maxHistoryPages {
		evs, err := e.Log.Read(ctx, tenant, stream, after, 1000)
		if err != nil {
			return 0, err
		}
		for _, ev := range evs {
			if id, ok := strings.CutPrefix(ev.Key, "h:"); ok {
				if n, err := strconv.ParseInt(id, 10, 64); err == nil && n > seen {
					seen = n
				}
			}
			after = ev.ID
		}
		if len(evs) < 1000 {
			break
		}
	}
	return seen, nil
}

// history reads the whole history of an execution, oldest first, as the
// events FromHistory reads.
func (e *Executions) history(ctx context.Context, arn string) ([]Event, error) {
	var raw []types.HistoryEvent
	in := &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), MaxResults: maxHistoryPage, IncludeExecutionData: aws.Bool(true)}
	for range maxHistoryPages {
		out, err := e.API.GetExecutionHistory(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("history of %s: %w", arn, err)
		}
		raw = append(raw, out.Events...)
		if out.NextToken == nil {
			break
		}
		in.NextToken = out.NextToken
	}
	return FromSFN(raw), nil
}

// FromSFN maps a Step Functions history (oldest first) to Events, as the
// local engine's are mapped, so FromHistory reads both alike: state names follow
// PreviousEventId, retries are counted per state entry, and the Lambda
// function events are read as Task events.
func FromSFN(history []types.HistoryEvent) []Event {
	state := map[int64]string{}    // event id → state name
	entry := map[int64]int64{}     // event id → id of its StateEntered
	attempts := map[int64]int{}    // StateEntered id → schedules so far
	resource := map[int64]string{} // StateEntered id → resource last scheduled
	out := make([]Event, 0, len(history))
	for _, h := range history {
		ev := Event{ID: int(h.Id), Type: string(h.Type), Timestamp: aws.ToTime(h.Timestamp)}
		if d := h.StateEnteredEventDetails; d != nil {
			state[h.Id], entry[h.Id] = aws.ToString(d.Name), h.Id
		} else {
			state[h.Id], entry[h.Id] = state[h.PreviousEventId], entry[h.PreviousEventId]
		}
		ev.State = state[h.Id]
		if strings.HasPrefix(string(h.Type), "Execution") {
			ev.State = ""
		}
		parse := func(s *string) any {
			var v any
			if s != nil && json.Unmarshal([]byte(*s), &v) == nil {
				return v
			}
			return nil
		}
		switch h.Type {
		case types.HistoryEventTypeTaskScheduled, types.HistoryEventTypeLambdaFunctionScheduled:
			ev.Type = "TaskScheduled"
			attempts[entry[h.Id]]++
			ev.Attempt = attempts[entry[h.Id]]
			if d := h.TaskScheduledEventDetails; d != nil {
				ev.Resource = aws.ToString(d.Resource)
				var p struct {
					FunctionName string `json:"FunctionName"`
				}
				if json.Unmarshal([]byte(aws.ToString(d.Parameters)), &p) == nil && p.FunctionName != "" {
					ev.Resource = p.FunctionName
				}
			}
			if d := h.LambdaFunctionScheduledEventDetails; d != nil {
				ev.Resource = aws.ToString(d.Resource)
			}
			resource[entry[h.Id]] = ev.Resource
		case types.HistoryEventTypeTaskSucceeded:
			if d := h.TaskSucceededEventDetails; d != nil {
				ev.Output = parse(d.Output)
			}
		case types.HistoryEventTypeLambdaFunctionSucceeded:
			ev.Type = "TaskSucceeded"
			if d := h.LambdaFunctionSucceededEventDetails; d != nil {
				ev.Output = parse(d.Output)
			}
		case types.HistoryEventTypeTaskFailed:
			if d := h.TaskFailedEventDetails; d != nil {
				ev.Error = aws.ToString(d.Error)
			}
		case types.HistoryEventTypeLambdaFunctionFailed:
			ev.Type = "TaskFailed"
			if d := h.LambdaFunctionFailedEventDetails; d != nil {
				ev.Error = aws.ToString(d.Error)
			}
		case types.HistoryEventTypeTaskTimedOut:
			if d := h.TaskTimedOutEventDetails; d != nil {
				ev.Error = aws.ToString(d.Error)
			}
		case types.HistoryEventTypeLambdaFunctionTimedOut:
			ev.Type = "TaskTimedOut"
			if d := h.LambdaFunctionTimedOutEventDetails; d != nil {
				ev.Error = aws.ToString(d.Error)
			}
		case types.HistoryEventTypeExecutionSucceeded:
			if d := h.ExecutionSucceededEventDetails; d != nil {
				ev.Output = parse(d.Output)
			}
		case types.HistoryEventTypeExecutionFailed:
			if d := h.ExecutionFailedEventDetails; d != nil {
				ev.Error = aws.ToString(d.Error)
			}
		case types.HistoryEventTypeExecutionTimedOut:
			ev.Error = "States.Timeout"
		case types.HistoryEventTypeMapIterationStarted, types.HistoryEventTypeMapIterationSucceeded, types.HistoryEventTypeMapIterationFailed,
			types.HistoryEventTypeMapIterationAborted:
			for _, d := range []*types.MapIterationEventDetails{h.MapIterationStartedEventDetails, h.MapIterationSucceededEventDetails,
				h.MapIterationFailedEventDetails, h.MapIterationAbortedEventDetails} {
				if d != nil {
					i := int(d.Index)
					ev.Index = &i
					ev.State = aws.ToString(d.Name)
				}
			}
		}
		if ev.Resource == "" && ev.State != "" && !strings.HasSuffix(ev.Type, "StateEntered") {
			ev.Resource = resource[entry[h.Id]] // the task's outcome names its function too
		}
		out = append(out, ev)
	}
	return out
}
