package infra

import (
	"sort"
	"strings"
	"testing"

	"github.com/awslabs/goformation/v7"
)

// TestTemplateGoformation parses template.yaml with goformation, the
// CloudFormation/SAM model for Go, and checks the resources the project's
// own cross-checks (template_test.go) rely on are typed as expected.
func TestTemplateGoformation(t *testing.T) {
	tmpl, err := goformation.Open("../template.yaml")
	if err != nil {
		t.Fatalf("goformation: %v", err)
	}
	fns := tmpl.GetAllServerlessFunctionResources()
	var ids []string
	for id, f := range fns {
		ids = append(ids, id)
		if f.CodeUri == nil || f.CodeUri.String == nil || *f.CodeUri.String != "." {
			t.Errorf("%s: CodeUri is not \".\"", id)
		}
	}
	sort.Strings(ids)
	want := "ApiFunction ChatFunction ChatTurnFunction ConfirmFunction ConfirmationsFunction CorrectionFunction FlagsFunction Gem1Function Gem2Function Gem3Function Gem4Function Gem5Function ReportFunction StreamFunction SummaryFunction TriggerFunction ValidateFunction"
	if strings.Join(ids, " ") != want {
		t.Errorf("functions %v, want %s", ids, want)
	}
	sms := tmpl.GetAllServerlessStateMachineResources()
	if len(sms) != 2 {
		t.Errorf("%d state machines, want one per statemachines/*.asl.json (2)", len(sms))
	}
	for id, sm := range sms {
		if sm.DefinitionUri == nil || sm.DefinitionUri.String == nil || !strings.HasPrefix(*sm.DefinitionUri.String, "statemachines/") {
			t.Errorf("%s: DefinitionUri not under statemachines/", id)
		}
	}
	if len(tmpl.GetAllDynamoDBTableResources()) != 2 || len(tmpl.GetAllS3BucketResources()) != 3 || len(tmpl.GetAllServerlessHttpApiResources()) != 1 {
		t.Errorf("tables %d, buckets %d, http apis %d; want 2, 3 (inputs, reports, console), 1", len(tmpl.GetAllDynamoDBTableResources()), len(tmpl.GetAllS3BucketResources()), len(tmpl.GetAllServerlessHttpApiResources()))
	}
}
