package eventsapi_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	fileconfirm "github.com/veredicto/veredicto/internal/confirm/file"
	"github.com/veredicto/veredicto/internal/httpapi/eventsapi"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/eventlog"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/httpapi/confirmapi"
	"github.com/veredicto/veredicto/internal/poll"
	"github.com/veredicto/veredicto/internal/stream"
	streamengine "github.com/veredicto/veredicto/internal/stream/engine"
)

// TestConfirmationWorkflowOnTheStream runs a workflow that asks for a
// confirmation through the local engine, with the history recorded on the
// stream as serve records it, and follows it as a browser would: the
// stream shows the steps, the pending confirmation, its resolution and the
// finish, in that order, and closes.
func TestConfirmationWorkflowOnTheStream(t *testing.T) {
	const def = `{"StartAt":"Prepare","States":{
	  "Prepare":{"Type":"Pass","Result":{"candidate":"c-004"},"ResultPath":"$.package","Next":"AskReview"},
	  "AskReview":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
	    "Parameters":{"FunctionName":"ConfirmFunction","Payload":{"task_token.$":"$$.Task.Token","toolName":"senior_review",
	      "category":"decision","sensitivity":"high","undoable":false,"preview.$":"$.package","tenant":"acme"}},
	    "TimeoutSeconds":3600,"ResultPath":"$.review","Next":"Done"},
	  "Done":{"Type":"Succeed"}}}`
	f := newSSE(t, &eventsapi.Routes{})
	svc := &confirm.Service{Store: fileconfirm.New(t.TempDir()), Events: f.log, Logger: slog.New(slog.DiscardHandler)}
	reg := asl.NewRegistry()
	reg.Register("ConfirmFunction", asl.Typed(svc.Confirm))
	eng := asl.New(reg)
	svc.Tasks = engineSender{eng}
	agents, err := stream.AgentsOf([]byte(def))
	if err != nil {
		t.Fatal(err)
	}
	sm, err := asl.Parse([]byte(def))
	if err != nil {
		t.Fatal(err)
	}
	var execARN string
	rec := &stream.Recorder{Log: f.log, AgentsFor: func(string) map[string]string { return agents }}
	hook := streamengine.Hook(rec, slog.New(slog.DiscardHandler))
	started := make(chan struct{})
	x, err := eng.Start(t.Context(), sm, json.RawMessage(`{}`), asl.StartOptions{Name: "review-1", StateMachineName: "Review",
		OnEvent: func(ev asl.Event) { <-started; hook("acme", execARN, ev) }})
	if err != nil {
		t.Fatal(err)
	}
	execARN = x.ID
	close(started)

	// Wait for the confirmation, then follow the stream from its start.
	var id string
	poll.Until(t, 10*time.Second, func() bool {
		if list, _, _ := svc.List(t.Context(), "acme"); len(list) == 1 {
			id = list[0].ID
		}
		return id != ""
	}, "a pending confirmation")
	resp, err := f.open(t, t.Context(), "acme", execARN, "")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("open stream: %v %v", resp, err)
	}
	defer resp.Body.Close()
	msgs := make(chan sseMsg, 64)
	go readSSE(resp.Body, msgs, nil)

	tok, _ := auth.SignHS256(f.key, auth.Claims{Subject: "ana", Tenant: "acme", ExpiresAt: time.Now().Add(time.Hour)}, "")
	authn := &httpapi.Authenticator{Tokens: &auth.HS256{Key: f.key}, Logger: slog.New(slog.DiscardHandler)}
	h := authn.Wrap(httpapi.New(slog.New(slog.DiscardHandler), confirmapi.Routes{Service: svc}))
	req, _ := http.NewRequest("POST", "/api/confirmations", strings.NewReader(`{"id":"`+id+`","approved":true}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		t.Fatalf("approve: %d %s", w.Code, w.Body.String())
	}

	var got []string
	for m := range msgs {
		var d struct {
			Type string      `json:"type"`
			Step stream.Step `json:"step"`
			ID   string      `json:"id"`
		}
		json.Unmarshal([]byte(m.data), &d)
		switch d.Type {
		case eventlog.TypeExecutionStep:
			got = append(got, d.Step.Content)
		default:
			got = append(got, d.Type)
		}
	}
	want := []string{
		"Ejecución inicia",
		"Preparación inicia", "Preparación termina",
		"Revisión senior inicia",
		"pending-confirmation",
		"confirmation-resolved",
		"Revisión senior termina",
		"Fin inicia", "Fin termina",
		"Ejecución termina con éxito",
		"finish",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stream:\n%s\n\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// engineSender resumes the local engine's tasks with the sfn client's
// method shapes.
type engineSender struct{ eng *asl.Engine }

func (e engineSender) SendTaskSuccess(_ context.Context, in *sfn.SendTaskSuccessInput, _ ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error) {
	return &sfn.SendTaskSuccessOutput{}, e.eng.SendTaskSuccess(*in.TaskToken, json.RawMessage(*in.Output))
}

func (e engineSender) SendTaskFailure(_ context.Context, in *sfn.SendTaskFailureInput, _ ...func(*sfn.Options)) (*sfn.SendTaskFailureOutput, error) {
	return &sfn.SendTaskFailureOutput{}, e.eng.SendTaskFailure(*in.TaskToken, *in.Error, *in.Cause)
}
