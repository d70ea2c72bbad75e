package lambdaenv

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/endpointcreds"
)

// lambdaAWSConfig is the AWS SDK configuration of a function in Lambda,
// read from the environment Lambda gives it: the region (AWS_REGION) and
// the execution role's credentials (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), or a container credentials
// endpoint (AWS_CONTAINER_CREDENTIALS_FULL_URI or _RELATIVE_URI, with
// AWS_CONTAINER_AUTHORIZATION_TOKEN or _TOKEN_FILE) where one is given.
// It also honours the SDK's environment settings an operator may set on a
// function: AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_<SERVICE> (e.g. for `sam
// local invoke` against local peers), AWS_IGNORE_CONFIGURED_ENDPOINT_URLS,
// AWS_MAX_ATTEMPTS and AWS_RETRY_MODE.
//
// It does not read shared config files, SSO, web identity or instance
// metadata as config.LoadDefaultConfig does: a Lambda has none of them, and
// linking that chain made every bootstrap 1.6 MB larger (docs/BENCHMARKS.md,
// "Lambda bootstraps"). A missing or malformed setting is an init error
// that names the variable.
func lambdaAWSConfig(getenv func(string) string) (aws.Config, error) {
	region := getenv("AWS_REGION")
	if region == "" {
		region = getenv("AWS_DEFAULT_REGION")
	}
	if region == "" {
		return aws.Config{}, fmt.Errorf("configuration: AWS_REGION is not set (Lambda sets it; set it to run a bootstrap elsewhere)")
	}
	creds, err := lambdaCredentials(getenv)
	if err != nil {
		return aws.Config{}, err
	}
	ac := aws.Config{Region: region, Credentials: creds}
	endpoints := envEndpoints{getenv}
	ac.ConfigSources = []any{endpoints}
	if v, ok := endpoints.global(); ok {
		ac.BaseEndpoint = aws.String(v)
	}
	if v := getenv("AWS_MAX_ATTEMPTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return aws.Config{}, fmt.Errorf("configuration: AWS_MAX_ATTEMPTS %q must be a positive integer", v)
		}
		ac.RetryMaxAttempts = n
	}
	if v := getenv("AWS_RETRY_MODE"); v != "" {
		m, err := aws.ParseRetryMode(v)
		if err != nil {
			return aws.Config{}, fmt.Errorf("configuration: AWS_RETRY_MODE %q: want standard or adaptive", v)
		}
		ac.RetryMode = m
	}
	return ac, nil
}

// containerHost is where ECS-style relative credential URIs point.
const containerHost = "http://169.254.170.2"

// lambdaCredentials returns the credentials the environment names, in the
// SDK's order: static keys first, then a container credentials endpoint.
func lambdaCredentials(getenv func(string) string) (aws.CredentialsProvider, error) {
	id, secret := getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY")
	if id == "" {
		id = getenv("AWS_ACCESS_KEY")
	}
	if secret == "" {
		secret = getenv("AWS_SECRET_KEY")
	}
	switch {
	case id != "" && secret != "":
		return credentials.NewStaticCredentialsProvider(id, secret, getenv("AWS_SESSION_TOKEN")), nil
	case id != "":
		return nil, fmt.Errorf("configuration: AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not")
	case secret != "":
		return nil, fmt.Errorf("configuration: AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not")
	}
	url := getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI")
	if rel := getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"); rel != "" {
		url = containerHost + rel
	}
	if url == "" {
		return nil, fmt.Errorf("configuration: no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (Lambda sets them from the execution role) or AWS_CONTAINER_CREDENTIALS_FULL_URI")
	}
	token, tokenFile := getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN"), getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE")
	p := endpointcreds.New(url, func(o *endpointcreds.Options) {
		o.AuthorizationToken = token
		if tokenFile != "" {
			// Read on every refresh: the file is rotated under the process.
			o.AuthorizationTokenProvider = endpointcreds.TokenProviderFunc(func() (string, error) {
				b, err := os.ReadFile(tokenFile)
				if err != nil {
					return "", fmt.Errorf("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: %w", err)
				}
				return strings.TrimSpace(string(b)), nil
			})
		}
	})
	return aws.NewCredentialsCache(p, func(o *aws.CredentialsCacheOptions) { o.ExpiryWindow = 5 * time.Minute }), nil
}

// envEndpoints resolves the endpoint environment settings as the SDK does:
// a service client asks its ConfigSources for AWS_ENDPOINT_URL_<SERVICE>
// (the service's SDK id in upper case, spaces as underscores, e.g.
// AWS_ENDPOINT_URL_SECRETS_MANAGER), and AWS_ENDPOINT_URL applies to every
// service; AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true turns both off.
type envEndpoints struct{ getenv func(string) string }

func (e envEndpoints) ignored() bool {
	return strings.EqualFold(e.getenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"), "true")
}

func (e envEndpoints) global() (string, bool) {
	v := e.getenv("AWS_ENDPOINT_URL")
	return v, v != "" && !e.ignored()
}

// GetServiceBaseEndpoint implements the SDK's service endpoint source.
func (e envEndpoints) GetServiceBaseEndpoint(_ context.Context, sdkID string) (string, bool, error) {
	if v := e.getenv("AWS_ENDPOINT_URL_" + strings.ToUpper(strings.ReplaceAll(sdkID, " ", "_"))); v != "" {
		return v, !e.ignored(), nil
	}
	v, ok := e.global()
	return v, ok, nil
}

// GetIgnoreConfiguredEndpoints implements the SDK's switch for the above.
func (e envEndpoints) GetIgnoreConfiguredEndpoints(context.Context) (bool, bool, error) {
	return e.ignored(), e.ignored(), nil
}
