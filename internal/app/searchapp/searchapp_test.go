package searchapp

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/veredicto/veredicto/internal/app/lambdaenv/lambdaenvtest"
	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/audit/s3audit"
	s3blob "github.com/veredicto/veredicto/internal/blob/s3"
	"github.com/veredicto/veredicto/internal/catalog"
	"github.com/veredicto/veredicto/internal/catalog/searchfn"
	"github.com/veredicto/veredicto/internal/search"
	"github.com/veredicto/veredicto/internal/search/searchtest"
	"github.com/veredicto/veredicto/internal/store/dynamo"
)

// TestEveryTaskRecordsIntoTheReportsBucket builds the search functions as
// their bootstrap does (the configuration read from the environment
// template.yaml sets, the AWS clients from it) against moto (S3 with Object
// Lock, DynamoDB), runs the executive search's state machine with those
// handlers over the example search, and reads the execution's audit record
// back from the reports bucket: every Task recorded into it (the start,
// GEM5's stage and each candidate's stages, gates and report, the
// summary), it verifies against the reports in the bucket, and its objects
// are locked in GOVERNANCE mode for AUDIT_RETENTION_DAYS.
func TestEveryTaskRecordsIntoTheReportsBucket(t *testing.T) {
	ctx := t.Context()
	cfg, ac := lambdaenvtest.Stack(t)
	s3c := awss3.NewFromConfig(ac)
	if err := dynamo.EnsureTable(ctx, dynamodb.NewFromConfig(ac), cfg.ContextTable); err != nil {
		t.Fatal(err)
	}
	inputs := s3blob.New(s3c, cfg.InputsBucket, "")
	searchtest.Upload(t, inputs, "../../../examples/search-demo", search.InputPrefix("acme", "demo-cfo-andina"), nil)

	built, err := build(ctx, cfg, ac)
	if err != nil {
		t.Fatal(err)
	}
	svc := built.(*searchfn.Services).Search
	in := search.StartInput{Tenant: "acme", SearchID: "demo-cfo-andina", InputPrefix: search.InputPrefix("acme", "demo-cfo-andina"), ReportPrefix: search.ReportPrefix("acme", "demo-cfo-andina")}
	res, err := catalog.RunSearch(ctx, svc, in, nil)
	if err != nil || res.Status != asl.StatusSucceeded {
		t.Fatalf("the search: %v %+v", err, res)
	}

	records := svc.Audit.(*s3audit.Records)
	execs, err := records.Executions(ctx, "acme")
	if err != nil || len(execs) != 1 || !strings.HasPrefix(execs[0], "demo-cfo-andina-") {
		t.Fatalf("acme's records: %q %v; want the one execution of demo-cfo-andina", execs, err)
	}
	st := records.Store("acme", execs[0])
	reports := s3blob.New(s3c, cfg.ReportsBucket, "")
	if ps, err := audit.Verify(ctx, st, reports.Get); err != nil || len(ps) != 0 {
		t.Fatalf("the record: %v %v; want it to verify against the reports in the bucket", ps, err)
	}
	chains, _ := st.Chains(ctx)
	candidates, _ := inputs.List(ctx, search.InputPrefix("acme", "demo-cfo-andina")+"/candidates/")
	for _, k := range candidates {
		c := "candidate/" + strings.Split(strings.TrimPrefix(k, search.InputPrefix("acme", "demo-cfo-andina")+"/candidates/"), "/")[0]
		if !slices.Contains(chains, c) {
			t.Errorf("no chain %s among %q", c, chains)
			continue
		}
		if kinds := kindsOf(t, st, c); !slices.Contains(kinds, audit.KindStage) || !slices.Contains(kinds, audit.KindDecision) || !slices.Contains(kinds, audit.KindReport) {
			t.Errorf("%s holds %q; want the candidate's stages, decisions and report", c, kinds)
		}
	}
	if kinds := kindsOf(t, st, audit.MainChain); kinds[0] != audit.KindStart || !slices.Contains(kinds, audit.KindStage) ||
		!slices.Contains(kinds, audit.KindReport) || kinds[len(kinds)-1] != audit.KindSummary {
		t.Errorf("main holds %q; want the start, GEM5's stage, the summary's reports and the summary entry last", kinds)
	}
	head, err := s3c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(cfg.ReportsBucket), Key: aws.String(st.Prefix() + "chains/main/000000.json")})
	if err != nil || head.ObjectLockMode != types.ObjectLockModeGovernance || head.ObjectLockRetainUntilDate == nil {
		t.Errorf("the start entry's lock: %v %v; want GOVERNANCE with a retain-until date", head, err)
	}
}

func kindsOf(t *testing.T, st audit.Store, chain string) []string {
	t.Helper()
	lines, err := st.Lines(t.Context(), chain)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, l := range lines {
		var e audit.Entry
		if err := json.Unmarshal(l, &e); err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, e.Kind)
	}
	return kinds
}
