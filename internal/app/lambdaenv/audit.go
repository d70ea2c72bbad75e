package lambdaenv

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// MaxAuditRetentionDays is the longest AUDIT_RETENTION_DAYS accepted (100
// years: S3 Object Lock's own bound is far above it).
const MaxAuditRetentionDays = 36500

// AuditRetention reads AUDIT_RETENTION_DAYS, how long each audit record
// object written to the reports bucket stays under its GOVERNANCE Object
// Lock retention: a whole number of days from 1 to MaxAuditRetentionDays.
// Unset, it is zero: objects are written without a retention (a bucket
// without Object Lock; template.yaml always sets it).
func AuditRetention(getenv func(string) string) (time.Duration, error) {
	v := strings.TrimSpace(getenv("AUDIT_RETENTION_DAYS"))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > MaxAuditRetentionDays {
		return 0, fmt.Errorf("configuration: AUDIT_RETENTION_DAYS %q must be a whole number of days from 1 to %d", v, MaxAuditRetentionDays)
	}
	return time.Duration(n) * 24 * time.Hour, nil
}

// AWSConfig is the AWS SDK configuration a Lambda function builds from its
// environment (region, credentials, endpoints, retries; lambdaAWSConfig),
// for the operator commands of the CLI (veredicto audit purge on AWS)
// that run the same way, without the SDK's shared-config chain.
func AWSConfig(getenv func(string) string) (aws.Config, error) { return lambdaAWSConfig(getenv) }
