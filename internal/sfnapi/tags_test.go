package sfnapi_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/veredicto/veredicto/internal/control"
)

func tagList(tags []types.Tag) string {
	var out []string
	for _, t := range tags {
		out = append(out, aws.ToString(t.Key)+"="+aws.ToString(t.Value))
	}
	return strings.Join(out, " ")
}

// Tags given on CreateStateMachine and CreateActivity are kept;
// TagResource, UntagResource and ListTagsForResource work on both, with
// Step Functions' limits and errors.
func TestTags(t *testing.T) {
	p := newPeer(t)
	ctx := context.Background()
	sm, err := p.client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("Tagged"), Definition: aws.String(callbackDef(60)),
		RoleArn: aws.String(role), Tags: []types.Tag{{Key: aws.String("team"), Value: aws.String("search")}}})
	if err != nil {
		t.Fatal(err)
	}
	act, err := p.client.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("tagged"), Tags: []types.Tag{{Key: aws.String("cost"), Value: aws.String("ops")}}})
	if err != nil {
		t.Fatal(err)
	}
	list := func(arn *string) string {
		t.Helper()
		out, err := p.client.ListTagsForResource(ctx, &sfn.ListTagsForResourceInput{ResourceArn: arn})
		if err != nil {
			t.Fatalf("ListTagsForResource: %v", err)
		}
		return tagList(out.Tags)
	}
	if got := list(sm.StateMachineArn); got != "team=search" {
		t.Errorf("machine tags %q", got)
	}
	if got := list(act.ActivityArn); got != "cost=ops" {
		t.Errorf("activity tags %q", got)
	}
	if _, err := p.client.TagResource(ctx, &sfn.TagResourceInput{ResourceArn: sm.StateMachineArn,
		Tags: []types.Tag{{Key: aws.String("team"), Value: aws.String("hiring")}, {Key: aws.String("env"), Value: aws.String("local")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.client.UntagResource(ctx, &sfn.UntagResourceInput{ResourceArn: sm.StateMachineArn, TagKeys: []string{"env", "absent"}}); err != nil {
		t.Fatal(err)
	}
	if got := list(sm.StateMachineArn); got != "team=hiring" {
		t.Errorf("after tag and untag %q", got)
	}

	many := make([]types.Tag, control.MaxTags)
	for i := range many {
		many[i] = types.Tag{Key: aws.String(fmt.Sprintf("k%02d", i)), Value: aws.String("v")}
	}
	_, err = p.client.TagResource(ctx, &sfn.TagResourceInput{ResourceArn: sm.StateMachineArn, Tags: many})
	var tooMany *types.TooManyTags
	if !errors.As(err, &tooMany) || aws.ToString(tooMany.ResourceName) != aws.ToString(sm.StateMachineArn) {
		t.Errorf("past %d tags: %v", control.MaxTags, err)
	}
	missing := strings.Replace(aws.ToString(sm.StateMachineArn), "Tagged", "Nope", 1)
	_, err = p.client.ListTagsForResource(ctx, &sfn.ListTagsForResourceInput{ResourceArn: aws.String(missing)})
	var notFound *types.ResourceNotFound
	if !errors.As(err, &notFound) || aws.ToString(notFound.ResourceName) != missing {
		t.Errorf("a missing machine's tags: %v", err)
	}
	for _, tt := range []struct {
		name string
		call func() error
		code string
	}{
		{"an execution's ARN", func() error {
			_, err := p.client.TagResource(ctx, &sfn.TagResourceInput{ResourceArn: aws.String(control.ExecutionARN("Tagged", "x")), Tags: many[:1]})
			return err
		}, control.CodeInvalidArn},
		{"an empty key", func() error {
			_, err := p.client.TagResource(ctx, &sfn.TagResourceInput{ResourceArn: act.ActivityArn, Tags: []types.Tag{{Key: aws.String(""), Value: aws.String("v")}}})
			return err
		}, control.CodeValidation},
		{"a key with a character tags may not hold", func() error {
			_, err := p.client.TagResource(ctx, &sfn.TagResourceInput{ResourceArn: act.ActivityArn, Tags: []types.Tag{{Key: aws.String("a*b")}}})
			return err
		}, control.CodeValidation},
		{"a missing activity", func() error {
			_, err := p.client.UntagResource(ctx, &sfn.UntagResourceInput{ResourceArn: aws.String(control.ActivityARN("nope")), TagKeys: []string{"k"}})
			return err
		}, control.CodeResourceNotFound},
	} {
		if err := tt.call(); code(err) != tt.code {
			t.Errorf("%s: %v, want %s", tt.name, err, tt.code)
		}
	}

	if status, body := p.post(t, "AWSStepFunctions.TagResource", `{"resourceArn":"`+aws.ToString(act.ActivityArn)+`"}`); status != 400 || body["__type"] != control.CodeValidation {
		t.Errorf("TagResource without tags: HTTP %d %v", status, body)
	}

	// deleted, then created again: the old tags are gone
	if _, err := p.client.DeleteActivity(ctx, &sfn.DeleteActivityInput{ActivityArn: act.ActivityArn}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.client.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("tagged")}); err != nil {
		t.Fatal(err)
	}
	if got := list(act.ActivityArn); got != "" {
		t.Errorf("a recreated activity has tags %q", got)
	}
}
