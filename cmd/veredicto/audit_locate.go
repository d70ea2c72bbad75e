package main

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/audit/s3audit"
	s3blob "github.com/veredicto/veredicto/internal/blob/s3"
	"github.com/veredicto/veredicto/internal/sdkhttp"
)

// verifiable is a record to verify: its store, the reports it names, and
// where it is (for the messages).
type verifiable struct {
	store audit.Store
	files audit.Files
	where string
}

// locateForVerify finds the record p names: one on this machine
// (app.LocateRecord), or s3://BUCKET/audit/<tenant>/<execution> in a
// stack's reports bucket, whose reports are in the same bucket.
func locateForVerify(p, data, tenant string) (verifiable, error) {
	rest, ok := strings.CutPrefix(p, "s3://")
	if !ok {
		rec, err := app.LocateRecord(p, data, tenant)
		if err != nil {
			return verifiable{}, err
		}
		return verifiable{store: rec.Store(), files: rec.ReadFile, where: rec.Dir}, nil
	}
	parts := strings.Split(strings.TrimSuffix(rest, "/"), "/")
	if len(parts) != 4 || parts[0] == "" || parts[1]+"/" != s3audit.Prefix || parts[2] == "" || parts[3] == "" {
		return verifiable{}, fmt.Errorf("%s: want s3://BUCKET/%s<tenant>/<execution>", p, s3audit.Prefix)
	}
	tenantName, err1 := url.PathUnescape(parts[2])
	execution, err2 := url.PathUnescape(parts[3])
	if err1 != nil || err2 != nil {
		return verifiable{}, fmt.Errorf("%s: the tenant and execution are path-escaped as the bucket keeps them", p)
	}
	ac, err := lambdaenv.AWSConfig(os.Getenv)
	if err != nil {
		return verifiable{}, err
	}
	ac.HTTPClient = sdkhttp.Client(ac.HTTPClient)
	client := s3.NewFromConfig(ac)
	return verifiable{store: s3audit.New(client, parts[0], tenantName, execution, 0), files: s3blob.New(client, parts[0], "").Get, where: p}, nil
}

// printPurged says a record is a sound tombstone: what was erased, when,
// by whom and why.
func printPurged(w io.Writer, where string, t *audit.Tombstone) {
	fmt.Fprintf(w, "%s: purged on %s by %s (%s): the record's %d chains (%d entries), %d texts and %d reports were erased; its tombstone keeps their hashes and is intact\n",
		where, t.PurgedAt.Format(time.RFC3339), t.PurgedBy, t.Reason, len(t.Heads), t.EntryCount(), len(t.Texts), len(t.Reports))
}
