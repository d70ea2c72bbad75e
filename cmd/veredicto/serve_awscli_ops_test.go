package main

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/auth"
)

// TestServeAWSCLIEveryOperation drives every operation of botocore's Step
// Functions model (internal/sfnapi/testdata/operations.json, the table
// TestEveryOperation drives through the Go SDK) through the AWS CLI v1
// against serve, with its required members: each is served — never
// UnknownOperationException nor a server failure — and a refusal is one
// of the errors the model lists for it, or a common one.
func TestServeAWSCLIEveryOperation(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: a Python AWS CLI process per operation (about 1 s each); make test-long runs it")
	}
	// Its own server and folder: it runs beside the other AWS CLI tests.
	t.Parallel()
	cli := findAWSCLI(t)
	b, err := os.ReadFile("../../internal/sfnapi/testdata/operations.json")
	if err != nil {
		t.Fatal(err)
	}
	var model struct {
		Operations []struct {
			Name     string   `json:"name"`
			Required []string `json:"required"`
			Errors   []string `json:"errors"`
		} `json:"operations"`
	}
	if err := json.Unmarshal(b, &model); err != nil || len(model.Operations) < 37 {
		t.Fatalf("the operations table: %d operations, %v", len(model.Operations), err)
	}
	data := t.TempDir()
	cli.endpoint = serveInProcess(context.Background(), t, app.ServerConfig{Data: data}).base
	op := keyFor(t, data, auth.KeySpec{Name: "ana", Operator: true})

	const arn = "arn:aws:states:us-east-1:000000000000:"
	values := map[string]any{
		"name": "cli-ops", "definition": `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`,
		"roleArn": "arn:aws:iam::000000000000:role/x", "stateMachineArn": arn + "stateMachine:Missing",
		"resourceArn": arn + "stateMachine:Missing", "executionArn": arn + "execution:Missing:x",
		"activityArn": arn + "activity:missing", "mapRunArn": arn + "mapRun:Missing/m:x",
		"stateMachineAliasArn": arn + "stateMachine:Missing:live", "stateMachineVersionArn": arn + "stateMachine:Missing:1",
		"taskToken": "not-a-token", "output": "{}", "tags": []map[string]string{{"key": "k", "value": "v"}}, "tagKeys": []string{"k"},
		"routingConfiguration": []map[string]any{{"stateMachineVersionArn": arn + "stateMachine:Missing:1", "weight": 100}},
	}
	// Errors any operation may answer (the model lists them once, for
	// the service), as TestEveryOperation accepts them.
	common := []string{"ValidationException", "AccessDeniedException", "ThrottlingException"}
	kebab := regexp.MustCompile(`([a-z0-9])([A-Z])`)
	codeOf := regexp.MustCompile(`An error occurred \(([A-Za-z.]+)\)`)
	for _, o := range model.Operations {
		t.Run(o.Name, func(t *testing.T) {
			in := map[string]any{}
			for _, m := range o.Required {
				v, ok := values[m]
				if !ok {
					t.Fatalf("no value for the required member %s", m)
				}
				in[m] = v
			}
			js, _ := json.Marshal(in)
			command := strings.ToLower(kebab.ReplaceAllString(o.Name, "$1-$2"))
			_, err := cli.run(op, command, "--cli-input-json", string(js))
			if err == nil {
				return
			}
			if strings.Contains(err.Error(), "Invalid choice") {
				t.Skipf("this AWS CLI predates %s (%s)", o.Name, command)
			}
			m := codeOf.FindStringSubmatch(err.Error())
			if m == nil {
				t.Fatalf("%s: no AWS error code in %v", command, err)
			}
			switch code := m[1]; {
			case code == "UnknownOperationException" || code == "InternalFailure" || code == "ServiceUnavailable":
				t.Errorf("%s: %s", command, err)
			case !slices.Contains(o.Errors, code) && !slices.Contains(common, code):
				t.Logf("%s answered %s, which the model does not list for it: %v", command, code, o.Errors)
			}
		})
	}
}
