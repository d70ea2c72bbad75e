package app_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/veredicto/veredicto/internal/dynalite"
	"github.com/veredicto/veredicto/internal/intake"
	"github.com/veredicto/veredicto/internal/store/dynamo"
)

func TestMain(m *testing.M) {
	code := m.Run()
	dynalite.Stop()
	os.Exit(code)
}

// TestApiBootstrapTalksToDynamoDB runs the ApiFunction bootstrap as Lambda
// does (a Runtime API, the environment Lambda sets) with the context table
// on a local dynalite named by AWS_ENDPOINT_URL_DYNAMODB: GET /searches
// answers with the tenant's search read from the table, so the bootstrap's
// AWS configuration (region, credentials, signing, endpoint) works end to
// end. Without credentials it refuses to start, naming them.
func TestApiBootstrapTalksToDynamoDB(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: builds the ApiFunction bootstrap and runs it as a subprocess; make test-long runs it")
	}
	client := dynalite.Client(t)
	ctx := t.Context()
	const table = "bootstrap-context"
	if err := dynamo.EnsureTable(ctx, client, table); err != nil {
		t.Fatal(err)
	}
	rec, _ := json.Marshal(intake.SearchRecord{SearchID: "cfo-andina", Tenant: "acme", CreatedAt: "2026-11-23T10:00:00Z", Origin: "api"})
	if _, err := dynamo.New(client, table, nil).PutIfAbsent(ctx, "search/acme/cfo-andina", rec); err != nil {
		t.Fatal(err)
	}
	sample, err := os.ReadFile("../../events/api-get-search.json")
	if err != nil {
		t.Fatal(err)
	}
	event := strings.NewReplacer(`"GET /searches/{id}"`, `"GET /searches"`, `"/searches/demo-cfo-andina"`, `"/searches"`,
		`"custom:tenant": "default"`, `"custom:tenant": "acme"`).Replace(string(sample))
	bin := buildBootstrap(t, "api")
	env := []string{"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test",
		"AWS_ENDPOINT_URL_DYNAMODB=" + aws.ToString(client.Options().BaseEndpoint),
		"INPUTS_BUCKET=in", "REPORTS_BUCKET=rep", "CONTEXT_TABLE=" + table}

	got, stderr, _ := invoke(t, bin, event, env)
	var resp struct {
		StatusCode int    `json:"statusCode"`
		Body       string `json:"body"`
	}
	path, body, _ := strings.Cut(got, " ")
	if err := json.Unmarshal([]byte(body), &resp); err != nil || !strings.HasSuffix(path, "/response") {
		t.Fatalf("answer %s (%v); stderr:\n%s", got, err, stderr)
	}
	var list struct{ Searches []intake.SearchItem }
	json.Unmarshal([]byte(resp.Body), &list)
	if resp.StatusCode != 200 || len(list.Searches) != 1 || list.Searches[0].SearchID != "cfo-andina" {
		t.Errorf("GET /searches: %d %s; want 200 with the search in the table; stderr:\n%s", resp.StatusCode, resp.Body, stderr)
	}

	cmd := exec.Command(bin)
	var errOut bytes.Buffer
	cmd.Env, cmd.Stderr = []string{"AWS_REGION=us-east-1", "AWS_LAMBDA_RUNTIME_API=127.0.0.1:9", "INPUTS_BUCKET=in", "REPORTS_BUCKET=rep", "CONTEXT_TABLE=" + table}, &errOut
	if err := cmd.Run(); err == nil || !strings.Contains(errOut.String(), "init failed") || !strings.Contains(errOut.String(), "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY") {
		t.Errorf("no credentials: exit %v, stderr %s; want an init failure naming the variables", err, errOut.String())
	}
}

// TestBootstrapsLinkNoCredentialChains: a Lambda gets its credentials from
// its environment (lambdaAWSConfig), so no bootstrap links the SDK's
// shared-config loader and the SSO, STS and instance-metadata clients it
// drags in (1.6 MB of every binary, docs/BENCHMARKS.md).
func TestBootstrapsLinkNoCredentialChains(t *testing.T) {
	cmd := exec.Command("go", "list", "-tags", "lambda.norpc", "-deps", "-f", "{{.ImportPath}}", "../../functions/...")
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/aws/aws-sdk-go-v2/config", "github.com/aws/aws-sdk-go-v2/service/sso",
			"github.com/aws/aws-sdk-go-v2/service/ssooidc", "github.com/aws/aws-sdk-go-v2/service/sts",
			"github.com/aws/aws-sdk-go-v2/service/signin", "github.com/aws/aws-sdk-go-v2/feature/ec2/imds"} {
			if pkg == banned {
				t.Errorf("a function links %s", pkg)
			}
		}
	}
	if !strings.Contains(string(out), "github.com/aws/aws-sdk-go-v2/service/dynamodb\n") {
		t.Errorf("go list named no dynamodb client: the listing is not the functions'")
	}
}
