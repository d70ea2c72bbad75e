// Package awsclienttest compares the clients of internal/awsclient with the
// SDK's: both send an operation to a server that records the request and
// answers with a canned response, and the test checks they sent the same
// request and decoded the same output or error.
package awsclienttest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/awsretry"
)

// Answer is the canned response.
type Answer struct {
	Status int
	Header http.Header
	Body   string
}

// Request is a recorded request.
type Request struct {
	Method, Host, Path string
	Query              map[string][]string
	Header             http.Header
	Body               []byte
}

// Server records requests and answers each with its Answer.
type Server struct {
	srv    *httptest.Server
	mu     sync.Mutex
	answer Answer
	got    []Request
}

// Start starts a server, closed with the test.
func Start(t *testing.T) *Server {
	t.Helper()
	s := &Server{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.got = append(s.got, Request{Method: r.Method, Host: r.Host, Path: r.URL.EscapedPath(), Query: r.URL.Query(), Header: r.Header.Clone(), Body: body})
		a := s.answer
		s.mu.Unlock()
		for k, vs := range a.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(a.Status)
		io.WriteString(w, a.Body)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// Config is an AWS configuration whose requests all reach the server,
// whatever their host: endpoint is the base endpoint it names (such as
// http://s3.test for virtual-hosted buckets). One attempt per call.
func (s *Server) Config(endpoint string) aws.Config {
	addr := s.srv.Listener.Addr().String()
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	if endpoint == "" {
		endpoint = s.srv.URL
	}
	return aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", "TOKEN"),
		BaseEndpoint: aws.String(endpoint), HTTPClient: &http.Client{Transport: tr}, RetryMaxAttempts: 1}
}

// Exchange answers the next calls with a and returns the requests call
// sends.
func (s *Server) Exchange(a Answer, call func()) []Request {
	s.mu.Lock()
	s.answer, s.got = a, nil
	s.mu.Unlock()
	call()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got
}

// Case is one operation called on both clients.
type Case[C any] struct {
	Name   string
	Answer Answer
	// Call calls the operation on a client; the outputs are compared.
	Call func(ctx context.Context, c C) (any, error)
	// Generic: our client answers a smithy.GenericAPIError where the
	// SDK's may answer a modelled one (the clients that do without the
	// SDK's service package): their code and message are compared, not
	// their types nor faults (which only the service's model gives).
	Generic bool
}

// Compare runs each case on the SDK's client and on ours and fails the
// test where they differ: method, host, path, query, the headers named and
// the body (JSON documents compared as values); the output (its
// ResultMetadata and Body aside, a Body read and compared as bytes); the
// error's code, message, fault, type, status and transience. A header
// named with a "?" suffix is compared only when the SDK's client sends it.
func Compare[C any](t *testing.T, s *Server, sdk, ours C, headers []string, cases []Case[C]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			var wantOut, gotOut any
			var wantErr, gotErr error
			want := s.Exchange(tc.Answer, func() { wantOut, wantErr = tc.Call(t.Context(), sdk) })
			got := s.Exchange(tc.Answer, func() { gotOut, gotErr = tc.Call(t.Context(), ours) })
			if len(got) != len(want) {
				t.Fatalf("%d requests, the SDK's client sent %d", len(got), len(want))
			}
			for i := range got {
				compareRequest(t, got[i], want[i], headers)
			}
			compareErr(t, gotErr, wantErr, tc.Generic)
			if g, w := normal(t, gotOut), normal(t, wantOut); !reflect.DeepEqual(g, w) {
				t.Errorf("output\n got %#v\nwant %#v", g, w)
			}
		})
	}
}

func compareRequest(t *testing.T, got, want Request, headers []string) {
	t.Helper()
	if got.Method != want.Method || got.Host != want.Host || got.Path != want.Path {
		t.Errorf("request %s %s%s, the SDK's %s %s%s", got.Method, got.Host, got.Path, want.Method, want.Host, want.Path)
	}
	if !reflect.DeepEqual(got.Query, want.Query) {
		t.Errorf("query %v, the SDK's %v", got.Query, want.Query)
	}
	for _, h := range headers {
		h, optional := strings.CutSuffix(h, "?")
		if g, w := got.Header.Values(h), want.Header.Values(h); !slices.Equal(g, w) && !(optional && len(w) == 0) {
			t.Errorf("header %s: %q, the SDK's %q", h, g, w)
		}
	}
	if !sameBody(got.Body, want.Body) {
		t.Errorf("body\n got %s\nwant %s", got.Body, want.Body)
	}
	if got.Header.Get("Authorization") == "" || got.Header.Get("X-Amz-Security-Token") != "TOKEN" {
		t.Errorf("request not signed with the session's credentials: %v", got.Header)
	}
}

func sameBody(a, b []byte) bool {
	var ja, jb any
	if json.Unmarshal(a, &ja) == nil && json.Unmarshal(b, &jb) == nil {
		return reflect.DeepEqual(ja, jb)
	}
	return bytes.Equal(a, b)
}

func compareErr(t *testing.T, got, want error, generic bool) {
	t.Helper()
	if (got == nil) != (want == nil) {
		t.Fatalf("error %v, the SDK's %v", got, want)
	}
	if got == nil {
		return
	}
	var ga, wa smithy.APIError
	if errors.As(got, &ga) != errors.As(want, &wa) {
		t.Fatalf("error %v, the SDK's %v", got, want)
	}
	if ga != nil {
		if ga.ErrorCode() != wa.ErrorCode() || ga.ErrorMessage() != wa.ErrorMessage() || !generic && ga.ErrorFault() != wa.ErrorFault() {
			t.Errorf("API error %q %q %v, the SDK's %q %q %v", ga.ErrorCode(), ga.ErrorMessage(), ga.ErrorFault(), wa.ErrorCode(), wa.ErrorMessage(), wa.ErrorFault())
		}
		if !generic && (reflect.TypeOf(ga) != reflect.TypeOf(wa) || !reflect.DeepEqual(ga, wa)) {
			t.Errorf("API error %#v, the SDK's %#v", ga, wa)
		}
	}
	var gr, wr *awshttp.ResponseError
	if errors.As(got, &gr) != errors.As(want, &wr) || gr != nil && (gr.HTTPStatusCode() != wr.HTTPStatusCode() || gr.ServiceRequestID() != wr.ServiceRequestID()) {
		t.Errorf("response error %v, the SDK's %v", gr, wr)
	}
	var gop, wop *smithy.OperationError
	if errors.As(got, &gop) != errors.As(want, &wop) || gop != nil && (gop.Service() != wop.Service() || gop.Operation() != wop.Operation()) {
		t.Errorf("operation error %v, the SDK's %v", gop, wop)
	}
	var te *veredicto.TransientError
	if g, w := errors.As(awsretry.Classify(got), &te), errors.As(awsretry.Classify(want), &te); g != w {
		t.Errorf("transient %v, the SDK's %v", g, w)
	}
}

// normal is an output with ResultMetadata cleared and an io.ReadCloser Body
// read into bytes.
func normal(t *testing.T, out any) any {
	t.Helper()
	v := reflect.ValueOf(out)
	if !v.IsValid() || v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	if v.Kind() != reflect.Pointer {
		return out
	}
	c := reflect.New(v.Elem().Type()).Elem()
	c.Set(v.Elem())
	if f := c.FieldByName("ResultMetadata"); f.IsValid() {
		f.SetZero()
	}
	var body []byte
	if f := c.FieldByName("Body"); f.IsValid() && !f.IsNil() {
		if rc, ok := f.Interface().(io.ReadCloser); ok {
			b, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatalf("read body: %v", err)
			}
			body = b
		}
		f.SetZero()
	}
	return struct {
		Out  any
		Body string
	}{c.Interface(), strings.Clone(string(body))}
}
