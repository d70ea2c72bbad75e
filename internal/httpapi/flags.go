package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/veredicto/veredicto/internal/flags"
)

// Request is the body of POST /flags: the same three documents as the CLI
// reads, as JSON.
type Request struct {
	Questions   json.RawMessage   `json:"questions"`
	Transcripts []json.RawMessage `json:"transcripts"`
	Context     json.RawMessage   `json:"context,omitempty"`
}

// Handler serves POST /flags (API Gateway HTTP API, payload 2.0) and
// answers with the Flags document as JSON.
type Handler struct {
	Judge  flags.ContradictionJudge
	Now    func() time.Time
	Logger *slog.Logger
}

func jsonResponse(status int, v any) events.APIGatewayV2HTTPResponse {
	b, _ := json.MarshalIndent(v, "", "  ")
	return events.APIGatewayV2HTTPResponse{StatusCode: status, Body: string(b) + "\n", Headers: map[string]string{"Content-Type": "application/json"}}
}

func errorResponse(status int, msg string) events.APIGatewayV2HTTPResponse {
	return jsonResponse(status, map[string]string{"error": msg})
}

// Handle classifies the request's documents. Bad documents are a 400 that
// names the document and field; a judge failure is a 502.
func (h *Handler) Handle(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	if req.RequestContext.HTTP.Method != http.MethodPost {
		return errorResponse(http.StatusMethodNotAllowed, "use POST /flags"), nil
	}
	var body Request
	dec := json.NewDecoder(strings.NewReader(req.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		return errorResponse(http.StatusBadRequest, "body must be JSON {\"questions\": {…}, \"transcripts\": [{…}], \"context\": {…}}: "+err.Error()), nil
	}
	if len(body.Questions) == 0 || len(body.Transcripts) == 0 {
		return errorResponse(http.StatusBadRequest, "body needs \"questions\" and at least one entry in \"transcripts\""), nil
	}
	inputs := [][]byte{body.Questions}
	qs, err := flags.ParseQuestionSet("questions", body.Questions)
	if err != nil {
		return errorResponse(http.StatusBadRequest, err.Error()), nil
	}
	var ts []flags.Transcript
	for i, raw := range body.Transcripts {
		t, err := flags.ParseTranscript(fmt.Sprintf("transcripts[%d]", i), raw)
		if err != nil {
			return errorResponse(http.StatusBadRequest, err.Error()), nil
		}
		ts = append(ts, t)
		inputs = append(inputs, raw)
	}
	var pack *flags.ContextPack
	if len(body.Context) > 0 && string(body.Context) != "null" {
		p, err := flags.ParseContextPack("context", body.Context)
		if err != nil {
			return errorResponse(http.StatusBadRequest, err.Error()), nil
		}
		pack = &p
		inputs = append(inputs, body.Context)
	}
	res, warnings, err := flags.Classify(ctx, qs, ts, pack, h.Judge, flags.Options{FlagsID: flags.NewID(inputs...), Now: h.Now})
	var bad *flags.InvalidInputError
	switch {
	case errors.As(err, &bad):
		return errorResponse(http.StatusBadRequest, err.Error()), nil
	case err != nil:
		h.logger().ErrorContext(ctx, "flags classification failed", "error_type", fmt.Sprintf("%T", err))
		return errorResponse(http.StatusBadGateway, "the contradiction judge failed; retry later"), nil
	}
	resp := jsonResponse(http.StatusOK, struct {
		flags.Flags
		Warnings []string `json:"warnings"`
	}{res, append([]string{}, warnings...)})
	return resp, nil
}

func (h *Handler) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}
