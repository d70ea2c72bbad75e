package confirm

import (
	"encoding/json"
	"testing"
	"time"
)

// fullRecord sets every field of a Record, field by field.
func fullRecord() Record {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var r Record
	r.ID, r.Tenant, r.Execution = "cf_00000000000000000000000000000001", "acme", "arn:x"
	r.ToolName, r.Category, r.Sensitivity, r.Undoable = "senior_review", "review", "high", true
	r.Preview = json.RawMessage(`{"candidate":"c-005"}`)
	r.CreatedAt, r.ExpiresAt = at, at.Add(time.Hour)
	r.Status = StatusApproved
	r.Decision = &Decision{Approved: true, DecidedBy: "ana", DecidedAt: at.Add(time.Minute), Comment: "ok"}
	r.Attempts, r.LeaseUntil, r.Delivery, r.Key = 2, at.Add(2*time.Minute), DeliveryNextRun, "senior_review/s/c"
	r.Resolver, r.ResolvedAt, r.TaskToken, r.Version = "run-1", at.Add(3*time.Minute), "tok", 3
	return r
}

// TestJSONShape pins the JSON of a stored Record (the stores keep it as
// is), of the View clients read and of the pending-confirmation event:
// their keys, in order.
func TestJSONShape(t *testing.T) {
	r := fullRecord()
	damaged := DamagedRecord(r.Tenant, r.ID, "not valid JSON (syntax error at byte 9)", r.CreatedAt)
	damaged.Damage.Quarantined = "/d/q"
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"record", r, `{"id":"cf_00000000000000000000000000000001","tenant":"acme","execution":"arn:x","toolName":"senior_review","category":"review","sensitivity":"high","undoable":true,"preview":{"candidate":"c-005"},"created_at":"2026-03-01T10:00:00Z","expires_at":"2026-03-01T11:00:00Z","status":"approved","decision":{"approved":true,"decided_by":"ana","decided_at":"2026-03-01T10:01:00Z","comment":"ok"},"attempts":2,"lease_until":"2026-03-01T10:02:00Z","delivery":"next_run","key":"senior_review/s/c","resolver":"run-1","resolved_at":"2026-03-01T10:03:00Z","task_token":"tok","version":3}`},
		{"view", r.View(r.CreatedAt), `{"id":"cf_00000000000000000000000000000001","execution":"arn:x","toolName":"senior_review","category":"review","sensitivity":"high","undoable":true,"preview":{"candidate":"c-005"},"created_at":"2026-03-01T10:00:00Z","expires_at":"2026-03-01T11:00:00Z","status":"approved","approved":true,"decided_by":"ana","decided_at":"2026-03-01T10:01:00Z","comment":"ok","delivery":"next_run","resolver":"run-1"}`},
		{"empty view", Record{}.View(time.Time{}), `{"id":"","execution":"","toolName":"","category":"","sensitivity":"","undoable":false,"preview":null,"created_at":"0001-01-01T00:00:00Z","expires_at":"0001-01-01T00:00:00Z","status":""}`},
		{"damaged record", damaged, `{"id":"cf_00000000000000000000000000000001","tenant":"acme","execution":"","toolName":"","category":"","sensitivity":"","undoable":false,"preview":null,"created_at":"2026-03-01T10:00:00Z","expires_at":"0001-01-01T00:00:00Z","status":"damaged","task_token":"","version":0,"damage":{"reason":"not valid JSON (syntax error at byte 9)","at":"2026-03-01T10:00:00Z","quarantined":"/d/q"}}`},
		{"damaged view", damaged.View(r.CreatedAt), `{"id":"cf_00000000000000000000000000000001","execution":"","toolName":"","category":"","sensitivity":"","undoable":false,"preview":null,"created_at":"2026-03-01T10:00:00Z","expires_at":"0001-01-01T00:00:00Z","status":"damaged","damage":"not valid JSON (syntax error at byte 9)"}`},
		{"pending event", pendingEvent(r), `{"id":"cf_00000000000000000000000000000001","execution":"arn:x","toolName":"senior_review","category":"review","sensitivity":"high","undoable":true,"preview":{"candidate":"c-005"},"created_at":"2026-03-01T10:00:00Z","expires_at":"2026-03-01T11:00:00Z"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(b); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
