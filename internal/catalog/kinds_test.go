package catalog

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/catalog/function"
)

// routes lists the HTTP route groups (internal/httpapi/<service>api) a
// kind's functions serve: a bootstrap links no other, so that an API
// function links no other service's handlers and a Task none at all.
var routes = map[function.Kind][]string{
	function.KindIntake:       {"searchapi"},
	function.KindFlags:        {"flagsapi"},
	function.KindPeople:       {"confirmapi", "eventsapi"},
	function.KindDebateAPI:    {"debateapi"},
	function.KindChat:         {"chatapi"},
	function.KindCompanionAPI: {"companionapi"},
}

// reuses lists the kinds whose builders a kind's entry point imports: the
// companion's HTTP routes serve the service its Tasks build.
var reuses = map[function.Kind][]function.Kind{
	function.KindCompanionAPI: {function.KindCompanion},
}

// localOnly are packages of the local composition (the engine, the control
// plane, the server's Step Functions API, the console, the inputs queue,
// doctor and the template loader) that no Lambda needs.
var localOnly = []string{
	module + "/internal/asl", module + "/internal/control", module + "/internal/sfnapi", module + "/internal/console",
	module + "/internal/queue", module + "/internal/doctor", "github.com/awslabs/goformation/v7",
}

// taskInfo is the one package under internal/asl a Lambda may link: the
// engine's context key, which ConfirmFunction reads (nothing there under
// Lambda).
const taskInfo = module + "/internal/asl/taskinfo"

// TestBootstrapsLinkOnlyTheirKind: each function's bootstrap links its
// kind's entry point and list, never the composition root (internal/app),
// the aggregating catalog, another kind's entry point or list (but those
// its kind reuses) or HTTP route group, nor a local-only package.
func TestBootstrapsLinkOnlyTheirKind(t *testing.T) {
	cmd := exec.Command("go", "list", "-tags", "lambda.norpc", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, "../../functions/...")
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string][]string{} // functions/<folder> → its dependencies
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		deps[strings.TrimPrefix(fields[0], module+"/")] = fields[1:]
	}
	for _, f := range All() {
		linked, ok := deps["functions/"+f.Folder]
		if !ok {
			t.Errorf("%s: go list named no functions/%s", f.LogicalID, f.Folder)
			continue
		}
		for _, c := range kinds {
			mine := c.kind == f.Kind || slices.Contains(reuses[f.Kind], c.kind)
			for _, pkg := range []string{packageOf(c.functions), module + "/" + c.entry.Pkg} {
				if links := slices.Contains(linked, pkg); links != mine {
					t.Errorf("%s (%s): links %s: %v, want %v", f.LogicalID, f.Kind, pkg, links, mine)
				}
			}
		}
		for _, p := range linked {
			banned := p == module+"/internal/app" || p == module+"/internal/catalog"
			for _, l := range localOnly {
				banned = banned || p == l || strings.HasPrefix(p, l+"/") && p != taskInfo
			}
			if group, ok := strings.CutPrefix(p, module+"/internal/httpapi/"); ok && !slices.Contains(routes[f.Kind], group) {
				banned = true
			}
			if banned {
				t.Errorf("%s (%s): links %s", f.LogicalID, f.Kind, p)
			}
		}
	}
	if len(deps) != len(All()) {
		t.Errorf("go list named %d functions, the catalog %d", len(deps), len(All()))
	}
}
