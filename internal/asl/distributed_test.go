package asl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// memBuckets is an in-memory Buckets for the engine's tests.
type memBuckets struct {
	mu      sync.Mutex
	objects map[string][]byte // bucket/key → body
}

func newMemBuckets() *memBuckets { return &memBuckets{objects: map[string][]byte{}} }

func (b *memBuckets) List(_ context.Context, bucket, prefix string, fn func(Object) error) error {
	b.mu.Lock()
	var keys []string
	for k := range b.objects {
		if rest, ok := strings.CutPrefix(k, bucket+"/"); ok && strings.HasPrefix(rest, prefix) {
			keys = append(keys, rest)
		}
	}
	b.mu.Unlock()
	sort.Strings(keys)
	for _, k := range keys {
		b.mu.Lock()
		size := len(b.objects[bucket+"/"+k])
		b.mu.Unlock()
		if err := fn(Object{Key: k, Size: int64(size), ETag: `"etag"`, LastModified: time.Unix(1668699881, 0)}); err != nil {
			return err
		}
	}
	return nil
}

func (b *memBuckets) Open(_ context.Context, bucket, key string) (io.ReadCloser, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	body, ok := b.objects[bucket+"/"+key]
	if !ok {
		return nil, fmt.Errorf("NoSuchKey: %s/%s", bucket, key)
	}
	return io.NopCloser(bytes.NewReader(body)), nil
}

func (b *memBuckets) Put(_ context.Context, bucket, key string, body []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.objects[bucket+"/"+key] = append([]byte(nil), body...)
	return nil
}

func (b *memBuckets) get(bucket, key string) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.objects[bucket+"/"+key]
}

// distributedDef is a Distributed Map over processor's states, with the
// Map's other fields.
func distributedDef(fields, processor string) string {
	if processor == "" {
		processor = `"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}`
	}
	return `{"StartAt":"M","States":{"M":{"Type":"Map",` + fields + `,"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},` + processor + `},"End":true}}}`
}

func runWith(t *testing.T, reg *Registry, def, input string, b Buckets) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := New(reg).Run(ctx, mustParse(t, def), json.RawMessage(input), StartOptions{Name: "test", StateMachineName: "sm", Buckets: b})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// failingRegistry binds "Check", which fails an input (or a batch) that
// holds an item {"fail": true}.
func failingRegistry() *Registry {
	reg := NewRegistry()
	reg.Register("CheckFunction", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		if bytes.Contains(in, []byte(`"fail":true`)) {
			return nil, declared("Boom", "item failed on purpose")
		}
		return in, nil
	})
	return reg
}

const checkProcessor = `"StartAt":"C","States":{"C":{"Type":"Task","Resource":"${CheckFunctionArn}","End":true}}`

func TestParseDistributedMap(t *testing.T) {
	valid := []string{
		distributedDef(`"ItemsPath":"$.items","MaxConcurrency":5,"ToleratedFailurePercentage":5,"Label":"Files"`, ""),
		distributedDef(`"ItemReader":{"Resource":"arn:aws:states:::s3:listObjectsV2","Parameters":{"Bucket":"b","Prefix":"in/"}},"ItemBatcher":{"MaxItemsPerBatch":10,"BatchInput":{"run.$":"$.run"}},"ResultWriter":{"Resource":"arn:aws:states:::s3:putObject","Parameters":{"Bucket":"b","Prefix":"out"}},"ToleratedFailureCountPath":"$.n"`, ""),
		distributedDef(`"ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"CSV","CSVHeaderLocation":"GIVEN","CSVHeaders":["a","b"],"MaxItems":10},"Parameters":{"Bucket":"b","Key":"k.csv"}}`, ""),
		`{"QueryLanguage":"JSONata","StartAt":"M","States":{"M":{"Type":"Map","Items":"{% $states.input.items %}","ToleratedFailureCount":"{% $states.input.n %}","ToleratedFailurePercentage":"{% 10 %}",
		  "ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"JSON","MaxItems":"{% 3 %}"},"Arguments":{"Bucket":"b","Key":"{% $states.input.key %}"}},
		  "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"EXPRESS"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
	}
	for i, def := range valid {
		if _, err := Parse([]byte(def)); err != nil {
			t.Errorf("valid %d: %v", i, err)
		}
	}
	invalid := []struct{ def, want string }{
		{`{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:listObjectsV2","Parameters":{"Bucket":"b"}},"ItemProcessor":{"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			`field "ItemReader" is only supported by a Map in DISTRIBUTED mode`},
		{`{"StartAt":"M","States":{"M":{"Type":"Map","ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}},"End":true}}}`,
			`ExecutionType (STANDARD or EXPRESS) is required in DISTRIBUTED mode`},
		{distributedDef(`"ToleratedFailurePercentage":101`, ""), `ToleratedFailurePercentage must be from 0 to 100`},
		{distributedDef(`"ToleratedFailureCount":1,"ToleratedFailureCountPath":"$.n"`, ""), `ToleratedFailureCount and ToleratedFailureCountPath are mutually exclusive`},
		{distributedDef(`"ItemBatcher":{"BatchInput":{}}`, ""), `needs MaxItemsPerBatch or MaxInputBytesPerBatch`},
		{distributedDef(`"ItemBatcher":{"MaxInputBytesPerBatch":300000}`, ""), `MaxInputBytesPerBatch must be from 1 to 262144`},
		{distributedDef(`"ItemReader":{"Resource":"arn:aws:states:::s3:getObject","Parameters":{"Bucket":"b","Key":"k"}}`, ""), `ReaderConfig with an InputType is required`},
		{distributedDef(`"ResultWriter":{"Resource":"arn:aws:states:::s3:putObject"}`, ""), `Resource and Parameters go together`},
		{distributedDef(`"Label":"has space"`, ""), `Label "has space" may not contain whitespace`},
	}
	for _, tt := range invalid {
		_, err := Parse([]byte(tt.def))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want a problem saying %q", tt.def, err, tt.want)
		}
	}
}

// TestDistributedMapOverInput: the items of the state input run as child
// executions, their outputs the Map's result in item order, and the
// history holds the map run's events as Step Functions records them.
func TestDistributedMapOverInput(t *testing.T) {
	def := distributedDef(`"ItemsPath":"$.items","ItemSelector":{"i.$":"$$.Map.Item.Index","v.$":"$$.Map.Item.Value","run.$":"$.run"},"Label":"Files","MaxConcurrency":2`, "")
	res := run(t, NewRegistry(), def, `{"items":["a","b","c"],"run":7}`)
	if res.Status != StatusSucceeded || string(res.Output) != `[{"i":0,"run":7,"v":"a"},{"i":1,"run":7,"v":"b"},{"i":2,"run":7,"v":"c"}]` {
		t.Fatalf("%s %s %s %s", res.Status, res.Output, res.Error, res.Cause)
	}
	var types []string
	var arn string
	for _, ev := range res.History() {
		types = append(types, ev.Type)
		if ev.Type == "MapStateStarted" && (ev.Length == nil || *ev.Length != 3) {
			t.Errorf("MapStateStarted length %v, want 3", ev.Length)
		}
		if ev.Type == "MapRunStarted" {
			arn = ev.MapRunARN
		}
	}
	want := "ExecutionStarted MapStateEntered MapStateStarted MapRunStarted MapRunSucceeded MapStateSucceeded MapStateExited ExecutionSucceeded"
	if strings.Join(types, " ") != want {
		t.Errorf("history %v\nwant %s", types, want)
	}
	if !strings.HasPrefix(arn, "arn:aws:states:local:000000000000:mapRun:test/Files:") && !strings.Contains(arn, ":mapRun:local/Files:") {
		t.Errorf("map run ARN %q", arn)
	}
	if again := run(t, NewRegistry(), def, `{"items":["a","b","c"],"run":7}`); string(again.Output) != string(res.Output) {
		t.Errorf("a second run: %s", again.Output)
	}
}

// TestDistributedMapItemsNotAnArray: the items must be an array, failed
// with the cause of an inline Map (TestMapItemsNotAnArray; no recording
// shows a Distributed one).
func TestDistributedMapItemsNotAnArray(t *testing.T) {
	res := run(t, NewRegistry(), distributedDef(`"ItemsPath":"$.items"`, ""), `{"items":"x"}`)
	want := `An error occurred while executing the state 'M' (entered at the event id #2). Reference path "$.items" must point to array.`
	if res.Error != ErrRuntime || res.Cause != want {
		t.Errorf("%s: %s, want %s: %s", res.Error, res.Cause, ErrRuntime, want)
	}
}

func TestDistributedMapItemReaders(t *testing.T) {
	b := newMemBuckets()
	ctx := context.Background()
	b.Put(ctx, "data", "items.json", []byte(`[{"n":1},{"n":2},{"n":3}]`))
	b.Put(ctx, "data", "items.jsonl", []byte("{\"n\":1}\n\n{\"n\":2}\n"))
	b.Put(ctx, "data", "items.csv", []byte("Col1,Col2\nValue1,Value2\nValue3\nValue5,Value6,extra\n"))
	b.Put(ctx, "data", "given.csv", []byte("a|b\nc|d\n"))
	b.Put(ctx, "data", "dup.csv", []byte("A,A\n1,2\n"))
	b.Put(ctx, "data", "object.json", []byte(`{"a":1}`))
	b.Put(ctx, "data", "in/x.txt", []byte("hello"))
	b.Put(ctx, "data", "in/y.txt", []byte("hi"))
	b.Put(ctx, "data", "other/z.txt", []byte("z"))
	get := func(typ, key, extra string) string {
		return `"ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"` + typ + `"` + extra + `},"Parameters":{"Bucket":"data","Key":"` + key + `"}}`
	}
	tests := []struct {
		name, fields, input string
		output, err, cause  string
	}{
		{"JSON", get("JSON", "items.json", ""), `{}`, `[{"n":1},{"n":2},{"n":3}]`, "", ""},
		{"JSON MaxItems", get("JSON", "items.json", `,"MaxItems":2`), `{}`, `[{"n":1},{"n":2}]`, "", ""},
		{"JSON MaxItemsPath 0 reads all", get("JSON", "items.json", `,"MaxItemsPath":"$.max"`), `{"max":0}`, `[{"n":1},{"n":2},{"n":3}]`, "", ""},
		{"JSON Lines", get("JSONL", "items.jsonl", ""), `{}`, `[{"n":1},{"n":2}]`, "", ""},
		{"CSV first row", get("CSV", "items.csv", ""), `{}`, `[{"Col1":"Value1","Col2":"Value2"},{"Col1":"Value3","Col2":""},{"Col1":"Value5","Col2":"Value6"}]`, "", ""},
		{"CSV given headers", get("CSV", "given.csv", `,"CSVHeaderLocation":"GIVEN","CSVHeaders":["x","y"],"CSVDelimiter":"PIPE"`), `{}`, `[{"x":"a","y":"b"},{"x":"c","y":"d"}]`, "", ""},
		{"listing", `"ItemReader":{"Resource":"arn:aws:states:::s3:listObjectsV2","Parameters":{"Bucket":"data","Prefix.$":"$.prefix"}},"ItemSelector":{"key.$":"$$.Map.Item.Value.Key","size.$":"$$.Map.Item.Value.Size","i.$":"$$.Map.Item.Index"}`,
			`{"prefix":"in/"}`, `[{"i":0,"key":"in/x.txt","size":5},{"i":1,"key":"in/y.txt","size":2}]`, "", ""},
		{"not an array", get("JSON", "object.json", ""), `{}`, "", ErrItemReaderFailed, "Attempting to map over non-iterable node."},
		{"duplicate headers", get("CSV", "dup.csv", ""), `{}`, "", ErrItemReaderFailed, "CSV headers cannot contain duplicates."},
		{"negative MaxItems", get("CSV", "items.csv", `,"MaxItemsPath":"$.max"`), `{"max":-1}`, "", ErrItemReaderFailed, "field MaxItems must be positive"},
		{"MaxItems not an integer", get("CSV", "items.csv", `,"MaxItemsPath":"$.max"`), `{"max":1.5}`, "", ErrRuntime,
			`An error occurred while executing the state 'M' (entered at the event id #2). The MaxItemsPath field refers to value "1.5" which is not a valid integer: $.max`},
		{"missing object", get("JSON", "nope.json", ""), `{}`, "", ErrItemReaderFailed, "NoSuchKey: data/nope.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runWith(t, NewRegistry(), distributedDef(tt.fields, ""), tt.input, b)
			if tt.err == "" {
				if res.Status != StatusSucceeded || string(res.Output) != tt.output {
					t.Errorf("%s %s %s: %s, want %s", res.Status, res.Error, res.Cause, res.Output, tt.output)
				}
				return
			}
			if res.Error != tt.err || res.Cause != tt.cause {
				t.Errorf("%s: %s, want %s: %s", res.Error, res.Cause, tt.err, tt.cause)
			}
		})
	}
	res := run(t, NewRegistry(), distributedDef(get("JSON", "items.json", ""), ""), `{}`)
	if res.Error != ErrItemReaderFailed || !strings.Contains(res.Cause, "no bucket is reachable") {
		t.Errorf("without buckets: %s: %s", res.Error, res.Cause)
	}
}

// TestDistributedMapBatches: ItemBatcher gathers items into each child's
// input with its BatchInput, within the item and byte limits.
func TestDistributedMapBatches(t *testing.T) {
	items := `[{"n":1},{"n":2},{"n":3},{"n":4},{"n":5}]`
	tests := []struct{ batcher, want string }{
		{`{"MaxItemsPerBatch":2,"BatchInput":{"run.$":"$.run"}}`,
			`[{"BatchInput":{"run":"r"},"Items":[{"n":1},{"n":2}]},{"BatchInput":{"run":"r"},"Items":[{"n":3},{"n":4}]},{"BatchInput":{"run":"r"},"Items":[{"n":5}]}]`},
		// {"Items":[{"n":1},{"n":2}]} is 25 bytes: a third item would make 33
		{`{"MaxInputBytesPerBatch":30}`, `[{"Items":[{"n":1},{"n":2}]},{"Items":[{"n":3},{"n":4}]},{"Items":[{"n":5}]}]`},
		{`{"MaxItemsPerBatchPath":"$.per"}`, `[{"Items":[{"n":1},{"n":2},{"n":3}]},{"Items":[{"n":4},{"n":5}]}]`},
	}
	for _, tt := range tests {
		def := distributedDef(`"ItemsPath":"$.items","ItemBatcher":`+tt.batcher, "")
		res := run(t, NewRegistry(), def, `{"items":`+items+`,"run":"r","per":3}`)
		if string(res.Output) != tt.want {
			t.Errorf("%s: %s %s %s\nwant %s", tt.batcher, res.Output, res.Error, res.Cause, tt.want)
		}
	}
}

// TestDistributedMapToleratedFailures: failed children count their items
// as failed; within the tolerated count or percentage the Map succeeds
// with each failed child's record in its result, beyond it the run fails
// with States.ExceedToleratedFailureThreshold, which a Catch handles.
func TestDistributedMapToleratedFailures(t *testing.T) {
	items := `[{"n":1},{"n":2,"fail":true},{"n":3},{"n":4,"fail":true},{"n":5}]`
	tests := []struct {
		name, fields string
		ok           bool
	}{
		{"no tolerance", ``, false},
		{"count 2", `"ToleratedFailureCount":2`, true},
		{"count 1", `"ToleratedFailureCount":1`, false},
		{"percentage 40", `"ToleratedFailurePercentage":40`, true},
		{"percentage 39", `"ToleratedFailurePercentage":39.9`, false},
		{"count path", `"ToleratedFailureCountPath":"$.tolerate"`, true},
		{"batches count their items", `"ItemBatcher":{"MaxItemsPerBatch":2},"ToleratedFailureCount":3`, false},
		{"batches within", `"ItemBatcher":{"MaxItemsPerBatch":2},"ToleratedFailureCount":4`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fields := `"ItemsPath":"$.items","MaxConcurrency":1`
			if tt.fields != "" {
				fields += "," + tt.fields
			}
			res := run(t, failingRegistry(), distributedDef(fields, checkProcessor), `{"items":`+items+`,"tolerate":2}`)
			if !tt.ok {
				if res.Error != ErrExceedToleratedFailure || res.Cause != causeExceeded {
					t.Fatalf("%s %s: %s, want %s", res.Status, res.Error, res.Cause, ErrExceedToleratedFailure)
				}
				if !hasLine(eventLines(res.History()), "MapRunFailed M  "+ErrExceedToleratedFailure) {
					t.Errorf("no MapRunFailed: %v", eventLines(res.History()))
				}
				return
			}
			if res.Status != StatusSucceeded {
				t.Fatalf("%s %s %s", res.Status, res.Error, res.Cause)
			}
			var out []map[string]any
			if err := json.Unmarshal(res.Output, &out); err != nil {
				t.Fatal(err)
			}
			failed := 0
			for _, o := range out {
				if o["Status"] == "FAILED" {
					failed++
					if o["Error"] != "Boom" || o["Cause"] != "item failed on purpose" || o["ExecutionArn"] == "" {
						t.Errorf("failed record %v", o)
					}
				}
			}
			if failed == 0 {
				t.Errorf("no failed record in %s", res.Output)
			}
		})
	}
	caught := `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"EXPRESS"},` + checkProcessor +
		`},"Catch":[{"ErrorEquals":["States.ExceedToleratedFailureThreshold"],"Next":"Done"}],"End":true},"Done":{"Type":"Succeed"}}}`
	if res := run(t, failingRegistry(), caught, `{"items":`+items+`}`); res.Status != StatusSucceeded || !strings.Contains(string(res.Output), causeExceeded) {
		t.Errorf("caught: %s %s", res.Status, res.Output)
	}
}

// TestDistributedMapToleranceFromInput: the …Path fields and JSONata
// expressions are evaluated, bad values fail as Step Functions fails them.
func TestDistributedMapToleranceFromInput(t *testing.T) {
	tests := []struct{ fields, input, err, cause string }{
		{`"ToleratedFailureCountPath":"$.n"`, `{"items":[0],"n":"NoNumber"}`, ErrRuntime,
			`An error occurred while executing the state 'M' (entered at the event id #2). The ToleratedFailureCountPath field refers to value "NoNumber" which is not a valid integer: $.n`},
		{`"ToleratedFailureCountPath":"$.n"`, `{"items":[0],"n":-1}`, ErrRuntime,
			`An error occurred while executing the state 'M' (entered at the event id #2). ToleratedFailureCount cannot be negative.`},
		{`"ToleratedFailurePercentagePath":"$.n"`, `{"items":[0],"n":100.1}`, ErrRuntime,
			`An error occurred while executing the state 'M' (entered at the event id #2). ToleratedFailurePercentage must be between 0 and 100.`},
		{`"ToleratedFailurePercentagePath":"$.n"`, `{"items":[0],"n":1.1}`, "", ""},
	}
	for _, tt := range tests {
		res := run(t, NewRegistry(), distributedDef(`"ItemsPath":"$.items",`+tt.fields, ""), tt.input)
		if res.Error != tt.err || res.Cause != tt.cause {
			t.Errorf("%s %s: %s: %s, want %s: %s", tt.fields, tt.input, res.Error, res.Cause, tt.err, tt.cause)
		}
		if tt.err != "" {
			lines := eventLines(res.History())
			if hasLine(lines, "MapStateFailed M") || !hasLine(lines, "MapStateStarted M") {
				t.Errorf("history %v: Step Functions fails the execution right after MapStateStarted", lines)
			}
		}
	}
	ja := `{"QueryLanguage":"JSONata","StartAt":"M","States":{"M":{"Type":"Map","Items":"{% $states.input.items %}","ToleratedFailureCount":"{% $states.input.n %}","MaxConcurrency":"{% $states.input.c %}",
	  "ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},` + checkProcessor + `},"End":true}}}`
	if res := run(t, failingRegistry(), ja, `{"items":[{"fail":true},{"n":1}],"n":1,"c":1}`); res.Status != StatusSucceeded {
		t.Errorf("JSONata tolerance 1: %s %s %s", res.Status, res.Error, res.Cause)
	}
	if res := run(t, failingRegistry(), ja, `{"items":[{"fail":true},{"n":1}],"n":0,"c":1}`); res.Error != ErrExceedToleratedFailure {
		t.Errorf("JSONata tolerance 0: %s %s %s", res.Status, res.Error, res.Cause)
	}
}

// TestDistributedMapResultWriter: the results are written as Step
// Functions writes them, and the Map's result names the manifest.
func TestDistributedMapResultWriter(t *testing.T) {
	b := newMemBuckets()
	def := distributedDef(`"ItemsPath":"$.items","ToleratedFailureCount":1,"ResultWriter":{"Resource":"arn:aws:states:::s3:putObject","Parameters":{"Bucket":"out","Prefix":"jobs/"}}`, checkProcessor)
	res := runWith(t, failingRegistry(), def, `{"items":[{"n":1},{"n":2,"fail":true},{"n":3}]}`, b)
	if res.Status != StatusSucceeded {
		t.Fatalf("%s %s %s", res.Status, res.Error, res.Cause)
	}
	var out struct {
		MapRunArn           string
		ResultWriterDetails struct{ Bucket, Key string }
	}
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatal(err)
	}
	id := out.MapRunArn[strings.LastIndex(out.MapRunArn, ":")+1:]
	if out.ResultWriterDetails.Bucket != "out" || out.ResultWriterDetails.Key != "jobs/"+id+"/manifest.json" {
		t.Fatalf("output %s", res.Output)
	}
	var manifest struct {
		DestinationBucket, MapRunArn string
		ResultFiles                  map[string][]struct {
			Key  string
			Size int
		}
	}
	if err := json.Unmarshal(b.get("out", out.ResultWriterDetails.Key), &manifest); err != nil {
		t.Fatalf("manifest: %v", err)
	}
	if manifest.MapRunArn != out.MapRunArn || manifest.DestinationBucket != "out" || len(manifest.ResultFiles["PENDING"]) != 0 {
		t.Errorf("manifest %+v", manifest)
	}
	for status, n := range map[string]int{"SUCCEEDED": 2, "FAILED": 1} {
		files := manifest.ResultFiles[status]
		if len(files) != 1 || files[0].Key != "jobs/"+id+"/"+status+"_0.json" {
			t.Fatalf("%s files %+v", status, files)
		}
		body := b.get("out", files[0].Key)
		var recs []map[string]any
		if err := json.Unmarshal(body, &recs); err != nil || len(recs) != n || files[0].Size != len(body) {
			t.Fatalf("%s: %s (%v)", status, body, err)
		}
		want := []string{"ExecutionArn", "Input", "InputDetails", "Name", "RedriveCount", "RedriveStatus", "StartDate", "StateMachineArn", "Status", "StopDate"}
		got := make([]string, 0, len(recs[0]))
		for k := range recs[0] {
			got = append(got, k)
		}
		sort.Strings(got)
		if status == "SUCCEEDED" {
			want = append(want, "Output", "OutputDetails", "RedriveStatusReason")
		} else {
			want = append(want, "Cause", "Error", "RedriveStatusReason") // an in-process child is not redriven
		}
		sort.Strings(want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s record members %v, want %v", status, got, want)
		}
	}
}
