// Package records opens a Lambda's executions' audit records in the
// reports bucket; every workflow's functions import it, and it links only
// the S3 client (internal/awsclient/s3: the flags' function needs no
// DynamoDB).
package records

import (
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	"github.com/veredicto/veredicto/internal/audit/s3audit"
	"github.com/veredicto/veredicto/internal/awsclient/s3"
)

// New is the executions' audit records in the reports bucket
// (audit/<tenant>/<execution>/), each object locked in GOVERNANCE mode for
// the configured retention: every workflow's task records its model calls,
// decisions and reports there before its result is used.
func New(cfg lambdaenv.Config, ac aws.Config) (*s3audit.Records, error) {
	client, err := s3.New(ac, false)
	if err != nil {
		return nil, err
	}
	return &s3audit.Records{Client: client, Bucket: cfg.ReportsBucket, Retention: cfg.AuditRetention}, nil
}
