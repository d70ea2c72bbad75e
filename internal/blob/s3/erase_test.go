package s3

import (
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/veredicto/veredicto/internal/moto"
)

// TestEraseRemovesEveryVersion: in a versioned bucket, Erase removes
// every version and delete marker of the key and of the keys under key/,
// and spares what Keep names, keys that merely share the prefix ("s-10"
// for "s-1") and everything else: on gofakes3 in one listing page, on moto
// across pages of two (gofakes3 1.2.0 repeats the first page of versions
// forever when a listing is truncated).
func TestEraseRemovesEveryVersion(t *testing.T) {
	t.Run("gofakes3", func(t *testing.T) { eraseEveryVersion(t, newFakeS3(t, "reports"), 0) })
	t.Run("moto, pages of two", func(t *testing.T) {
		client := awss3.New(awss3.Options{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
			BaseEndpoint: aws.String(moto.Start(t)), UsePathStyle: true})
		if _, err := client.CreateBucket(t.Context(), &awss3.CreateBucketInput{Bucket: aws.String("reports")}); err != nil {
			t.Fatal(err)
		}
		eraseEveryVersion(t, client, 2)
	})
}

func eraseEveryVersion(t *testing.T, client *awss3.Client, pageSize int32) {
	ctx := t.Context()
	if _, err := client.PutBucketVersioning(ctx, &awss3.PutBucketVersioningInput{Bucket: aws.String("reports"),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	st := New(client, "reports", "")
	for _, k := range []string{"reports/acme/s-1/c-001/report.md", "reports/acme/s-1/c-002/report.md", "reports/acme/s-1/summary.md",
		"reports/acme/s-1", "reports/acme/s-10/summary.md", "reports/acme/s-2/summary.md", "reports/acme/s-1/keep.md"} {
		for v := range 2 { // two versions of each
			if err := st.Put(ctx, k, []byte(strings.Repeat("v", v+1)), ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A delete marker over one of them: erasing removes it too.
	if _, err := client.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String("reports"), Key: aws.String("reports/acme/s-1/summary.md")}); err != nil {
		t.Fatal(err)
	}
	e := &Eraser{Client: client, Bucket: "reports", Keep: func(k string) bool { return strings.HasSuffix(k, "/keep.md") }, pageSize: pageSize}
	n, err := e.Erase(ctx, "reports/acme/s-1")
	if err != nil || n != 4 {
		t.Fatalf("erase: %d keys, %v; want the 4 keys of s-1 but the kept one", n, err)
	}
	out, err := client.ListObjectVersions(ctx, &awss3.ListObjectVersionsInput{Bucket: aws.String("reports")})
	if err != nil {
		t.Fatal(err)
	}
	left := map[string]int{}
	for _, v := range out.Versions {
		left[aws.ToString(v.Key)]++
	}
	for _, m := range out.DeleteMarkers {
		left[aws.ToString(m.Key)+" (marker)"]++
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range left {
			if !yield(k) {
				return
			}
		}
	})
	want := []string{"reports/acme/s-1/keep.md", "reports/acme/s-10/summary.md", "reports/acme/s-2/summary.md"}
	if !slices.Equal(keys, want) || left["reports/acme/s-2/summary.md"] != 2 {
		t.Errorf("left %v; want both versions of %q", left, want)
	}
	if _, err := e.Erase(ctx, "../etc"); err == nil {
		t.Error("an unclean key was erased")
	}
}
