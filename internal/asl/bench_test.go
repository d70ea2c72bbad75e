package asl

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// passChain builds a definition of n Pass states in a row, each doing the
// usual input/output processing (Parameters with a path, ResultPath).
func passChain(n int) string {
	var b strings.Builder
	b.WriteString(`{"StartAt":"S0","States":{`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		next := fmt.Sprintf(`"Next":"S%d"`, i+1)
		if i == n-1 {
			next = `"End":true`
		}
		fmt.Fprintf(&b, `"S%d":{"Type":"Pass","Parameters":{"v.$":"$.v","step":%d},"ResultPath":"$.last",%s}`, i, i, next)
	}
	b.WriteString(`}}`)
	return b.String()
}

func benchRun(b *testing.B, def, input string) {
	b.Helper()
	sm, err := Parse([]byte(def))
	if err != nil {
		b.Fatal(err)
	}
	eng := New(NewRegistry())
	ctx := context.Background()
	transitions := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := eng.Run(ctx, sm, json.RawMessage(input), StartOptions{Name: "bench"})
		if err != nil || res.Status != StatusSucceeded {
			b.Fatalf("run: %v %+v", err, res)
		}
		transitions += res.Transitions
	}
	b.ReportMetric(float64(transitions)/b.Elapsed().Seconds(), "transitions/s")
}

// BenchmarkPassChain: 1,000 Pass states in a row.
func BenchmarkPassChain(b *testing.B) {
	benchRun(b, passChain(1000), `{"v":{"name":"c-001","score":7}}`)
}

// BenchmarkMap1000: a Map over 1,000 items, each a two-state processor.
func BenchmarkMap1000(b *testing.B) {
	items := make([]string, 1000)
	for i := range items {
		items[i] = fmt.Sprintf(`{"id":"c-%04d","score":%d}`, i, i%10)
	}
	def := `{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.items","ItemSelector":{"item.$":"$$.Map.Item.Value","i.$":"$$.Map.Item.Index"},
	  "ItemProcessor":{"StartAt":"A","States":{"A":{"Type":"Pass","Parameters":{"id.$":"$.item.id"},"ResultPath":"$.r","Next":"B"},"B":{"Type":"Pass","OutputPath":"$.r","End":true}}},"End":true}}}`
	benchRun(b, def, `{"items":[`+strings.Join(items, ",")+`]}`)
}

// jsonataPassChain is passChain in JSONata: each state reshapes its input
// with Output and assigns a variable.
func jsonataPassChain(n int) string {
	var b strings.Builder
	b.WriteString(`{"QueryLanguage":"JSONata","StartAt":"S0","States":{`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		next := fmt.Sprintf(`"Next":"S%d"`, i+1)
		if i == n-1 {
			next = `"End":true`
		}
		fmt.Fprintf(&b, `"S%d":{"Type":"Pass","Output":{"v":"{%% $states.input.v %%}","last":{"v":"{%% $states.input.v %%}","step":%d}},"Assign":{"step":%d},%s}`, i, i, i, next)
	}
	b.WriteString(`}}`)
	return b.String()
}

// BenchmarkJSONataPassChain: 1,000 JSONata Pass states in a row.
func BenchmarkJSONataPassChain(b *testing.B) {
	benchRun(b, jsonataPassChain(1000), `{"v":{"name":"c-001","score":7}}`)
}

// BenchmarkJSONataMap1000: BenchmarkMap1000 written in JSONata.
func BenchmarkJSONataMap1000(b *testing.B) {
	items := make([]string, 1000)
	for i := range items {
		items[i] = fmt.Sprintf(`{"id":"c-%04d","score":%d}`, i, i%10)
	}
	def := `{"QueryLanguage":"JSONata","StartAt":"M","States":{"M":{"Type":"Map","Items":"{% $states.input.items %}","ItemSelector":{"item":"{% $states.context.Map.Item.Value %}","i":"{% $states.context.Map.Item.Index %}"},
	  "ItemProcessor":{"StartAt":"A","States":{"A":{"Type":"Pass","Output":{"r":{"id":"{% $states.input.item.id %}"}},"Next":"B"},"B":{"Type":"Pass","Output":"{% $states.input.r %}","End":true}}},"End":true}}}`
	benchRun(b, def, `{"items":[`+strings.Join(items, ",")+`]}`)
}

// BenchmarkDistributedMap10000: a Distributed Map over 10 000 objects of
// an in-memory bucket, in batches of 100 run in-process (no runner
// records them), each child a Pass: the engine's own cost per item,
// listing and batching included.
func BenchmarkDistributedMap10000(b *testing.B) {
	const n = 10_000
	bk := newMemBuckets()
	for i := range n {
		bk.Put(context.Background(), "data", fmt.Sprintf("in/obj-%05d.json", i), []byte(`{}`))
	}
	def := distributedDef(`"ItemReader":{"Resource":"arn:aws:states:::s3:listObjectsV2","Parameters":{"Bucket":"data","Prefix":"in/"}},
	  "ItemSelector":{"key.$":"$$.Map.Item.Value.Key"},"ItemBatcher":{"MaxItemsPerBatch":100},"ResultSelector":{"n.$":"States.ArrayLength($)"}`, "")
	sm, err := Parse([]byte(def))
	if err != nil {
		b.Fatal(err)
	}
	eng := New(NewRegistry())
	b.ReportAllocs()
	for b.Loop() {
		res, err := eng.Run(context.Background(), sm, json.RawMessage(`{}`), StartOptions{Name: "bench", Buckets: bk})
		if err != nil || res.Status != StatusSucceeded {
			b.Fatalf("run: %v %+v", err, res)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "items/s")
}
