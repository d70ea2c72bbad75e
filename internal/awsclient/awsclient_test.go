package awsclient_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/awsclient"
	"github.com/veredicto/veredicto/internal/awsretry"
)

var service = awsclient.Service{ID: "Test Service", SigningName: "test", EndpointPrefix: "test"}

func config(endpoint string) aws.Config {
	return aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""), BaseEndpoint: aws.String(endpoint),
		Retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
			})
		}}
}

func decode(resp *http.Response, body []byte) error {
	return &smithy.GenericAPIError{Code: resp.Header.Get("Code"), Message: string(body)}
}

// flaky answers each request with the next status of statuses (the last
// one repeated), and counts the requests.
func flaky(t *testing.T, statuses ...int) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		if r.Header.Get("Authorization") == "" || !strings.Contains(r.Header.Get("Authorization"), "/eu-west-1/test/aws4_request") {
			t.Errorf("request %d not signed for the service: %q", i, r.Header.Get("Authorization"))
		}
		status := statuses[min(i, len(statuses)-1)]
		if status == 503 {
			w.Header().Set("Code", "ServiceUnavailable")
		} else if status == 400 {
			w.Header().Set("Code", "ValidationException")
		}
		w.WriteHeader(status)
		w.Write([]byte("answer"))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func send(t *testing.T, c *awsclient.Client) error {
	t.Helper()
	resp, err := c.Do(t.Context(), "Op", &awsclient.Request{Method: http.MethodPost, URL: c.Endpoint(), Header: http.Header{}, Body: []byte("{}")}, decode)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

func TestDoRetriesAsTheSDK(t *testing.T) {
	tests := []struct {
		name      string
		statuses  []int
		requests  int32
		transient bool // the error, classified by internal/awsretry
		code      string
	}{
		{"answered", []int{200}, 1, false, ""},
		{"retried until answered", []int{503, 500, 200}, 3, false, ""},
		{"attempts run out", []int{503}, 3, true, "ServiceUnavailable"},
		{"not retried", []int{400}, 1, false, "ValidationException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, n := flaky(t, tt.statuses...)
			c, err := awsclient.New(config(srv.URL), service)
			if err != nil {
				t.Fatal(err)
			}
			err = send(t, c)
			if got := n.Load(); got != tt.requests {
				t.Errorf("%d requests, want %d", got, tt.requests)
			}
			if tt.code == "" {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				return
			}
			var ae smithy.APIError
			var re *awshttp.ResponseError
			var oe *smithy.OperationError
			if !errors.As(err, &ae) || ae.ErrorCode() != tt.code || !errors.As(err, &re) || !errors.As(err, &oe) || oe.Service() != "Test Service" || oe.Operation() != "Op" {
				t.Errorf("error %#v, want an operation error around the response's %s", err, tt.code)
			}
			var te *veredicto.TransientError
			if errors.As(awsretry.Classify(err), &te) != tt.transient {
				t.Errorf("error %v: transient %v, want %v", err, !tt.transient, tt.transient)
			}
			var me *retry.MaxAttemptsError
			if errors.As(err, &me) != (tt.requests > 1) {
				t.Errorf("error %v: MaxAttemptsError %v", err, me)
			}
		})
	}
}

func TestDoConnectionErrorIsTransient(t *testing.T) {
	srv, _ := flaky(t, 200)
	srv.Close()
	ac := config(srv.URL)
	ac.RetryMaxAttempts = 2
	ac.Retryer = nil
	c, err := awsclient.New(ac, service)
	if err != nil {
		t.Fatal(err)
	}
	err = send(t, c)
	var se *smithyhttp.RequestSendError
	var te *veredicto.TransientError
	if !errors.As(err, &se) || !errors.As(awsretry.Classify(err), &te) {
		t.Errorf("error %#v, want a transient RequestSendError", err)
	}
}

func TestDoStopsWithTheContext(t *testing.T) {
	srv, n := flaky(t, 503)
	ac := config(srv.URL)
	ac.Retryer = nil // the standard backoff: long enough to cancel in
	c, err := awsclient.New(ac, service)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		for n.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err = c.Do(ctx, "Op", &awsclient.Request{Method: http.MethodGet, URL: c.Endpoint()}, decode)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

type endpoints map[string]string

func (e endpoints) GetServiceBaseEndpoint(_ context.Context, id string) (string, bool, error) {
	v, ok := e[id]
	return v, ok, nil
}

func TestEndpoint(t *testing.T) {
	tests := []struct {
		name   string
		region string
		base   string
		source endpoints
		want   string
	}{
		{"regional", "eu-west-1", "", nil, "https://test.eu-west-1.amazonaws.com/"},
		{"China", "cn-north-1", "", nil, "https://test.cn-north-1.amazonaws.com.cn/"},
		{"GovCloud", "us-gov-west-1", "", nil, "https://test.us-gov-west-1.amazonaws.com/"},
		{"base endpoint", "eu-west-1", "http://127.0.0.1:4566", nil, "http://127.0.0.1:4566"},
		{"the service's endpoint first", "eu-west-1", "http://127.0.0.1:4566", endpoints{"Test Service": "http://localhost:9000/x"}, "http://localhost:9000/x"},
		{"another service's endpoint", "eu-west-1", "", endpoints{"S3": "http://localhost:9000"}, "https://test.eu-west-1.amazonaws.com/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ac := aws.Config{Region: tt.region, Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")}
			if tt.base != "" {
				ac.BaseEndpoint = aws.String(tt.base)
			}
			if tt.source != nil {
				ac.ConfigSources = []any{tt.source}
			}
			c, err := awsclient.New(ac, service)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Endpoint().String(); got != tt.want {
				t.Errorf("endpoint %s, want %s", got, tt.want)
			}
		})
	}
}

func TestNewRefusesAnIncompleteConfiguration(t *testing.T) {
	creds := credentials.NewStaticCredentialsProvider("a", "b", "")
	for _, ac := range []aws.Config{
		{Credentials: creds},
		{Region: "eu-west-1"},
		{Region: "eu-west-1", Credentials: creds, BaseEndpoint: aws.String("localhost:4566")},
	} {
		if _, err := awsclient.New(ac, service); err == nil {
			t.Errorf("New(%+v) made a client", ac)
		}
	}
}

func TestOnly(t *testing.T) {
	type input struct {
		Bucket, Key *string
		Quiet       bool
		Tags        map[string]string
	}
	if err := awsclient.Only("Op", &input{Bucket: aws.String("b"), Key: aws.String("k")}, "Bucket", "Key"); err != nil {
		t.Errorf("the fields sent: %v", err)
	}
	if err := awsclient.Only("Op", (*input)(nil), "Bucket"); err != nil {
		t.Errorf("a nil input: %v", err)
	}
	err := awsclient.Only("Op", &input{Bucket: aws.String("b"), Tags: map[string]string{}}, "Bucket", "Key")
	if err == nil || !strings.Contains(err.Error(), "input.Tags is set") {
		t.Errorf("a field not sent: %v", err)
	}
}
