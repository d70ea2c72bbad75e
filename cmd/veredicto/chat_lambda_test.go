package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/veredicto/veredicto/internal/chat"
)

// TestLambdaInvokeChat runs the chat functions on their events/ samples
// with the local adapters: the HTTP function runs the turn in the request
// (no queue locally), the queue worker runs a queued turn once (a
// redelivered message does not run it again), and the metrics count both.
func TestLambdaInvokeChat(t *testing.T) {
	data := localData(t)
	// The sample asks to compare two candidates of a search that was never
	// evaluated here: the offline supervisor delegates, the analyst says
	// there is no report, and the turn still ends with an answer.
	code, out, errs := invoke(t, data, "ChatFunction", "../../events/chat-post.json")
	if code != exitOK || !strings.Contains(out, `"statusCode": 200`) || !strings.Contains(out, `\"delegated\": \"search-analyst\"`) ||
		!strings.Contains(out, "no hay informe de c-001") {
		t.Fatalf("ChatFunction: exit %d\n%s\n%s", code, out, errs)
	}
	for i := 0; i < 2; i++ {
		code, out, errs = invoke(t, data, "ChatTurnFunction", "../../events/chatturn-sqs.json")
		if code != exitOK || !strings.Contains(out, `"batchItemFailures": []`) && !strings.Contains(out, `"batchItemFailures": null`) {
			t.Fatalf("ChatTurnFunction: exit %d\n%s\n%s", code, out, errs)
		}
	}
	code, out, errs = invoke(t, data, "ChatFunction", "../../events/chat-metrics.json")
	// Turn 1 ran in the request; the queued turn 1 of the sample found it
	// stored and did not run again.
	var resp events.APIGatewayV2HTTPResponse
	var m chat.Metrics
	if code != exitOK || json.Unmarshal([]byte(out), &resp) != nil || json.Unmarshal([]byte(resp.Body), &m) != nil {
		t.Fatalf("metrics: exit %d\n%s\n%s", code, out, errs)
	}
	if a := m.Agents["search-analyst"]; m.Turns != 1 || a.Intent != 1 || a.Delegated != 1 || a.Failed != 1 {
		t.Errorf("metrics %+v, want 1 turn, search-analyst intent 1, delegated 1, failed 1", m)
	}
}

// TestLambdaInvokeChatLink runs ChatLinkFunction on its events/ samples
// with the local adapters: no conversation started those executions here,
// so nothing is linked and nothing said, and that is no error.
func TestLambdaInvokeChatLink(t *testing.T) {
	data := localData(t)
	for _, ev := range []string{"chatlink-running.json", "chatlink-succeeded.json"} {
		code, out, errs := invoke(t, data, "ChatLinkFunction", "../../events/"+ev)
		var res chat.StatusChangeResult
		if code != exitOK || json.Unmarshal([]byte(out), &res) != nil || res.Execution == "" || res.Linked != 0 || res.Said != 0 {
			t.Errorf("%s: exit %d, %s %s; want the execution read, nothing linked", ev, code, out, errs)
		}
	}
}
