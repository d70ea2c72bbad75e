package flags

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/prompts"
)

// A classification's audit record (issue 30): the start (every input
// document by its text), the contradiction judge's model calls (through
// the scope ctx carries, llm.Generate records each attempt), for every
// rule that fired the rule and the answer span behind the flag (seed 002
// keeps them out of the Flags output: they go only to the record), the
// levels and the summary's aggregates, the clock reading of
// generated_at, the output's hash and the summary entry.

// WorkflowName names a flags classification in audit records.
const WorkflowName = "flags"

// Auditor opens an execution's audit record (audit.Folders locally).
type Auditor interface {
	Open(ctx context.Context, tenant, execution string) (*audit.Recorder, error)
}

var _ Auditor = (*audit.Folders)(nil)

// Document is one input document as read: its name (a file, a request
// field) and its bytes.
type Document struct {
	Name string
	Data []byte
}

// Inputs are a classification's documents: the question set, the
// transcripts in order, the optional context pack and hedging lexicon.
type Inputs struct {
	Questions   Document
	Transcripts []Document
	Context     *Document
	Hedging     *Document
}

// recordedDoc is an input document with its id in a record.
type recordedDoc struct {
	id  string
	doc Document
}

// documents are the inputs in order, each with its id in a record.
func (in Inputs) documents() []recordedDoc {
	out := []recordedDoc{{"questions", in.Questions}}
	for i, t := range in.Transcripts {
		out = append(out, recordedDoc{fmt.Sprintf("transcripts[%d]", i), t})
	}
	if in.Context != nil {
		out = append(out, recordedDoc{"context", *in.Context})
	}
	if in.Hedging != nil {
		out = append(out, recordedDoc{"hedging", *in.Hedging})
	}
	return out
}

// Run parses the documents and classifies them (Classify), the flags_id
// derived from their bytes (NewID): what the CLI, POST /flags and a
// replay run. A bad document is an InvalidInputError naming it and the
// field.
func Run(ctx context.Context, in Inputs, judge ContradictionJudge, now func() time.Time) (Flags, []string, error) {
	qs, err := ParseQuestionSet(in.Questions.Name, in.Questions.Data)
	if err != nil {
		return Flags{}, nil, err
	}
	ids := [][]byte{in.Questions.Data}
	var ts []Transcript
	for _, d := range in.Transcripts {
		t, err := ParseTranscript(d.Name, d.Data)
		if err != nil {
			return Flags{}, nil, err
		}
		ts = append(ts, t)
		ids = append(ids, d.Data)
	}
	var pack *ContextPack
	if in.Context != nil {
		p, err := ParseContextPack(in.Context.Name, in.Context.Data)
		if err != nil {
			return Flags{}, nil, err
		}
		pack = &p
		ids = append(ids, in.Context.Data)
	}
	var markers []string
	if in.Hedging != nil {
		if markers, err = ParseMarkers(in.Hedging.Name, in.Hedging.Data); err != nil {
			return Flags{}, nil, err
		}
		ids = append(ids, in.Hedging.Data)
	}
	return Classify(ctx, qs, ts, pack, judge, Options{FlagsID: NewID(ids...), Now: now, HedgingMarkers: markers})
}

// RecordedInput is what a classification's record start holds as its
// input: each document's name (their texts are the record's documents
// "questions", "transcripts[i]", "context" and "hedging") and the file
// the output was written to, whose extension is its encoding (.yaml,
// .json).
type RecordedInput struct {
	Questions   string   `json:"questions"`
	Transcripts []string `json:"transcripts"`
	Context     string   `json:"context,omitempty"`
	Hedging     string   `json:"hedging,omitempty"`
	Output      string   `json:"output"`
}

// BlobWriter stores a classification's output (a folder, the reports
// bucket).
type BlobWriter interface {
	Put(ctx context.Context, key string, data []byte, contentType string) error
}

// RunRecorded is Run in the audit record ctx carries: the start with
// every document, the classification, then the output encoded for
// output's extension, stored in w and recorded by its hash, and the
// record's summary. It returns the output's bytes.
func RunRecorded(ctx context.Context, in Inputs, judge ContradictionJudge, now func() time.Time, tenant, output string, w BlobWriter) (Flags, []string, []byte, error) {
	if err := recordStart(ctx, in, tenant, output); err != nil {
		return Flags{}, nil, nil, err
	}
	res, warnings, err := Run(ctx, in, judge, now)
	if err != nil {
		return Flags{}, nil, nil, err
	}
	data, err := Encode(res, output)
	if err != nil {
		return Flags{}, nil, nil, err
	}
	ct := "application/yaml"
	if strings.HasSuffix(output, ".json") {
		ct = "application/json"
	}
	if err := w.Put(ctx, output, data, ct); err != nil {
		return Flags{}, nil, nil, fmt.Errorf("write %s: %w", output, err)
	}
	if err := record(ctx, func(sc *audit.Scope) error {
		if err := sc.Report(ctx, output, data); err != nil {
			return err
		}
		return sc.End(ctx)
	}); err != nil {
		return Flags{}, nil, nil, err
	}
	return res, warnings, data, nil
}

func recordStart(ctx context.Context, in Inputs, tenant, output string) error {
	return record(ctx, func(sc *audit.Scope) error {
		ri := RecordedInput{Questions: in.Questions.Name, Output: output, Transcripts: []string{}}
		for _, t := range in.Transcripts {
			ri.Transcripts = append(ri.Transcripts, t.Name)
		}
		if in.Context != nil {
			ri.Context = in.Context.Name
		}
		if in.Hedging != nil {
			ri.Hedging = in.Hedging.Name
		}
		input, err := json.Marshal(ri)
		if err != nil {
			return err
		}
		st := audit.Start{Workflow: WorkflowName, Execution: sc.Execution, Tenant: tenant, Input: input, Model: sc.Model,
			Documents: map[string]string{}}
		if sc.PromptVersion != nil {
			st.Prompts = map[string]string{ContradictionSchema: sc.PromptVersion(ContradictionSchema)}
		}
		for _, d := range in.documents() {
			h, err := sc.Recorder.Text(ctx, string(d.doc.Data))
			if err != nil {
				return err
			}
			st.Documents[d.id] = h
		}
		_, err = sc.Recorder.Append(ctx, sc.Chain, audit.KindStart, st)
		return err
	})
}

// Recorded reads a classification's inputs back from its record: the
// documents and the output file.
func Recorded(ctx context.Context, r *audit.Replay) (Inputs, string, error) {
	var ri RecordedInput
	if err := json.Unmarshal(r.Start.Input, &ri); err != nil {
		return Inputs{}, "", fmt.Errorf("the recorded input: %w", err)
	}
	doc := func(id, name string) (Document, error) {
		b, err := r.Document(ctx, id)
		return Document{Name: name, Data: b}, err
	}
	var in Inputs
	var err error
	if in.Questions, err = doc("questions", ri.Questions); err != nil {
		return Inputs{}, "", err
	}
	for i, name := range ri.Transcripts {
		d, err := doc(fmt.Sprintf("transcripts[%d]", i), name)
		if err != nil {
			return Inputs{}, "", err
		}
		in.Transcripts = append(in.Transcripts, d)
	}
	for _, o := range []struct {
		id, name string
		to       **Document
	}{{"context", ri.Context, &in.Context}, {"hedging", ri.Hedging, &in.Hedging}} {
		if o.name == "" {
			continue
		}
		d, err := doc(o.id, o.name)
		if err != nil {
			return Inputs{}, "", err
		}
		*o.to = &d
	}
	return in, ri.Output, nil
}

// Encode writes the flags as the output file's extension says: YAML (the
// CLI's, indented by two) or JSON.
func Encode(f Flags, output string) ([]byte, error) {
	switch strings.ToLower(path.Ext(output)) {
	case ".json":
		return json.Marshal(f)
	case ".yaml", ".yml":
		var buf bytes.Buffer
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(f); err != nil {
			return nil, fmt.Errorf("encode flags: %w", err)
		}
		if err := enc.Close(); err != nil {
			return nil, fmt.Errorf("encode flags: %w", err)
		}
		return buf.Bytes(), nil
	}
	return nil, &veredicto.InvalidInputError{File: output, Problem: "is neither .yaml nor .json"}
}

// NewExecution is a new execution name for a classification: "flags-"
// and 16 random hex digits.
func NewExecution() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "flags-" + hex.EncodeToString(b[:])
}

// Open starts the record of tenant's classification execution in a's
// store: ctx with its main chain's scope, model naming the contradiction
// judge, replay (nil in a run) answering it in a replay.
func Open(ctx context.Context, a Auditor, tenant, execution string, model veredicto.ModelInfo, replay *audit.Replay) (context.Context, error) {
	if !audit.ValidExecution(execution) {
		return ctx, &veredicto.InvalidInputError{File: "flags execution", Field: "execution",
			Problem: fmt.Sprintf("%q is not an execution name: 1-%d characters, no slash, space or control character", execution, audit.MaxExecutionName)}
	}
	rec, err := a.Open(ctx, tenant, execution)
	if err != nil {
		return ctx, fmt.Errorf("open the audit record of %s: %w", execution, err)
	}
	return audit.WithScope(ctx, &audit.Scope{Recorder: rec, Execution: execution, Chain: audit.MainChain, Model: model,
		PromptVersion: prompts.PromptVersion, Replay: replay}), nil
}

// record runs f on ctx's audit scope, when there is one.
func record(ctx context.Context, f func(*audit.Scope) error) error {
	if s := audit.ScopeFrom(ctx); s != nil {
		if err := f(s); err != nil {
			return fmt.Errorf("audit: %w", err)
		}
	}
	return nil
}

func decide(ctx context.Context, d audit.Decision) error {
	return record(ctx, func(sc *audit.Scope) error { return sc.Decide(ctx, d) })
}
