// Package s3 is the Amazon S3 client of the Lambda bootstraps: the object
// reads, writes and listings of the blob store and of the audit record
// (internal/blob/s3, internal/audit/s3audit), with the SDK's input, output
// and error types mapped to S3's REST protocol as the SDK's generated code
// maps them (see internal/awsclient).
//
// Requests are addressed as the SDK addresses them: virtual-hosted
// (https://<bucket>.s3.<region>.amazonaws.com/<key>) when the bucket name
// is a DNS label and the endpoint is not an IP address, else path-style.
// Every payload is signed (X-Amz-Content-Sha256), and every PutObject
// carries a CRC32 checksum, as the SDK sends by default and as an Object
// Lock retention requires.
package s3

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/xml"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/encoding/httpbinding"
	smithytime "github.com/aws/smithy-go/time"

	"github.com/veredicto/veredicto/internal/awsclient"
)

// Service is S3 as the SDK names it.
var Service = awsclient.Service{ID: awss3.ServiceID, SigningName: "s3", EndpointPrefix: "s3"}

// Client calls S3. It is safe for concurrent use.
type Client struct {
	c *awsclient.Client
	// pathStyle addresses every bucket in the path (the SDK's
	// UsePathStyle).
	pathStyle bool
}

// New returns a client configured from ac (see awsclient.New); pathStyle
// addresses buckets in the path, as the SDK's UsePathStyle option does.
func New(ac aws.Config, pathStyle bool) (*Client, error) {
	c, err := awsclient.New(ac, Service, func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err != nil {
		return nil, err
	}
	return &Client{c: c, pathStyle: pathStyle}, nil
}

// url is the URL of key in bucket ("" for the bucket itself) with query.
func (c *Client) url(bucket, key string, query url.Values) *url.URL {
	u := c.c.Endpoint()
	base := strings.TrimSuffix(u.Path, "/")
	rawBase := strings.TrimSuffix(u.EscapedPath(), "/")
	path, raw := "/"+key, "/"+httpbinding.EscapePath(key, false)
	if c.pathStyle || !virtualHostable(bucket, u.Scheme == "http") || net.ParseIP(u.Hostname()) != nil {
		path, raw = "/"+bucket, "/"+httpbinding.EscapePath(bucket, true)
		if key != "" {
			path, raw = path+"/"+key, raw+"/"+httpbinding.EscapePath(key, false)
		}
	} else {
		u.Host = bucket + "." + u.Host
	}
	u.Path, u.RawPath = base+path, rawBase+raw
	u.RawQuery = query.Encode()
	return u
}

// virtualHostable reports whether bucket can be a host name label: 3–63
// lowercase letters, digits and hyphens (dots too over plain HTTP, where no
// certificate has to match), starting and ending with a letter or digit,
// not shaped like an IP address.
func virtualHostable(bucket string, allowDots bool) bool {
	if len(bucket) < 3 || len(bucket) > 63 || net.ParseIP(bucket) != nil {
		return false
	}
	for i := 0; i < len(bucket); i++ {
		c := bucket[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		switch {
		case alnum:
		case (c == '-' || c == '.' && allowDots) && i > 0 && i < len(bucket)-1:
			if c == '.' && (bucket[i-1] == '.' || bucket[i+1] == '.') {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// do sends one request; the caller closes the answer's body.
func (c *Client) do(ctx context.Context, op, method string, u *url.URL, h http.Header, body []byte, modelled modelledError) (*http.Response, error) {
	if h == nil {
		h = http.Header{}
	}
	r := &awsclient.Request{Method: method, URL: u, Header: h, Body: body, SignPayloadHeader: true}
	return c.c.Do(ctx, op, r, func(resp *http.Response, body []byte) error { return decodeError(resp, body, modelled) })
}

// modelledError is an operation's modelled error of a code and the error
// document, nil for a code the operation does not model.
type modelledError func(code string, body []byte) error

// decodeError is S3's error of a response: the code and message of its
// <Error> document (of its status when the body has neither), the
// operation's modelled error for the code, else a smithy.GenericAPIError.
func decodeError(resp *http.Response, body []byte, modelled modelledError) error {
	var e struct{ Code, Message string }
	if err := xml.Unmarshal(body, &e); err != nil && len(bytes.TrimSpace(body)) > 0 {
		return &smithy.DeserializationError{Err: fmt.Errorf("error while deserializing xml error response : %w", err), Snapshot: body}
	}
	if e.Code == "" && e.Message == "" {
		text := http.StatusText(resp.StatusCode)
		e.Code, e.Message = strings.ReplaceAll(text, " ", ""), text
	}
	code, message := e.Code, e.Message
	if code == "" {
		code = "UnknownError"
	}
	if message == "" {
		message = "UnknownError"
	}
	if modelled != nil {
		if err := modelled(code, body); err != nil {
			return err
		}
	}
	return &smithy.GenericAPIError{Code: code, Message: message}
}

// messageOf is the Message of the error document, nil without one.
func messageOf(body []byte) *string {
	var e struct{ Message *string }
	_ = xml.Unmarshal(body, &e)
	return e.Message
}

// GetObject reads an object: its Body (which the caller closes),
// AcceptRanges, CacheControl, ContentDisposition, ContentEncoding,
// ContentLanguage, ContentLength, ContentType, ETag, LastModified,
// Metadata, ObjectLockMode, ObjectLockRetainUntilDate, VersionId,
// ChecksumCRC32 and StorageClass.
func (c *Client) GetObject(ctx context.Context, in *awss3.GetObjectInput, _ ...func(*awss3.Options)) (*awss3.GetObjectOutput, error) {
	const op = "GetObject"
	if err := awsclient.Only(op, in, "Bucket", "Key", "VersionId"); err != nil {
		return nil, err
	}
	q := url.Values{"x-id": {op}}
	if in.VersionId != nil {
		q.Set("versionId", *in.VersionId)
	}
	resp, err := c.do(ctx, op, http.MethodGet, c.url(aws.ToString(in.Bucket), aws.ToString(in.Key), q), nil, nil, func(code string, body []byte) error {
		switch {
		case strings.EqualFold(code, "NoSuchKey"):
			return &types.NoSuchKey{Message: messageOf(body)}
		case strings.EqualFold(code, "InvalidObjectState"):
			return &types.InvalidObjectState{Message: messageOf(body)}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	h := resp.Header
	out := &awss3.GetObjectOutput{Body: resp.Body, AcceptRanges: header(h, "Accept-Ranges"), CacheControl: header(h, "Cache-Control"),
		ContentDisposition: header(h, "Content-Disposition"), ContentEncoding: header(h, "Content-Encoding"),
		ContentLanguage: header(h, "Content-Language"), ContentType: header(h, "Content-Type"), ETag: header(h, "ETag"),
		VersionId: header(h, "X-Amz-Version-Id"), ChecksumCRC32: header(h, "X-Amz-Checksum-Crc32"),
		ObjectLockMode: types.ObjectLockMode(h.Get("X-Amz-Object-Lock-Mode")), StorageClass: types.StorageClass(h.Get("X-Amz-Storage-Class"))}
	var perr error
	if v := header(h, "Content-Length"); v != nil {
		n, err := strconv.ParseInt(*v, 10, 64)
		out.ContentLength, perr = &n, err
	}
	if v := header(h, "Last-Modified"); v != nil && perr == nil {
		t, err := smithytime.ParseHTTPDate(*v)
		out.LastModified, perr = &t, err
	}
	if v := header(h, "X-Amz-Object-Lock-Retain-Until-Date"); v != nil && perr == nil {
		t, err := smithytime.ParseDateTime(*v)
		out.ObjectLockRetainUntilDate, perr = &t, err
	}
	for k, vs := range h {
		if len(k) > len("X-Amz-Meta-") && strings.EqualFold(k[:len("X-Amz-Meta-")], "X-Amz-Meta-") {
			if out.Metadata == nil {
				out.Metadata = map[string]string{}
			}
			out.Metadata[strings.ToLower(k[len("X-Amz-Meta-"):])] = strings.TrimSpace(vs[0])
		}
	}
	if perr != nil {
		resp.Body.Close()
		return nil, &smithy.OperationError{ServiceID: Service.ID, OperationName: op, Err: &smithy.DeserializationError{Err: perr}}
	}
	return out, nil
}

// header is the trimmed first value of a header, nil when absent.
func header(h http.Header, k string) *string {
	vs := h.Values(k)
	if len(vs) == 0 {
		return nil
	}
	v := strings.TrimSpace(vs[0])
	return &v
}

// PutObject writes an object (Body, ContentLength, ContentType,
// IfNoneMatch, ObjectLockMode, ObjectLockRetainUntilDate, Metadata) with
// its CRC32 checksum; ChecksumAlgorithm may only name CRC32.
func (c *Client) PutObject(ctx context.Context, in *awss3.PutObjectInput, _ ...func(*awss3.Options)) (*awss3.PutObjectOutput, error) {
	const op = "PutObject"
	if err := awsclient.Only(op, in, "Bucket", "Key", "Body", "ContentLength", "ContentType", "IfNoneMatch",
		"ObjectLockMode", "ObjectLockRetainUntilDate", "ChecksumAlgorithm", "Metadata"); err != nil {
		return nil, err
	}
	if in.ChecksumAlgorithm != "" && in.ChecksumAlgorithm != types.ChecksumAlgorithmCrc32 {
		return nil, fmt.Errorf("%s: checksum algorithm %s: this client computes CRC32 (internal/awsclient)", op, in.ChecksumAlgorithm)
	}
	var body []byte
	if in.Body != nil {
		b, err := io.ReadAll(in.Body)
		if err != nil {
			return nil, &smithy.OperationError{ServiceID: Service.ID, OperationName: op, Err: fmt.Errorf("read body: %w", err)}
		}
		body = b
	}
	if in.ContentLength != nil && *in.ContentLength != int64(len(body)) {
		return nil, fmt.Errorf("%s: ContentLength %d, the body has %d bytes", op, *in.ContentLength, len(body))
	}
	h := http.Header{}
	h.Set("X-Amz-Sdk-Checksum-Algorithm", string(types.ChecksumAlgorithmCrc32))
	h.Set("X-Amz-Checksum-Crc32", checksum(body))
	h.Set("Content-Type", aws.ToString(cmp.Or(in.ContentType, aws.String("application/octet-stream"))))
	if in.IfNoneMatch != nil {
		h.Set("If-None-Match", *in.IfNoneMatch)
	}
	if in.ObjectLockMode != "" {
		h.Set("X-Amz-Object-Lock-Mode", string(in.ObjectLockMode))
	}
	if in.ObjectLockRetainUntilDate != nil {
		h.Set("X-Amz-Object-Lock-Retain-Until-Date", smithytime.FormatDateTime(*in.ObjectLockRetainUntilDate))
	}
	for k, v := range in.Metadata {
		h.Set("X-Amz-Meta-"+k, v)
	}
	resp, err := c.do(ctx, op, http.MethodPut, c.url(aws.ToString(in.Bucket), aws.ToString(in.Key), url.Values{"x-id": {op}}), h, body, func(code string, body []byte) error {
		switch {
		case strings.EqualFold(code, "EncryptionTypeMismatch"):
			return &types.EncryptionTypeMismatch{Message: messageOf(body)}
		case strings.EqualFold(code, "InvalidRequest"):
			return &types.InvalidRequest{Message: messageOf(body)}
		case strings.EqualFold(code, "InvalidWriteOffset"):
			return &types.InvalidWriteOffset{Message: messageOf(body)}
		case strings.EqualFold(code, "TooManyParts"):
			return &types.TooManyParts{Message: messageOf(body)}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return &awss3.PutObjectOutput{ETag: header(resp.Header, "ETag"), VersionId: header(resp.Header, "X-Amz-Version-Id"),
		ChecksumCRC32: header(resp.Header, "X-Amz-Checksum-Crc32")}, nil
}

// ListObjectsV2 lists a page of a bucket's objects.
func (c *Client) ListObjectsV2(ctx context.Context, in *awss3.ListObjectsV2Input, _ ...func(*awss3.Options)) (*awss3.ListObjectsV2Output, error) {
	const op = "ListObjectsV2"
	if err := awsclient.Only(op, in, "Bucket", "Prefix", "Delimiter", "MaxKeys", "ContinuationToken", "StartAfter"); err != nil {
		return nil, err
	}
	q := url.Values{"list-type": {"2"}}
	setQuery(q, "prefix", in.Prefix)
	setQuery(q, "delimiter", in.Delimiter)
	setQuery(q, "continuation-token", in.ContinuationToken)
	setQuery(q, "start-after", in.StartAfter)
	if in.MaxKeys != nil {
		q.Set("max-keys", strconv.Itoa(int(*in.MaxKeys)))
	}
	out := &awss3.ListObjectsV2Output{}
	err := c.getXML(ctx, op, c.url(aws.ToString(in.Bucket), "", q), out, func(code string, body []byte) error {
		if strings.EqualFold(code, "NoSuchBucket") {
			return &types.NoSuchBucket{Message: messageOf(body)}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ListObjectVersions lists a page of the versions and delete markers of a
// bucket's objects.
func (c *Client) ListObjectVersions(ctx context.Context, in *awss3.ListObjectVersionsInput, _ ...func(*awss3.Options)) (*awss3.ListObjectVersionsOutput, error) {
	const op = "ListObjectVersions"
	if err := awsclient.Only(op, in, "Bucket", "Prefix", "Delimiter", "MaxKeys", "KeyMarker", "VersionIdMarker"); err != nil {
		return nil, err
	}
	q := url.Values{"versions": {""}}
	setQuery(q, "prefix", in.Prefix)
	setQuery(q, "delimiter", in.Delimiter)
	setQuery(q, "key-marker", in.KeyMarker)
	setQuery(q, "version-id-marker", in.VersionIdMarker)
	if in.MaxKeys != nil {
		q.Set("max-keys", strconv.Itoa(int(*in.MaxKeys)))
	}
	var doc struct {
		awss3.ListObjectVersionsOutput
		Versions      []types.ObjectVersion     `xml:"Version"`
		DeleteMarkers []types.DeleteMarkerEntry `xml:"DeleteMarker"`
	}
	if err := c.getXML(ctx, op, c.url(aws.ToString(in.Bucket), "", q), &doc, nil); err != nil {
		return nil, err
	}
	out := doc.ListObjectVersionsOutput
	out.Versions, out.DeleteMarkers = doc.Versions, doc.DeleteMarkers
	return &out, nil
}

func setQuery(q url.Values, k string, v *string) {
	if v != nil {
		q.Set(k, *v)
	}
}

// getXML sends a GET and decodes the XML answer into out.
func (c *Client) getXML(ctx context.Context, op string, u *url.URL, out any, modelled modelledError) error {
	resp, err := c.do(ctx, op, http.MethodGet, u, nil, nil, modelled)
	if err != nil {
		return err
	}
	return decodeXML(op, resp, out)
}

func decodeXML(op string, resp *http.Response, out any) error {
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil {
		err = xml.Unmarshal(b, out)
	}
	if err != nil {
		return &smithy.OperationError{ServiceID: Service.ID, OperationName: op, Err: &smithy.DeserializationError{Err: err, Snapshot: b}}
	}
	return nil
}

// DeleteObjects deletes up to 1 000 object versions in one request
// (Delete.Objects' Key and VersionId, Delete.Quiet,
// BypassGovernanceRetention).
func (c *Client) DeleteObjects(ctx context.Context, in *awss3.DeleteObjectsInput, _ ...func(*awss3.Options)) (*awss3.DeleteObjectsOutput, error) {
	const op = "DeleteObjects"
	if err := awsclient.Only(op, in, "Bucket", "Delete", "BypassGovernanceRetention"); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`)
	if d := in.Delete; d != nil {
		for _, o := range d.Objects {
			if err := awsclient.Only(op, &o, "Key", "VersionId"); err != nil {
				return nil, err
			}
			b.WriteString("<Object>")
			element(&b, "Key", o.Key)
			element(&b, "VersionId", o.VersionId)
			b.WriteString("</Object>")
		}
		if d.Quiet != nil {
			element(&b, "Quiet", aws.String(strconv.FormatBool(*d.Quiet)))
		}
	}
	b.WriteString("</Delete>")
	body := b.Bytes()
	h := http.Header{"Content-Type": {"application/xml"}, "X-Amz-Checksum-Crc32": {checksum(body)}}
	if aws.ToBool(in.BypassGovernanceRetention) {
		h.Set("X-Amz-Bypass-Governance-Retention", "true")
	}
	resp, err := c.do(ctx, op, http.MethodPost, c.url(aws.ToString(in.Bucket), "", url.Values{"delete": {""}}), h, body, nil)
	if err != nil {
		return nil, err
	}
	var doc struct {
		awss3.DeleteObjectsOutput
		Errors []types.Error `xml:"Error"`
	}
	if err := decodeXML(op, resp, &doc); err != nil {
		return nil, err
	}
	out := doc.DeleteObjectsOutput
	out.Errors = doc.Errors
	return &out, nil
}

// checksum is the X-Amz-Checksum-Crc32 of body: its CRC32 (IEEE),
// big-endian, in base64.
func checksum(body []byte) string {
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc32.ChecksumIEEE(body))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// element writes <name>v</name> when v is set.
func element(b *bytes.Buffer, name string, v *string) {
	if v == nil {
		return
	}
	b.WriteString("<" + name + ">")
	_ = xml.EscapeText(b, []byte(*v))
	b.WriteString("</" + name + ">")
}
