package llmsecret

import (
	"strings"
	"testing"
)

func TestAPIKeyFromSecret(t *testing.T) {
	tests := []struct{ secret, key, err string }{
		{"sk-plain\n", "sk-plain", ""},
		{`{"api_key": " sk-json "}`, "sk-json", ""},
		{`{"apiKey": "sk-x"}`, "", `without a non-empty "api_key"`},
		{`{"api_key": `, "", `without a non-empty "api_key"`},
		{"  ", "", "empty"},
	}
	for _, tt := range tests {
		key, err := apiKeyFromSecret(tt.secret)
		if key != tt.key || (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%q: key %q, err %v; want %q, %q", tt.secret, key, err, tt.key, tt.err)
		}
		if err != nil && strings.Contains(err.Error(), "sk-") {
			t.Errorf("%q: the error quotes the secret: %v", tt.secret, err)
		}
	}
}
