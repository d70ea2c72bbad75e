// Package secretsmanager is the AWS Secrets Manager client of the Lambda
// bootstraps: they read the LLM API key with it
// (internal/app/lambdaenv/llmsecret). It speaks the one operation they
// call, GetSecretValue, without the SDK's service package, whose schemas
// alone cost a bootstrap about 0.1 MB (see internal/awsclient).
package secretsmanager

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/veredicto/veredicto/internal/awsclient"
)

// Service is Secrets Manager as the SDK names it.
var Service = awsclient.Service{ID: "Secrets Manager", SigningName: "secretsmanager", EndpointPrefix: "secretsmanager"}

// protocol is Secrets Manager's AWS JSON 1.1.
var protocol = awsclient.JSONProtocol{Version: "1.1", Target: "secretsmanager"}

// Client calls Secrets Manager. It is safe for concurrent use.
type Client awsclient.Client

// New returns a client configured from ac (see awsclient.New).
func New(ac aws.Config) (*Client, error) {
	c, err := awsclient.New(ac, Service)
	return (*Client)(c), err
}

// SecretString is the SecretString of the secret's current version
// (GetSecretValue), "" for a binary secret. Its errors are the SDK
// client's: a *smithy.OperationError around the service's error, whose
// code (ResourceNotFoundException, AccessDeniedException…) a
// smithy.APIError gives.
func (c *Client) SecretString(ctx context.Context, secretID string) (string, error) {
	out, err := awsclient.CallJSON[struct{ SecretString *string }](ctx, (*awsclient.Client)(c), protocol, "GetSecretValue", &struct {
		SecretID string `json:"SecretId"`
	}{secretID})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.SecretString), nil
}
