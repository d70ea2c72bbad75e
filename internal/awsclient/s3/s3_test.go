package s3_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/audit/audittest"
	"github.com/veredicto/veredicto/internal/audit/s3audit"
	"github.com/veredicto/veredicto/internal/awsclient/awsclienttest"
	"github.com/veredicto/veredicto/internal/awsclient/s3"
	"github.com/veredicto/veredicto/internal/moto"
)

var (
	_ s3audit.API = (*s3.Client)(nil)
	_ s3audit.API = (*awss3.Client)(nil)
)

func answer(status int, h http.Header, body string) awsclienttest.Answer {
	if h == nil {
		h = http.Header{}
	}
	h.Set("X-Amz-Request-Id", "R5")
	return awsclienttest.Answer{Status: status, Header: h, Body: body}
}

func xmlError(status int, code, message string) awsclienttest.Answer {
	return answer(status, http.Header{"Content-Type": {"application/xml"}},
		`<?xml version="1.0" encoding="UTF-8"?><Error><Code>`+code+`</Code><Message>`+message+`</Message><RequestId>R5</RequestId><HostId>h</HostId></Error>`)
}

// headers are compared with the SDK's. Over plain HTTP the SDK's client
// leaves the default checksum of a PutObject out (over HTTPS it sends it
// as a trailer); ours always sends it as a header.
var headers = []string{"Content-Type", "Content-Length", "If-None-Match", "X-Amz-Object-Lock-Mode", "X-Amz-Object-Lock-Retain-Until-Date",
	"X-Amz-Checksum-Crc32?", "X-Amz-Sdk-Checksum-Algorithm?", "Content-Md5", "X-Amz-Bypass-Governance-Retention", "X-Amz-Meta-Origin"}

func TestSameAsTheSDK(t *testing.T) {
	for _, tt := range []struct {
		name, endpoint string
		pathStyle      bool
	}{
		{"virtual-hosted", "http://s3.test", false},
		{"IP endpoint", "", false},
		{"path-style", "http://s3.test", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := awsclienttest.Start(t)
			ac := s.Config(tt.endpoint)
			ours, err := s3.New(ac, tt.pathStyle)
			if err != nil {
				t.Fatal(err)
			}
			sdk := awss3.NewFromConfig(ac, func(o *awss3.Options) { o.UsePathStyle = tt.pathStyle })
			awsclienttest.Compare(t, s, s3audit.API(sdk), s3audit.API(ours), headers, cases)
		})
	}
}

var retain = time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)

func get(key string) func(ctx context.Context, c s3audit.API) (any, error) {
	return func(ctx context.Context, c s3audit.API) (any, error) {
		return c.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String("veredicto-reports"), Key: aws.String(key)})
	}
}

func put(in func() *awss3.PutObjectInput) func(ctx context.Context, c s3audit.API) (any, error) {
	return func(ctx context.Context, c s3audit.API) (any, error) { return c.PutObject(ctx, in()) }
}

var cases = []awsclienttest.Case[s3audit.API]{
	{Name: "GetObject", Answer: answer(200, http.Header{"Content-Type": {"text/markdown"}, "Content-Length": {"5"}, "Etag": {`"e1"`},
		"Last-Modified": {"Wed, 26 Nov 2025 10:00:00 GMT"}, "X-Amz-Version-Id": {"v1"}, "X-Amz-Meta-Origin": {"gem1"}, "Cache-Control": {"no-cache"},
		"X-Amz-Object-Lock-Mode": {"GOVERNANCE"}, "X-Amz-Object-Lock-Retain-Until-Date": {"2027-01-02T03:04:05.000Z"}, "Accept-Ranges": {"bytes"}}, "hello"),
		Call: get("searches/acme/s1/report.md")},
	{Name: "GetObject odd key", Answer: answer(200, nil, "x"), Call: get("a b/ñ+%/c?d#e=f&g")},
	{Name: "GetObject no such key", Answer: xmlError(404, "NoSuchKey", "The specified key does not exist."), Call: get("k")},
	{Name: "GetObject no such bucket", Answer: xmlError(404, "NoSuchBucket", "The specified bucket does not exist"), Call: get("k")},
	{Name: "GetObject 404 without a body", Answer: answer(404, nil, ""), Call: get("k")},
	{Name: "GetObject denied", Answer: xmlError(403, "AccessDenied", "Access Denied"), Call: get("k")},
	{Name: "GetObject slow down", Answer: xmlError(503, "SlowDown", "Please reduce your request rate."), Call: get("k")},
	{Name: "PutObject", Answer: answer(200, http.Header{"Etag": {`"e2"`}, "X-Amz-Version-Id": {"v2"}}, ""),
		Call: put(func() *awss3.PutObjectInput {
			return &awss3.PutObjectInput{Bucket: aws.String("veredicto-reports"), Key: aws.String("searches/acme/s1/a b.json"),
				Body: bytes.NewReader([]byte(`{"a":1}`)), ContentLength: aws.Int64(7), ContentType: aws.String("application/json"), Metadata: map[string]string{"origin": "gem1"}}
		})},
	{Name: "PutObject locked if absent", Answer: answer(200, nil, ""),
		Call: put(func() *awss3.PutObjectInput {
			return &awss3.PutObjectInput{Bucket: aws.String("veredicto-reports"), Key: aws.String("audit/acme/e1/chains/c/000001.json"),
				Body: bytes.NewReader([]byte("{}\n")), ContentLength: aws.Int64(3), IfNoneMatch: aws.String("*"),
				ObjectLockMode: types.ObjectLockModeGovernance, ObjectLockRetainUntilDate: aws.Time(retain), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32}
		})},
	{Name: "PutObject empty", Answer: answer(200, nil, ""),
		Call: put(func() *awss3.PutObjectInput {
			return &awss3.PutObjectInput{Bucket: aws.String("veredicto-reports"), Key: aws.String("e"), Body: bytes.NewReader(nil), ContentLength: aws.Int64(0)}
		})},
	{Name: "PutObject precondition failed", Answer: xmlError(412, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold"),
		Call: put(func() *awss3.PutObjectInput {
			return &awss3.PutObjectInput{Bucket: aws.String("veredicto-reports"), Key: aws.String("k"), Body: bytes.NewReader([]byte("x")), IfNoneMatch: aws.String("*")}
		})},
	{Name: "PutObject conflict", Answer: xmlError(409, "ConditionalRequestConflict", "A conflicting conditional operation is currently in progress"),
		Call: put(func() *awss3.PutObjectInput {
			return &awss3.PutObjectInput{Bucket: aws.String("veredicto-reports"), Key: aws.String("k"), Body: bytes.NewReader([]byte("x")), IfNoneMatch: aws.String("*")}
		})},
	{Name: "PutObject invalid request", Answer: xmlError(400, "InvalidRequest", "Content-MD5 OR x-amz-checksum- HTTP header is required"),
		Call: put(func() *awss3.PutObjectInput {
			return &awss3.PutObjectInput{Bucket: aws.String("veredicto-reports"), Key: aws.String("k"), Body: bytes.NewReader([]byte("x"))}
		})},
	{Name: "ListObjectsV2", Answer: answer(200, http.Header{"Content-Type": {"application/xml"}}, `<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>veredicto-reports</Name><Prefix>audit/acme/</Prefix><KeyCount>3</KeyCount><MaxKeys>2</MaxKeys><Delimiter>/</Delimiter><IsTruncated>true</IsTruncated>
<Contents><Key>audit/acme/a &amp; b.json</Key><LastModified>2025-11-26T10:00:00.000Z</LastModified><ETag>&quot;e1&quot;</ETag><ChecksumAlgorithm>CRC32</ChecksumAlgorithm><Size>12</Size><StorageClass>STANDARD</StorageClass></Contents>
<Contents><Key>audit/acme/b</Key><LastModified>2025-11-26T10:00:01.000Z</LastModified><ETag>&quot;e2&quot;</ETag><Size>0</Size><StorageClass>STANDARD</StorageClass></Contents>
<CommonPrefixes><Prefix>audit/acme/e1/</Prefix></CommonPrefixes><CommonPrefixes><Prefix>audit/acme/e2/</Prefix></CommonPrefixes>
<ContinuationToken>t1</ContinuationToken><NextContinuationToken>t2</NextContinuationToken></ListBucketResult>`),
		Call: func(ctx context.Context, c s3audit.API) (any, error) {
			return c.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: aws.String("veredicto-reports"), Prefix: aws.String("audit/acme/"),
				Delimiter: aws.String("/"), MaxKeys: aws.Int32(2), ContinuationToken: aws.String("t1+/=")})
		}},
	{Name: "ListObjectsV2 no such bucket", Answer: xmlError(404, "NoSuchBucket", "The specified bucket does not exist"),
		Call: func(ctx context.Context, c s3audit.API) (any, error) {
			return c.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: aws.String("veredicto-reports")})
		}},
	{Name: "ListObjectVersions", Answer: answer(200, http.Header{"Content-Type": {"application/xml"}}, `<?xml version="1.0" encoding="UTF-8"?>
<ListVersionsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>veredicto-reports</Name><Prefix>audit/acme/e1</Prefix><KeyMarker></KeyMarker><VersionIdMarker></VersionIdMarker><NextKeyMarker>k2</NextKeyMarker><NextVersionIdMarker>v9</NextVersionIdMarker><MaxKeys>1000</MaxKeys><IsTruncated>true</IsTruncated>
<Version><Key>audit/acme/e1/a</Key><VersionId>v1</VersionId><IsLatest>true</IsLatest><LastModified>2025-11-26T10:00:00.000Z</LastModified><ETag>&quot;e1&quot;</ETag><Size>3</Size><Owner><ID>o</ID></Owner><StorageClass>STANDARD</StorageClass></Version>
<DeleteMarker><Key>audit/acme/e1/b</Key><VersionId>v2</VersionId><IsLatest>true</IsLatest><LastModified>2025-11-26T10:00:00.000Z</LastModified></DeleteMarker>
<Version><Key>audit/acme/e1/b</Key><VersionId>v3</VersionId><IsLatest>false</IsLatest><LastModified>2025-11-25T10:00:00.000Z</LastModified><ETag>&quot;e3&quot;</ETag><Size>4</Size><StorageClass>STANDARD</StorageClass></Version>
</ListVersionsResult>`),
		Call: func(ctx context.Context, c s3audit.API) (any, error) {
			return c.ListObjectVersions(ctx, &awss3.ListObjectVersionsInput{Bucket: aws.String("veredicto-reports"), Prefix: aws.String("audit/acme/e1"),
				MaxKeys: aws.Int32(1000), KeyMarker: aws.String("k1"), VersionIdMarker: aws.String("v0")})
		}},
	{Name: "DeleteObjects", Answer: answer(200, http.Header{"Content-Type": {"application/xml"}}, `<?xml version="1.0" encoding="UTF-8"?>
<DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Deleted><Key>a</Key><VersionId>v1</VersionId></Deleted><Error><Key>b&amp;c</Key><VersionId>v2</VersionId><Code>AccessDenied</Code><Message>Access Denied because object protected by object lock.</Message></Error></DeleteResult>`),
		Call: func(ctx context.Context, c s3audit.API) (any, error) {
			return c.DeleteObjects(ctx, &awss3.DeleteObjectsInput{Bucket: aws.String("veredicto-reports"), BypassGovernanceRetention: aws.Bool(true),
				Delete: &types.Delete{Quiet: aws.Bool(true), Objects: []types.ObjectIdentifier{{Key: aws.String("a"), VersionId: aws.String("v1")}, {Key: aws.String("b&c"), VersionId: aws.String("v2")}}}})
		}},
}

// TestAuditRecordsOnMoto: the audit records' conformance checks on moto,
// through this client, in a versioned bucket with Object Lock, every object
// written under a GOVERNANCE retention and erased by bypassing it.
func TestAuditRecordsOnMoto(t *testing.T) {
	ac := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""), BaseEndpoint: aws.String(moto.Start(t))}
	sdk := awss3.NewFromConfig(ac, func(o *awss3.Options) { o.UsePathStyle = true })
	ours, err := s3.New(ac, false)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	audittest.Store(t, func(t *testing.T) audit.Store {
		n++
		bucket := fmt.Sprintf("reports-%d", n)
		if _, err := sdk.CreateBucket(t.Context(), &awss3.CreateBucketInput{Bucket: aws.String(bucket), ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
			t.Fatal(err)
		}
		return s3audit.New(ours, bucket, "acme", "x-1", 24*time.Hour)
	})
}
