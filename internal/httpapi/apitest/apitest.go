// Package apitest serves handlers in tests the way the local server does:
// behind the one authentication middleware, with access keys of their own,
// and clients that sign with them.
package apitest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/httpapi"
	"github.com/veredicto/veredicto/internal/sdkhttp"
)

// Region is the region the test servers accept.
const Region = "us-east-1"

// Server is a handler served behind the Authenticator on 127.0.0.1.
type Server struct {
	*httptest.Server
	Keys *auth.Keys
}

// Serve serves h behind an Authenticator verifying SigV4 with keys kept in
// a temporary folder (and tokens with v, when given).
func Serve(t testing.TB, h http.Handler, v auth.Verifier) *Server {
	t.Helper()
	keys := auth.OpenKeys(t.TempDir())
	authn := &httpapi.Authenticator{SigV4: &auth.SigV4{Keys: keys, Region: Region}, Tokens: v, QueryToken: []string{"/api/events"}}
	srv := httptest.NewServer(authn.Wrap(h))
	t.Cleanup(srv.Close)
	return &Server{Server: srv, Keys: keys}
}

// Key is the key of spec, created on first use.
func (s *Server) Key(t testing.TB, spec auth.KeySpec) auth.Key {
	t.Helper()
	k, err := s.Keys.Ensure(spec)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Operator is an operator's key.
func (s *Server) Operator(t testing.TB) auth.Key {
	return s.Key(t, auth.KeySpec{Name: "operator", Operator: true})
}

// Tenant is a person's key for tenant.
func (s *Server) Tenant(t testing.TB, tenant string) auth.Key {
	return s.Key(t, auth.KeySpec{Name: "person@" + tenant, Tenant: tenant})
}

// SFN is a Step Functions client of the server signing with k.
func (s *Server) SFN(k auth.Key) *sfn.Client { return SFN(s.URL, k) }

// SFN is a Step Functions client on endpoint signing with k, with the
// `sync-` host prefix of TestState disabled (see LOCAL-STACK.md).
func SFN(endpoint string, k auth.Key) *sfn.Client {
	return sfn.New(sfn.Options{
		Region:       Region,
		BaseEndpoint: aws.String(endpoint),
		Credentials:  Credentials(k),
		HTTPClient:   sdkhttp.New(),
		APIOptions: []func(*middleware.Stack) error{func(s *middleware.Stack) error {
			return s.Initialize.Add(middleware.InitializeMiddlewareFunc("NoHostPrefix",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					return next.HandleInitialize(smithyhttp.DisableEndpointHostPrefix(ctx, true), in)
				}), middleware.Before)
		}},
	})
}

// Lambda is a Lambda client on endpoint signing with k, without the
// SDK's retries (a test sees each answer as the server gave it).
func Lambda(endpoint string, k auth.Key) *lambda.Client {
	return lambda.New(lambda.Options{Region: Region, BaseEndpoint: aws.String(endpoint), Credentials: Credentials(k), Retryer: aws.NopRetryer{}})
}

// Credentials signs as k.
func Credentials(k auth.Key) aws.CredentialsProvider {
	return aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: k.AccessKeyID, SecretAccessKey: k.SecretAccessKey}, nil
	})
}

// AsTenant returns r as the Authenticator lets a tenant's request through,
// for tests of routes served without it.
func AsTenant(r *http.Request, tenant string) *http.Request {
	return r.WithContext(auth.WithPrincipal(r.Context(), auth.Principal{Name: "person@" + tenant, Tenant: tenant, Via: auth.ViaJWT}))
}

// Sign signs r, whose body is body, with k for service ("states" or
// "execute-api"), as an SDK would.
func Sign(t testing.TB, r *http.Request, body []byte, k auth.Key, service string) {
	t.Helper()
	SignAt(t, r, body, k, service, time.Now())
}

// SignAt signs r as Sign does, at the time at (a request captured then
// and replayed now).
func SignAt(t testing.TB, r *http.Request, body []byte, k auth.Key, service string, at time.Time) {
	t.Helper()
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: k.AccessKeyID, SecretAccessKey: k.SecretAccessKey}
	if err := v4.NewSigner().SignHTTP(r.Context(), creds, r, hex.EncodeToString(sum[:]), service, Region, at); err != nil {
		t.Fatal(err)
	}
}
