package sfnapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/veredicto/veredicto/internal/control"
)

func TestValidateStateMachineDefinition(t *testing.T) {
	p := newPeer(t)
	ctx := context.Background()
	broken := `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"Nowhere"},"B":{"Type":"Task","End":true}}}`
	unbound := `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:f","End":true}}}`
	tests := []struct {
		name     string
		in       sfn.ValidateStateMachineDefinitionInput
		result   types.ValidateStateMachineDefinitionResultCode
		want     string // code@location of each diagnostic
		truncate bool
	}{
		{"valid", sfn.ValidateStateMachineDefinitionInput{Definition: aws.String(callbackDef(60))}, "OK", "", false},
		{"invalid", sfn.ValidateStateMachineDefinitionInput{Definition: aws.String(broken)}, "FAIL",
			"INVALID_RESOURCE@/States/B/Resource MISSING_TRANSITION_TARGET@/States/A/Next SCHEMA_VALIDATION_FAILED@/States/B", false},
		{"truncated", sfn.ValidateStateMachineDefinitionInput{Definition: aws.String(broken), MaxResults: 1}, "FAIL",
			"INVALID_RESOURCE@/States/B/Resource", true},
		{"not JSON", sfn.ValidateStateMachineDefinitionInput{Definition: aws.String(`{"StartAt"`)}, "FAIL", "INVALID_JSON_DESCRIPTION@", false},
		{"a warning, not asked for", sfn.ValidateStateMachineDefinitionInput{Definition: aws.String(unbound)}, "OK", "", false},
		{"a warning", sfn.ValidateStateMachineDefinitionInput{Definition: aws.String(unbound), Severity: types.ValidateStateMachineDefinitionSeverityWarning}, "OK",
			"UNSUPPORTED_LOCALLY@/States/A/Resource", false},
		{"express", sfn.ValidateStateMachineDefinitionInput{Definition: aws.String(callbackDef(60)), Type: types.StateMachineTypeExpress}, "FAIL",
			"SCHEMA_VALIDATION_FAILED@/States/Ask/Resource", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := p.client.ValidateStateMachineDefinition(ctx, &tt.in)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range out.Diagnostics {
				got = append(got, aws.ToString(d.Code)+"@"+aws.ToString(d.Location))
				if aws.ToString(d.Message) == "" || d.Severity == "" {
					t.Errorf("diagnostic %+v without a message or severity", d)
				}
			}
			if out.Result != tt.result || strings.Join(got, " ") != tt.want || aws.ToBool(out.Truncated) != tt.truncate {
				t.Errorf("result %s, diagnostics %q, truncated %v; want %s %q %v", out.Result, got, aws.ToBool(out.Truncated), tt.result, tt.want, tt.truncate)
			}
		})
	}
	for _, in := range []*sfn.ValidateStateMachineDefinitionInput{
		{Definition: aws.String(broken), Severity: "LOUD"},
		{Definition: aws.String(broken), MaxResults: 101},
	} {
		if _, err := p.client.ValidateStateMachineDefinition(ctx, in); code(err) != control.CodeValidation {
			t.Errorf("%+v: %v, want ValidationException", in, err)
		}
	}
}

// DescribeStateMachineForExecution names the definition an execution
// ran, not the machine's latest; DescribeStateMachine returns the
// configuration given, Step Functions' defaults for the rest.
func TestStateMachineForExecutionAndConfiguration(t *testing.T) {
	p := newPeer(t)
	ctx := context.Background()
	first := `{"StartAt":"E","States":{"E":{"Type":"Task","Resource":"${EchoFunctionArn}","End":true}}}`
	sm, err := p.client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("Configured"), Definition: aws.String(first), RoleArn: aws.String(role),
		TracingConfiguration: &types.TracingConfiguration{Enabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := p.client.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: sm.StateMachineArn})
	if err != nil {
		t.Fatal(err)
	}
	if d.TracingConfiguration == nil || !d.TracingConfiguration.Enabled || d.LoggingConfiguration == nil || d.LoggingConfiguration.Level != types.LogLevelOff ||
		d.EncryptionConfiguration == nil || d.EncryptionConfiguration.Type != types.EncryptionTypeAwsOwnedKey {
		t.Errorf("configuration %+v %+v %+v", d.TracingConfiguration, d.LoggingConfiguration, d.EncryptionConfiguration)
	}
	_, err = p.client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("Configured"), Definition: aws.String(first), RoleArn: aws.String(role)})
	var exists *types.StateMachineAlreadyExists
	if !errors.As(err, &exists) {
		t.Errorf("created again without its tracing: %v, want StateMachineAlreadyExists", err)
	}
	_, err = p.client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("Logged"), Definition: aws.String(first), RoleArn: aws.String(role),
		LoggingConfiguration: &types.LoggingConfiguration{Level: types.LogLevelAll}})
	var badLogging *types.InvalidLoggingConfiguration
	if !errors.As(err, &badLogging) {
		t.Errorf("logging ALL without a destination: %v", err)
	}

	x := p.start(t, aws.ToString(sm.StateMachineArn), "before", `{"a":1}`)
	closed(t, p.client, x)
	second := strings.Replace(first, `"End":true`, `"ResultPath":"$.echo","End":true`, 1)
	group := "arn:aws:logs:us-east-1:000000000000:log-group:sfn:*"
	if _, err := p.client.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: sm.StateMachineArn, Definition: aws.String(second),
		LoggingConfiguration: &types.LoggingConfiguration{Level: types.LogLevelError, Destinations: []types.LogDestination{
			{CloudWatchLogsLogGroup: &types.CloudWatchLogsLogGroup{LogGroupArn: aws.String(group)}}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.client.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: sm.StateMachineArn,
		TracingConfiguration: &types.TracingConfiguration{Enabled: false}}); err != nil {
		t.Fatalf("an update of the tracing alone: %v", err)
	}
	y := p.start(t, aws.ToString(sm.StateMachineArn), "after", `{"a":2}`)
	closed(t, p.client, y)

	before, err := p.client.DescribeStateMachineForExecution(ctx, &sfn.DescribeStateMachineForExecutionInput{ExecutionArn: aws.String(x)})
	if err != nil {
		t.Fatal(err)
	}
	after, err := p.client.DescribeStateMachineForExecution(ctx, &sfn.DescribeStateMachineForExecutionInput{ExecutionArn: aws.String(y)})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(before.Definition) != first || aws.ToString(after.Definition) != second || aws.ToString(before.Name) != "Configured" || aws.ToString(after.RoleArn) != role {
		t.Errorf("definitions: before %s, after %s", aws.ToString(before.Definition), aws.ToString(after.Definition))
	}
	if before.UpdateDate == nil || after.UpdateDate == nil || !after.UpdateDate.After(*before.UpdateDate) {
		t.Errorf("updateDate before %v, after %v", before.UpdateDate, after.UpdateDate)
	}
	if l := after.LoggingConfiguration; l == nil || l.Level != types.LogLevelError || len(l.Destinations) != 1 ||
		aws.ToString(l.Destinations[0].CloudWatchLogsLogGroup.LogGroupArn) != group || after.TracingConfiguration == nil || after.TracingConfiguration.Enabled {
		b, _ := json.Marshal(after)
		t.Errorf("configuration after the updates: %s", b)
	}
	if _, err := p.client.DescribeStateMachineForExecution(ctx, &sfn.DescribeStateMachineForExecutionInput{ExecutionArn: aws.String(x + "Nope")}); code(err) != control.CodeExecutionDoesNotExist {
		t.Errorf("a missing execution: %v", err)
	}
}
