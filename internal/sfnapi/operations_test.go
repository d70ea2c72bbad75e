package sfnapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"
)

// modelOperation is one operation of testdata/operations.json, generated
// from botocore's model (go generate ./internal/sfnapi).
type modelOperation struct {
	Name     string   `json:"name"`
	Required []string `json:"required"`
	Errors   []string `json:"errors"`
}

// notYet lists the operations this server does not serve yet, each with
// who is to serve it (issue 33). An operation on it that is served fails
// TestEveryOperation: take it off the list.
var notYet = map[string]string{}

// outsideTheModel lists the error codes an operation answers that the
// model does not list for it, each with why it stands and who is to look
// at it. One not answered any more fails TestEveryOperation: take it off.
var outsideTheModel = map[string]string{
	"CreateStateMachineAlias StateMachineDoesNotExist": "a routing naming a version of a missing machine; the model lists ResourceNotFound for a missing resource: the versions/aliases part of issue 33 to confirm against AWS",
}

// commonErrors are the errors any AWS JSON operation may answer beside
// those its model lists.
var commonErrors = []string{"ValidationException", "AccessDeniedException", "ThrottlingException", "ServiceUnavailable", "InternalFailure"}

// requestValue is a well-formed value of a required member, naming
// resources that do not exist (the operation answers for them).
func requestValue(member string) any {
	const arn = "arn:aws:states:us-east-1:000000000000:"
	switch member {
	case "name":
		return "ops-table"
	case "definition":
		return `{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}`
	case "roleArn":
		return role
	case "stateMachineArn", "resourceArn":
		return arn + "stateMachine:Missing"
	case "executionArn":
		return arn + "execution:Missing:x"
	case "activityArn":
		return arn + "activity:missing"
	case "mapRunArn":
		return arn + "mapRun:Missing/m:x"
	case "stateMachineAliasArn":
		return arn + "stateMachine:Missing:live"
	case "stateMachineVersionArn":
		return arn + "stateMachine:Missing:1"
	case "taskToken":
		return "not-a-token"
	case "output":
		return "{}"
	case "tags":
		return []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}
	case "tagKeys":
		return []string{"k"}
	case "routingConfiguration":
		return []types.RoutingConfigurationListItem{{StateMachineVersionArn: aws.String(arn + "stateMachine:Missing:1"), Weight: 100}}
	}
	return nil
}

// TestEveryOperation drives every operation of botocore's Step Functions
// model through the Go SDK with its required members: each is served
// (never UnknownOperationException) unless it is on notYet, and answers
// only the errors its model lists (or the common ones).
func TestEveryOperation(t *testing.T) {
	b, err := os.ReadFile("testdata/operations.json")
	if err != nil {
		t.Fatal(err)
	}
	var model struct {
		Source     string           `json:"source"`
		Operations []modelOperation `json:"operations"`
	}
	if err := json.Unmarshal(b, &model); err != nil {
		t.Fatal(err)
	}
	p := newPeer(t)
	client := reflect.ValueOf(p.client)
	served := 0
	for _, op := range model.Operations {
		t.Run(op.Name, func(t *testing.T) {
			method := client.MethodByName(op.Name)
			if !method.IsValid() {
				t.Fatalf("the Go SDK has no %s: update aws-sdk-go-v2/service/sfn", op.Name)
			}
			in := reflect.New(method.Type().In(1).Elem())
			for _, member := range op.Required {
				f := in.Elem().FieldByNameFunc(func(n string) bool { return strings.EqualFold(n, member) })
				v := requestValue(member)
				if !f.IsValid() || v == nil {
					t.Fatalf("no value for the required member %s", member)
				}
				if f.Kind() == reflect.Pointer {
					s := reflect.New(f.Type().Elem())
					s.Elem().Set(reflect.ValueOf(v))
					f.Set(s)
				} else {
					f.Set(reflect.ValueOf(v))
				}
			}
			res := method.Call([]reflect.Value{reflect.ValueOf(context.Background()), in})
			err, _ := res[1].Interface().(error)
			var ae smithy.APIError
			code := ""
			if errors.As(err, &ae) {
				code = ae.ErrorCode()
			} else if err != nil {
				t.Fatalf("%s: %v", op.Name, err)
			}
			owner, later := notYet[op.Name]
			switch {
			case code == "UnknownOperationException" && later:
				t.Skipf("not served yet: %s", owner)
			case code == "UnknownOperationException":
				t.Fatalf("%s is not served: serve it, or list it in notYet with who is to serve it", op.Name)
			case later:
				t.Errorf("%s is served now (answered %q): take it off notYet", op.Name, code)
			}
			served++
			why, known := outsideTheModel[op.Name+" "+code]
			switch listed := code == "" || slices.Contains(op.Errors, code) || slices.Contains(commonErrors, code); {
			case !listed && known:
				t.Logf("%s answered %s, which the model does not list: %s", op.Name, code, why)
			case !listed:
				t.Errorf("%s answered %s (%v), which the model does not list: %v", op.Name, code, err, op.Errors)
			}
			for k := range outsideTheModel {
				if strings.HasPrefix(k, op.Name+" ") && k != op.Name+" "+code {
					t.Errorf("%s no longer answers %s: take it off outsideTheModel", op.Name, strings.TrimPrefix(k, op.Name+" "))
				}
			}
		})
	}
	t.Logf("%d of %d operations of %s served", served, len(model.Operations), model.Source)
	if served+len(notYet) != len(model.Operations) {
		t.Errorf("%d served and %d not yet, of %d", served, len(notYet), len(model.Operations))
	}
}
