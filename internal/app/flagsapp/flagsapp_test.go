package flagsapp

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/veredicto/veredicto/internal/app/lambdaenv/lambdaenvtest"
	"github.com/veredicto/veredicto/internal/app/lambdaenv/records"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/catalog/flagsfn"
)

// TestEveryClassificationRecordsIntoTheReportsBucket: on AWS, each POST
// /flags is an execution whose audit record goes to the reports bucket
// (audit/<tenant>/<execution>/), as every workflow's does, and verifies;
// its output is stored beside the reports.
func TestEveryClassificationRecordsIntoTheReportsBucket(t *testing.T) {
	ctx := t.Context()
	cfg, ac := lambdaenvtest.Stack(t)
	s3c := awss3.NewFromConfig(ac)
	built, err := build(ctx, cfg, ac)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../../../events/flags-post.json")
	if err != nil {
		t.Fatal(err)
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	ev.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
		JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{"custom:org": "acme", "sub": "ana"}}}
	resp, err := built.(*flagsfn.Services).API.Handle(ctx, ev)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("POST /flags: %v %d %s", err, resp.StatusCode, resp.Body)
	}
	execution := resp.Headers["Veredicto-Execution"]
	if !strings.HasPrefix(execution, "flags-") {
		t.Fatalf("the answer names no execution: %v", resp.Headers)
	}

	rec, err := records.New(cfg, ac)
	if err != nil {
		t.Fatal(err)
	}
	execs, err := rec.Executions(ctx, "acme")
	if err != nil || len(execs) != 1 || execs[0] != execution {
		t.Fatalf("acme's records: %q %v; want %s", execs, err, execution)
	}
	if problems, err := audit.Verify(ctx, rec.Store("acme", execution), nil); err != nil || len(problems) > 0 {
		t.Errorf("the record in the bucket: %v %v", problems, err)
	}
	out, err := s3c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(cfg.ReportsBucket), Key: aws.String("flags/acme/" + execution + "/flags.json")})
	if err != nil {
		t.Fatalf("the stored output: %v", err)
	}
	out.Body.Close()
}
