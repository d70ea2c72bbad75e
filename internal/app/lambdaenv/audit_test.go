package lambdaenv

import (
	"strings"
	"testing"
	"time"
)

// TestAuditRetention: AUDIT_RETENTION_DAYS is a whole number of days from
// 1 to 36500; unset, no retention; anything else refused by name, at init.
func TestAuditRetention(t *testing.T) {
	for _, tt := range []struct {
		value string
		want  time.Duration
		ok    bool
	}{
		{"", 0, true},
		{"365", 365 * 24 * time.Hour, true},
		{" 1 ", 24 * time.Hour, true},
		{"36500", 36500 * 24 * time.Hour, true},
		{"0", 0, false},
		{"36501", 0, false},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"6 months", 0, false},
	} {
		env := map[string]string{"AUDIT_RETENTION_DAYS": tt.value, "INPUTS_BUCKET": "i", "REPORTS_BUCKET": "r", "CONTEXT_TABLE": "t"}
		c, err := ConfigFromEnv(func(k string) string { return env[k] })
		switch {
		case tt.ok && (err != nil || c.AuditRetention != tt.want):
			t.Errorf("AUDIT_RETENTION_DAYS=%q: %v %v, want %v", tt.value, c.AuditRetention, err, tt.want)
		case !tt.ok && (err == nil || !strings.Contains(err.Error(), "AUDIT_RETENTION_DAYS")):
			t.Errorf("AUDIT_RETENTION_DAYS=%q: %v, want an error naming the variable", tt.value, err)
		}
	}
}
