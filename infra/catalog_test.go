package infra

import (
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/catalog"
)

// TestTemplateMatchesTheCatalog: template.yaml deploys exactly the
// catalog's functions, and each state machine's DefinitionSubstitutions and
// invoke policies name exactly the functions the catalog says it invokes.
func TestTemplateMatchesTheCatalog(t *testing.T) {
	tpl := loadTemplate(t, filepath.Join(root, "template.yaml"))
	deployed := tpl.resourcesOfType("AWS::Serverless::Function")
	sort.Strings(deployed)
	if want := catalog.LogicalIDs(); !slices.Equal(deployed, want) {
		t.Errorf("template.yaml deploys %v; the catalog lists %v", deployed, want)
	}
	for _, id := range tpl.resourcesOfType("AWS::Serverless::StateMachine") {
		props := tpl.Resources[id].Properties
		file := filepath.Base(asString(props["DefinitionUri"]))
		var want []string
		for _, f := range catalog.InvokedBy(file) {
			want = append(want, f.LogicalID)
		}
		sort.Strings(want)
		var subs []string
		for k := range asMap(props["DefinitionSubstitutions"]) {
			if fn, ok := strings.CutSuffix(k, "FunctionArn"); ok {
				subs = append(subs, fn+"Function")
			}
		}
		sort.Strings(subs)
		if !slices.Equal(subs, want) {
			t.Errorf("%s (%s): DefinitionSubstitutions name functions %v; the catalog says it invokes %v", id, file, subs, want)
		}
		invokes := sortedKeys(invokedFunctions(props["Policies"]))
		if !slices.Equal(invokes, want) {
			t.Errorf("%s (%s): LambdaInvokePolicy on %v; the catalog says it invokes %v", id, file, invokes, want)
		}
	}
}
