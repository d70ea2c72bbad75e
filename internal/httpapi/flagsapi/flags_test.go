package flagsapi

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/httpapi"

	"github.com/aws/aws-lambda-go/events"

	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/flags"
)

type flagsResponse struct {
	StatusCode int
	Body       string
}

func postFlags(t *testing.T, body string) flagsResponse {
	t.Helper()
	h := httpapi.New(nil, Routes{Judge: flags.OfflineJudge{}, Now: func() time.Time { return time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC) }})
	r := httptest.NewRequest("POST", "/flags", strings.NewReader(body))
	r = r.WithContext(auth.WithPrincipal(r.Context(), auth.Principal{Name: "ana", Tenant: "acme", Via: auth.ViaJWT}))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return flagsResponse{w.Code, w.Body.String()}
}

func TestHTTPHandlerClassifiesTheExampleEvent(t *testing.T) {
	b, err := os.ReadFile("../../../events/flags-post.json")
	if err != nil {
		t.Fatal(err)
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	resp := postFlags(t, ev.Body)
	var got flags.Flags
	if err := json.Unmarshal([]byte(resp.Body), &got); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %s %v", resp.StatusCode, resp.Body, err)
	}
	if len(got.ByQuestion) != 6 || got.Summary.OverallVerbalRisk != "alto" || !strings.HasPrefix(got.FlagsID, "fl_") {
		t.Errorf("flags %+v", got)
	}
}

func TestHTTPHandlerRejectsBadDocuments(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"questions": 1`, "body: not valid JSON"},
		{`{"questions": {}, "transcripts": [], "extra": 1}`, "extra: is not a known field"},
		{`{"questions": {"question_set_id": "q", "questions": []}}`, "at least one entry"},
		{`{"questions": {"question_set_id": "q", "questions": [{"question_id": "a", "target": "rrhh", "question_text": "¿x?", "closure_rule": "abierta"}]},
		  "transcripts": [{"transcript_id": "t", "target": "rrhh", "answers": [{"question_id": "zz", "answer_text": "x", "forced_closure": false}]}]}`, "transcripts[0]"},
	}
	for _, tt := range tests {
		resp := postFlags(t, tt.body)
		if resp.StatusCode != 400 || !strings.Contains(resp.Body, tt.want) {
			t.Errorf("%s: %d %s; want 400 mentioning %q", tt.body, resp.StatusCode, resp.Body, tt.want)
		}
	}
}
