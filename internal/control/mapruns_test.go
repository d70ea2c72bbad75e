package control

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/blob/file"
)

// keysMap is a Distributed Map over the objects of a prefix of the inputs
// bucket, in batches, each child checking its batch's keys.
func keysMap(prefix, extra string) string {
	return `{"StartAt":"Each","States":{"Each":{"Type":"Map","Label":"Files",
	  "ItemReader":{"Resource":"arn:aws:states:::s3:listObjectsV2","Parameters":{"Bucket":"veredicto-inputs","Prefix":"` + prefix + `"}},
	  "ItemSelector":{"key.$":"$$.Map.Item.Value.Key"},
	  "ItemBatcher":{"MaxItemsPerBatch":5},` + extra + `
	  "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},
	    "StartAt":"Check","States":{"Check":{"Type":"Task","Resource":"${KeysFunctionArn}","End":true}}},
	  "End":true}}}`
}

// keysFixture counts the calls of KeysFunction by key and fails a batch
// holding a "bad" key while failing says so.
type keysFixture struct {
	mu      sync.Mutex
	calls   map[string]int
	failing bool
}

// BadKeyError is KeysFunction's failure.
type BadKeyError struct{ Key string }

func (e *BadKeyError) Error() string { return "bad key " + e.Key }

func (k *keysFixture) registry() *asl.Registry {
	reg := asl.NewRegistry()
	reg.Register("KeysFunction", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		var b struct{ Items []struct{ Key string } }
		if err := json.Unmarshal(in, &b); err != nil {
			return nil, err
		}
		k.mu.Lock()
		defer k.mu.Unlock()
		keys := make([]string, 0, len(b.Items))
		for _, it := range b.Items {
			k.calls[it.Key]++
			keys = append(keys, it.Key)
			if k.failing && strings.Contains(it.Key, "bad") {
				return nil, &BadKeyError{Key: it.Key}
			}
		}
		return json.Marshal(keys)
	})
	return reg
}

func (k *keysFixture) callsOf(key string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.calls[key]
}

// seedInputs writes n item objects and the bad ones under prefix of the
// inputs bucket of data.
func seedInputs(t *testing.T, data, prefix string, n int, bad ...string) {
	t.Helper()
	in := file.NewDir(filepath.Join(data, "inputs"))
	for i := range n {
		if err := in.Put(context.Background(), fmt.Sprintf("%sitem-%03d.json", prefix, i), []byte(`{}`), ""); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range bad {
		if err := in.Put(context.Background(), prefix+b, []byte(`{"bad":true}`), ""); err != nil {
			t.Fatal(err)
		}
	}
}

func openWithData(t *testing.T, dir, data string, reg *asl.Registry) *Manager {
	t.Helper()
	m, err := Open(context.Background(), Config{Dir: dir, Data: data, Registry: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// startAcme creates the state machine (again: the same definition is the
// same machine) and starts an execution of it for tenant acme.
func startAcme(t *testing.T, m *Manager, machine, def, name string) Execution {
	t.Helper()
	ctx := context.Background()
	if _, err := m.CreateStateMachine(ctx, machine, def, "", ""); err != nil {
		t.Fatal(err)
	}
	x, err := m.StartExecution(ctx, StateMachineARN(machine), name, `{"tenant":"acme"}`)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func ended(x Execution) bool { return x.Status != asl.StatusRunning }

// TestDistributedMapRecordsItsChildren: a Distributed Map over a prefix of
// the inputs bucket runs its batches as child executions recorded under
// its map run, tolerates the failed batch, writes its results to the
// reports bucket, and is described as Step Functions describes it.
func TestDistributedMapRecordsItsChildren(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	seedInputs(t, data, "searches/acme/run/", 20, "bad-0.json", "bad-1.json", "bad-2.json")
	k := &keysFixture{calls: map[string]int{}, failing: true}
	m := openWithData(t, filepath.Join(data, "sfn"), data, k.registry())
	defer m.Close()
	def := keysMap("searches/acme/run/", `"ToleratedFailurePercentage":25,
	  "ResultWriter":{"Resource":"arn:aws:states:::s3:putObject","Parameters":{"Bucket":"veredicto-reports","Prefix":"maps/acme/run"}},`)
	x := startAcme(t, m, "dm", def, "one")
	x = waitUntil(t, m, x.ARN, "ends", ended)
	if x.Status != asl.StatusSucceeded {
		t.Fatalf("%s %s %s", x.Status, x.Error, x.Cause)
	}
	runs, _, err := m.ListMapRuns(ctx, x.ARN, "", 10)
	if err != nil || len(runs) != 1 {
		t.Fatalf("ListMapRuns: %v, %v", runs, err)
	}
	run, err := m.DescribeMapRun(ctx, runs[0].ARN)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(run.ARN, arnPrefix+"mapRun:dm/Files:") || run.StateMachineARN != arnPrefix+"stateMachine:dm/Files" || run.Status != asl.MapRunSucceeded {
		t.Errorf("map run %+v", run)
	}
	items, execs := run.Counts.Items, run.Counts.Executions
	if items.Total != 23 || items.Failed != 5 || items.Succeeded != 18 || execs.Total != 5 || execs.Failed != 1 || execs.Succeeded != 4 || items.ResultsWritten != 23 {
		t.Errorf("counts %+v", run.Counts)
	}
	if run.ToleratedFailurePercentage != 25 || run.ToleratedFailureCount != 0 {
		t.Errorf("tolerated %v %v", run.ToleratedFailurePercentage, run.ToleratedFailureCount)
	}
	children, _, err := m.ListMapRunExecutions(ctx, run.ARN, "", "", 100)
	if err != nil || len(children) != 5 {
		t.Fatalf("children: %v, %v", children, err)
	}
	failed := 0
	for _, c := range children {
		if !strings.HasPrefix(c.ARN, arnPrefix+"execution:dm/Files:") || c.MapRunARN != run.ARN || c.Tenant != "acme" {
			t.Errorf("child %+v", c)
		}
		cx, err := m.DescribeExecution(ctx, c.ARN)
		if err != nil {
			t.Fatal(err)
		}
		if cx.MapRunARN != run.ARN {
			t.Errorf("child %s describes no map run", c.ARN)
		}
		if cx.Status == asl.StatusFailed {
			failed++
			if cx.Error != "BadKeyError" || cx.Redrive.Status != RedrivableByMapRun {
				t.Errorf("failed child %s: %s, redrive %+v", c.ARN, cx.Error, cx.Redrive)
			}
			if _, err := m.RedriveExecution(ctx, c.ARN, ""); err == nil || !strings.Contains(err.Error(), CodeExecutionNotRedrivable) {
				t.Errorf("a child redriven on its own: %v", err)
			}
		}
		if len(historyOf(t, m, c.ARN)) < 4 {
			t.Errorf("child %s has no history", c.ARN)
		}
	}
	if failed != 1 {
		t.Errorf("%d failed children, want 1", failed)
	}
	list, _, err := m.ListExecutions(ctx, StateMachineARN("dm"), "", "", 100, nil)
	if err != nil || len(list) != 1 {
		t.Errorf("the machine lists %d executions (%v), want its one: children are listed under their map run", len(list), err)
	}
	id := run.ARN[strings.LastIndex(run.ARN, ":")+1:]
	manifest, err := os.ReadFile(filepath.Join(data, "reports", "maps", "acme", "run", id, "manifest.json"))
	if err != nil || !strings.Contains(string(manifest), `"MapRunArn":"`+run.ARN+`"`) {
		t.Errorf("manifest: %s, %v", manifest, err)
	}
	if !strings.Contains(string(x.Output), "maps/acme/run/"+id+"/manifest.json") {
		t.Errorf("output %s", x.Output)
	}
}

// TestDistributedMapStaysInItsTenant: a listing, an object or a result
// outside the execution's tenant's prefixes is an AccessDenied, named in
// the Map's failure.
func TestDistributedMapStaysInItsTenant(t *testing.T) {
	data := t.TempDir()
	seedInputs(t, data, "searches/bravo/run/", 2)
	k := &keysFixture{calls: map[string]int{}}
	m := openWithData(t, filepath.Join(data, "sfn"), data, k.registry())
	defer m.Close()
	tests := []struct{ name, def, cause string }{
		{"another tenant's prefix", keysMap("searches/bravo/run/", ""), `Access Denied: s3://veredicto-inputs/searches/bravo/run/ is outside the prefixes of tenant "acme"`},
		{"a whole kind", keysMap("searches/", ""), `Access Denied: s3://veredicto-inputs/searches/ is outside the prefixes of tenant "acme"`},
		{"a result elsewhere", keysMap("searches/acme/run/", `"ResultWriter":{"Resource":"arn:aws:states:::s3:putObject","Parameters":{"Bucket":"veredicto-reports","Prefix":"maps/bravo"}},`),
			`Access Denied: s3://veredicto-reports/maps/bravo/`},
		{"a bucket of its own", strings.Replace(keysMap("x/", ""), "veredicto-inputs", "acme-data", 1), "NoSuchBucket"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := startAcme(t, m, fmt.Sprintf("dm%d", i), tt.def, "x")
			x = waitUntil(t, m, x.ARN, "ends", ended)
			want := asl.ErrItemReaderFailed
			if strings.Contains(tt.def, "ResultWriter") {
				want = asl.ErrResultWriterFailed
			}
			if x.Status != asl.StatusFailed || x.Error != want || !strings.Contains(x.Cause, tt.cause) {
				t.Errorf("%s %s: %s, want %s naming %q", x.Status, x.Error, x.Cause, want, tt.cause)
			}
		})
	}
	if k.callsOf("searches/bravo/run/item-000.json") != 0 {
		t.Error("another tenant's object was processed")
	}
}

// TestDistributedMapRedrivesWithItsParent: a parent whose map run failed
// is redriven: the same map run runs again, its failed child is redriven,
// and the children that had succeeded are not run again.
func TestDistributedMapRedrivesWithItsParent(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	seedInputs(t, data, "searches/acme/run/", 9, "zbad-0.json") // the last batch fails
	k := &keysFixture{calls: map[string]int{}, failing: true}
	m := openWithData(t, filepath.Join(data, "sfn"), data, k.registry())
	defer m.Close()
	x := startAcme(t, m, "dm", keysMap("searches/acme/run/", `"MaxConcurrency":1,`), "one")
	x = waitUntil(t, m, x.ARN, "fails", ended)
	if x.Error != asl.ErrExceedToleratedFailure || x.Redrive.Status != Redrivable {
		t.Fatalf("%s %s %s, redrive %+v", x.Status, x.Error, x.Cause, x.Redrive)
	}
	runs, _, _ := m.ListMapRuns(ctx, x.ARN, "", 10)
	if len(runs) != 1 || runs[0].Status != asl.MapRunFailed {
		t.Fatalf("runs %+v", runs)
	}
	k.mu.Lock()
	k.failing = false
	k.mu.Unlock()
	if _, err := m.RedriveExecution(ctx, x.ARN, ""); err != nil {
		t.Fatal(err)
	}
	x = waitUntil(t, m, x.ARN, "succeeds", ended)
	if x.Status != asl.StatusSucceeded {
		t.Fatalf("redriven: %s %s %s", x.Status, x.Error, x.Cause)
	}
	again, _, _ := m.ListMapRuns(ctx, x.ARN, "", 10)
	if len(again) != 1 || again[0].ARN != runs[0].ARN || again[0].RedriveCount != 1 || again[0].Status != asl.MapRunSucceeded {
		t.Errorf("runs after the redrive %+v", again)
	}
	if got := k.callsOf("searches/acme/run/zbad-0.json"); got != 2 {
		t.Errorf("the failed batch ran %d times, want 2", got)
	}
	if got := k.callsOf("searches/acme/run/item-000.json"); got != 1 {
		t.Errorf("the batch that had succeeded ran %d times, want once", got)
	}
	children, _, _ := m.ListMapRunExecutions(ctx, runs[0].ARN, "", "", 100)
	redriven := 0
	for _, c := range children {
		if c.RedriveCount == 1 {
			redriven++
		}
	}
	if len(children) != 2 || redriven != 1 {
		t.Errorf("%d children, %d redriven; want 2 and 1", len(children), redriven)
	}
}

// TestDistributedMapOverTenThousandObjects: a Distributed Map over 10 000
// objects of the inputs bucket, in batches of 100 with 5 % of failures
// tolerated, completes with the right counts while 4 % of its items fail
// on purpose (4 batches each hold one failing item).
func TestDistributedMapOverTenThousandObjects(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	in := file.NewDir(filepath.Join(data, "inputs"))
	const n = 10_000
	for i := range n {
		key := fmt.Sprintf("searches/acme/big/obj-%05d.json", i)
		if i%2500 == 50 {
			key = fmt.Sprintf("searches/acme/big/obj-%05d-bad.json", i)
		}
		if err := in.Put(ctx, key, []byte(fmt.Sprintf(`{"n":%d}`, i)), ""); err != nil {
			t.Fatal(err)
		}
	}
	k := &keysFixture{calls: map[string]int{}, failing: true}
	m := openWithData(t, filepath.Join(data, "sfn"), data, k.registry())
	defer m.Close()
	def := strings.Replace(keysMap("searches/acme/big/", `"ToleratedFailurePercentage":5,"MaxConcurrency":50,
	  "ResultWriter":{"Resource":"arn:aws:states:::s3:putObject","Parameters":{"Bucket":"veredicto-reports","Prefix":"maps/acme/big"}},`), `"MaxItemsPerBatch":5`, `"MaxItemsPerBatch":100`, 1)
	start := time.Now()
	x := startAcme(t, m, "big", def, "ten-thousand")
	x = waitUntil(t, m, x.ARN, "ends", ended)
	t.Logf("%d objects in %v", n, time.Since(start))
	if x.Status != asl.StatusSucceeded {
		t.Fatalf("%s %s %s", x.Status, x.Error, x.Cause)
	}
	runs, _, _ := m.ListMapRuns(ctx, x.ARN, "", 10)
	if len(runs) != 1 {
		t.Fatalf("runs %+v", runs)
	}
	items, execs := runs[0].Counts.Items, runs[0].Counts.Executions
	if items.Total != n || items.Succeeded != n-400 || items.Failed != 400 || execs.Total != 100 || execs.Failed != 4 || execs.Succeeded != 96 {
		t.Errorf("counts %+v", runs[0].Counts)
	}
	var out struct{ ResultWriterDetails struct{ Key string } }
	if err := json.Unmarshal(x.Output, &out); err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		ResultFiles map[string][]struct{ Key string }
	}
	body, err := os.ReadFile(filepath.Join(data, "reports", filepath.FromSlash(out.ResultWriterDetails.Key)))
	if err != nil || json.Unmarshal(body, &manifest) != nil {
		t.Fatalf("manifest %s: %v", body, err)
	}
	for status, want := range map[string]int{"SUCCEEDED": 96, "FAILED": 4} {
		files := manifest.ResultFiles[status]
		var recs []any
		if len(files) == 1 {
			b, _ := os.ReadFile(filepath.Join(data, "reports", filepath.FromSlash(files[0].Key)))
			json.Unmarshal(b, &recs)
		}
		if len(recs) != want {
			t.Errorf("%s: %d records in %v, want %d", status, len(recs), files, want)
		}
	}
}

// TestDistributedMapResumesAfterARestart: a server stopped while a map
// run's children wait resumes the parent and its children where they
// were: the same children (none started twice), their tokens accepted.
func TestDistributedMapResumesAfterARestart(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	dir := filepath.Join(data, "sfn")
	f := newFixture()
	def := `{"StartAt":"Each","States":{"Each":{"Type":"Map","ItemsPath":"$.items","Label":"Asks",
	  "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},
	    "StartAt":"Ask","States":{"Ask":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken",
	      "Parameters":{"FunctionName":"NotifyFunction","Payload":{"token.$":"$$.Task.Token"}},"End":true}}},
	  "End":true}}}`
	m := openWithData(t, dir, data, f.reg)
	if _, err := m.CreateStateMachine(ctx, "asks", def, "", ""); err != nil {
		t.Fatal(err)
	}
	x, err := m.StartExecution(ctx, StateMachineARN("asks"), "one", `{"tenant":"acme","items":[1,2]}`)
	if err != nil {
		t.Fatal(err)
	}
	tokens := []string{f.token(t), f.token(t)}
	m.Close()

	m = openWithData(t, dir, data, f.reg)
	defer m.Close()
	for _, tok := range tokens {
		if err := m.SendTaskSuccess(ctx, tok, `"yes"`); err != nil {
			t.Fatalf("a token from before the restart: %v", err)
		}
	}
	x = waitUntil(t, m, x.ARN, "ends", ended)
	if x.Status != asl.StatusSucceeded || string(x.Output) != `["yes","yes"]` {
		t.Fatalf("%s %s %s %s", x.Status, x.Output, x.Error, x.Cause)
	}
	runs, _, _ := m.ListMapRuns(ctx, x.ARN, "", 10)
	if len(runs) != 1 || runs[0].Status != asl.MapRunSucceeded {
		t.Fatalf("runs %+v", runs)
	}
	children, _, _ := m.ListMapRunExecutions(ctx, runs[0].ARN, "", "", 10)
	if len(children) != 2 {
		t.Errorf("%d children, want the same 2", len(children))
	}
	for { // a resumed callback Task may have been re-invoked: with its recorded token
		select {
		case tok := <-f.tokens:
			if tok != tokens[0] && tok != tokens[1] {
				t.Errorf("a child asked with a new token after the restart (%s)", tok)
			}
			continue
		default:
		}
		break
	}
}
