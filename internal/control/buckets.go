package control

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/blob"
	"github.com/veredicto/veredicto/internal/blob/file"
)

// The local buckets a Distributed Map reaches (its ItemReader and
// ResultWriter), folders of the data folder (Config.Data):
//
//	veredicto-inputs    DATA/inputs                   the inputs bucket
//	veredicto-reports   DATA/reports                  the reports bucket
//	any other name B    DATA/buckets/<tenant>/B       a bucket of the execution's tenant
//
// Every read and write goes through the data folder's one confined
// opener (internal/blob/file: os.Root, element by element, no link
// followed), and reaches only the execution's tenant's prefixes: in the
// project's two buckets, whose keys start <kind>/<tenant>/, a key or
// prefix must start with a kind and the tenant ("searches/acme/…"); any
// other bucket is the tenant's own folder. A key outside is an
// AccessDenied, as S3 refuses a key a role may not reach.

// The project's buckets, by their local names.
const (
	LocalInputsBucket  = "veredicto-inputs"
	LocalReportsBucket = "veredicto-reports"
)

// AccessDenied is S3's refusal of an object or prefix outside the
// execution's tenant's prefixes.
type AccessDenied struct {
	Bucket, Key, Tenant string
}

func (e *AccessDenied) Error() string {
	return fmt.Sprintf("Access Denied: s3://%s/%s is outside the prefixes of tenant %q (in %s, keys start <kind>/%s/)", e.Bucket, e.Key, e.Tenant, e.Bucket, e.Tenant)
}

// NoSuchBucket is S3's answer for a bucket that does not exist.
type NoSuchBucket struct{ Bucket string }

func (e *NoSuchBucket) Error() string {
	return fmt.Sprintf("NoSuchBucket: The specified bucket does not exist (bucket %s)", e.Bucket)
}

// NoSuchKey is S3's answer for an object that does not exist.
type NoSuchKey struct{ Bucket, Key string }

func (e *NoSuchKey) Error() string {
	return fmt.Sprintf("NoSuchKey: The specified key does not exist (s3://%s/%s)", e.Bucket, e.Key)
}

// InvalidBucketName is S3's refusal of a name no bucket may have.
type InvalidBucketName struct{ Bucket string }

func (e *InvalidBucketName) Error() string {
	return fmt.Sprintf("InvalidBucketName: The specified bucket is not valid (%q)", e.Bucket)
}

// bucketName is the form of an S3 bucket name.
var bucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// LocalBuckets are the local buckets as one tenant's execution reaches
// them (see the top of this file). Safe for concurrent use.
type LocalBuckets struct {
	// Data is the data folder; Tenant the execution's tenant.
	Data, Tenant string
}

var _ asl.Buckets = LocalBuckets{}

// dir is the folder of bucket and whether keys in it are the project's
// <kind>/<tenant>/ ones.
func (b LocalBuckets) dir(bucket string) (*file.Dir, bool, error) {
	switch bucket {
	case LocalInputsBucket:
		return file.NewDir(filepath.Join(b.Data, "inputs")), true, nil
	case LocalReportsBucket:
		return file.NewDir(filepath.Join(b.Data, "reports")), true, nil
	}
	if !bucketName.MatchString(bucket) || strings.Contains(bucket, "..") {
		return nil, false, &InvalidBucketName{Bucket: bucket}
	}
	if !cleanSegment(b.Tenant) {
		return nil, false, &AccessDenied{Bucket: bucket, Tenant: b.Tenant}
	}
	return file.NewDir(filepath.Join(b.Data, "buckets", b.Tenant, bucket)), false, nil
}

// cleanSegment reports whether s may name one folder.
func cleanSegment(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, `/\`) && !strings.HasPrefix(s, ".")
}

// scoped checks that key (or a prefix) of a project bucket is the
// tenant's: it starts with a kind and the tenant.
func (b LocalBuckets) scoped(bucket, key string, project bool) error {
	if !project {
		return nil
	}
	kind, rest, _ := strings.Cut(key, "/")
	tenant, _, ok := strings.Cut(rest, "/")
	if kind == "" || !ok || tenant != b.Tenant || !cleanSegment(b.Tenant) {
		return &AccessDenied{Bucket: bucket, Key: key, Tenant: b.Tenant}
	}
	return nil
}

// missing maps a missing bucket folder or key to S3's errors; a refusal
// of the confined opener (a link, a special file, a key leaving the
// folder) stays the named *veredicto.InvalidInputError it is.
func missing(err error, bucket, key string) error {
	if errors.As(err, new(*veredicto.NotFoundError)) {
		return &NoSuchKey{Bucket: bucket, Key: key}
	}
	return err
}

// exists refuses a tenant bucket that was never created (the project's
// buckets always exist).
func exists(d *file.Dir, root string, project bool, bucket string) error {
	if project {
		return nil
	}
	if _, err := os.Stat(root); err != nil {
		return &NoSuchBucket{Bucket: bucket}
	}
	return nil
}

// List lists the objects under prefix in key order, one folder at a
// time; each object's ETag is its content's MD5, as S3 gives for an
// object written whole, computed by reading it once, streamed.
func (b LocalBuckets) List(ctx context.Context, bucket, prefix string, fn func(asl.Object) error) error {
	d, project, err := b.dir(bucket)
	if err != nil {
		return err
	}
	if err := b.scoped(bucket, prefix, project); err != nil {
		return err
	}
	if err := exists(d, b.root(bucket), project, bucket); err != nil {
		return err
	}
	return d.Walk(ctx, prefix, func(key string, fi iofs.FileInfo) error {
		etag, err := md5Of(ctx, d, key)
		if err != nil {
			return err
		}
		return fn(asl.Object{Key: key, Size: fi.Size(), ETag: etag, LastModified: fi.ModTime().UTC()})
	})
}

// root is a tenant bucket's folder.
func (b LocalBuckets) root(bucket string) string {
	return filepath.Join(b.Data, "buckets", b.Tenant, bucket)
}

func md5Of(ctx context.Context, d *file.Dir, key string) (string, error) {
	f, _, err := d.Open(ctx, key)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := md5.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", key, err)
	}
	return `"` + hex.EncodeToString(h.Sum(nil)) + `"`, nil
}

// Open opens an object for reading.
func (b LocalBuckets) Open(ctx context.Context, bucket, key string) (io.ReadCloser, error) {
	d, project, err := b.dir(bucket)
	if err != nil {
		return nil, err
	}
	if err := b.scoped(bucket, key, project); err != nil {
		return nil, err
	}
	if err := exists(d, b.root(bucket), project, bucket); err != nil {
		return nil, err
	}
	f, _, err := d.Open(ctx, key)
	if err != nil {
		return nil, missing(err, bucket, key)
	}
	return f, nil
}

// Put writes an object (a tenant bucket is created by its first write).
func (b LocalBuckets) Put(ctx context.Context, bucket, key string, body []byte) error {
	d, project, err := b.dir(bucket)
	if err != nil {
		return err
	}
	if err := b.scoped(bucket, key, project); err != nil {
		return err
	}
	if _, err := blob.CleanKey(key); err != nil {
		return err
	}
	return d.Put(ctx, key, body, "application/json")
}
