// Package lambdaenvtest gives a test a Lambda function's configuration
// and AWS clients against moto, as its bootstrap builds them from the
// environment template.yaml sets: the buckets (the reports one with
// Object Lock) created, ready for a kind's build function.
package lambdaenvtest

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	"github.com/veredicto/veredicto/internal/moto"
)

// Stack starts moto and returns the configuration and AWS config of a
// function of a stack whose inputs and reports buckets exist (records
// kept AUDIT_RETENTION_DAYS 30, tenants in the JWT claim custom:org).
func Stack(t *testing.T) (lambdaenv.Config, aws.Config) {
	t.Helper()
	endpoint := moto.Start(t)
	env := map[string]string{"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_ENDPOINT_URL": endpoint,
		"INPUTS_BUCKET": "veredicto-inputs", "REPORTS_BUCKET": "veredicto-reports", "CONTEXT_TABLE": "context", "AUDIT_RETENTION_DAYS": "30",
		"TENANT_CLAIM": "custom:org"}
	getenv := func(k string) string { return env[k] }
	cfg, err := lambdaenv.ConfigFromEnv(getenv)
	if err != nil {
		t.Fatal(err)
	}
	ac, err := lambdaenv.AWSConfig(getenv)
	if err != nil {
		t.Fatal(err)
	}
	s3c := s3.NewFromConfig(ac)
	for _, b := range []string{cfg.InputsBucket, cfg.ReportsBucket} {
		if _, err := s3c.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String(b), ObjectLockEnabledForBucket: aws.Bool(b == cfg.ReportsBucket)}); err != nil {
			t.Fatal(err)
		}
	}
	return cfg, ac
}
