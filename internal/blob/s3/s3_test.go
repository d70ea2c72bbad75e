package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/blob"
)

// newFakeS3 starts an in-process gofakes3 server on 127.0.0.1, creates
// bucket and returns a client for it. The server stops with the test.
func newFakeS3(t *testing.T, bucket string) *awss3.Client {
	t.Helper()
	// httptest binds 127.0.0.1.
	srv := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	t.Cleanup(srv.Close)

	client := awss3.New(awss3.Options{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		BaseEndpoint: aws.String(srv.URL),
		UsePathStyle: true,
	})
	if _, err := client.CreateBucket(t.Context(), &awss3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("create bucket %s: %v", bucket, err)
	}
	return client
}

func TestS3GetPutList(t *testing.T) {
	ctx := t.Context()
	client := newFakeS3(t, "docs")
	st := New(client, "docs", "reports/")

	_, err := st.Get(ctx, "s-1/missing.md")
	var nf *veredicto.NotFoundError
	if !errors.As(err, &nf) || nf.What != "blob s-1/missing.md" {
		t.Fatalf("Get missing: got %v, want *veredicto.NotFoundError for s-1/missing.md", err)
	}

	want := []byte("# Report\n")
	if err := st.Put(ctx, "s-1/report.md", want, "text/markdown; charset=utf-8"); err != nil {
		t.Fatalf("Put: %v", err)
	}
	got, err := st.Get(ctx, "s-1/report.md")
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Get: got %q, %v; want %q", got, err, want)
	}
	// The object sits under the store prefix, with its content type.
	raw, err := client.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String("docs"), Key: aws.String("reports/s-1/report.md")})
	if err != nil {
		t.Fatalf("raw GetObject: %v", err)
	}
	raw.Body.Close()
	if ct := aws.ToString(raw.ContentType); ct != "text/markdown; charset=utf-8" {
		t.Errorf("content type: got %q, want %q", ct, "text/markdown; charset=utf-8")
	}

	// Put replaces.
	if err := st.Put(ctx, "s-1/report.md", []byte("v2"), ""); err != nil {
		t.Fatalf("Put again: %v", err)
	}
	if got, _ := st.Get(ctx, "s-1/report.md"); string(got) != "v2" {
		t.Errorf("Get after replace: got %q, want %q", got, "v2")
	}

	// A bucket that does not exist is an error, not "not found".
	_, err = New(client, "no-such-bucket", "").Get(ctx, "a")
	if err == nil || errors.As(err, &nf) {
		t.Errorf("Get from missing bucket: got %v, want a non-NotFound error", err)
	}
}

func TestS3ListPrefixAndPagination(t *testing.T) {
	ctx := t.Context()
	client := newFakeS3(t, "docs")
	counter := &countingLists{API: client}
	st := New(counter, "docs", "reports/")
	st.pageSize = 2

	var want []string
	for i := range 7 {
		k := fmt.Sprintf("s-1/c-%03d/cv.md", 6-i) // written out of order
		want = append(want, k)
		if err := st.Put(ctx, k, []byte(k), "text/markdown"); err != nil {
			t.Fatalf("Put %s: %v", k, err)
		}
	}
	slices.Sort(want)
	others := []string{
		"s-2/c-001/cv.md",  // other search
		"s-1/.tmp-123",     // hidden file
		"s-1/.cache/x.md",  // file in a hidden folder
		"s-10/c-001/cv.md", // a string prefix: listed for "s-1", not for "s-1/"
	}
	for _, k := range others {
		if err := st.Put(ctx, k, []byte("x"), ""); err != nil {
			t.Fatalf("Put %s: %v", k, err)
		}
	}
	for _, raw := range []string{"other/s-1/x.md", "reports/s-1/folder/", "reports/s-1//double.md"} {
		if _, err := client.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String("docs"), Key: aws.String(raw), Body: strings.NewReader("x")}); err != nil {
			t.Fatalf("raw PutObject %s: %v", raw, err)
		}
	}

	tests := []struct {
		prefix string
		want   []string
	}{
		{"s-1/", want},
		{"s-1/c-00", want},
		{"s-1/c-003", []string{"s-1/c-003/cv.md"}},
		{"s-1", append(slices.Clone(want), "s-10/c-001/cv.md")},
		{"nothing/", nil},
		{"", append(append(slices.Clone(want), "s-10/c-001/cv.md"), "s-2/c-001/cv.md")},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			got, err := st.List(ctx, tt.prefix)
			if err != nil {
				t.Fatalf("List(%q): %v", tt.prefix, err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("List(%q):\n got %q\nwant %q", tt.prefix, got, tt.want)
			}
		})
	}

	if n := counter.calls.Load(); n < int64(3*len(tests)) {
		t.Errorf("ListObjectsV2 calls: got %d for %d lists of up to 9 keys with page size 2, want pagination", n, len(tests))
	}

	// Without a store prefix the raw keys come back as they are.
	all, err := New(client, "docs", "").List(ctx, "other/")
	if err != nil || !slices.Equal(all, []string{"other/s-1/x.md"}) {
		t.Errorf("List without store prefix: got %q, %v", all, err)
	}
}

// countingLists counts ListObjectsV2 calls.
type countingLists struct {
	API
	calls atomic.Int64
}

func (c *countingLists) ListObjectsV2(ctx context.Context, in *awss3.ListObjectsV2Input, optFns ...func(*awss3.Options)) (*awss3.ListObjectsV2Output, error) {
	c.calls.Add(1)
	return c.API.ListObjectsV2(ctx, in, optFns...)
}

func TestS3PutIfAbsent(t *testing.T) {
	ctx := t.Context()
	client := newFakeS3(t, "docs")
	st := New(client, "docs", "ctx/")

	wrote, err := st.PutIfAbsent(ctx, "context/abc", []byte("first"), "application/octet-stream")
	if err != nil || !wrote {
		t.Fatalf("first PutIfAbsent: got %v, %v; want true, nil", wrote, err)
	}
	wrote, err = st.PutIfAbsent(ctx, "context/abc", []byte("second"), "application/octet-stream")
	if err != nil || wrote {
		t.Fatalf("second PutIfAbsent: got %v, %v; want false, nil", wrote, err)
	}
	if got, err := st.Get(ctx, "context/abc"); err != nil || string(got) != "first" {
		t.Fatalf("Get after second PutIfAbsent: got %q, %v; want %q", got, err, "first")
	}

	// Concurrent writers of one key: exactly one wins.
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := range 8 {
		wg.Go(func() {
			w, err := st.PutIfAbsent(ctx, "context/race", fmt.Appendf(nil, "writer %d", i), "")
			if err != nil {
				t.Errorf("PutIfAbsent writer %d: %v", i, err)
			}
			if w {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if wins != 1 {
		t.Errorf("concurrent PutIfAbsent: %d writers won, want 1", wins)
	}
}

func TestS3InvalidKeys(t *testing.T) {
	ctx := t.Context()
	st := New(newFakeS3(t, "docs"), "docs", "")
	for _, key := range []string{"", "/abs", "../up", "a/../../up", "a//b", "a/./b", ".", "a/.."} {
		t.Run(key, func(t *testing.T) {
			if _, err := st.Get(ctx, key); !errors.As(err, new(*veredicto.InvalidInputError)) || !strings.Contains(err.Error(), fmt.Sprintf("%q", key)) {
				t.Errorf("Get(%q): got %v, want an InvalidInputError naming the key", key, err)
			}
			if err := st.Put(ctx, key, []byte("x"), ""); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", key)) {
				t.Errorf("Put(%q): got %v, want an error naming the key", key, err)
			}
			if w, err := st.PutIfAbsent(ctx, key, []byte("x"), ""); err == nil || w {
				t.Errorf("PutIfAbsent(%q): got %v, %v; want false and an error", key, w, err)
			}
		})
	}
	keys, err := st.List(ctx, "")
	if err != nil || len(keys) != 0 {
		t.Errorf("List after rejected writes: got %q, %v; want nothing", keys, err)
	}
}

// sizedAPI answers every GetObject with body and length.
type sizedAPI struct {
	API
	body   io.Reader
	length *int64
}

func (a sizedAPI) GetObject(context.Context, *awss3.GetObjectInput, ...func(*awss3.Options)) (*awss3.GetObjectOutput, error) {
	return &awss3.GetObjectOutput{Body: io.NopCloser(a.body), ContentLength: a.length}, nil
}

type unreadable struct{}

func (unreadable) Read([]byte) (int, error) { panic("read an object its length already refused") }

type zeros struct{ read *int64 }

func (z zeros) Read(p []byte) (int, error) {
	clear(p)
	*z.read += int64(len(p))
	return len(p), nil
}

// TestS3GetRefusesHugeObjects: an object over blob.MaxObjectBytes is refused by
// name, before reading when S3 gives its length, after at most
// blob.MaxObjectBytes+1 bytes when it does not.
func TestS3GetRefusesHugeObjects(t *testing.T) {
	var ie *veredicto.InvalidInputError
	huge := int64(3 << 30)
	_, err := New(sizedAPI{body: unreadable{}, length: &huge}, "b", "").Get(t.Context(), "searches/acme/s/cv.md")
	if !errors.As(err, &ie) || ie.File != "searches/acme/s/cv.md" || !strings.Contains(err.Error(), "larger than 32 MiB") {
		t.Errorf("a 3 GiB object by its length: %v", err)
	}
	var read int64
	_, err = New(sizedAPI{body: zeros{&read}}, "b", "").Get(t.Context(), "k.md")
	if !errors.As(err, &ie) || read > blob.MaxObjectBytes+64<<10 {
		t.Errorf("an endless object without a length: %v after %d bytes", err, read)
	}
}
