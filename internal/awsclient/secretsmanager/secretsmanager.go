// Package secretsmanager is the AWS Secrets Manager client of the Lambda
// bootstraps: they read the LLM API key with it
// (internal/app/lambdaenv/llmsecret). It speaks the one operation they
// call, GetSecretValue, without the SDK's service package, whose schemas
// alone cost a bootstrap about 0.1 MB (see internal/awsclient).
package secretsmanager

import (
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go"

	"github.com/veredicto/veredicto/internal/awsclient"
)

// Service is Secrets Manager as the SDK names it.
var Service = awsclient.Service{ID: "Secrets Manager", SigningName: "secretsmanager", EndpointPrefix: "secretsmanager"}

// Client calls Secrets Manager. It is safe for concurrent use.
type Client struct{ c *awsclient.Client }

// New returns a client configured from ac (see awsclient.New).
func New(ac aws.Config) (*Client, error) {
	c, err := awsclient.New(ac, Service)
	if err != nil {
		return nil, err
	}
	return &Client{c}, nil
}

// SecretString is the SecretString of the secret's current version
// (GetSecretValue), "" for a binary secret. Its errors are the SDK
// client's: a *smithy.OperationError around the service's error, whose
// code (ResourceNotFoundException, AccessDeniedException…) a
// smithy.APIError gives.
func (c *Client) SecretString(ctx context.Context, secretID string) (string, error) {
	const op = "GetSecretValue"
	body, _ := json.Marshal(struct {
		SecretID string `json:"SecretId"`
	}{secretID})
	r := &awsclient.Request{Method: http.MethodPost, URL: c.c.Endpoint(), Body: body, Header: http.Header{
		"Content-Type": {"application/x-amz-json-1.1"}, "X-Amz-Target": {"secretsmanager." + op}}}
	resp, err := c.c.Do(ctx, op, r, awsclient.JSONError)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct{ SecretString *string }
	b, err := io.ReadAll(resp.Body)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		return "", &smithy.OperationError{ServiceID: Service.ID, OperationName: op, Err: &smithy.DeserializationError{Err: err}}
	}
	return aws.ToString(out.SecretString), nil
}
