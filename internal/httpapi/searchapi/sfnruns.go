package searchapi

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/intake"
)

// RunsAPI is the part of the Step Functions client SFNRuns uses.
type RunsAPI interface {
	ListExecutions(ctx context.Context, in *sfn.ListExecutionsInput, optFns ...func(*sfn.Options)) (*sfn.ListExecutionsOutput, error)
	DescribeExecution(ctx context.Context, in *sfn.DescribeExecutionInput, optFns ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error)
}

// Bounds of SFNRuns.
const (
	// MaxListedPerMachine is how many of a machine's most recent
	// executions a listing reads (one ListExecutions page).
	MaxListedPerMachine = 100
	// MaxDescribedPerList bounds the DescribeExecution calls one listing
	// makes for executions whose tenant it has not seen yet; the rest are
	// described by the next listings.
	MaxDescribedPerList = 25
	// maxKnownTenants bounds the tenant cache.
	maxKnownTenants = 10000
	// ListFresh is how long a machine's listing is reused (every tenant's
	// console polls GET /runs; ListExecutions has a small quota).
	ListFresh = 5 * time.Second
)

// SFNRuns lists a tenant's runs of other workflows (the career companion,
// the debate…) from Step Functions for GET /runs on AWS: status and times
// from ListExecutions, the tenant from each execution's input, read once
// per execution (DescribeExecution) and remembered, since it never
// changes. Another tenant's executions are never listed.
type SFNRuns struct {
	Client RunsAPI
	// Machines are the state machine ARNs whose executions are listed.
	Machines []string
	// Now is the clock of running durations (time.Now when nil).
	Now func() time.Time

	mu      sync.Mutex
	tenants map[string]string // execution ARN → tenant ("" when its input names none)
	lists   map[string]listed // machine ARN → its latest listing
}

type listed struct {
	at    time.Time
	execs []types.ExecutionListItem
}

// executions lists a machine's most recent executions, reusing a listing
// younger than ListFresh.
func (s *SFNRuns) executions(ctx context.Context, machine string, now time.Time) ([]types.ExecutionListItem, error) {
	s.mu.Lock()
	l, ok := s.lists[machine]
	s.mu.Unlock()
	if ok && now.Sub(l.at) < ListFresh {
		return l.execs, nil
	}
	page, err := s.Client.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(machine), MaxResults: MaxListedPerMachine})
	if err != nil {
		return nil, &veredicto.TransientError{Op: "list executions of " + machine, Err: err}
	}
	s.mu.Lock()
	if s.lists == nil {
		s.lists = map[string]listed{}
	}
	s.lists[machine] = listed{at: now, execs: page.Executions}
	s.mu.Unlock()
	return page.Executions, nil
}

// ListRuns lists tenant's executions of the machines, newest first.
func (s *SFNRuns) ListRuns(ctx context.Context, tenant string) ([]intake.Run, error) {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	out := []intake.Run{}
	described := 0
	for _, machine := range s.Machines {
		execs, err := s.executions(ctx, machine, now())
		if err != nil {
			return nil, err
		}
		kind := KindOf(machineName(machine))
		for _, e := range execs {
			arn := aws.ToString(e.ExecutionArn)
			t, known := s.tenant(arn)
			if !known {
				if described >= MaxDescribedPerList {
					continue // described by a later listing
				}
				described++
				d, err := s.Client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
				if err != nil {
					return nil, &veredicto.TransientError{Op: "describe execution " + arn, Err: err}
				}
				var in struct {
					Tenant string `json:"tenant"`
				}
				_ = json.Unmarshal([]byte(aws.ToString(d.Input)), &in) // an input without a tenant is nobody's run
				t = in.Tenant
				s.remember(arn, t)
			}
			if t != tenant {
				continue
			}
			r := intake.Run{Kind: kind, ID: aws.ToString(e.Name), Execution: arn, Status: string(e.Status), Decisions: map[string]int{}}
			if e.StartDate != nil {
				r.StartedAt = e.StartDate.UTC().Format(time.RFC3339)
				end := now()
				if e.StopDate != nil {
					end = *e.StopDate
					r.StoppedAt = e.StopDate.UTC().Format(time.RFC3339)
				}
				r.DurationSeconds = end.Sub(*e.StartDate).Round(time.Second).Seconds()
			}
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartedAt > out[j].StartedAt })
	return out, nil
}

func (s *SFNRuns) tenant(arn string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tenants[arn]
	return t, ok
}

func (s *SFNRuns) remember(arn, tenant string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tenants == nil || len(s.tenants) >= maxKnownTenants {
		s.tenants = map[string]string{}
	}
	s.tenants[arn] = tenant
}

// machineName is the name in a state machine ARN
// (arn:…:stateMachine:<name>), or the argument when it is a name.
func machineName(arn string) string {
	if i := strings.LastIndexByte(arn, ':'); i >= 0 {
		return arn[i+1:]
	}
	return arn
}

// KindOf names a state machine's runs for the runs list:
// "CareerCompanionStateMachine" → "career-companion", "GatesDemoStateMachine"
// → "gates-demo". On AWS the machine's name may carry the stack's suffix
// ("DebateStateMachine-Ab12"): it is dropped.
func KindOf(machine string) string {
	if i := strings.Index(machine, "StateMachine"); i >= 0 {
		machine = machine[:i]
	}
	var b strings.Builder
	for i, r := range machine {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('-')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
