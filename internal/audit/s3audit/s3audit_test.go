package s3audit

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/audit/audittest"
	"github.com/veredicto/veredicto/internal/moto"
)

func client(endpoint string) *awss3.Client {
	return awss3.New(awss3.Options{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
		BaseEndpoint: aws.String(endpoint), UsePathStyle: true})
}

// gofakes3Client starts gofakes3 on 127.0.0.1 (httptest), stopped with
// the test.
func gofakes3Client(t *testing.T) *awss3.Client {
	t.Helper()
	srv := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	t.Cleanup(srv.Close)
	return client(srv.URL)
}

var buckets atomic.Int64

// newBucket creates a bucket of its own for one store, with Object Lock
// when lock is set.
func newBucket(t *testing.T, c *awss3.Client, lock bool) string {
	t.Helper()
	name := fmt.Sprintf("reports-%d", buckets.Add(1))
	in := &awss3.CreateBucketInput{Bucket: aws.String(name)}
	if lock {
		in.ObjectLockEnabledForBucket = aws.Bool(true)
	}
	if _, err := c.CreateBucket(t.Context(), in); err != nil {
		t.Fatalf("create bucket %s: %v", name, err)
	}
	// Versioned, as the reports bucket is (Object Lock implies it).
	if _, err := c.PutBucketVersioning(t.Context(), &awss3.PutBucketVersioningInput{Bucket: aws.String(name),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatalf("versioning of %s: %v", name, err)
	}
	return name
}

// TestConformanceOnGofakes3: the store passes the checks every store of
// records passes, on gofakes3 (which honours If-None-Match: *; it has no
// Object Lock, so no retention is asked for).
func TestConformanceOnGofakes3(t *testing.T) {
	c := gofakes3Client(t)
	audittest.Store(t, func(t *testing.T) audit.Store { return New(c, newBucket(t, c, false), "acme", "x-1", 0) })
}

// TestConformanceOnMotoWithObjectLock: the same checks on moto, in a
// bucket with Object Lock, every object written under a GOVERNANCE
// retention: the purge erases them by bypassing it.
func TestConformanceOnMotoWithObjectLock(t *testing.T) {
	c := client(moto.Start(t))
	audittest.Store(t, func(t *testing.T) audit.Store { return New(c, newBucket(t, c, true), "acme", "x-1", 24*time.Hour) })
}

// TestRecordsAreLockedInGovernanceMode: on moto, each entry and text is
// an object of its own under audit/<tenant>/<execution>/, locked in
// GOVERNANCE mode until the retention's end; deleting one of its versions
// without bypassing the retention is refused, and a purge (which bypasses
// it) erases every version.
func TestRecordsAreLockedInGovernanceMode(t *testing.T) {
	ctx := t.Context()
	c := client(moto.Start(t))
	bucket := newBucket(t, c, true)
	now := time.Now().UTC().Truncate(time.Second)
	recs := &Records{Client: c, Bucket: bucket, Retention: 30 * 24 * time.Hour, Now: func() time.Time { return now }}
	st := recs.Store("acme", "s-1 run")
	audittest.Execution(t, st)

	var keys []string
	out, err := c.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	for _, want := range []string{"audit/acme/s-1%20run/chains/main/000000.json", "audit/acme/s-1%20run/chains/main/000001.json",
		"audit/acme/s-1%20run/chains/candidate%2Fc-1/000003.json", "audit/acme/s-1%20run/texts/" + audit.Hash([]byte("CV de la candidata"))} {
		if !slices.Contains(keys, want) {
			t.Errorf("no object %s among %q", want, keys)
		}
	}
	head, err := c.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("audit/acme/s-1%20run/chains/main/000000.json")})
	if err != nil {
		t.Fatal(err)
	}
	if head.ObjectLockMode != types.ObjectLockModeGovernance || !aws.ToTime(head.ObjectLockRetainUntilDate).Equal(now.Add(30*24*time.Hour)) {
		t.Errorf("lock %s until %v; want GOVERNANCE until %v", head.ObjectLockMode, aws.ToTime(head.ObjectLockRetainUntilDate), now.Add(30*24*time.Hour))
	}
	_, err = c.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("audit/acme/s-1%20run/chains/main/000000.json"), VersionId: head.VersionId})
	if err == nil {
		t.Error("a locked version was deleted without bypassing its retention")
	}
	if execs, err := recs.Executions(ctx, "acme"); err != nil || !slices.Equal(execs, []string{"s-1 run"}) {
		t.Errorf("acme's executions %q %v", execs, err)
	}

	if _, err := audit.Purge(ctx, st, st, audit.Tombstone{Execution: "s-1 run", PurgedAt: now, PurgedBy: "dpo", Reason: "supresión"}); err != nil {
		t.Fatalf("purge: %v", err)
	}
	versions, err := c.ListObjectVersions(ctx, &awss3.ListObjectVersionsInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, v := range versions.Versions {
		left = append(left, aws.ToString(v.Key))
	}
	if !slices.Equal(left, []string{"audit/acme/s-1%20run/chains/tombstone/000000.json"}) || len(versions.DeleteMarkers) != 0 {
		t.Errorf("versions left after the purge %q (and %d delete markers); want only the tombstone", left, len(versions.DeleteMarkers))
	}
}

// conflictingPuts answers the first n conditional puts with S3's 409
// ConditionalRequestConflict (another conditional write of the key in
// flight), then lets them through.
type conflictingPuts struct {
	API
	n atomic.Int32
}

func (c *conflictingPuts) PutObject(ctx context.Context, in *awss3.PutObjectInput, optFns ...func(*awss3.Options)) (*awss3.PutObjectOutput, error) {
	if in.IfNoneMatch != nil && c.n.Add(-1) >= 0 {
		return nil, &smithy.GenericAPIError{Code: "ConditionalRequestConflict", Message: "A conflicting conditional operation is in progress"}
	}
	return c.API.PutObject(ctx, in, optFns...)
}

// TestConflictsAreConflictErrors: a taken entry (412) is a
// *veredicto.ConflictError the Recorder retries on; S3's 409 while
// another conditional write of the key is in flight is retried until it
// settles.
func TestConflictsAreConflictErrors(t *testing.T) {
	ctx := t.Context()
	c := gofakes3Client(t)
	flaky := &conflictingPuts{API: c}
	flaky.n.Store(2)
	st := New(flaky, newBucket(t, c, false), "acme", "x-1", 0)
	if err := st.Append(ctx, "main", 0, []byte(`{"a":1}`)); err != nil {
		t.Fatalf("append through two 409s: %v", err)
	}
	err := st.Append(ctx, "main", 0, []byte(`{"a":2}`))
	var ce *veredicto.ConflictError
	if !errors.As(err, &ce) || veredicto.ErrorName(err) != "ConflictError" || !strings.Contains(err.Error(), "entry 0 is taken") {
		t.Errorf("entry 0 again: %v, want a ConflictError saying entry 0 is taken", err)
	}
	flaky.n.Store(100)
	if err := st.Append(ctx, "main", 1, []byte(`{"a":3}`)); err == nil || errors.As(err, &ce) {
		t.Errorf("a 409 that never settles: %v, want an error that is not a ConflictError (nothing was written)", err)
	}
}

// TestBoundsAreNamed: an entry number or size out of bounds is refused
// before anything is written, and an object over an entry's size read
// back is named as damaged.
func TestBoundsAreNamed(t *testing.T) {
	ctx := t.Context()
	c := gofakes3Client(t)
	bucket := newBucket(t, c, false)
	st := New(c, bucket, "acme", "x-1", 0)
	for _, tc := range []struct {
		seq  int
		line []byte
		want string
	}{
		{-1, []byte(`{}`), "entry -1 is outside 0–99999"},
		{MaxEntries, []byte(`{}`), "entry 100000 is outside 0–99999"},
		{0, make([]byte, MaxEntryBytes+1), "over the 4 MiB an entry holds"},
	} {
		err := st.Append(ctx, "main", tc.seq, tc.line)
		if !errors.As(err, new(*veredicto.InvalidInputError)) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("append %d (%d bytes): %v, want an InvalidInputError saying %q", tc.seq, len(tc.line), err, tc.want)
		}
	}
	if err := st.PutText(ctx, audit.Hash(nil), make([]byte, MaxTextBytes+1)); !errors.As(err, new(*veredicto.InvalidInputError)) {
		t.Errorf("a text over the bound: %v, want an InvalidInputError", err)
	}
	if chains, _ := st.Chains(ctx); len(chains) != 0 {
		t.Errorf("refused entries wrote chains %q", chains)
	}
	big := strings.Repeat("x", MaxEntryBytes+1)
	if _, err := c.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(st.entryKey("main", 0)), Body: strings.NewReader(big)}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Lines(ctx, "main"); !errors.As(err, new(*veredicto.DamagedError)) {
		t.Errorf("an entry over the bound read back: %v, want a DamagedError", err)
	}
}
