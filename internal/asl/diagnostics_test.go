package asl

import (
	"context"
	"encoding/json"
	"testing"
)

func TestDiagnose(t *testing.T) {
	reg := NewRegistry()
	reg.Register("EchoFunction", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) { return in, nil })
	eng := New(reg, WithActivities(func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil }, nil))
	tests := []struct {
		name, def string
		express   bool
		want      []Diagnostic // severity, code and location; the message is the problem
	}{
		{"valid", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"${EchoFunctionArn}","End":true}}}`, false, nil},
		{"not JSON", `{"StartAt":`, false, []Diagnostic{{Severity: SeverityError, Code: CodeInvalidJSON}}},
		{"missing target", `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"Nowhere"}}}`, false,
			[]Diagnostic{{Severity: SeverityError, Code: CodeMissingTarget, Location: "/States/A/Next"}}},
		{"StartAt names no state", `{"StartAt":"B","States":{"A":{"Type":"Pass","End":true}}}`, false,
			[]Diagnostic{{Severity: SeverityError, Code: CodeMissingTarget, Location: "/StartAt"}}},
		{"no resource", `{"StartAt":"A","States":{"A":{"Type":"Task","End":true}}}`, false,
			[]Diagnostic{{Severity: SeverityError, Code: CodeInvalidResource, Location: "/States/A/Resource"}}},
		{"field of another type, in a branch", `{"StartAt":"P","States":{"P":{"Type":"Parallel","End":true,"Branches":[
			{"StartAt":"X","States":{"X":{"Type":"Pass","End":true}}},
			{"StartAt":"Y","States":{"Y":{"Type":"Pass","Seconds":3,"End":true}}}]}}}`, false,
			[]Diagnostic{{Severity: SeverityError, Code: CodeSchema, Location: "/States/P/Branches/1/States/Y/Seconds"}}},
		{"bad timeout in a map", `{"StartAt":"M","States":{"M":{"Type":"Map","End":true,"ItemProcessor":{"StartAt":"T","States":{
			"T":{"Type":"Task","Resource":"${EchoFunctionArn}","TimeoutSeconds":-1,"End":true}}}}}}`, false,
			[]Diagnostic{{Severity: SeverityError, Code: CodeSchema, Location: "/States/M/ItemProcessor/States/T/TimeoutSeconds"}}},
		{"choice rule", `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.x","Next":"D"}],"Default":"D"},"D":{"Type":"Succeed"}}}`, false,
			[]Diagnostic{{Severity: SeverityError, Code: CodeSchema, Location: "/States/C/Choices/0"}}},
		{"a feature this engine lacks", `{"StartAt":"M","States":{"M":{"Type":"Map","End":true,
			"ItemReader":{"Resource":"arn:aws:states:::s3:getObject","ReaderConfig":{"InputType":"PARQUET"},"Parameters":{"Bucket":"b","Key":"k"}},
			"ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED","ExecutionType":"STANDARD"},"StartAt":"P","States":{"P":{"Type":"Pass","End":true}}}}}}`, false,
			[]Diagnostic{{Severity: SeverityWarning, Code: CodeUnsupportedLocally, Location: "/States/M/ItemReader"}}},
		{"a function no handler serves", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:elsewhere","End":true}}}`, false,
			[]Diagnostic{{Severity: SeverityWarning, Code: CodeUnsupportedLocally, Location: "/States/A/Resource"}}},
		{"an activity, standard", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:us-east-1:000000000000:activity:x","End":true}}}`, false, nil},
		{"an activity, express", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:us-east-1:000000000000:activity:x","End":true}}}`, true,
			[]Diagnostic{{Severity: SeverityError, Code: CodeSchema, Location: "/States/A/Resource"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := eng.Diagnose([]byte(tt.def), tt.express)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d diagnostics %+v, want %d", len(got), got, len(tt.want))
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Severity != w.Severity || g.Code != w.Code || g.Location != w.Location || g.Message == "" {
					t.Errorf("diagnostic %d: got %+v, want %s %s at %q", i, g, w.Severity, w.Code, w.Location)
				}
			}
		})
	}
}
