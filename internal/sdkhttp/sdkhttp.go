// Package sdkhttp is the HTTP client the project gives the AWS SDK's
// service clients (the Step Functions clients of `veredicto serve` and of
// the commands that call it, the load generator, the CLI's S3 and DynamoDB
// clients).
//
// It sends every request body from a copy of its own. The SDK (smithy-go)
// wraps a body in a reader that answers io.EOF once closed, and closes it
// as soon as the HTTP client returns the response; net/http's writer may
// still be checking the body for bytes past Content-Length at that moment
// (transferWriter.writeBody), reads that io.EOF as a write error and closes
// the connection under the response being read. The call then fails with
// "deserialization failed … use of closed network connection" on a 200,
// and under load the SDK's three attempts can all fail the same way
// (aws/aws-sdk-go-v2#2737 describes the race; the SDK retries it, which
// is not enough on a loaded machine). A copy the SDK does not know of
// cannot be closed under the writer, and a body net/http recognises as in
// memory goes out with its headers in one write.
package sdkhttp

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// MaxCopied is the largest body sent from a copy. Larger ones (and bodies
// of unknown length: streams) go out as the SDK gave them, not held in
// memory; the SDK retries the race on them.
const MaxCopied = 1 << 20

// Client wraps next (the SDK's own client when nil) so that each request
// body is sent from a copy.
func Client(next aws.HTTPClient) aws.HTTPClient {
	if next == nil {
		next = awshttp.NewBuildableClient()
	}
	return copyingClient{next: next}
}

// New is Client(nil) with next's transport options applied: the SDK's
// client with opts.
func New(opts ...func(*http.Transport)) aws.HTTPClient {
	return Client(awshttp.NewBuildableClient().WithTransportOptions(opts...))
}

type copyingClient struct{ next aws.HTTPClient }

// Do sends req with its body read into memory first. A request built with
// a replayable body (GetBody set: net/http's own in-memory readers) is
// sent as it is.
func (c copyingClient) Do(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Body == http.NoBody || req.GetBody != nil || req.ContentLength <= 0 || req.ContentLength > MaxCopied {
		return c.next.Do(req)
	}
	b := make([]byte, req.ContentLength)
	if _, err := io.ReadFull(req.Body, b); err != nil {
		return nil, fmt.Errorf("%s %s: read the request body (%d bytes): %w", req.Method, req.URL.Redacted(), req.ContentLength, err)
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(b))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return c.next.Do(out)
}
