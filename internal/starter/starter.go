// Package starter starts and describes executions of a state machine:
// Step Functions in AWS, the in-process engine on one machine. Execution
// names are deterministic, so a duplicated request (an S3 event delivered
// twice, a retried API call) finds the execution already there instead of
// starting a second one.
package starter

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/awsretry"
)

// Execution is a started (or already existing) execution.
type Execution struct {
	Name    string `json:"name"`
	ARN     string `json:"arn,omitempty"`
	Started bool   `json:"started"` // false when the name already existed
}

// Status is what Describe reports.
type Status struct {
	Name string `json:"name"`
	// ARN is the execution's ARN where it has one (Step Functions and
	// serve), "" for the in-process starter's.
	ARN       string    `json:"arn,omitempty"`
	Status    string    `json:"status"` // RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED
	StartedAt time.Time `json:"started_at"`
	StoppedAt time.Time `json:"stopped_at,omitzero"`
	Error     string    `json:"error,omitempty"`
	Cause     string    `json:"cause,omitempty"`
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// hashedTail is how a hashed execution name ends.
var hashedTail = regexp.MustCompile(`-[0-9a-f]{12}$`)

// ExecutionName is the deterministic name of a search's evaluation for a
// tenant: Step Functions allows 80 characters of [A-Za-z0-9_-]. It is
// "<tenant>--<search>" when that is short and unambiguous; a longer or
// rewritten name, a tenant that itself holds "--" (so "x--y"+"z" and
// "x"+"y--z" would meet), or a name that ends like a hashed one (so
// "acme_io"+"x-<hash>" cannot take the name of "acme.io"+"x") ends in a
// hash of the pair, so two tenants' searches never share an execution.
func ExecutionName(tenant, searchID string) string {
	raw := tenant + "--" + searchID
	name := unsafeName.ReplaceAllString(raw, "_")
	if name == raw && len(name) <= 80 && !strings.Contains(tenant, "--") && !hashedTail.MatchString(name) {
		return name
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%d:%s%s", len(tenant), tenant, searchID)))
	h := hex.EncodeToString(sum[:])[:12]
	if len(name) > 67 {
		name = name[:67]
	}
	return name + "-" + h
}

// SFNAPI is the part of the Step Functions client the starter uses.
type SFNAPI interface {
	StartExecution(ctx context.Context, in *sfn.StartExecutionInput, opts ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error)
	DescribeExecution(ctx context.Context, in *sfn.DescribeExecutionInput, opts ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error)
}

var _ SFNAPI = (*sfn.Client)(nil)

// SFN starts executions of one state machine on Step Functions.
type SFN struct {
	client          SFNAPI
	stateMachineARN string
	// describe, when set, checks before a start that the machine exists.
	describe MachineDescriber
}

// NewSFN returns a starter for the state machine stateMachineARN.
func NewSFN(client SFNAPI, stateMachineARN string) *SFN {
	return &SFN{client: client, stateMachineARN: stateMachineARN}
}

// MachineDescriber describes a state machine (DescribeStateMachine).
type MachineDescriber interface {
	DescribeStateMachine(ctx context.Context, in *sfn.DescribeStateMachineInput, opts ...func(*sfn.Options)) (*sfn.DescribeStateMachineOutput, error)
}

// NewCheckedSFN is NewSFN whose Ready asks client whether the machine is
// registered, so a caller that records a start before making it (intake)
// never records one that cannot run. The local server uses it; on AWS the
// machine is deployed with the stack.
func NewCheckedSFN(client interface {
	SFNAPI
	MachineDescriber
}, stateMachineARN string) *SFN {
	return &SFN{client: client, stateMachineARN: stateMachineARN, describe: client}
}

// MissingMachineError is a start of a state machine the server does not
// have: a deployment's fault, not the caller's, said in words.
type MissingMachineError struct{ ARN string }

func (e *MissingMachineError) Error() string {
	return "state machine " + e.ARN + " is not registered on this server, so nothing was started: register it (veredicto serve registers the template's at start) and retry"
}

// ErrorName is the HTTP surface's kind for it: 503, said in these words.
func (*MissingMachineError) ErrorName() string { return "ServiceUnavailableError" }

// Ready reports whether the machine can be started: nil, or a
// *MissingMachineError. A starter built with NewSFN is always ready.
func (s *SFN) Ready(ctx context.Context) error {
	if s.describe == nil {
		return nil
	}
	_, err := s.describe.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(s.stateMachineARN)})
	var missing *types.StateMachineDoesNotExist
	switch {
	case errors.As(err, &missing):
		return &MissingMachineError{ARN: s.stateMachineARN}
	case err != nil:
		return fmt.Errorf("describe state machine %s: %w", s.stateMachineARN, awsretry.Classify(err))
	}
	return nil
}

// executionARN derives an execution's ARN from the state machine's.
func (s *SFN) executionARN(name string) string {
	return strings.Replace(s.stateMachineARN, ":stateMachine:", ":execution:", 1) + ":" + name
}

// Start starts the execution name with input. When an execution of that
// name exists (same input: Step Functions treats the call as idempotent, or
// ExecutionAlreadyExists) it returns it with Started false.
func (s *SFN) Start(ctx context.Context, name string, input []byte) (Execution, error) {
	out, err := s.client.StartExecution(ctx, &sfn.StartExecutionInput{
		StateMachineArn: aws.String(s.stateMachineARN),
		Name:            aws.String(name),
		Input:           aws.String(string(input)),
	})
	var exists *types.ExecutionAlreadyExists
	var missing *types.StateMachineDoesNotExist
	switch {
	case errors.As(err, &exists):
		return Execution{Name: name, ARN: s.executionARN(name), Started: false}, nil
	case errors.As(err, &missing):
		return Execution{}, &MissingMachineError{ARN: s.stateMachineARN}
	case err != nil:
		return Execution{}, fmt.Errorf("start execution %s: %w", name, awsretry.Classify(err))
	}
	return Execution{Name: name, ARN: aws.ToString(out.ExecutionArn), Started: true}, nil
}

// Describe reports the status of the execution name.
func (s *SFN) Describe(ctx context.Context, name string) (Status, error) {
	out, err := s.client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(s.executionARN(name))})
	var missing *types.ExecutionDoesNotExist
	if errors.As(err, &missing) {
		return Status{}, &veredicto.NotFoundError{What: "execution " + name}
	}
	if err != nil {
		return Status{}, fmt.Errorf("describe execution %s: %w", name, awsretry.Classify(err))
	}
	return Status{
		Name: name, ARN: cmp.Or(aws.ToString(out.ExecutionArn), s.executionARN(name)),
		Status: string(out.Status), StartedAt: aws.ToTime(out.StartDate), StoppedAt: aws.ToTime(out.StopDate),
		Error: aws.ToString(out.Error), Cause: aws.ToString(out.Cause),
	}, nil
}

// Unconfigured is the starter of a function deployed without the state
// machine it starts: every call fails naming the environment variable
// that is not set.
type Unconfigured struct{ Variable string }

// Start fails, naming u.Variable.
func (u Unconfigured) Start(context.Context, string, []byte) (Execution, error) {
	return Execution{}, u.err()
}

// Describe fails, naming u.Variable.
func (u Unconfigured) Describe(context.Context, string) (Status, error) {
	return Status{}, u.err()
}

func (u Unconfigured) err() error {
	return fmt.Errorf("configuration: %s is not set for this function", u.Variable)
}
