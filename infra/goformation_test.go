package infra

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/awslabs/goformation/v7"

	"github.com/veredicto/veredicto/internal/catalog"
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
	// Every function of the catalog, and nothing else.
	want := strings.Join(catalog.LogicalIDs(), " ")
	if strings.Join(ids, " ") != want {
		t.Errorf("functions %v, want %s", ids, want)
	}
	sms := tmpl.GetAllServerlessStateMachineResources()
	defs, _ := filepath.Glob("../statemachines/*.asl.json")
	if len(sms) != len(defs) {
		t.Errorf("%d state machines, want one per statemachines/*.asl.json (%d)", len(sms), len(defs))
	}
	for id, sm := range sms {
		if sm.DefinitionUri == nil || sm.DefinitionUri.String == nil || !strings.HasPrefix(*sm.DefinitionUri.String, "statemachines/") {
			t.Errorf("%s: DefinitionUri not under statemachines/", id)
		}
	}
	if len(tmpl.GetAllDynamoDBTableResources()) != 2 || len(tmpl.GetAllS3BucketResources()) != 2 || len(tmpl.GetAllServerlessHttpApiResources()) != 1 {
		t.Errorf("tables %d, buckets %d, http apis %d; want 2, 2, 1", len(tmpl.GetAllDynamoDBTableResources()), len(tmpl.GetAllS3BucketResources()), len(tmpl.GetAllServerlessHttpApiResources()))
	}
}
