// Package awsclient calls the few AWS operations a Lambda bootstrap makes
// without the SDK's service clients: each client in its subpackages takes
// and returns the SDK's own input, output and error types, so the adapters
// (internal/blob/s3, internal/store/dynamo, …) and their tests run
// unchanged on either, but it links none of a service client's endpoint
// rules, middleware stack, checksum and presigning machinery. Those cost a
// bootstrap 0.13–1.2 MB each (Amazon S3 the most), more than the handlers
// they serve; docs/BENCHMARKS.md has the figures.
//
// What is kept from the SDK is what makes a call correct: aws.Config (its
// region, credentials, AWS_ENDPOINT_URL[_<SERVICE>] endpoints, HTTP
// client and retry settings), the SigV4 signer, the standard (or
// adaptive) retryer with its retry quota, and the error values the
// adapters and internal/awsretry inspect: a *smithy.OperationError around
// an *awshttp.ResponseError around the service's error, modelled
// (*types.ConditionalCheckFailedException, *types.NoSuchKey) or generic
// (smithy.GenericAPIError with the service's code). What is left out is
// what a Lambda in a commercial region does not use: FIPS and dual-stack
// endpoints, S3 access points, multi-region signing and accelerate
// endpoints, endpoint discovery, clock-skew correction and response
// checksum validation (the connection is TLS).
//
// Each client implements exactly the operations the Lambdas call; an input
// field a client does not send is an error (see Only), never silently
// dropped. Tests compare every operation with the SDK client's request and
// decoded response, and run the adapters' suites against local servers on
// both.
package awsclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Service names an AWS service as the SDK does.
type Service struct {
	// ID is the SDK's service ID, as AWS_ENDPOINT_URL_<ID> spells it with
	// spaces as underscores: "DynamoDB", "S3", "SFN", "SQS",
	// "Secrets Manager".
	ID string
	// SigningName is the SigV4 service name: "dynamodb", "s3", "states"…
	SigningName string
	// EndpointPrefix is the first label of the regional endpoint:
	// https://<prefix>.<region>.amazonaws.com.
	EndpointPrefix string
}

// Client sends signed requests to one service. It is immutable after New
// and safe for concurrent use.
type Client struct {
	service  Service
	region   string
	endpoint *url.URL // configured base endpoint; nil: the regional one
	creds    aws.CredentialsProvider
	signer   *v4.Signer
	http     aws.HTTPClient
	retryer  aws.RetryerV2
	now      func() time.Time
}

// New returns a client of svc configured from ac as the SDK's own client
// would be: ac.Region, ac.Credentials, the base endpoint of the service
// from ac.ConfigSources or ac.BaseEndpoint, ac.HTTPClient (the SDK's
// default when nil) and ac.Retryer or ac.RetryMode and ac.RetryMaxAttempts.
// signerOpts adjust the signer (S3 signs paths unescaped).
func New(ac aws.Config, svc Service, signerOpts ...func(*v4.SignerOptions)) (*Client, error) {
	if ac.Region == "" {
		return nil, fmt.Errorf("%s client: no region in the AWS configuration", svc.ID)
	}
	if ac.Credentials == nil {
		return nil, fmt.Errorf("%s client: no credentials in the AWS configuration", svc.ID)
	}
	c := &Client{service: svc, region: ac.Region, creds: ac.Credentials, signer: v4.NewSigner(signerOpts...),
		http: ac.HTTPClient, retryer: retryerOf(ac), now: time.Now}
	if c.http == nil {
		c.http = awshttp.NewBuildableClient()
	}
	base, err := baseEndpoint(ac, svc.ID)
	if err != nil {
		return nil, err
	}
	if base != "" {
		u, err := url.Parse(base)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("%s client: endpoint %q is not an absolute URL", svc.ID, base)
		}
		c.endpoint = u
	}
	return c, nil
}

// serviceEndpoints is the interface of the configuration sources that name
// a service's endpoint (AWS_ENDPOINT_URL_<SERVICE> in internal/app/lambdaenv,
// the shared config in the SDK's config package).
type serviceEndpoints interface {
	GetServiceBaseEndpoint(ctx context.Context, sdkID string) (string, bool, error)
}

// baseEndpoint is the endpoint configured for the service, as the SDK's
// clients resolve it: a configuration source that names one first, then
// ac.BaseEndpoint; "" for the regional endpoint.
func baseEndpoint(ac aws.Config, id string) (string, error) {
	for _, s := range ac.ConfigSources {
		if es, ok := s.(serviceEndpoints); ok {
			v, found, err := es.GetServiceBaseEndpoint(context.Background(), id)
			if err != nil {
				return "", fmt.Errorf("%s client: endpoint: %w", id, err)
			}
			if found && v != "" {
				return v, nil
			}
		}
	}
	return aws.ToString(ac.BaseEndpoint), nil
}

// retryerOf is the retryer the SDK's clients build from ac.
func retryerOf(ac aws.Config) aws.RetryerV2 {
	var r aws.Retryer
	switch {
	case ac.Retryer != nil:
		r = ac.Retryer()
	case ac.RetryMode == aws.RetryModeAdaptive:
		r = retry.NewAdaptiveMode(func(o *retry.AdaptiveModeOptions) {
			if ac.RetryMaxAttempts != 0 {
				o.StandardOptions = append(o.StandardOptions, func(so *retry.StandardOptions) { so.MaxAttempts = ac.RetryMaxAttempts })
			}
		})
	default:
		r = retry.NewStandard(func(so *retry.StandardOptions) {
			if ac.RetryMaxAttempts != 0 {
				so.MaxAttempts = ac.RetryMaxAttempts
			}
		})
	}
	if ac.RetryMaxAttempts != 0 {
		r = retry.AddWithMaxAttempts(r, ac.RetryMaxAttempts)
	}
	if v2, ok := r.(aws.RetryerV2); ok {
		return v2
	}
	return retryerV2{r}
}

// retryerV2 gives a Retryer without GetAttemptToken(ctx) the context form.
type retryerV2 struct{ aws.Retryer }

func (r retryerV2) GetAttemptToken(context.Context) (func(error) error, error) {
	return r.GetInitialToken(), nil
}

// Region is the client's region.
func (c *Client) Region() string { return c.region }

// Endpoint is the base URL of the service: the configured one, else
// https://<prefix>.<region>.<partition's DNS suffix>/.
func (c *Client) Endpoint() *url.URL {
	if c.endpoint != nil {
		u := *c.endpoint
		return &u
	}
	return &url.URL{Scheme: "https", Host: c.service.EndpointPrefix + "." + c.region + "." + dnsSuffix(c.region), Path: "/"}
}

// Configured reports whether the endpoint was configured rather than the
// regional one.
func (c *Client) Configured() bool { return c.endpoint != nil }

// dnsSuffix is the DNS suffix of the region's partition.
func dnsSuffix(region string) string {
	for _, p := range []struct{ prefix, suffix string }{
		{"cn-", "amazonaws.com.cn"},
		{"us-isob-", "sc2s.sgov.gov"},
		{"us-isof-", "csp.hci.ic.gov"},
		{"us-iso-", "c2s.ic.gov"},
		{"eu-isoe-", "cloud.adc-e.uk"},
		{"eusc-", "amazonaws.eu"},
	} {
		if strings.HasPrefix(region, p.prefix) {
			return p.suffix
		}
	}
	return "amazonaws.com"
}

// Request is one HTTP request to the service, before signing.
type Request struct {
	Method string
	URL    *url.URL
	Header http.Header
	Body   []byte
	// SignPayloadHeader sets X-Amz-Content-Sha256 to the payload's hash,
	// which S3 requires and the other services ignore.
	SignPayloadHeader bool
}

// ErrorDecoder makes the service's error of a response that is not 2xx:
// its body is read in full.
type ErrorDecoder func(resp *http.Response, body []byte) error

// Do sends r as operation op, signed, and retries it as the SDK's retry
// middleware does (the same retryer, attempt and retry-quota tokens,
// delays). It returns the response of the first attempt answered with a
// 2xx status, whose body the caller reads and closes; any other outcome
// is an error wrapped as the SDK wraps it: *smithy.OperationError, around
// *retry.MaxAttemptsError when the attempts ran out, around
// *awshttp.ResponseError (with decode's error) or
// *smithyhttp.RequestSendError.
func (c *Client) Do(ctx context.Context, op string, r *Request, decode ErrorDecoder) (*http.Response, error) {
	resp, err := c.retry(ctx, r, decode)
	if err != nil {
		return nil, &smithy.OperationError{ServiceID: c.service.ID, OperationName: op, Err: err}
	}
	return resp, nil
}

func (c *Client) retry(ctx context.Context, r *Request, decode ErrorDecoder) (*http.Response, error) {
	sum := sha256.Sum256(r.Body)
	payloadHash := hex.EncodeToString(sum[:])
	maxAttempts := c.retryer.MaxAttempts()
	releaseRetry := func(error) error { return nil }
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		releaseAttempt, err := c.retryer.GetAttemptToken(ctx)
		if err != nil {
			return nil, fmt.Errorf("failed to get retry Send token, %w", err)
		}
		resp, err := c.attempt(ctx, r, payloadHash, decode)
		_ = releaseRetry(err)
		_ = releaseAttempt(err)
		if err == nil {
			return resp, nil
		}
		if !c.retryer.IsErrorRetryable(err) {
			return nil, err
		}
		if maxAttempts > 0 && attempt >= maxAttempts {
			return nil, &retry.MaxAttemptsError{Attempt: attempt, Err: err}
		}
		var tokenErr error
		if releaseRetry, tokenErr = c.retryer.GetRetryToken(ctx, err); tokenErr != nil {
			return nil, errors.Join(err, tokenErr)
		}
		delay, derr := c.retryer.RetryDelay(attempt, err)
		if derr != nil {
			return nil, derr
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, &aws.RequestCanceledError{Err: ctx.Err()}
		case <-t.C:
		}
	}
}

// attempt signs and sends r once. A response that is not 2xx is read,
// closed and decoded into the error.
func (c *Client) attempt(ctx context.Context, r *Request, payloadHash string, decode ErrorDecoder) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL.String(), bytes.NewReader(r.Body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	for k, vs := range r.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
	if r.SignPayloadHeader {
		req.Header.Set("X-Amz-Content-Sha256", payloadHash)
	}
	creds, err := c.creds.Retrieve(ctx)
	if err != nil {
		return nil, fmt.Errorf("retrieve credentials: %w", err)
	}
	if err := c.signer.SignHTTP(ctx, creds, req, payloadHash, c.service.SigningName, c.region, c.now().UTC()); err != nil {
		return nil, fmt.Errorf("sign request: %w", err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, &smithy.CanceledError{Err: ctx.Err()}
		}
		return nil, &smithyhttp.RequestSendError{Err: err}
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, &smithyhttp.RequestSendError{Err: fmt.Errorf("read error response: %w", err)}
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	apiErr := decode(resp, body)
	return nil, &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: resp}, Err: apiErr},
		RequestID: requestID(resp.Header)}
}

// requestID is the request id a service answers with.
func requestID(h http.Header) string {
	for _, k := range []string{"X-Amzn-Requestid", "X-Amz-Request-Id", "X-Amzn-Request-Id"} {
		if v := h.Get(k); v != "" {
			return v
		}
	}
	return ""
}

// Only returns an error naming the first exported field of the struct in
// points to that is set (not its zero value) and not among fields: the
// fields an operation of these clients sends. SDK inputs gain fields with
// new service features; one a caller sets and a client would not send is
// refused rather than dropped.
func Only(op string, in any, fields ...string) error {
	v := reflect.ValueOf(in)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || v.Field(i).IsZero() {
			continue
		}
		known := false
		for _, name := range fields {
			known = known || name == f.Name
		}
		if !known {
			return fmt.Errorf("%s: %s.%s is set, and this client does not send it (internal/awsclient)", op, t.Name(), f.Name)
		}
	}
	return nil
}
