package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	"github.com/veredicto/veredicto/internal/erasure"
	"github.com/veredicto/veredicto/internal/sdkhttp"
)

const purgeUsage = `Usage: veredicto audit purge --tenant T [--search ID] --by WHO --reason WHY --yes
         [--data DIR | --inputs-bucket B --reports-bucket B --context-table T [--region R] [--retention-days N]]

Erases a tenant's data, or one search's (the right to erasure, GDPR Art.
17): the uploaded documents, the reports, the stage records and the search
record, and every execution's audit record, which is replaced by a
tombstone holding only hashes (each chain's head and length, the hashes of
the texts and reports it named) with who purged, when and why. A search's
executions are found by the search id their record's start entry names.
"veredicto audit verify" then reports the execution as purged (exit 0).
Running it again finishes a purge cut short and changes nothing else.
Nothing is asked: without --yes nothing is erased.

On this machine it erases under "serve"'s data folder (--data). Against a
stack on AWS (--inputs-bucket, --reports-bucket and --context-table: the
stack's outputs) it erases every version of every object and bypasses the
audit records' GOVERNANCE retention: run it as the stack's
AuditOperatorRole (AuditOperatorRoleArn), with the role's credentials in
the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
AWS_SESSION_TOKEN; e.g. from "aws configure export-credentials") and the
region in --region or AWS_REGION. docs/AUDIT.md has the steps.

Flags:
`

func (m *Main) runAuditPurge(ctx context.Context, args []string) int {
	fs := subcommandFlags("audit purge", purgeUsage, m.Stderr)
	var req erasure.Request
	fs.StringVar(&req.Tenant, "tenant", "", "the tenant whose data is erased (required)")
	fs.StringVar(&req.Search, "search", "", "erase this search only (its executions, documents, reports and records)")
	fs.StringVar(&req.By, "by", "", "who runs the purge, kept in each tombstone (required)")
	fs.StringVar(&req.Reason, "reason", "", "the request it answers (a ticket, the person's request), kept in each tombstone (required)")
	yes := fs.Bool("yes", false, "erase for good: nothing can be restored")
	data := fs.String("data", app.DefaultDataDir, "the data folder of \"serve\"")
	var st app.AWSStorage
	fs.StringVar(&st.InputsBucket, "inputs-bucket", "", "AWS: the stack's inputs bucket (InputsBucketName)")
	fs.StringVar(&st.ReportsBucket, "reports-bucket", "", "AWS: the stack's reports bucket (ReportsBucketName)")
	fs.StringVar(&st.ContextTable, "context-table", "", "AWS: the stack's context table (ContextTableName)")
	region := fs.String("region", "", "AWS: the stack's region (default $AWS_REGION)")
	days := fs.Int("retention-days", 365, "AWS: days each tombstone stays locked in GOVERNANCE mode (the stack's AuditRetentionDays)")
	asJSON := fs.Bool("json", false, "print what was erased as JSON")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	onAWS := st.InputsBucket != "" || st.ReportsBucket != "" || st.ContextTable != ""
	var problems []string
	if len(pos) > 0 {
		problems = append(problems, fmt.Sprintf("unexpected argument %q", pos[0]))
	}
	if req.Tenant == "" || req.By == "" || req.Reason == "" {
		problems = append(problems, "--tenant, --by and --reason are required")
	}
	if onAWS && (st.InputsBucket == "" || st.ReportsBucket == "" || st.ContextTable == "") {
		problems = append(problems, "on AWS, --inputs-bucket, --reports-bucket and --context-table are all required")
	}
	if *days < 1 || *days > lambdaenv.MaxAuditRetentionDays {
		problems = append(problems, fmt.Sprintf("--retention-days %d is out of range 1–%d", *days, lambdaenv.MaxAuditRetentionDays))
	}
	if len(problems) > 0 {
		fmt.Fprintf(m.Stderr, "veredicto audit purge: %s\n", strings.Join(problems, "; "))
		return exitUsage
	}
	if !*yes {
		what := "all of tenant " + req.Tenant + "'s data"
		if req.Search != "" {
			what = "search " + req.Search + " of tenant " + req.Tenant
		}
		fmt.Fprintf(m.Stderr, "veredicto audit purge: this erases %s for good (documents, reports, records; audit records become tombstones); add --yes to do it\n", what)
		return exitUsage
	}
	svc := app.LocalErasure(*data)
	if onAWS {
		ac, err := lambdaenv.AWSConfig(func(k string) string {
			if k == "AWS_REGION" && *region != "" {
				return *region
			}
			return os.Getenv(k)
		})
		if err != nil {
			fmt.Fprintf(m.Stderr, "veredicto audit purge: %v\n", err)
			return exitUsage
		}
		ac.HTTPClient = sdkhttp.Client(ac.HTTPClient)
		st.Retention = time.Duration(*days) * 24 * time.Hour
		svc = app.AWSErasure(ac, st)
	} else if _, err := os.Stat(*data); err != nil {
		fmt.Fprintf(m.Stderr, "veredicto audit purge: the data folder: %v\n", err)
		return exitUsage
	}
	res, err := svc.Purge(ctx, req)
	if res != nil {
		if *asJSON {
			b, _ := json.MarshalIndent(res, "", "  ")
			fmt.Fprintln(m.Stdout, string(b))
		} else {
			printPurge(m.Stdout, res)
		}
	}
	if err != nil {
		fmt.Fprintf(m.Stderr, "veredicto audit purge: %v\n", err)
		if errors.As(err, new(*veredicto.InvalidInputError)) {
			return exitUsage
		}
		fmt.Fprintln(m.Stderr, "veredicto audit purge: run it again to finish: what was erased stays erased, and each tombstone is written before its record is erased")
		return exitFailed
	}
	return exitOK
}

func printPurge(w io.Writer, res *erasure.Result) {
	for _, p := range res.Executions {
		t := p.Tombstone
		state := "purged "
		if p.Already {
			state = "already"
		}
		fmt.Fprintf(w, "  %s  %s: tombstone of %d chains (%d entries), %d texts, %d reports, purged %s by %s\n", state, p.Execution,
			len(t.Heads), t.EntryCount(), len(t.Texts), len(t.Reports), t.PurgedAt.Format(time.RFC3339), t.PurgedBy)
	}
	for _, x := range res.Unknown {
		fmt.Fprintf(w, "  unknown  %s: its record does not say which search it ran; left as it is (purge the tenant to erase it)\n", x)
	}
	fmt.Fprintf(w, "Erased %d documents, %d reports, %d stage and search records, %d confirmations and event streams; %d audit records are tombstones.\n",
		res.Documents, res.Reports, res.Records, res.Traces, len(res.Executions))
}
