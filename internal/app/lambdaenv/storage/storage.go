// Package storage builds a Lambda's buckets and context table from its
// configuration: the functions that read and write them (search, intake,
// debate, chat, companion) import it; the others link no S3 client. The
// clients are internal/awsclient's, not the SDK's service clients.
package storage

import (
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	"github.com/veredicto/veredicto/internal/awsclient/dynamodb"
	"github.com/veredicto/veredicto/internal/awsclient/s3"
	s3blob "github.com/veredicto/veredicto/internal/blob/s3"
	"github.com/veredicto/veredicto/internal/store/dynamo"
)

// New builds the S3 adapters of the inputs and reports buckets and the
// DynamoDB context store (which keeps large records in the reports bucket).
func New(cfg lambdaenv.Config, ac aws.Config) (inputs, reports *s3blob.Store, kv *dynamo.Store, err error) {
	s3c, err := s3.New(ac, false)
	if err != nil {
		return nil, nil, nil, err
	}
	ddb, err := dynamodb.New(ac)
	if err != nil {
		return nil, nil, nil, err
	}
	inputs = s3blob.New(s3c, cfg.InputsBucket, "")
	reports = s3blob.New(s3c, cfg.ReportsBucket, "")
	return inputs, reports, dynamo.New(ddb, cfg.ContextTable, reports), nil
}
