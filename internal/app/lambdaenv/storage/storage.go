// Package storage builds a Lambda's buckets and context table from its
// configuration: the functions that read and write them (search, intake,
// debate, chat, companion) import it; the others link no S3 client.
package storage

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	s3blob "github.com/veredicto/veredicto/internal/blob/s3"
	"github.com/veredicto/veredicto/internal/store/dynamo"
)

// New builds the S3 adapters of the inputs and reports buckets and the
// DynamoDB context store (which keeps large records in the reports bucket).
func New(cfg lambdaenv.Config, ac aws.Config) (inputs, reports *s3blob.Store, kv *dynamo.Store) {
	s3c := s3.NewFromConfig(ac)
	inputs = s3blob.New(s3c, cfg.InputsBucket, "")
	reports = s3blob.New(s3c, cfg.ReportsBucket, "")
	return inputs, reports, dynamo.New(dynamodb.NewFromConfig(ac), cfg.ContextTable, reports)
}
