// Package s3audit keeps audit records (package audit) in the reports
// bucket on AWS, in the layout the data folder uses locally:
//
//	audit/<tenant>/<execution>/chains/<chain>/<seq>.json   one object per entry
//	audit/<tenant>/<execution>/texts/<sha256>              each text once
//
// (<tenant> and <execution> path-escaped, "default" for no tenant;
// <chain> path-escaped, so "candidate/c-001" is one path element; <seq>
// zero-padded to six digits, so keys sort in chain order.) S3 cannot
// append to an object: each entry is an object of its own, created with a
// conditional put (If-None-Match: *), so two writers of one chain that
// both take sequence number n conflict (*veredicto.ConflictError, which
// the audit.Recorder answers by reading the chain again) instead of one
// overwriting the other. Texts are created the same way and are
// idempotent: the same hash is the same text.
//
// With a retention set, every object is written under an S3 Object Lock
// retention in GOVERNANCE mode until now + retention: the functions that
// record cannot delete or shorten it; an operator with
// s3:BypassGovernanceRetention can, which is how a purge erases a record
// (Erase). The bucket needs Object Lock enabled (template.yaml,
// docs/AUDIT.md).
package s3audit

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"golang.org/x/sync/errgroup"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/awsretry"
	s3blob "github.com/veredicto/veredicto/internal/blob/s3"
)

// Prefix is where the reports bucket keeps the audit records.
const Prefix = "audit/"

// API is the part of the S3 client the records use: the blob store's
// reads and conditional writes, and the erasure of every version.
type API interface {
	s3blob.API
	s3blob.EraseAPI
}

var _ API = (*awss3.Client)(nil)

// Bounds of one record, so that a damaged or hostile bucket cannot make a
// reader hold unbounded data.
const (
	// MaxEntries bounds one chain (a candidate's chain holds some tens of
	// entries: model calls with their re-asks, gates, stages, reports).
	MaxEntries = 100_000
	// MaxChains bounds one record's chains (one per candidate, and main).
	MaxChains = 10_000
	// MaxEntryBytes bounds one entry (a model's raw answer is stored as a
	// text; an entry names it by hash).
	MaxEntryBytes = 4 << 20
	// MaxTextBytes bounds one text (a document, a prompt, an answer).
	MaxTextBytes = 32 << 20
	// readers is how many entries Lines reads at once.
	readers = 16
)

// seqDigits pads sequence numbers so that keys sort in chain order.
const seqDigits = 6

// Store is one execution's record in a bucket. Immutable after New and
// safe for concurrent use.
type Store struct {
	client    API
	blobs     *s3blob.Store
	bucket    string
	prefix    string // audit/<tenant>/<execution>/
	retention time.Duration
	now       func() time.Time
}

var (
	_ audit.Store  = (*Store)(nil)
	_ audit.Eraser = (*Store)(nil)
)

// New is the record of tenant's execution in bucket; retention, when
// above zero, locks each object written in GOVERNANCE mode for that long.
func New(client API, bucket, tenant, execution string, retention time.Duration) *Store {
	prefix := Prefix + audit.RecordKey(tenant, execution) + "/"
	return &Store{client: client, blobs: s3blob.New(client, bucket, ""), bucket: bucket, prefix: prefix, retention: retention, now: time.Now}
}

// Prefix is the record's key prefix in the bucket.
func (s *Store) Prefix() string { return s.prefix }

func (s *Store) chainPrefix(chain string) string {
	return s.prefix + "chains/" + url.PathEscape(chain) + "/"
}

func (s *Store) entryKey(chain string, seq int) string {
	return fmt.Sprintf("%s%0*d.json", s.chainPrefix(chain), seqDigits, seq)
}

// lock applies the retention to a put.
func (s *Store) lock(in *awss3.PutObjectInput) {
	if s.retention > 0 {
		in.ObjectLockMode = types.ObjectLockModeGovernance
		in.ObjectLockRetainUntilDate = aws.Time(s.now().Add(s.retention).UTC())
		// S3 refuses a locked object without a checksum of its body.
		in.ChecksumAlgorithm = types.ChecksumAlgorithmCrc32
	}
}

// Append writes line as entry seq of chain, unless the entry exists: then
// it is a *veredicto.ConflictError (another writer took seq).
func (s *Store) Append(ctx context.Context, chain string, seq int, line []byte) error {
	switch {
	case chain == "":
		return fmt.Errorf("audit: an entry needs a chain")
	case seq < 0 || seq >= MaxEntries:
		return &veredicto.InvalidInputError{File: "audit chain " + chain, Problem: fmt.Sprintf("entry %d is outside 0–%d, the entries a chain holds", seq, MaxEntries-1)}
	case len(line) > MaxEntryBytes:
		return &veredicto.InvalidInputError{File: "audit chain " + chain, Problem: fmt.Sprintf("entry %d is %d bytes, over the %d MiB an entry holds", seq, len(line), MaxEntryBytes>>20)}
	}
	wrote, err := s.blobs.PutIfAbsentWith(ctx, s.entryKey(chain, seq), line, "application/json", s.lock)
	if err != nil {
		return fmt.Errorf("audit chain %s entry %d: %w", chain, seq, err)
	}
	if !wrote {
		return &veredicto.ConflictError{What: "audit chain " + chain, Problem: fmt.Sprintf("entry %d is taken", seq)}
	}
	return nil
}

// Lines reads a chain's entries in order (none for an unknown chain).
// Every object under the chain's prefix is an entry: one that is not
// (a foreign key, a gap in the numbers) is read in key order too, and
// audit.Verify names it.
func (s *Store) Lines(ctx context.Context, chain string) ([][]byte, error) {
	keys, err := s.blobs.List(ctx, s.chainPrefix(chain))
	if err != nil {
		return nil, fmt.Errorf("audit chain %s: %w", chain, err)
	}
	if len(keys) > MaxEntries {
		return nil, &veredicto.DamagedError{What: "audit chain " + chain, Reason: fmt.Sprintf("holds %d objects, over the %d entries a chain holds", len(keys), MaxEntries)}
	}
	lines := make([][]byte, len(keys))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(readers)
	for i, k := range keys {
		g.Go(func() error {
			b, err := s.blobs.Get(gctx, k)
			if err != nil {
				return fmt.Errorf("audit chain %s: %w", chain, err)
			}
			if len(b) > MaxEntryBytes {
				return &veredicto.DamagedError{What: "audit entry " + k, Reason: fmt.Sprintf("is %d bytes, over the %d MiB an entry holds", len(b), MaxEntryBytes>>20)}
			}
			lines[i] = b
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return lines, nil
}

// Entry reads entry seq of chain alone (a *veredicto.NotFoundError when
// there is none).
func (s *Store) Entry(ctx context.Context, chain string, seq int) ([]byte, error) {
	b, err := s.blobs.Get(ctx, s.entryKey(chain, seq))
	if err != nil {
		return nil, fmt.Errorf("audit chain %s entry %d: %w", chain, seq, err)
	}
	return b, nil
}

// Chains lists the record's chains, sorted.
func (s *Store) Chains(ctx context.Context) ([]string, error) {
	out, err := folders(ctx, s.client, s.bucket, s.prefix+"chains/", MaxChains)
	if err != nil {
		return nil, fmt.Errorf("audit chains of %s: %w", s.prefix, err)
	}
	return out, nil
}

// folders lists the path-escaped names of the "folders" under prefix
// (the common prefixes up to the next "/"), unescaped and sorted; over
// max of them is a *veredicto.DamagedError.
func folders(ctx context.Context, client awss3.ListObjectsV2APIClient, bucket, prefix string, max int) ([]string, error) {
	in := &awss3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix), Delimiter: aws.String("/")}
	var out []string
	p := awss3.NewListObjectsV2Paginator(client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, awsretry.Classify(err)
		}
		for _, cp := range page.CommonPrefixes {
			name := strings.TrimSuffix(strings.TrimPrefix(aws.ToString(cp.Prefix), prefix), "/")
			if n, err := url.PathUnescape(name); err == nil && n != "" {
				out = append(out, n)
			}
		}
		if len(out) > max {
			return nil, &veredicto.DamagedError{What: "audit records under " + prefix, Reason: fmt.Sprintf("holds over %d", max)}
		}
	}
	slices.Sort(out)
	return out, nil
}

func (s *Store) textKey(hash string) (string, error) {
	if len(hash) != 64 || strings.Trim(hash, "0123456789abcdef") != "" {
		return "", &veredicto.InvalidInputError{File: "audit text", Problem: fmt.Sprintf("%q is not a SHA-256 in lowercase hex", hash)}
	}
	return s.prefix + "texts/" + hash, nil
}

// PutText stores text under its hash, once: a text already there is left
// as it is (the same hash is the same text).
func (s *Store) PutText(ctx context.Context, hash string, text []byte) error {
	k, err := s.textKey(hash)
	if err != nil {
		return err
	}
	if len(text) > MaxTextBytes {
		return &veredicto.InvalidInputError{File: "audit text " + hash[:12], Problem: fmt.Sprintf("is %d bytes, over the %d MiB a text holds", len(text), MaxTextBytes>>20)}
	}
	if _, err := s.blobs.PutIfAbsentWith(ctx, k, text, "application/octet-stream", s.lock); err != nil {
		return fmt.Errorf("audit text %s: %w", hash[:12], err)
	}
	return nil
}

// Text reads the text stored under hash; a missing one is a
// *veredicto.NotFoundError.
func (s *Store) Text(ctx context.Context, hash string) ([]byte, error) {
	k, err := s.textKey(hash)
	if err != nil {
		return nil, err
	}
	b, err := s.blobs.Get(ctx, k)
	if err != nil {
		return nil, fmt.Errorf("audit text %s: %w", hash[:12], err)
	}
	return b, nil
}

// Erase removes every version of the record's objects, all chains but
// keep and every text, bypassing their GOVERNANCE retention (the caller
// needs s3:BypassGovernanceRetention and s3:DeleteObjectVersion).
func (s *Store) Erase(ctx context.Context, keep string) error {
	kept := s.chainPrefix(keep)
	e := &s3blob.Eraser{Client: s.client, Bucket: s.bucket, BypassGovernance: true, Keep: func(k string) bool { return strings.HasPrefix(k, kept) }}
	_, err := e.Erase(ctx, strings.TrimSuffix(s.prefix, "/"))
	return err
}

// Records opens executions' records in the reports bucket: the search's
// audit.Auditor on AWS. Safe for concurrent use.
type Records struct {
	Client API
	Bucket string
	// Retention locks each object in GOVERNANCE mode for this long (none
	// when zero).
	Retention time.Duration
	// Now stamps the entries and starts their retention (time.Now when
	// nil).
	Now func() time.Time

	cache audit.RecorderCache
}

// Store is the record of tenant's execution.
func (r *Records) Store(tenant, execution string) *Store {
	st := New(r.Client, r.Bucket, tenant, execution, r.Retention)
	if r.Now != nil {
		st.now = r.Now
	}
	return st
}

// Open is the recorder of tenant's execution.
func (r *Records) Open(_ context.Context, tenant, execution string) (*audit.Recorder, error) {
	st := r.Store(tenant, execution)
	return r.cache.Get(st.prefix, func() audit.Store { return st }, r.Now), nil
}

// maxExecutions bounds the executions listed for one tenant.
const maxExecutions = 1_000_000

// Executions lists the executions whose records the bucket keeps for
// tenant, sorted.
func (r *Records) Executions(ctx context.Context, tenant string) ([]string, error) {
	root := Prefix + strings.TrimSuffix(audit.RecordKey(tenant, "x"), "x")
	out, err := folders(ctx, r.Client, r.Bucket, root, maxExecutions)
	if err != nil {
		return nil, fmt.Errorf("audit records of tenant %s: %w", tenant, err)
	}
	return out, nil
}
