package llm

import (
	"net/http"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		header string
		want   time.Duration
	}{
		{"", 0},
		{"3", 3 * time.Second},
		{" 120 ", 2 * time.Minute},
		{"0", 0},
		{"-5", 0},
		{"soon", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{"99999999999", 24 * time.Hour},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.header, now); got != tt.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.header, got, tt.want)
		}
	}
}

func TestRetryWaitHonoursRetryAfterWithinTheBound(t *testing.T) {
	tests := []struct {
		name                       string
		backoff, retryAfter, bound time.Duration
		want                       time.Duration
	}{
		{"no Retry-After: own backoff", time.Second, 0, 30 * time.Second, time.Second},
		{"longer Retry-After wins", time.Second, 5 * time.Second, 30 * time.Second, 5 * time.Second},
		{"shorter Retry-After: own backoff", 4 * time.Second, time.Second, 30 * time.Second, 4 * time.Second},
		{"Retry-After beyond the bound is capped", time.Second, time.Hour, 30 * time.Second, 30 * time.Second},
	}
	for _, tt := range tests {
		if got := retryWait(tt.backoff, tt.retryAfter, tt.bound); got != tt.want {
			t.Errorf("%s: retryWait = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestErrorFieldsKeepWhatTheyCanRead: a message sent as a list (some
// servers do) loses nothing else; a number code is kept as its digits.
func TestErrorFieldsKeepWhatTheyCanRead(t *testing.T) {
	typ, code, msg := ErrorFields([]byte(`{"error":{"message":["a","b"],"type":"invalid_request_error","code":"bad_schema"}}`))
	if typ != "invalid_request_error" || code != "bad_schema" || msg != "a; b" {
		t.Errorf("type %q code %q message %q", typ, code, msg)
	}
	if typ, code, _ := ErrorFields([]byte(`{"object":"error","message":"x","type":"BadRequestError","code":400}`)); typ != "BadRequestError" || code != "400" {
		t.Errorf("type %q code %q", typ, code)
	}
}

// TestRetryableStatuses: 408, 409, 429 and 5xx may pass; other refusals not.
func TestRetryableStatuses(t *testing.T) {
	for status, want := range map[int]bool{400: false, 401: false, 404: false, 408: true, 409: true, 422: false, 429: true, 500: true, 503: true} {
		if got := Retryable(&StatusError{StatusCode: status}); got != want {
			t.Errorf("%d: retryable %v, want %v", status, got, want)
		}
	}
}
