package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/audit/s3audit"
	s3blob "github.com/veredicto/veredicto/internal/blob/s3"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/moto"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/search/offline"
	"github.com/veredicto/veredicto/internal/search/searchtest"
	"github.com/veredicto/veredicto/internal/store/dynamo"
	"github.com/veredicto/veredicto/prompts"
)

// stack is a stack's storage on moto: the inputs bucket, the reports
// bucket with Object Lock, the context table, and the search service the
// functions build on them (audit records locked for a day).
type stack struct {
	s3  *awss3.Client
	ddb *dynamodb.Client
	svc *search.Service
}

const (
	stackInputs  = "veredicto-inputs"
	stackReports = "veredicto-reports"
	stackTable   = "context"
)

func newStack(t *testing.T) *stack {
	t.Helper()
	ctx := t.Context()
	for k, v := range map[string]string{"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_ENDPOINT_URL": moto.Start(t)} {
		t.Setenv(k, v)
	}
	ac, err := lambdaenv.AWSConfig(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	st := &stack{s3: awss3.NewFromConfig(ac), ddb: dynamodb.NewFromConfig(ac)}
	for _, b := range []string{stackInputs, stackReports} {
		if _, err := st.s3.CreateBucket(ctx, &awss3.CreateBucketInput{Bucket: aws.String(b), ObjectLockEnabledForBucket: aws.Bool(b == stackReports)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := dynamo.EnsureTable(ctx, st.ddb, stackTable); err != nil {
		t.Fatal(err)
	}
	reports := s3blob.New(st.s3, stackReports, "")
	st.svc = &search.Service{Inputs: s3blob.New(st.s3, stackInputs, ""), Reports: reports, Store: dynamo.New(st.ddb, stackTable, reports),
		Analyst: offline.New(), PromptVersions: prompts.PromptVersion, Layout: search.BucketLayout,
		Audit: &s3audit.Records{Client: st.s3, Bucket: stackReports, Retention: 24 * time.Hour}}
	return st
}

// run uploads the example search as tenant's searchID with marker in a
// candidate's CV, records it as the intake does, runs it through the
// state machine with the functions' handlers, and returns its execution.
func (st *stack) run(t *testing.T, tenant, searchID, marker string) string {
	t.Helper()
	ctx := t.Context()
	searchtest.Upload(t, s3blob.New(st.s3, stackInputs, ""), "../../examples/search-demo", search.InputPrefix(tenant, searchID), searchtest.AsSearch(searchID, marker))
	if _, err := st.svc.Store.(*dynamo.Store).PutIfAbsent(ctx, "search/"+tenant+"/"+searchID, []byte(`{"search_id":"`+searchID+`","note":"`+marker+`"}`)); err != nil {
		t.Fatal(err)
	}
	recs := st.svc.Audit.(*s3audit.Records)
	before, _ := recs.Executions(ctx, tenant)
	in := search.StartInput{Tenant: tenant, SearchID: searchID, InputPrefix: search.InputPrefix(tenant, searchID), ReportPrefix: search.ReportPrefix(tenant, searchID)}
	if res, err := catalog.RunSearch(ctx, st.svc, in, nil); err != nil || res.Status != asl.StatusSucceeded {
		t.Fatalf("search %s/%s: %v %+v", tenant, searchID, err, res)
	}
	after, _ := recs.Executions(ctx, tenant)
	if len(after) != len(before)+1 {
		t.Fatalf("executions of %s: %q, then %q", tenant, before, after)
	}
	for _, x := range after {
		if !strings.Contains(strings.Join(before, "\n"), x) {
			return x
		}
	}
	return ""
}

// holding lists every object version of both buckets and every item of
// the table whose bytes contain s.
func (st *stack) holding(t *testing.T, s string) []string {
	t.Helper()
	ctx := t.Context()
	var out []string
	for _, b := range []string{stackInputs, stackReports} {
		p := awss3.NewListObjectVersionsPaginator(st.s3, &awss3.ListObjectVersionsInput{Bucket: aws.String(b)})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range page.Versions {
				obj, err := st.s3.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(b), Key: v.Key, VersionId: v.VersionId})
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(obj.Body)
				obj.Body.Close()
				if bytes.Contains(body, []byte(s)) || strings.Contains(aws.ToString(v.Key), s) {
					out = append(out, b+"/"+aws.ToString(v.Key))
				}
			}
		}
	}
	scan, err := st.ddb.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(stackTable)})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range scan.Items {
		var text strings.Builder
		for _, v := range it {
			switch x := v.(type) {
			case *ddbtypes.AttributeValueMemberS:
				text.WriteString(x.Value + " ")
			case *ddbtypes.AttributeValueMemberB:
				text.Write(x.Value)
			}
		}
		if strings.Contains(text.String(), s) {
			out = append(out, "table/"+it["pk"].(*ddbtypes.AttributeValueMemberS).Value)
		}
	}
	return out
}

// TestAuditPurgeOnAWS: against a stack's storage on moto (S3 with Object
// Lock, DynamoDB), searches recorded as the Lambdas record them verify
// from the bucket ("audit verify s3://…"); "audit purge" with the stack's
// names erases every version of the purged search's documents, reports,
// stage and search records and audit record, bypassing the records'
// GOVERNANCE retention, and leaves a locked tombstone that verifies as
// purged; the tenant's other search still verifies.
func TestAuditPurgeOnAWS(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: runs two searches against moto_server (a subprocess), about 8 s; make test-long runs it")
	}
	ctx := t.Context()
	st := newStack(t)
	s1 := st.run(t, "acme", "s-1", "MARCA-PERSONAL-S1")
	s2 := st.run(t, "acme", "s-2", "MARCA-PERSONAL-S2")
	if h := st.holding(t, "MARCA-PERSONAL-S1"); len(h) < 3 {
		t.Fatalf("the marker is in %q before the purge; want the upload, the search record and the audit record's texts", h)
	}
	if out := mustRun(t, "audit", "verify", "s3://"+stackReports+"/audit/acme/"+s1); !strings.Contains(out, "the record verifies") {
		t.Fatalf("verify from the bucket:\n%s", out)
	}

	stackFlags := []string{"--region", "us-east-1", "--inputs-bucket", stackInputs, "--reports-bucket", stackReports, "--context-table", stackTable, "--retention-days", "1"}
	if code, _, stderr := runCLI(t, "", "audit", "purge", "--tenant", "acme", "--by", "x", "--reason", "y", "--yes", "--reports-bucket", stackReports); code != exitUsage ||
		!strings.Contains(stderr, "--inputs-bucket, --reports-bucket and --context-table are all required") {
		t.Errorf("a bucket alone: exit %d, %s", code, stderr)
	}
	t.Setenv("AWS_REGION", "") // --region says it
	out := mustRun(t, append([]string{"audit", "purge", "--tenant", "acme", "--search", "s-1", "--by", "dpo@acme", "--reason", "solicitud 42", "--yes"}, stackFlags...)...)
	t.Setenv("AWS_REGION", "us-east-1")
	if !strings.Contains(out, "purged   "+s1) {
		t.Errorf("purge:\n%s", out)
	}
	if h := st.holding(t, "MARCA-PERSONAL-S1"); len(h) != 0 {
		t.Errorf("after the purge the search's personal data is still in %q", h)
	}
	versions, err := st.s3.ListObjectVersions(ctx, &awss3.ListObjectVersionsInput{Bucket: aws.String(stackReports), Prefix: aws.String("audit/acme/" + s1 + "/")})
	if err != nil {
		t.Fatal(err)
	}
	if len(versions.Versions) != 1 || aws.ToString(versions.Versions[0].Key) != "audit/acme/"+s1+"/chains/tombstone/000000.json" || len(versions.DeleteMarkers) != 0 {
		t.Errorf("the purged record holds %d versions and %d delete markers; want its tombstone alone", len(versions.Versions), len(versions.DeleteMarkers))
	}
	head, err := st.s3.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(stackReports), Key: aws.String("audit/acme/" + s1 + "/chains/tombstone/000000.json")})
	if err != nil || head.ObjectLockMode != types.ObjectLockModeGovernance {
		t.Errorf("the tombstone's lock: %v, %v; want GOVERNANCE", head, err)
	}
	for _, prefix := range []string{"stage/acme/s-1/"} {
		if keys, err := st.svc.Store.(*dynamo.Store).List(ctx, prefix); err != nil || len(keys) != 0 {
			t.Errorf("%s after the purge: %q %v", prefix, keys, err)
		}
	}
	if out := mustRun(t, "audit", "verify", "s3://"+stackReports+"/audit/acme/"+s1); !strings.Contains(out, "purged on") || !strings.Contains(out, "by dpo@acme") {
		t.Errorf("verify of the purged record:\n%s", out)
	}
	if out := mustRun(t, "audit", "verify", "s3://"+stackReports+"/audit/acme/"+s2); !strings.Contains(out, "the record verifies") {
		t.Errorf("the other search after the purge:\n%s", out)
	}
	if len(st.holding(t, "MARCA-PERSONAL-S2")) < 3 {
		t.Error("the other search lost its data")
	}
	if keys, _ := st.svc.Store.(*dynamo.Store).List(ctx, "stage/acme/s-2/"); len(keys) == 0 {
		t.Error("the other search lost its stage records")
	}
	for _, bad := range []string{"s3://" + stackReports + "/reports/acme/" + s2, "s3://" + stackReports + "/audit/acme"} {
		if code, _, stderr := runCLI(t, "", "audit", "verify", bad); code != exitUsage || !strings.Contains(stderr, "want s3://BUCKET/audit/<tenant>/<execution>") {
			t.Errorf("verify %s: exit %d, %s", bad, code, stderr)
		}
	}
}
