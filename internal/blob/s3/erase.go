package s3

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/veredicto/veredicto/internal/awsretry"
	"github.com/veredicto/veredicto/internal/blob"
)

// EraseAPI is the part of the S3 client Eraser uses.
type EraseAPI interface {
	ListObjectVersions(ctx context.Context, in *awss3.ListObjectVersionsInput, optFns ...func(*awss3.Options)) (*awss3.ListObjectVersionsOutput, error)
	DeleteObjects(ctx context.Context, in *awss3.DeleteObjectsInput, optFns ...func(*awss3.Options)) (*awss3.DeleteObjectsOutput, error)
}

var _ EraseAPI = (*awss3.Client)(nil)

// Eraser removes objects from a bucket for good: every version and
// delete marker, not only the current version (in a versioned bucket a
// plain delete only hides an object). Erasing is what the right to
// erasure needs (veredicto audit purge); nothing else in the project
// deletes.
type Eraser struct {
	Client EraseAPI
	Bucket string
	// BypassGovernance deletes versions under an Object Lock retention in
	// GOVERNANCE mode (x-amz-bypass-governance-retention); the caller
	// needs s3:BypassGovernanceRetention. COMPLIANCE retention cannot be
	// bypassed: such a version is an error naming it.
	BypassGovernance bool
	// Keep, when set, spares the keys it reports true for.
	Keep func(key string) bool
	// pageSize is MaxKeys of each listing (0: S3's 1000); tests set it
	// small to exercise pagination.
	pageSize int32
}

// maxDeleteBatch is the most keys one DeleteObjects call takes.
const maxDeleteBatch = 1000

// Erase removes the object key and every object under key/ (each
// version), and returns how many objects (keys) it removed.
func (e *Eraser) Erase(ctx context.Context, key string) (int, error) {
	k, err := blob.CleanKey(key)
	if err != nil {
		return 0, err
	}
	in := &awss3.ListObjectVersionsInput{Bucket: aws.String(e.Bucket), Prefix: aws.String(k)}
	if e.pageSize > 0 {
		in.MaxKeys = aws.Int32(e.pageSize)
	}
	keys := map[string]bool{}
	var batch []types.ObjectIdentifier
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := e.delete(ctx, batch)
		batch = batch[:0]
		return err
	}
	add := func(key, version *string) error {
		name := aws.ToString(key)
		if name != k && !strings.HasPrefix(name, k+"/") || e.Keep != nil && e.Keep(name) {
			return nil
		}
		keys[name] = true
		batch = append(batch, types.ObjectIdentifier{Key: key, VersionId: version})
		if len(batch) == maxDeleteBatch {
			return flush()
		}
		return nil
	}
	p := awss3.NewListObjectVersionsPaginator(e.Client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("erase %s: list versions: %w", key, awsretry.Classify(err))
		}
		for _, v := range page.Versions {
			if err := add(v.Key, v.VersionId); err != nil {
				return 0, err
			}
		}
		for _, m := range page.DeleteMarkers {
			if err := add(m.Key, m.VersionId); err != nil {
				return 0, err
			}
		}
	}
	if err := flush(); err != nil {
		return 0, err
	}
	return len(keys), nil
}

func (e *Eraser) delete(ctx context.Context, ids []types.ObjectIdentifier) error {
	in := &awss3.DeleteObjectsInput{Bucket: aws.String(e.Bucket), Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)}}
	if e.BypassGovernance {
		in.BypassGovernanceRetention = aws.Bool(true)
	}
	out, err := e.Client.DeleteObjects(ctx, in)
	if err != nil {
		return fmt.Errorf("erase %d object version(s) from %s: %w", len(ids), e.Bucket, awsretry.Classify(err))
	}
	if len(out.Errors) > 0 {
		first := out.Errors[0]
		return fmt.Errorf("erase from %s: %d object version(s) not deleted, the first %s (version %s): %s: %s", e.Bucket, len(out.Errors),
			aws.ToString(first.Key), aws.ToString(first.VersionId), aws.ToString(first.Code), aws.ToString(first.Message))
	}
	return nil
}
