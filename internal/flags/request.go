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
// does for files. A bad document is an InvalidInputError naming the
// document and field; any other error is the contradiction judge's.
func Evaluate(ctx context.Context, req Request, judge ContradictionJudge, now func() time.Time) (Flags, []string, error) {
	if len(req.Questions) == 0 || len(req.Transcripts) == 0 {
		return Flags{}, nil, &veredicto.InvalidInputError{File: "body", Problem: "needs \"questions\" and at least one entry in \"transcripts\""}
	}
	inputs := [][]byte{req.Questions}
	qs, err := ParseQuestionSet("questions", req.Questions)
	if err != nil {
		return Flags{}, nil, err
	}
	var ts []Transcript
	for i, raw := range req.Transcripts {
		t, err := ParseTranscript(fmt.Sprintf("transcripts[%d]", i), raw)
		if err != nil {
			return Flags{}, nil, err
		}
		ts = append(ts, t)
		inputs = append(inputs, raw)
	}
	var pack *ContextPack
	if len(req.Context) > 0 && string(req.Context) != "null" {
		p, err := ParseContextPack("context", req.Context)
		if err != nil {
			return Flags{}, nil, err
		}
		pack = &p
		inputs = append(inputs, req.Context)
	}
	return Classify(ctx, qs, ts, pack, judge, Options{FlagsID: NewID(inputs...), Now: now})
}
