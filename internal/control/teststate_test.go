package control

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
)

// TestStateAnswersWithinItsLimit: a state still running at TestState's
// limit has FAILED with States.Timeout, as Step Functions answers after
// five minutes, and a Wait longer than the limit fails so at once, without
// waiting; a Retry does not make either RETRIABLE.
func TestStateAnswersWithinItsLimit(t *testing.T) {
	f := newFixture()
	f.reg.Register("HangFunction", func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		<-ctx.Done() // a provider that never answers
		return nil, ctx.Err()
	})
	m := f.open(t, t.TempDir())
	defer m.Close()
	tests := []struct {
		name, def string
		limit     time.Duration
	}{
		{"task past a tiny limit", `{"Type":"Task","Resource":"${HangFunctionArn}","Retry":[{"ErrorEquals":["States.ALL"]}],"End":true}`, 50 * time.Millisecond},
		{"wait past the limit", `{"Type":"Wait","Seconds":99999999,"End":true}`, TestStateLimit},
		{"wait path past the limit", `{"Type":"Wait","SecondsPath":"$.s","Next":"After"}`, TestStateLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := m.TestStateWithin(context.Background(), TestStateRequest{Definition: tt.def, Input: `{"s":301}`, RoleARN: "arn:aws:iam::000000000000:role/x"}, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != TestFailed || res.Error != asl.ErrTimeout || res.NextState != "" || res.Cause == "" {
				t.Errorf("got %+v, want FAILED with States.Timeout and a cause", res)
			}
		})
	}
}
