package flags

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/veredicto/veredicto"
)

// Request is the body of POST /flags: the same three documents as the CLI
// reads, as JSON.
type Request struct {
	Questions   json.RawMessage   `json:"questions"`
	Transcripts []json.RawMessage `json:"transcripts"`
	Context     json.RawMessage   `json:"context,omitempty"`
}

// Evaluate parses the request's documents and classifies them, as the CLI
// does for files (Run). A bad document is an InvalidInputError naming the
// document and field; any other error is the contradiction judge's.
func Evaluate(ctx context.Context, req Request, judge ContradictionJudge, now func() time.Time) (Flags, []string, error) {
	in, err := req.Inputs()
	if err != nil {
		return Flags{}, nil, err
	}
	return Run(ctx, in, judge, now)
}

// Inputs are the request's documents, each named by its field.
func (req Request) Inputs() (Inputs, error) {
	if len(req.Questions) == 0 || len(req.Transcripts) == 0 {
		return Inputs{}, &veredicto.InvalidInputError{File: "body", Problem: "needs \"questions\" and at least one entry in \"transcripts\""}
	}
	in := Inputs{Questions: Document{Name: "questions", Data: req.Questions}}
	for i, raw := range req.Transcripts {
		in.Transcripts = append(in.Transcripts, Document{Name: fmt.Sprintf("transcripts[%d]", i), Data: raw})
	}
	if len(req.Context) > 0 && string(req.Context) != "null" {
		in.Context = &Document{Name: "context", Data: req.Context}
	}
	return in, nil
}
