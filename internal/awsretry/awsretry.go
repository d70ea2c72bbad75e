// Package awsretry classifies AWS SDK errors for the workflows: an error
// the SDK itself would retry (throttling, 5xx, timeouts, connection
// failures) that is still failing after the SDK's retries becomes a
// *veredicto.TransientError, which the state machines retry with backoff.
package awsretry

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"

	"github.com/veredicto/veredicto"
)

var (
	retryables = retry.IsErrorRetryables(retry.DefaultRetryables)
	throttles  = retry.IsErrorThrottles(retry.DefaultThrottles)
)

// Classify wraps err in *veredicto.TransientError when it is worth retrying
// later; other errors (access denied, validation) are returned unchanged.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	if retryables.IsErrorRetryable(err) == aws.TrueTernary || throttles.IsErrorThrottle(err) == aws.TrueTernary {
		return &veredicto.TransientError{Err: err}
	}
	return err
}
