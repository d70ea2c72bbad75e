package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/audit"
	fileblob "github.com/veredicto/veredicto/internal/blob/file"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/chat"
	"github.com/veredicto/veredicto/internal/companion"
	"github.com/veredicto/veredicto/internal/confirm"
	confirmengine "github.com/veredicto/veredicto/internal/confirm/engine"
	"github.com/veredicto/veredicto/internal/confirm/memory"
	"github.com/veredicto/veredicto/internal/debate"
	"github.com/veredicto/veredicto/internal/flags"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/search/gems"
	"github.com/veredicto/veredicto/internal/search/offline"
	filestore "github.com/veredicto/veredicto/internal/store/file"
	"github.com/veredicto/veredicto/prompts"
	"github.com/veredicto/veredicto/statemachines"
)

// AuditPrefix is where the reports bucket (or folder) keeps the audit
// records: audit/<tenant>/<execution>/.
const AuditPrefix = "audit"

// Record is an audit record found on this machine: its folder and the
// folder the report paths it records are relative to.
type Record struct {
	Dir   string
	Files string
}

// Store is the record's store.
func (r Record) Store() *audit.Dir { return audit.NewDir(r.Dir) }

// ReadFile reads a report the record names, confined to the files folder.
func (r Record) ReadFile(ctx context.Context, p string) ([]byte, error) {
	return fileblob.NewDir(r.Files).Get(ctx, p)
}

// LocateRecord finds the record PATH names: a run's output folder (its
// audit/ record, reports beside it), a record folder itself, or an
// execution (its ARN or name) kept under the data folder by "serve"
// (DATA/reports/audit/<tenant>/<execution>/; tenant narrows the search
// when two tenants used the name).
func LocateRecord(p, data, tenant string) (Record, error) {
	isRecord := func(dir string) bool {
		st, err := os.Stat(filepath.Join(dir, "chains"))
		return err == nil && st.IsDir()
	}
	switch {
	case isRecord(filepath.Join(p, "audit")):
		return Record{Dir: filepath.Join(p, "audit"), Files: p}, nil
	case isRecord(p):
		// DATA/reports/audit/<tenant>/<execution>: the reports folder is
		// three up; a CLI run's OUT/audit: one up.
		up3 := filepath.Dir(filepath.Dir(filepath.Dir(p)))
		if filepath.Base(filepath.Dir(filepath.Dir(p))) == AuditPrefix {
			return Record{Dir: p, Files: up3}, nil
		}
		return Record{Dir: p, Files: filepath.Dir(p)}, nil
	}
	if _, err := os.Stat(p); err == nil {
		return Record{}, fmt.Errorf("%s holds no audit record (no audit/chains or chains folder)", p)
	}
	name := p
	if i := strings.LastIndex(p, ":"); strings.HasPrefix(p, "arn:") && i >= 0 {
		name = p[i+1:]
	}
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return Record{}, fmt.Errorf("%s is neither a folder nor an execution", p)
	}
	_, reports, _ := LocalLayout(data)
	root := filepath.Join(reports, AuditPrefix)
	var found []Record
	tenants, _ := os.ReadDir(root)
	for _, t := range tenants {
		if tenant != "" && t.Name() != tenant {
			continue
		}
		dir := filepath.Join(root, t.Name(), name)
		if isRecord(dir) {
			found = append(found, Record{Dir: dir, Files: reports})
		}
	}
	switch len(found) {
	case 0:
		return Record{}, &veredicto.NotFoundError{What: fmt.Sprintf("audit record of execution %s under %s", name, root)}
	case 1:
		return found[0], nil
	}
	return Record{}, fmt.Errorf("execution %s has records of %d tenants under %s: name one with --tenant", name, len(found), root)
}

// ArchiveRecord moves the record an earlier run left in out/audit to
// out/.veredicto/audit-history/<time>/, so a new run's record starts
// empty and the earlier one is kept. It returns where it went ("" when
// there was none).
func ArchiveRecord(out string) (string, error) {
	cur := filepath.Join(out, "audit")
	if _, err := os.Stat(cur); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	hist := filepath.Join(out, ".veredicto", "audit-history")
	if err := os.MkdirAll(hist, 0o700); err != nil {
		return "", err
	}
	stamp := time.Now().UTC().Format("20060102T150405Z")
	for n := 0; ; n++ {
		dst := filepath.Join(hist, stamp)
		if n > 0 {
			dst += fmt.Sprintf("-%d", n)
		}
		if _, err := os.Stat(dst); err == nil {
			continue
		}
		return dst, os.Rename(cur, dst)
	}
}

// recordedDocs reads a search's documents from its record: a replay's
// inputs.
type recordedDocs struct {
	r      *audit.Replay
	prefix string
}

func (d recordedDocs) Get(ctx context.Context, key string) ([]byte, error) {
	id, ok := strings.CutPrefix(key, d.prefix)
	if !ok {
		return nil, &veredicto.NotFoundError{What: "recorded document " + key}
	}
	return d.r.Document(ctx, id)
}

func (d recordedDocs) List(_ context.Context, prefix string) ([]string, error) {
	var out []string
	for id := range d.r.Start.Documents {
		if k := d.prefix + id; strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out, nil
}

// NotReplayableError: the record is of a workflow replay verifies but
// does not re-run, and Why says why.
type NotReplayableError struct {
	Workflow string
	Why      string
}

func (e *NotReplayableError) Error() string {
	return fmt.Sprintf("a %s record is verified but not replayed: %s", e.Workflow, e.Why)
}

// ReplayResult is what a replay wrote: each report the run recorded, and
// whether the replay wrote it byte for byte.
type ReplayResult struct {
	Files     []ReplayedFile
	Execution string
	// NotReplayed names what the record holds after the part replayed
	// (a companion's follow-up phases), in order.
	NotReplayed []string
}

// ReplayedFile is one report of the run and its replay.
type ReplayedFile struct {
	Path      string `json:"path"`
	Identical bool   `json:"identical"`
}

// Replay re-runs the execution rec holds into out, with no provider and
// no network: model answers, clock readings and people's decisions come
// from the record. A replay that leaves the record's path is a
// *audit.DivergedError naming the agent and candidate.
func Replay(ctx context.Context, rec Record, out string) (*ReplayResult, error) {
	r, err := audit.OpenReplay(ctx, rec.Store())
	if err != nil {
		return nil, err
	}
	switch r.Start.Workflow {
	case search.WorkflowName:
		return replaySearch(ctx, r, rec, out)
	case debate.WorkflowName:
		return replayDebate(ctx, r, rec, out)
	case flags.WorkflowName:
		return replayFlags(ctx, r, rec, out)
	case companion.WorkflowName:
		return replayCompanion(ctx, r, rec, out)
	case chat.WorkflowName:
		return nil, &NotReplayableError{Workflow: chat.WorkflowName, Why: "a turn's tools read and change what lives outside the record " +
			"(the searches' reports, the confirmations, the workflows a turn starts, each with a record of its own), and a turn writes no report " +
			"to compare: its model calls, delegations and confirmations are in the record, which verify checks"}
	}
	return nil, fmt.Errorf("the record is of a %q execution, which replay does not know", r.Start.Workflow)
}

func replaySearch(ctx context.Context, r *audit.Replay, rec Record, out string) (*ReplayResult, error) {
	var in search.StartInput
	if err := json.Unmarshal(r.Start.Input, &in); err != nil {
		return nil, fmt.Errorf("the recorded input: %w", err)
	}
	prefix := in.InputPrefix
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	var analyst search.Analyst = offline.New()
	if r.Start.Model.Provider != "offline" {
		analyst = gems.New(r, r.Start.Model)
	}
	kv := filestore.NewLocal(filepath.Join(out, ".veredicto", "context"))
	seeds, err := r.Seeds(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range seeds {
		if _, err := kv.PutIfAbsent(ctx, s.Key, s.Record); err != nil {
			return nil, fmt.Errorf("seed stage %s: %w", s.Key, err)
		}
	}
	if _, err := ArchiveRecord(out); err != nil {
		return nil, err
	}
	svc := &search.Service{Inputs: recordedDocs{r: r, prefix: prefix}, Reports: fileblob.NewDir(out), Store: kv, Analyst: analyst,
		PromptVersions: prompts.PromptVersion, Audit: &audit.Folders{Root: filepath.Join(out, "audit"), Single: true}, Replay: r}
	reg := catalog.SearchRegistry(svc, &confirm.Service{Store: memory.New()})
	return replayed(ctx, r, rec, out, runReplay(ctx, r, reg, statemachines.ExecutiveSearch, "executive_search"))
}

func causeOf(res *asl.Result) string {
	if res.Cause != "" {
		return res.Error + ": " + res.Cause
	}
	return res.Error
}

// compareReports checks each report the record names against the
// replay's.
func compareReports(ctx context.Context, rec Record, out string) (*ReplayResult, error) {
	files, err := audit.Reports(ctx, rec.Store())
	if err != nil {
		return nil, err
	}
	return compareFiles(ctx, files, out), nil
}

// compareFiles checks each recorded file against the replay's in out.
func compareFiles(ctx context.Context, files []audit.Report, out string) *ReplayResult {
	res := &ReplayResult{}
	for _, f := range files {
		b, err := fileblob.NewDir(out).Get(ctx, f.Path)
		res.Files = append(res.Files, ReplayedFile{Path: f.Path, Identical: err == nil && audit.Hash(b) == f.SHA256})
	}
	slices.SortFunc(res.Files, func(a, b ReplayedFile) int { return strings.Compare(a.Path, b.Path) })
	return res
}

// replayedReviews answers ConfirmFunction from the record: a review's
// lookup finds the decision the consultant took (or the question still
// open), and a wait gets the recorded answer delivered — approval,
// rejection, or the timeout it met.
func replayedReviews(r *audit.Replay, eng *asl.Engine) asl.Handler {
	tasks := confirmengine.Tasks{Engine: eng}
	return func(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
		var in confirm.Request
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, err
		}
		var pv struct {
			Candidate string `json:"candidate_id"`
		}
		_ = json.Unmarshal(in.Preview, &pv)
		h, ok := r.HumanFor(pv.Candidate)
		if !ok {
			return nil, r.Diverge(&audit.DivergedError{Chain: "candidate/" + pv.Candidate, Candidate: pv.Candidate,
				What: "the replay asks the senior consultant; the run did not"})
		}
		if h.Status == search.ReviewUnavailable {
			return nil, audit.Replayed(h.Error, h.Cause)
		}
		decision := &confirm.Decision{Approved: h.Status == search.ReviewApproved, DecidedBy: h.Principal, DecidedAt: h.DecidedAt,
			Comment: h.Comment, PreviewSHA256: h.Preview}
		decided := h.Status == search.ReviewApproved || h.Status == search.ReviewRejected
		if in.TaskToken == "" {
			resp := confirm.Response{ID: h.Confirmation, Status: confirm.StatusPending}
			if decided {
				resp.Status, resp.Decision = h.Status, decision
			}
			return json.Marshal(resp)
		}
		// The wait: deliver the recorded answer once the task waits.
		go func() {
			for range 200 {
				var err error
				switch h.Status {
				case search.ReviewApproved:
					out, _ := json.Marshal(decision)
					_, err = tasks.SendTaskSuccess(context.Background(), sendSuccess(in.TaskToken, string(out)))
				case search.ReviewRejected:
					cause, _ := json.Marshal(map[string]any{"id": h.Confirmation, "approved": false, "decided_by": h.Principal,
						"decided_at": h.DecidedAt, "comment": h.Comment, "preview_sha256": h.Preview})
					_, err = tasks.SendTaskFailure(context.Background(), sendFailure(in.TaskToken, veredicto.NameConfirmationRejected, string(cause)))
				default: // expired: the wait met its timeout
					_, err = tasks.SendTaskFailure(context.Background(), sendFailure(in.TaskToken, "States.Timeout", "the senior review expired without a decision"))
				}
				if err == nil {
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
		return json.Marshal(confirm.Response{ID: h.Confirmation, Created: true, Status: confirm.StatusPending})
	}
}

func sendSuccess(token, output string) *sfn.SendTaskSuccessInput {
	return &sfn.SendTaskSuccessInput{TaskToken: &token, Output: &output}
}

func sendFailure(token, name, cause string) *sfn.SendTaskFailureInput {
	return &sfn.SendTaskFailureInput{TaskToken: &token, Error: &name, Cause: &cause}
}
