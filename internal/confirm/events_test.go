package confirm_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	. "github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/httpapi/confirmapi"
)

// TestSampleEvents runs events/confirm.json through ConfirmFunction as the
// Lambda runtime would, then the confirmations API samples on the result.
func TestSampleEvents(t *testing.T) {
	f := newFixture(t)
	payload, err := os.ReadFile("../../events/confirm.json")
	if err != nil {
		t.Fatal(err)
	}
	out, err := lambda.NewHandler(f.svc.Confirm).Invoke(t.Context(), payload)
	if err != nil {
		t.Fatalf("ConfirmFunction on events/confirm.json: %v", err)
	}
	var resp Response
	if err := json.Unmarshal(out, &resp); err != nil || !resp.Created || !ValidID(resp.ID) {
		t.Fatalf("response %s (%v)", out, err)
	}
	api := (&httpapi.Gateway{Handler: httpapi.New(nil, confirmapi.Routes{Service: f.svc})}).Handle
	read := func(name string) events.APIGatewayV2HTTPRequest {
		b, err := os.ReadFile("../../events/" + name)
		if err != nil {
			t.Fatal(err)
		}
		var req events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(b, &req); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return req
	}
	get, err := api(t.Context(), read("confirmations-get.json"))
	if err != nil || get.StatusCode != 200 || !strings.Contains(get.Body, resp.ID) {
		t.Fatalf("confirmations-get.json: %d %s (%v)", get.StatusCode, get.Body, err)
	}
	post := read("confirmations-post.json")
	post.Body = strings.Replace(post.Body, "cf_00000000000000000000000000000000", resp.ID, 1)
	res, err := api(t.Context(), post)
	if err != nil || res.StatusCode != 200 || !strings.Contains(res.Body, `"decided_by": "consultant-42"`) {
		t.Fatalf("confirmations-post.json: %d %s (%v)", res.StatusCode, res.Body, err)
	}
}
