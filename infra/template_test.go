package infra

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// root is the repository root, seen from this package's directory.
const root = ".."

// TestTemplate cross-checks template.yaml against the rest of the
// repository. Each subtest names what it guards; see DESIGN.md for the
// naming rule (functions/gem1 ⇄ Gem1Function ⇄ ${Gem1FunctionArn}).
func TestTemplate(t *testing.T) {
	tpl := loadTemplate(t, filepath.Join(root, "template.yaml"))
	if len(tpl.Resources) == 0 {
		t.Fatal("template.yaml has no Resources")
	}
	t.Run("functions", func(t *testing.T) { checkFunctions(t, tpl) })
	t.Run("build.mk", func(t *testing.T) { checkBuildTargets(t, tpl) })
	t.Run("statemachines", func(t *testing.T) { checkStateMachines(t, tpl) })
	t.Run("policies", func(t *testing.T) { checkPolicies(t, tpl) })
	t.Run("secrets", func(t *testing.T) { checkSecrets(t, tpl) })
	t.Run("buckets", func(t *testing.T) { checkBuckets(t, tpl) })
	t.Run("fixed names", func(t *testing.T) { checkFixedNames(t, tpl) })
	t.Run("no dependency cycle", func(t *testing.T) {
		if c := findCycle(tpl.dependencyGraph()); c != nil {
			t.Errorf("circular dependency %s: CloudFormation cannot order these resources "+
				"(an S3 event makes its bucket depend on the function)", strings.Join(c, " -> "))
		}
	})
}

// ------------------------------------------------------------- functions

// checkFunctions: each function builds with `make build-<LogicalId>` from
// the repository root, from a functions/<folder> with a main.go, and has a
// sample event in events/ named after the folder.
func checkFunctions(t *testing.T, tpl cfnTemplate) {
	ids := tpl.resourcesOfType("AWS::Serverless::Function")
	if len(ids) == 0 {
		t.Fatal("no AWS::Serverless::Function in template.yaml")
	}
	for _, id := range ids {
		t.Run(id, func(t *testing.T) {
			r := tpl.Resources[id]
			if got := r.Properties["CodeUri"]; got != "." {
				t.Errorf("CodeUri = %v, want \".\" (the module root, built by build.mk)", got)
			}
			if got := r.Metadata["BuildMethod"]; got != "makefile" {
				t.Errorf("Metadata.BuildMethod = %v, want makefile", got)
			}
			folder, err := buildFolder(t, id)
			if err != nil {
				t.Fatalf("build-%s in build.mk: %v", id, err)
			}
			if _, err := os.Stat(filepath.Join(root, "functions", folder, "main.go")); err != nil {
				t.Errorf("build-%s builds ./functions/%s, but functions/%s/main.go: %v", id, folder, folder, err)
			}
			samples, _ := filepath.Glob(filepath.Join(root, "events", folder+"*.json"))
			if len(samples) == 0 {
				t.Errorf("no sample event events/%s*.json for %s", folder, id)
			}
			for _, s := range samples {
				if b, err := os.ReadFile(s); err != nil || !json.Valid(b) {
					t.Errorf("%s is not valid JSON (err %v)", s, err)
				}
			}
		})
	}
}

var goBuildLine = regexp.MustCompile(`(?m)^.*\bgo build\b.*\./functions/([^\s/]+)\s*$`)

// buildFolder dry-runs `make build-<id>` the way `sam build` runs it (with
// ARTIFACTS_DIR in the environment), checks the go build command and
// returns the functions/ folder it builds.
func buildFolder(t *testing.T, id string) (string, error) {
	t.Helper()
	artifacts := filepath.Join(t.TempDir(), "artifacts")
	out, err := makeDryRun(t, []string{"ARTIFACTS_DIR=" + artifacts}, "build-"+id)
	if err != nil {
		return "", err
	}
	m := goBuildLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("make -n build-%s runs no `go build ./functions/<folder>`:\n%s", id, out)
	}
	line := m[0]
	for _, want := range []string{"GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0", "-tags lambda.norpc", "-trimpath", artifacts + "/bootstrap"} {
		if !strings.Contains(line, want) {
			t.Errorf("build-%s: go build command lacks %q:\n%s", id, want, line)
		}
	}
	return m[1], nil
}

// makeDryRun runs `make -n -f build.mk target` in the repository root.
func makeDryRun(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("GNU make is needed to check build.mk: %v", err)
	}
	cmd := exec.Command("make", append([]string{"--no-print-directory", "-n", "-f", "build.mk"}, args...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", &makeError{err: err, out: string(out)}
	}
	return string(out), nil
}

type makeError struct {
	err error
	out string
}

func (e *makeError) Error() string { return e.err.Error() + ": " + strings.TrimSpace(e.out) }

// checkBuildTargets: build.mk builds nothing the template does not deploy,
// every functions/ folder is deployed, and the Makefile (which SAM runs)
// includes build.mk.
func checkBuildTargets(t *testing.T, tpl cfnTemplate) {
	cmd := exec.Command("make", "-pRrq", "-f", "build.mk", ":")
	cmd.Dir = root
	out, _ := cmd.Output() // -q exits non-zero; the database is printed anyway
	targets := regexp.MustCompile(`(?m)^build-([A-Za-z0-9]+):`).FindAllStringSubmatch(string(out), -1)
	if len(targets) == 0 {
		t.Fatalf("no build-<LogicalId> targets found in build.mk (make -p printed %d bytes)", len(out))
	}
	built := map[string]bool{}
	for _, m := range targets {
		id := m[1]
		if r, ok := tpl.Resources[id]; ok && r.Type == "AWS::Serverless::Function" {
			f, err := buildFolder(t, id)
			if err == nil {
				built[f] = true
			}
			continue
		}
		if strings.HasSuffix(id, "Function") {
			t.Errorf("build.mk has build-%s but template.yaml has no function %s", id, id)
		}
	}
	mains, _ := filepath.Glob(filepath.Join(root, "functions", "*", "main.go"))
	for _, m := range mains {
		if folder := filepath.Base(filepath.Dir(m)); !built[folder] {
			t.Errorf("functions/%s has a main.go but no template function is built from it", folder)
		}
	}
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatalf("read Makefile: %v", err)
	}
	if !regexp.MustCompile(`(?m)^\s*-?include\s+(.*\s)?build\.mk\s*$`).Match(mk) {
		t.Errorf("Makefile does not include build.mk: `sam build` runs `make build-<LogicalId>` against the Makefile")
	}
}

// --------------------------------------------------------- state machines

var placeholder = regexp.MustCompile(`\$\{([^}]+)\}`)

// checkStateMachines: every ASL file is deployed, its placeholders and the
// resource's DefinitionSubstitutions match one to one, and every Task
// ${XFunctionArn} is !GetAtt XFunction.Arn of a template function that the
// state machine may invoke.
func checkStateMachines(t *testing.T, tpl cfnTemplate) {
	byURI := map[string]string{}
	for _, id := range tpl.resourcesOfType("AWS::Serverless::StateMachine") {
		uri := asString(tpl.Resources[id].Properties["DefinitionUri"])
		if _, err := os.Stat(filepath.Join(root, uri)); err != nil {
			t.Errorf("%s: DefinitionUri %q: %v", id, uri, err)
		}
		byURI[filepath.ToSlash(filepath.Clean(uri))] = id
	}
	files, err := filepath.Glob(filepath.Join(root, "statemachines", "*.asl.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no statemachines/*.asl.json (err %v)", err)
	}
	for _, f := range files {
		uri := "statemachines/" + filepath.Base(f)
		t.Run(filepath.Base(f), func(t *testing.T) {
			id, ok := byURI[uri]
			if !ok {
				t.Fatalf("no AWS::Serverless::StateMachine with DefinitionUri %s", uri)
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			props := tpl.Resources[id].Properties
			subs := asMap(props["DefinitionSubstitutions"])
			used := map[string]bool{}
			for _, m := range placeholder.FindAllStringSubmatch(string(b), -1) {
				used[m[1]] = true
				if _, ok := subs[m[1]]; !ok {
					t.Errorf("%s uses ${%s}, which %s.DefinitionSubstitutions does not define", uri, m[1], id)
				}
			}
			for _, k := range sortedKeys(subs) {
				if !used[k] {
					t.Errorf("%s.DefinitionSubstitutions defines %s, which %s never uses", id, k, uri)
				}
			}
			var def aslStates
			if err := json.Unmarshal(b, &def); err != nil {
				t.Fatalf("parse %s: %v", uri, err)
			}
			invokable := invokedFunctions(props["Policies"])
			for _, res := range def.taskResources() {
				m := regexp.MustCompile(`^\$\{(\w+FunctionArn)\}$`).FindStringSubmatch(res)
				if m == nil {
					continue
				}
				fn, attr, ok := getAtt(subs[m[1]])
				if !ok || attr != "Arn" {
					t.Errorf("%s: Task resource ${%s} maps to %v, want !GetAtt <Function>.Arn", id, m[1], subs[m[1]])
					continue
				}
				if want := strings.TrimSuffix(m[1], "Arn"); fn != want {
					t.Errorf("%s: ${%s} maps to %s, want %s (naming rule)", id, m[1], fn, want)
				}
				if tpl.Resources[fn].Type != "AWS::Serverless::Function" {
					t.Errorf("%s: ${%s} maps to %s, which is not an AWS::Serverless::Function in the template", id, m[1], fn)
				}
				if !invokable[fn] {
					t.Errorf("%s invokes %s but has no LambdaInvokePolicy for it", id, fn)
				}
			}
		})
	}
}

// aslStates is enough of an ASL definition to find its Task resources.
type aslStates struct {
	States map[string]struct {
		Type          string      `json:"Type"`
		Resource      string      `json:"Resource"`
		ItemProcessor *aslStates  `json:"ItemProcessor"`
		Iterator      *aslStates  `json:"Iterator"`
		Branches      []aslStates `json:"Branches"`
	} `json:"States"`
}

func (d aslStates) taskResources() []string {
	var out []string
	for _, name := range sortedKeys(d.States) {
		s := d.States[name]
		if s.Type == "Task" {
			out = append(out, s.Resource)
		}
		for _, sub := range append([]*aslStates{s.ItemProcessor, s.Iterator}, ptrs(s.Branches)...) {
			if sub != nil {
				out = append(out, sub.taskResources()...)
			}
		}
	}
	return out
}

func ptrs(l []aslStates) []*aslStates {
	out := make([]*aslStates, len(l))
	for i := range l {
		out[i] = &l[i]
	}
	return out
}

// invokedFunctions returns the functions a Policies list grants
// LambdaInvokePolicy on.
func invokedFunctions(policies any) map[string]bool {
	out := map[string]bool{}
	for _, p := range asList(policies) {
		if fn, ok := refTo(asMap(asMap(p)["LambdaInvokePolicy"])["FunctionName"]); ok {
			out[fn] = true
		}
	}
	return out
}

// -------------------------------------------------------------- policies

// samPolicyTemplates are the SAM policy templates this project uses; each
// is scoped to the one resource its parameter names. A new one is a
// deliberate addition here, reviewed for its actions.
var samPolicyTemplates = map[string]bool{
	"S3ReadPolicy":                          true,
	"S3CrudPolicy":                          true,
	"SQSSendMessagePolicy":                  true, // ChatFunction queues turns: sqs:SendMessage* on one queue
	"DynamoDBReadPolicy":                    true,
	"DynamoDBCrudPolicy":                    true,
	"AWSSecretsManagerGetSecretValuePolicy": true,
	"StepFunctionsExecutionPolicy":          true,
	"LambdaInvokePolicy":                    true,
	// states:SendTaskSuccess/Failure/Heartbeat on one state machine.
	"StepFunctionsCallbackPolicy": true,
}

// checkPolicies: SAM Policies are policy templates or inline statements,
// never managed policies; no Allow statement anywhere grants "*" or a whole
// service ("s3:*", "dynamodb:*"…).
func checkPolicies(t *testing.T, tpl cfnTemplate) {
	for _, id := range sortedKeys(tpl.Resources) {
		r := tpl.Resources[id]
		if r.Type != "AWS::Serverless::Function" && r.Type != "AWS::Serverless::StateMachine" {
			continue
		}
		for i, p := range asList(r.Properties["Policies"]) {
			m := asMap(p)
			switch {
			case m == nil:
				t.Errorf("%s.Policies[%d] = %v: use a SAM policy template or an inline statement, not a managed policy", id, i, p)
			case m["Statement"] != nil:
				// inline document: checked with every other statement below
			case len(m) != 1:
				t.Errorf("%s.Policies[%d] has keys %v, want one policy template", id, i, sortedKeys(m))
			default:
				name := sortedKeys(m)[0]
				if !samPolicyTemplates[name] {
					t.Errorf("%s.Policies[%d]: policy template %s is not in the reviewed list (infra/template_test.go)", id, i, name)
				}
				for param, v := range asMap(m[name]) {
					if v == "*" || v == "" {
						t.Errorf("%s.Policies[%d]: %s.%s = %q, want one named resource", id, i, name, param, v)
					}
				}
			}
		}
		if p, ok := r.Properties["Policies"].(string); ok {
			t.Errorf("%s.Policies = %q: use SAM policy templates, not a managed policy", id, p)
		}
	}
	for _, st := range statements(tpl.Resources) {
		if st.stmt["Effect"] != "Allow" {
			continue // Deny s3:* (the TLS-only bucket policies) is the safe direction
		}
		if st.stmt["NotAction"] != nil {
			t.Errorf("%s: Allow with NotAction grants everything else", st.where)
		}
		for _, a := range stringsOf(st.stmt["Action"]) {
			if a == "*" || strings.HasSuffix(a, ":*") {
				t.Errorf("%s: Allow action %q grants a whole service; name the actions", st.where, a)
			}
		}
	}
}

type located struct {
	where string
	stmt  map[string]any
}

// statements returns every policy statement in the resources: inline SAM
// policies, IAM policies and roles, bucket policies.
func statements(resources map[string]cfnResource) []located {
	var out []located
	var walk func(where string, v any)
	walk = func(where string, v any) {
		switch x := v.(type) {
		case []any:
			for i, e := range x {
				walk(where+"["+itoa(i)+"]", e)
			}
		case map[string]any:
			if sts, ok := x["Statement"]; ok {
				list := asList(sts)
				if list == nil {
					list = []any{sts}
				}
				for i, s := range list {
					out = append(out, located{where + ".Statement[" + itoa(i) + "]", asMap(s)})
				}
				return
			}
			for _, k := range sortedKeys(x) {
				walk(where+"."+k, x[k])
			}
		}
	}
	for _, id := range sortedKeys(resources) {
		walk(id, resources[id].Properties)
	}
	return out
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// --------------------------------------------------------------- secrets

var keyLikeName = regexp.MustCompile(`(?i)api_?key|token|password`)

// checkSecrets: the LLM key never enters the template; a parameter holds
// the ARN of its secret, and every function that is told the ARN may read
// the secret (internal/app reads it at init when LLM_SECRET_ARN is set).
func checkSecrets(t *testing.T, tpl cfnTemplate) {
	for _, name := range sortedKeys(tpl.Parameters) {
		if keyLikeName.MatchString(name) && !strings.Contains(name, "Secret") {
			t.Errorf("parameter %s looks like it holds a key: pass the ARN of a Secrets Manager secret instead", name)
		}
	}
	for _, id := range tpl.resourcesOfType("AWS::Serverless::Function") {
		props := tpl.functionProperties(id)
		arn, ok := asMap(asMap(props["Environment"])["Variables"])["LLM_SECRET_ARN"]
		if !ok {
			continue
		}
		param, isRef := refTo(arn)
		p, isParam := tpl.Parameters[param]
		if !isRef || !isParam {
			t.Errorf("%s: LLM_SECRET_ARN = %v, want !Ref of a parameter", id, arn)
			continue
		}
		if !strings.Contains(param, "Secret") {
			t.Errorf("%s: LLM_SECRET_ARN comes from parameter %s; name it after the secret ARN it holds", id, param)
		}
		if d, ok := p["Default"]; ok {
			t.Errorf("parameter %s has Default %v: the secret ARN is per deployment, give it no default", param, d)
		}
		granted := false
		for _, pol := range asList(props["Policies"]) {
			if reflect.DeepEqual(asMap(asMap(pol)["AWSSecretsManagerGetSecretValuePolicy"])["SecretArn"], arn) {
				granted = true
			}
		}
		if !granted {
			t.Errorf("%s gets LLM_SECRET_ARN but no AWSSecretsManagerGetSecretValuePolicy on that secret: it would fail at init", id)
		}
	}
}

// --------------------------------------------------------------- buckets

// checkBuckets: every bucket is encrypted, blocks public access and
// refuses plain HTTP; the reports bucket keeps versions.
func checkBuckets(t *testing.T, tpl cfnTemplate) {
	buckets := tpl.resourcesOfType("AWS::S3::Bucket")
	if !slices.Contains(buckets, "ReportsBucket") {
		t.Errorf("no AWS::S3::Bucket ReportsBucket (buckets: %v)", buckets)
	}
	for _, id := range buckets {
		t.Run(id, func(t *testing.T) {
			p := tpl.Resources[id].Properties
			rules := asList(asMap(p["BucketEncryption"])["ServerSideEncryptionConfiguration"])
			if len(rules) == 0 {
				t.Errorf("no BucketEncryption.ServerSideEncryptionConfiguration")
			}
			for _, r := range rules {
				alg := asMap(asMap(r)["ServerSideEncryptionByDefault"])["SSEAlgorithm"]
				if !slices.Contains([]any{"AES256", "aws:kms", "aws:kms:dsse"}, alg) {
					t.Errorf("SSEAlgorithm = %v, want AES256 or aws:kms", alg)
				}
			}
			pab := asMap(p["PublicAccessBlockConfiguration"])
			for _, k := range []string{"BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls", "RestrictPublicBuckets"} {
				if pab[k] != true {
					t.Errorf("PublicAccessBlockConfiguration.%s = %v, want true", k, pab[k])
				}
			}
			if id == "ReportsBucket" {
				if got := asMap(p["VersioningConfiguration"])["Status"]; got != "Enabled" {
					t.Errorf("VersioningConfiguration.Status = %v, want Enabled (reports are the product)", got)
				}
			}
			if !deniesPlainHTTP(tpl, id) {
				t.Errorf("no AWS::S3::BucketPolicy on %s denying aws:SecureTransport false", id)
			}
		})
	}
}

func deniesPlainHTTP(tpl cfnTemplate, bucket string) bool {
	for _, id := range tpl.resourcesOfType("AWS::S3::BucketPolicy") {
		p := tpl.Resources[id].Properties
		if b, _ := refTo(p["Bucket"]); b != bucket {
			continue
		}
		for _, st := range statements(map[string]cfnResource{id: tpl.Resources[id]}) {
			cond := asMap(asMap(st.stmt["Condition"])["Bool"])["aws:SecureTransport"]
			if st.stmt["Effect"] == "Deny" && (cond == "false" || cond == false) {
				return true
			}
		}
	}
	return false
}

// ------------------------------------------------------------ fixed names

// checkFixedNames: where a function cannot !Ref a resource without a cycle
// (TriggerFunction, subscribed to the inputs bucket), it repeats the
// resource's fixed name; the copies must stay equal to the original.
func checkFixedNames(t *testing.T, tpl cfnTemplate) {
	bucketName := tpl.Resources["InputsBucket"].Properties["BucketName"]
	sm := tpl.Resources["ExecutiveSearchStateMachine"].Properties["Name"]
	// A direct reference to a state machine of the template cannot drift.
	isMachine := func(id string) bool { return tpl.Resources[id].Type == "AWS::Serverless::StateMachine" }
	for _, id := range tpl.resourcesOfType("AWS::Serverless::Function") {
		props := tpl.functionProperties(id)
		env := asMap(asMap(props["Environment"])["Variables"])
		if v, ok := env["INPUTS_BUCKET"]; ok {
			if r, _ := refTo(v); r != "InputsBucket" && (bucketName == nil || !reflect.DeepEqual(v, bucketName)) {
				t.Errorf("%s: INPUTS_BUCKET = %v, want !Ref InputsBucket or InputsBucket's BucketName %v", id, v, bucketName)
			}
		}
		if v, ok := env["STATE_MACHINE_ARN"]; ok {
			r, _ := refTo(v)
			sub, name := asString(asMap(v)["Fn::Sub"]), asString(asMap(sm)["Fn::Sub"])
			const arnPrefix = "arn:${AWS::Partition}:states:${AWS::Region}:${AWS::AccountId}:stateMachine:"
			if !isMachine(r) && (name == "" || sub != arnPrefix+name) {
				t.Errorf("%s: STATE_MACHINE_ARN = %v, want !Ref ExecutiveSearchStateMachine or the ARN of its Name %v", id, v, sm)
			}
		}
		for _, pol := range asList(props["Policies"]) {
			if v, ok := asMap(asMap(pol)["StepFunctionsExecutionPolicy"])["StateMachineName"]; ok {
				if res, attr, _ := getAtt(v); (!isMachine(res) || attr != "Name") && !reflect.DeepEqual(v, sm) {
					t.Errorf("%s: StepFunctionsExecutionPolicy.StateMachineName = %v, want a state machine's name", id, v)
				}
			}
			if v, ok := asMap(asMap(pol)["S3ReadPolicy"])["BucketName"]; ok {
				if r, _ := refTo(v); r == "" && !reflect.DeepEqual(v, bucketName) {
					t.Errorf("%s: S3ReadPolicy.BucketName = %v matches no bucket of the template", id, v)
				}
			}
		}
	}
}
