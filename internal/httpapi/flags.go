package httpapi

import (
	"context"
	"fmt"
	"net/http"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/flags"
)

// flags serves POST /flags: the Flags document of the posted documents as
// JSON. Bad documents are a 400 that names the document and field; a judge
// failure is a 502.
func (rt *Router) flags(ctx context.Context, req Request) Response {
	if req.Method != http.MethodPost {
		return errorResponse(http.StatusMethodNotAllowed, "use POST /flags")
	}
	var body flags.Request
	if err := decodeBody(req.Body, &body, `{"questions": {…}, "transcripts": [{…}], "context": {…}}`); err != nil {
		return errorResponse(http.StatusBadRequest, err.Error())
	}
	res, warnings, err := flags.Evaluate(ctx, body, rt.Judge, rt.Now)
	switch {
	case errorKind(err) == veredicto.NameInvalidInput:
		return errorResponse(http.StatusBadRequest, err.Error())
	case err != nil:
		rt.logger().ErrorContext(ctx, "flags classification failed", "error_type", fmt.Sprintf("%T", err))
		return errorResponse(http.StatusBadGateway, "the contradiction judge failed; retry later")
	}
	return jsonResponse(http.StatusOK, struct {
		flags.Flags
		Warnings []string `json:"warnings"`
	}{res, append([]string{}, warnings...)})
}
