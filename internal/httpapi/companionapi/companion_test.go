package companionapi

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/httpapi"

	"github.com/aws/aws-lambda-go/events"

	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/companion"
	filestore "github.com/veredicto/veredicto/internal/store/file"
)

// TestCompanionRoutesOnAPIGateway drives the companion's routes with the
// sample API httpapi.Gateway events: the POST stores the inputs under the token's
// tenant and starts one execution named <tenant>-<id>; the GET reads the
// application back, and another tenant's GET is a 404.
func TestCompanionRoutesOnAPIGateway(t *testing.T) {
	svc := &companion.Service{Store: filestore.NewMemory(), Blobs: fileblob.NewDir(t.TempDir()), Analyst: companion.Offline{}, Engine: companion.NewEngine(companion.DefaultConfig())}
	var started []string
	rt := &httpapi.Gateway{Handler: httpapi.New(nil, Routes{API: &companion.API{Service: svc, FollowUp: companion.Offline{}, Start: func(ctx context.Context, name string, input []byte) error {
		started = append(started, name)
		var in companion.StartInput
		if err := json.Unmarshal(input, &in); err != nil {
			return err
		}
		_, err := svc.Intent(ctx, companion.TaskInput{StartInput: in}) // the first step, as the execution would
		return err
	}}})}
	var post events.APIGatewayV2HTTPRequest
	b, _ := os.ReadFile("../../../events/companion-api-post.json")
	if err := json.Unmarshal(b, &post); err != nil {
		t.Fatal(err)
	}
	resp, err := rt.Handle(context.Background(), post)
	if err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST: %d %s %v", resp.StatusCode, resp.Body, err)
	}
	var created companion.Created
	json.Unmarshal([]byte(resp.Body), &created)
	if len(started) != 1 || started[0] != "default-"+created.ApplicationID {
		t.Fatalf("started %v for %s", started, resp.Body)
	}
	get := post
	get.RequestContext.HTTP.Method, get.RawPath, get.Body = http.MethodGet, "/companion/applications/"+created.ApplicationID, ""
	get.RequestContext.HTTP.Path = get.RawPath
	resp, _ = rt.Handle(context.Background(), get)
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Body, `"application_id": "`+created.ApplicationID+`"`) {
		t.Errorf("GET: %d %s", resp.StatusCode, resp.Body)
	}
	get.RequestContext.Authorizer.JWT.Claims["custom:tenant"] = "globex"
	if resp, _ = rt.Handle(context.Background(), get); resp.StatusCode != http.StatusNotFound {
		t.Errorf("another tenant: %d", resp.StatusCode)
	}
	post.Body = `{"jd": "", "profile_yaml": ""}`
	if resp, _ = rt.Handle(context.Background(), post); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("empty jd: %d %s", resp.StatusCode, resp.Body)
	}
}
