// Package secretsmanager is the AWS Secrets Manager client of the Lambda
// bootstraps: they read the LLM API key with it
// (internal/app/lambdaenv/llmsecret), the SDK's types serialised by the
// SDK's own codec (see internal/awsclient).
package secretsmanager

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssm "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager/schemas"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/transport/http/protocol/awsjson"

	"github.com/veredicto/veredicto/internal/awsclient"
)

// Service is Secrets Manager as the SDK names it.
var Service = awsclient.Service{ID: awssm.ServiceID, SigningName: "secretsmanager", EndpointPrefix: "secretsmanager"}

var protocol = awsclient.Protocol{ClientProtocol: awsjson.New11(schemas.Secretsmanager), Types: awssm.TypeRegistry}

var getSecretValue = smithy.NewOperationSchema(schemas.GetSecretValue, schemas.GetSecretValueRequest, schemas.GetSecretValueResponse)

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

// GetSecretValue reads a secret's value.
func (c *Client) GetSecretValue(ctx context.Context, in *awssm.GetSecretValueInput, _ ...func(*awssm.Options)) (*awssm.GetSecretValueOutput, error) {
	return awsclient.Invoke[awssm.GetSecretValueOutput](ctx, c.c, protocol, getSecretValue, in)
}
