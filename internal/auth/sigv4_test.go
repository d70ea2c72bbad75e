package auth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// signed is a Step Functions request signed with k at the given time.
func signed(t *testing.T, k Key, body, service, region string, at time.Time) *http.Request {
	t.Helper()
	r, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:8080/", bytes.NewReader([]byte(body)))
	r.Header.Set("Content-Type", "application/x-amz-json-1.0")
	r.Header.Set("X-Amz-Target", "AWSStepFunctions.ListStateMachines")
	sum := sha256.Sum256([]byte(body))
	creds := aws.Credentials{AccessKeyID: k.AccessKeyID, SecretAccessKey: k.SecretAccessKey}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, r, hex.EncodeToString(sum[:]), service, region, at); err != nil {
		t.Fatal(err)
	}
	// as the server receives it
	r.Host = r.URL.Host
	return r
}

func TestSigV4(t *testing.T) {
	keys := OpenKeys(t.TempDir())
	acme, err := keys.Ensure(KeySpec{Name: "ana", Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	v := &SigV4{Keys: keys, Region: "us-east-1", Now: func() time.Time { return now }}
	const body = `{"maxResults":10}`
	verify := func(r *http.Request, b string) (Principal, error) {
		return v.Verify(context.Background(), r, []byte(b), "states")
	}

	p, err := verify(signed(t, acme, body, "states", "us-east-1", now), body)
	if err != nil || p.Name != "ana" || p.Tenant != "acme" || p.Operator || p.Via != ViaSigV4 {
		t.Fatalf("a signed request: %+v %v", p, err)
	}
	if _, err := verify(signed(t, acme, body, "states", "us-east-1", now.Add(-14*time.Minute)), body); err != nil {
		t.Errorf("14 minutes of skew: %v", err)
	}

	forged := acme
	forged.SecretAccessKey = strings.Repeat("x", 40)
	unknown := acme
	unknown.AccessKeyID = "VKIAUNKNOWNUNKNOWN00"
	tampered := signed(t, acme, body, "states", "us-east-1", now)
	tampered.Header.Set("X-Amz-Target", "AWSStepFunctions.DeleteStateMachine")
	unsignedHeader := signed(t, acme, body, "states", "us-east-1", now)
	unsignedHeader.Header.Set("X-Amz-Date", now.Add(time.Minute).Format("20060102T150405Z"))
	withToken := signed(t, acme, body, "states", "us-east-1", now)
	withToken.Header.Set("X-Amz-Security-Token", "abc")
	noDate := signed(t, acme, body, "states", "us-east-1", now)
	noDate.Header.Del("X-Amz-Date")
	basic, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:8080/", nil)
	basic.Header.Set("Authorization", "Basic eDp4")
	for _, tt := range []struct {
		name string
		r    *http.Request
		body string
		code string
		want string
	}{
		{"no signature", func() *http.Request { r, _ := http.NewRequest("POST", "http://127.0.0.1:8080/", nil); return r }(), body, CodeMissingAuthenticationToken, "Missing Authentication Token"},
		{"another scheme", basic, body, CodeIncompleteSignature, "Unsupported"},
		{"unknown key", signed(t, unknown, body, "states", "us-east-1", now), body, CodeUnrecognizedClient, "security token"},
		{"wrong secret", signed(t, forged, body, "states", "us-east-1", now), body, CodeInvalidSignature, "does not match"},
		{"another body", signed(t, acme, body, "states", "us-east-1", now), `{"maxResults":11}`, CodeInvalidSignature, "does not match"},
		{"a header changed", tampered, body, CodeInvalidSignature, "does not match"},
		{"date changed after signing", unsignedHeader, body, CodeInvalidSignature, "does not match"},
		{"replayed 16 minutes later", signed(t, acme, body, "states", "us-east-1", now.Add(-16*time.Minute)), body, CodeInvalidSignature, "Signature expired"},
		{"from the future", signed(t, acme, body, "states", "us-east-1", now.Add(16*time.Minute)), body, CodeInvalidSignature, "Signature expired"},
		{"another region", signed(t, acme, body, "states", "eu-west-1", now), body, CodeInvalidSignature, "region"},
		{"another service", signed(t, acme, body, "execute-api", "us-east-1", now), body, CodeInvalidSignature, "correct service: 'states'"},
		{"a session token", withToken, body, CodeUnrecognizedClient, "security token"},
		{"no date", noDate, body, CodeIncompleteSignature, "X-Amz-Date"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := verify(tt.r, tt.body)
			var se *SigV4Error
			if !errors.As(err, &se) || se.Code != tt.code || !strings.Contains(se.Message, tt.want) {
				t.Errorf("got %v, want %s saying %q", err, tt.code, tt.want)
			}
			if se != nil && strings.Contains(se.Message, acme.SecretAccessKey) {
				t.Error("the error quotes the secret")
			}
		})
	}
}

func TestKeysAreCreatedOncePerNameAndScope(t *testing.T) {
	dir := t.TempDir()
	keys := OpenKeys(dir)
	a1, err := keys.Ensure(KeySpec{Name: "ana", Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	// Another process (a second store on the folder) sees and reuses it.
	a2, err := OpenKeys(dir).Ensure(KeySpec{Name: "ana", Tenant: "acme"})
	if err != nil || a2 != a1 {
		t.Errorf("the same name and scope again: %+v %v, want %+v", a2, err, a1)
	}
	op, err := keys.Ensure(KeySpec{Name: "ana", Operator: true})
	if err != nil || op.AccessKeyID == a1.AccessKeyID || !op.Operator {
		t.Errorf("the operator scope: %+v %v, want a key of its own", op, err)
	}
	if got, ok, err := keys.Lookup(op.AccessKeyID); !ok || err != nil || got != op {
		t.Errorf("Lookup: %+v %v %v", got, ok, err)
	}
	for _, bad := range []KeySpec{{Name: "x"}, {Name: "x", Tenant: "acme", Operator: true}, {Name: "x", Tenant: "../acme"}, {Tenant: "acme"}, {Name: "a\nb", Tenant: "acme"}} {
		if _, err := keys.Ensure(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if len(a1.AccessKeyID) != 20 || len(a1.SecretAccessKey) != 40 {
		t.Errorf("key shape %q/%d", a1.AccessKeyID, len(a1.SecretAccessKey))
	}
}

func TestHostPolicy(t *testing.T) {
	loop := NewHostPolicy("127.0.0.1:8080", "veredicto.example")
	for host, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:8080": true, "[::1]:8080": true, "LOCALHOST:8080": true, "localhost": true,
		"veredicto.example:8080": true,
		"attacker.example:8080":  false, // DNS rebinding: a name that resolves to 127.0.0.1
		"127.0.0.1:9090":         false,
		"":                       false,
		"127.0.0.2:8080":         false,
	} {
		if got := loop.Allows(host); got != want {
			t.Errorf("loopback server, Host %q: %v, want %v", host, got, want)
		}
	}
	lan := NewHostPolicy("192.168.1.5:8080")
	if !lan.Allows("192.168.1.5:8080") || lan.Allows("localhost:8080") {
		t.Error("a server on a LAN address answers its own address only")
	}
}
