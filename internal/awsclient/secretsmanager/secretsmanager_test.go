package secretsmanager_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssm "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/smithy-go"

	"github.com/veredicto/veredicto/internal/awsclient/awsclienttest"
	"github.com/veredicto/veredicto/internal/awsclient/secretsmanager"
	"github.com/veredicto/veredicto/internal/moto"
)

// API is SecretString, which both clients answer.
type API interface {
	SecretString(ctx context.Context, secretID string) (string, error)
}

// sdk is the SDK's client as an API.
type sdk struct{ c *awssm.Client }

func (s sdk) SecretString(ctx context.Context, id string) (string, error) {
	out, err := s.c.GetSecretValue(ctx, &awssm.GetSecretValueInput{SecretId: aws.String(id)})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.SecretString), nil
}

func answer(status int, body string) awsclienttest.Answer {
	return awsclienttest.Answer{Status: status, Header: http.Header{"Content-Type": {"application/x-amz-json-1.1"}, "X-Amzn-Requestid": {"R3"}}, Body: body}
}

func TestSameAsTheSDK(t *testing.T) {
	s := awsclienttest.Start(t)
	ac := s.Config("")
	ours, err := secretsmanager.New(ac)
	if err != nil {
		t.Fatal(err)
	}
	get := func(ctx context.Context, c API) (any, error) {
		return c.SecretString(ctx, "arn:aws:secretsmanager:eu-west-1:123:secret:llm")
	}
	awsclienttest.Compare(t, s, API(sdk{awssm.NewFromConfig(ac)}), API(ours), []string{"Content-Type", "X-Amz-Target"}, []awsclienttest.Case[API]{
		{Name: "value", Answer: answer(200, `{"ARN":"arn:aws:secretsmanager:eu-west-1:123:secret:llm","Name":"llm","SecretString":"sk-x","VersionId":"v1","VersionStages":["AWSCURRENT"],"CreatedDate":1.7e9}`), Call: get},
		{Name: "binary", Answer: answer(200, `{"Name":"llm","SecretBinary":"AAEC"}`), Call: get},
		{Name: "not found", Answer: answer(400, `{"__type":"ResourceNotFoundException","Message":"Secrets Manager can't find the specified secret."}`), Call: get, Generic: true},
		{Name: "denied", Answer: answer(400, `{"__type":"AccessDeniedException","Message":"no"}`), Call: get, Generic: true},
		{Name: "throttled", Answer: answer(400, `{"__type":"ThrottlingException","Message":"Rate exceeded"}`), Call: get, Generic: true},
		{Name: "500", Answer: answer(500, `{"__type":"InternalServiceError","Message":"oops"}`), Call: get, Generic: true},
	})
}

// TestOnMoto: the LLM key read through this client from moto.
func TestOnMoto(t *testing.T) {
	ac := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""), BaseEndpoint: aws.String(moto.Start(t))}
	created, err := awssm.NewFromConfig(ac).CreateSecret(t.Context(), &awssm.CreateSecretInput{Name: aws.String("llm"), SecretString: aws.String(`{"api_key":"sk-x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	ours, err := secretsmanager.New(ac)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ours.SecretString(t.Context(), aws.ToString(created.ARN)); err != nil || got != `{"api_key":"sk-x"}` {
		t.Fatalf("secret %q %v", got, err)
	}
	_, err = ours.SecretString(t.Context(), "missing")
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "ResourceNotFoundException" {
		t.Errorf("a missing secret: %#v", err)
	}
}
