package lambdaenv

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
)

// lambdaEnv is what Lambda sets for a function with an execution role.
func lambdaEnv() map[string]string {
	return map[string]string{"AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKIDLAMBDA", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "token"}
}

func TestLambdaAWSConfigReadsTheLambdaEnvironment(t *testing.T) {
	env := lambdaEnv()
	ac, err := lambdaAWSConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	creds, err := ac.Credentials.Retrieve(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if ac.Region != "eu-west-1" || creds.AccessKeyID != "AKIDLAMBDA" || creds.SecretAccessKey != "secret" || creds.SessionToken != "token" {
		t.Errorf("region %q, credentials %+v", ac.Region, creds)
	}
	if ac.BaseEndpoint != nil || ac.RetryMaxAttempts != 0 || ac.RetryMode != "" {
		t.Errorf("settings nobody set: endpoint %v, attempts %d, mode %q", ac.BaseEndpoint, ac.RetryMaxAttempts, ac.RetryMode)
	}

	delete(env, "AWS_REGION")
	env["AWS_DEFAULT_REGION"] = "us-east-2"
	if ac, err := lambdaAWSConfig(func(k string) string { return env[k] }); err != nil || ac.Region != "us-east-2" {
		t.Errorf("AWS_DEFAULT_REGION: %q, %v", ac.Region, err)
	}
}

func TestLambdaAWSConfigNamesWhatIsWrong(t *testing.T) {
	tests := []struct {
		name string
		edit func(map[string]string)
		want string
	}{
		{"no region", func(e map[string]string) { delete(e, "AWS_REGION") }, "AWS_REGION is not set"},
		{"no credentials", func(e map[string]string) { delete(e, "AWS_ACCESS_KEY_ID"); delete(e, "AWS_SECRET_ACCESS_KEY") }, "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"},
		{"key without secret", func(e map[string]string) { delete(e, "AWS_SECRET_ACCESS_KEY") }, "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"},
		{"secret without key", func(e map[string]string) { delete(e, "AWS_ACCESS_KEY_ID") }, "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not"},
		{"attempts not a number", func(e map[string]string) { e["AWS_MAX_ATTEMPTS"] = "three" }, `AWS_MAX_ATTEMPTS "three" must be a positive integer`},
		{"no attempts", func(e map[string]string) { e["AWS_MAX_ATTEMPTS"] = "0" }, `AWS_MAX_ATTEMPTS "0"`},
		{"unknown retry mode", func(e map[string]string) { e["AWS_RETRY_MODE"] = "eager" }, `AWS_RETRY_MODE "eager": want standard or adaptive`},
	}
	for _, tt := range tests {
		env := lambdaEnv()
		tt.edit(env)
		_, err := lambdaAWSConfig(func(k string) string { return env[k] })
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestLambdaAWSConfigRetrySettingsReachTheClients(t *testing.T) {
	env := lambdaEnv()
	env["AWS_MAX_ATTEMPTS"], env["AWS_RETRY_MODE"] = "7", "adaptive"
	ac, err := lambdaAWSConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	o := dynamodb.NewFromConfig(ac).Options()
	if o.RetryMaxAttempts != 7 || o.RetryMode != aws.RetryModeAdaptive {
		t.Errorf("dynamodb client: %d attempts, mode %q; want 7, adaptive", o.RetryMaxAttempts, o.RetryMode)
	}
}

// The endpoint settings are read from the process environment by the
// service clients themselves too, so these tests set it for real.
func TestLambdaAWSConfigEndpointsPerService(t *testing.T) {
	for k, v := range lambdaEnv() {
		t.Setenv(k, v)
	}
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:4000")
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:4001")
	t.Setenv("AWS_ENDPOINT_URL_SECRETS_MANAGER", "http://127.0.0.1:4002")
	ac, err := lambdaAWSConfig(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*string{
		"dynamodb":       dynamodb.NewFromConfig(ac).Options().BaseEndpoint,
		"secretsmanager": secretsmanager.NewFromConfig(ac).Options().BaseEndpoint,
		"s3":             s3.NewFromConfig(ac).Options().BaseEndpoint,
		"sfn":            sfn.NewFromConfig(ac).Options().BaseEndpoint,
	}
	want := map[string]string{"dynamodb": "http://127.0.0.1:4001", "secretsmanager": "http://127.0.0.1:4002", "s3": "http://127.0.0.1:4000", "sfn": "http://127.0.0.1:4000"}
	for svc, w := range want {
		if g := got[svc]; g == nil || *g != w {
			t.Errorf("%s endpoint %v, want %s", svc, aws.ToString(g), w)
		}
	}

	t.Setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true")
	ac, err = lambdaAWSConfig(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	for svc, e := range map[string]*string{"dynamodb": dynamodb.NewFromConfig(ac).Options().BaseEndpoint, "s3": s3.NewFromConfig(ac).Options().BaseEndpoint} {
		if e != nil {
			t.Errorf("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true: %s endpoint %s, want the service's own", svc, *e)
		}
	}
}

// TestLambdaAWSConfigContainerCredentials: without keys in the environment
// the credentials come from a container endpoint, with the authorization
// token read from its file on every refresh.
func TestLambdaAWSConfigContainerCredentials(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("tok-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var auths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auths = append(auths, r.Header.Get("Authorization"))
		json.NewEncoder(w).Encode(map[string]string{"AccessKeyId": "AKIDCONTAINER", "SecretAccessKey": "s", "Token": "t",
			"Expiration": time.Now().Add(time.Minute).UTC().Format(time.RFC3339)})
	}))
	defer srv.Close()
	env := map[string]string{"AWS_REGION": "eu-west-1", "AWS_CONTAINER_CREDENTIALS_FULL_URI": srv.URL + "/creds",
		"AWS_CONTAINER_AUTHORIZATION_TOKEN": "static", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": tokenFile}
	ac, err := lambdaAWSConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	creds, err := ac.Credentials.Retrieve(ctx)
	if err != nil || creds.AccessKeyID != "AKIDCONTAINER" || creds.SessionToken != "t" {
		t.Fatalf("credentials %+v, %v", creds, err)
	}
	// Within five minutes of expiry the cache refreshes, reading the
	// rotated token.
	os.WriteFile(tokenFile, []byte("tok-2"), 0o600)
	if _, err := ac.Credentials.Retrieve(ctx); err != nil {
		t.Fatal(err)
	}
	if strings.Join(auths, ",") != "tok-1,tok-2" {
		t.Errorf("Authorization headers %q, want the file's token, read again on refresh", auths)
	}

	os.Remove(tokenFile)
	if _, err := ac.Credentials.Retrieve(ctx); err == nil || !strings.Contains(err.Error(), "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE") {
		t.Errorf("token file gone: %v, want an error naming AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", err)
	}
}
