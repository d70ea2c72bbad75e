package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/veredicto/veredicto/internal/app"
)

// localData uploads examples/search-demo to a local inputs bucket as
// searches/default/demo-cfo-andina/.
func localData(t *testing.T) string {
	t.Helper()
	data := t.TempDir()
	if err := app.UploadLocal(context.Background(), data, "../../examples/search-demo", "default", "demo-cfo-andina"); err != nil {
		t.Fatal(err)
	}
	return data
}

func invoke(t *testing.T, data, id, event string) (int, string, string) {
	t.Helper()
	var out, errb strings.Builder
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
	code := m.lambdaInvoke(context.Background(), lambdaConfig{logicalID: id, event: event, data: data}, func(string) string { return "" })
	return code, out.String(), errb.String()
}

// TestLambdaInvokeEveryEvent runs every function on its events/ sample, in
// the order a real evaluation would, and checks what each returns.
func TestLambdaInvokeEveryEvent(t *testing.T) {
	data := localData(t)
	steps := []struct {
		id, event string
		want      string
	}{
		{"ValidateFunction", "validate.json", `"candidates": [`},
		{"Gem5Function", "gem5.json", `"confidence"`},
		{"Gem1Function", "gem1.json", `"score"`},
		{"Gem2Function", "gem2.json", `"score"`},
		{"Gem3Function", "gem3.json", `"recommendation": "SI"`},
		{"Gem4Function", "gem4.json", `"decision": "APROBADO"`},
		{"CorrectionFunction", "correction.json", `"score"`},
		{"ReportFunction", "report.json", `"decision": "APROBADO"`},
		{"SummaryFunction", "summary.json", `"escalation_rate"`},
		{"FlagsFunction", "flags-post.json", `\"overall_verbal_risk\": \"alto\"`},
	}
	for _, s := range steps {
		code, out, errs := invoke(t, data, s.id, filepath.Join("../../events", s.event))
		if code != exitOK || !strings.Contains(out, s.want) {
			t.Errorf("%s %s: exit %d, stdout %s, stderr %s; want %q", s.id, s.event, code, out, errs, s.want)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "reports", "reports", "default", "demo-cfo-andina", "c-001", "report.md")); err != nil {
		t.Errorf("ReportFunction wrote no report.md in the local reports bucket: %v", err)
	}

	// The queue trigger runs the whole evaluation; only the malformed body
	// of the batch is reported for redelivery (the s3:TestEvent is
	// acknowledged), and a duplicate delivery starts nothing new.
	inputs, _, _ := app.LocalLayout(data)
	writeFile(t, inputs, "searches/default/demo-cfo-andina/READY", "")
	for i := range 2 {
		code, out, errs := invoke(t, data, "TriggerFunction", "../../events/trigger-sqs-batch.json")
		var got events.SQSEventResponse
		if err := json.Unmarshal([]byte(out), &got); err != nil || code != exitOK {
			t.Fatalf("trigger delivery %d: exit %d, %s %s", i+1, code, out, errs)
		}
		if len(got.BatchItemFailures) != 1 || got.BatchItemFailures[0].ItemIdentifier != "c1a2b3d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d" {
			t.Errorf("trigger delivery %d: batchItemFailures %+v, want only the malformed body", i+1, got.BatchItemFailures)
		}
	}
	api := []struct{ event, want string }{
		{"api-post-searches.json", `"statusCode": 200`}, // already started by the trigger
		{"api-get-search.json", `SUCCEEDED`},
		{"api-get-report.json", `Decisión: Aprobado`},
	}
	for _, a := range api {
		code, out, errs := invoke(t, data, "ApiFunction", filepath.Join("../../events", a.event))
		if code != exitOK || !strings.Contains(out, a.want) {
			t.Errorf("%s: exit %d, %s %s; want %q", a.event, code, out, errs, a.want)
		}
	}
}

func TestLambdaInvokeErrors(t *testing.T) {
	data := localData(t)
	code, _, errs := invoke(t, data, "NopeFunction", "../../events/gem1.json")
	if code != exitUsage || !strings.Contains(errs, `no function "NopeFunction"`) {
		t.Errorf("unknown function: exit %d, %s", code, errs)
	}
	ev := writeFile(t, t.TempDir(), "bad.json", `{"execution":"x-1","tenant":"default","search_id":"demo-cfo-andina","input_prefix":"searches/default/demo-cfo-andina","candidate_id":"c-999"}`)
	code, out, _ := invoke(t, data, "Gem1Function", ev)
	var resp struct{ ErrorMessage, ErrorType string }
	json.Unmarshal([]byte(out), &resp)
	if code != exitFailed || resp.ErrorType != "InvalidInputError" || !strings.Contains(resp.ErrorMessage, "c-999") {
		t.Errorf("handler error: exit %d, %s", code, out)
	}
	code, _, errs = invoke(t, data, "Gem1Function", writeFile(t, t.TempDir(), "x.json", "{"))
	if code != exitUsage || !strings.Contains(errs, "not valid JSON") {
		t.Errorf("bad event: exit %d, %s", code, errs)
	}
}

// TestLambdaInvokeSeedsAFreshDataFolder runs the README's command on a data
// folder that does not exist yet, as on a fresh clone: the example search
// is uploaded where the events/ samples expect it, once.
func TestLambdaInvokeSeedsAFreshDataFolder(t *testing.T) {
	data := filepath.Join(t.TempDir(), ".veredicto-local")
	run := func() (int, string, string) {
		var out, errb strings.Builder
		m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}
		cfg := lambdaConfig{logicalID: "Gem1Function", event: "../../events/gem1.json", data: data, example: "../../examples/search-demo"}
		code := m.lambdaInvoke(context.Background(), cfg, func(string) string { return "" })
		return code, out.String(), errb.String()
	}
	code, out, errs := run()
	if code != exitOK || !strings.Contains(out, `"score"`) {
		t.Fatalf("first invoke: exit %d, %s %s", code, out, errs)
	}
	if !strings.Contains(errs, "uploaded ../../examples/search-demo as searches/default/demo-cfo-andina/") {
		t.Errorf("stderr %q does not say the folder was seeded", errs)
	}
	code, _, errs = run()
	if code != exitOK || strings.Contains(errs, "uploaded") {
		t.Errorf("second invoke: exit %d, %q; want no second seeding", code, errs)
	}
}
