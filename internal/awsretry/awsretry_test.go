package awsretry

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/veredicto/veredicto"
)

func status(code int) error {
	return &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: code}}, Err: errors.New("boom")}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		transient bool
	}{
		{"503", status(503), true},
		{"500 wrapped", fmt.Errorf("get blob x: %w", status(500)), true},
		{"throttling", &smithy.GenericAPIError{Code: "ThrottlingException", Message: "slow down"}, true},
		{"dynamo throughput", &smithy.GenericAPIError{Code: "ProvisionedThroughputExceededException"}, true},
		{"access denied", &smithy.GenericAPIError{Code: "AccessDenied", Message: "no"}, false},
		{"validation", &smithy.GenericAPIError{Code: "ValidationException"}, false},
		{"404", status(404), false},
	}
	for _, tt := range tests {
		got := Classify(tt.err)
		var te *veredicto.TransientError
		if errors.As(got, &te) != tt.transient {
			t.Errorf("%s: Classify = %T, transient want %v", tt.name, got, tt.transient)
		}
		if !errors.Is(got, tt.err) {
			t.Errorf("%s: the original error is not in the chain", tt.name)
		}
	}
	if Classify(nil) != nil {
		t.Error("Classify(nil) != nil")
	}
}
