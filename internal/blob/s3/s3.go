// Package s3 is the blob store on S3 (an adapter of package blob): the
// same keys, layout and methods as file.Dir (internal/blob/file), with
// objects in one bucket under an optional key prefix.
package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/awsretry"
	"github.com/veredicto/veredicto/internal/blob"
)

// API is the part of the S3 client the store uses.
type API interface {
	GetObject(ctx context.Context, in *awss3.GetObjectInput, optFns ...func(*awss3.Options)) (*awss3.GetObjectOutput, error)
	PutObject(ctx context.Context, in *awss3.PutObjectInput, optFns ...func(*awss3.Options)) (*awss3.PutObjectOutput, error)
	ListObjectsV2(ctx context.Context, in *awss3.ListObjectsV2Input, optFns ...func(*awss3.Options)) (*awss3.ListObjectsV2Output, error)
}

var _ API = (*awss3.Client)(nil)

// Store is a blob store in one S3 bucket. Key "a/b.md" is object
// prefix+"a/b.md". It is immutable after New and safe for concurrent use.
type Store struct {
	client API
	bucket string
	prefix string
	// pageSize is MaxKeys for each ListObjectsV2 call; 0 lets S3 choose
	// (1000). Tests set it small to exercise pagination.
	pageSize int32
}

// New returns a store for bucket. prefix ("" or e.g. "reports/") is
// prepended to every key and stripped from List results.
func New(client API, bucket, prefix string) *Store {
	return &Store{client: client, bucket: bucket, prefix: prefix}
}

var _ blob.Store = (*Store)(nil)

// conflictRetries bounds the retries of a conditional put that S3 answers
// with 409 ConditionalRequestConflict (a concurrent write to the same key
// is in flight).
const conflictRetries = 4

// Get reads an object. A missing object is a *veredicto.NotFoundError; one
// over blob.MaxObjectBytes a *veredicto.InvalidInputError naming it,
// refused before it is read when S3 gives its length.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	k, err := blob.CleanKey(key)
	if err != nil {
		return nil, err
	}
	out, err := s.client.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.prefix + k)})
	if err != nil {
		if isNotFound(err) {
			return nil, &veredicto.NotFoundError{What: "blob " + key}
		}
		return nil, fmt.Errorf("get blob %s: %w", key, awsretry.Classify(err))
	}
	defer out.Body.Close()
	tooLarge := &veredicto.InvalidInputError{File: key, Problem: fmt.Sprintf("is larger than %d MiB, the most one object read holds", blob.MaxObjectBytes>>20)}
	if aws.ToInt64(out.ContentLength) > blob.MaxObjectBytes {
		return nil, tooLarge
	}
	b, err := io.ReadAll(io.LimitReader(out.Body, blob.MaxObjectBytes+1))
	if err != nil {
		return nil, fmt.Errorf("get blob %s: read body: %w", key, err)
	}
	if len(b) > blob.MaxObjectBytes {
		return nil, tooLarge
	}
	return b, nil
}

// List returns the keys under prefix, relative to the store prefix and
// sorted. Like file.Dir it leaves out hidden objects (any path element
// starting with ".") and anything that is not a clean key (such as "dir/"
// folder markers), so every listed key can be passed to Get.
func (s *Store) List(ctx context.Context, prefix string) ([]string, error) {
	in := &awss3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(s.prefix + prefix)}
	if s.pageSize > 0 {
		in.MaxKeys = aws.Int32(s.pageSize)
	}
	var keys []string
	p := awss3.NewListObjectsV2Paginator(s.client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list blobs %s: %w", prefix, awsretry.Classify(err))
		}
		for _, o := range page.Contents {
			full := aws.ToString(o.Key)
			if !strings.HasPrefix(full, s.prefix) {
				continue
			}
			key := strings.TrimPrefix(full, s.prefix)
			if hidden(key) {
				continue
			}
			if _, err := blob.CleanKey(key); err != nil || strings.HasSuffix(key, "/") {
				continue
			}
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	return keys, nil
}

// hidden reports whether any path element of key starts with ".", the
// objects file.Dir leaves out of List (dot files and dot folders).
func hidden(key string) bool {
	for el := range strings.SplitSeq(key, "/") {
		if strings.HasPrefix(el, ".") {
			return true
		}
	}
	return false
}

// Put writes an object, replacing any previous version. S3 makes the new
// version visible all at once.
func (s *Store) Put(ctx context.Context, key string, data []byte, contentType string) error {
	k, err := blob.CleanKey(key)
	if err != nil {
		return err
	}
	if _, err := s.client.PutObject(ctx, s.putInput(k, data, contentType)); err != nil {
		return fmt.Errorf("put blob %s: %w", key, awsretry.Classify(err))
	}
	return nil
}

// PutIfAbsent writes an object unless the key exists (a conditional
// "If-None-Match: *" put); it reports whether it wrote. The existing
// object is left untouched.
func (s *Store) PutIfAbsent(ctx context.Context, key string, data []byte, contentType string) (bool, error) {
	return s.PutIfAbsentWith(ctx, key, data, contentType)
}

// PutIfAbsentWith is PutIfAbsent with opts applied to the request (an
// Object Lock retention, say).
func (s *Store) PutIfAbsentWith(ctx context.Context, key string, data []byte, contentType string, opts ...func(*awss3.PutObjectInput)) (bool, error) {
	k, err := blob.CleanKey(key)
	if err != nil {
		return false, err
	}
	for attempt := 0; ; attempt++ {
		in := s.putInput(k, data, contentType)
		in.IfNoneMatch = aws.String("*")
		for _, o := range opts {
			o(in)
		}
		_, err := s.client.PutObject(ctx, in)
		switch {
		case err == nil:
			return true, nil
		case isPreconditionFailed(err):
			return false, nil
		case isConditionalConflict(err) && attempt < conflictRetries:
			// Another conditional write to the key is in flight; once it
			// settles, the retry either wins or gets 412.
			select {
			case <-ctx.Done():
				return false, fmt.Errorf("put blob %s if absent: %w", key, ctx.Err())
			case <-time.After(time.Duration(50<<attempt) * time.Millisecond):
			}
		default:
			return false, fmt.Errorf("put blob %s if absent: %w", key, awsretry.Classify(err))
		}
	}
}

func (s *Store) putInput(k string, data []byte, contentType string) *awss3.PutObjectInput {
	in := &awss3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(s.prefix + k),
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
	}
	if contentType != "" {
		in.ContentType = aws.String(contentType)
	}
	return in
}

// isNotFound reports a missing object: NoSuchKey, or a bare 404 (S3 sends
// no error code for some requests). A missing bucket is not "not found":
// it is a configuration error and must surface as such.
func isNotFound(err error) bool {
	var nsk *types.NoSuchKey
	if errors.As(err, &nsk) {
		return true
	}
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "NoSuchBucket" {
		return false
	}
	return statusCode(err) == http.StatusNotFound
}

func isPreconditionFailed(err error) bool {
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "PreconditionFailed" {
		return true
	}
	return statusCode(err) == http.StatusPreconditionFailed
}

func isConditionalConflict(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "ConditionalRequestConflict"
}

func statusCode(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}
