package secretsmanager_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssm "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"

	"github.com/veredicto/veredicto/internal/awsclient/awsclienttest"
	"github.com/veredicto/veredicto/internal/awsclient/secretsmanager"
	"github.com/veredicto/veredicto/internal/moto"
)

type API interface {
	GetSecretValue(ctx context.Context, in *awssm.GetSecretValueInput, optFns ...func(*awssm.Options)) (*awssm.GetSecretValueOutput, error)
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
		return c.GetSecretValue(ctx, &awssm.GetSecretValueInput{SecretId: aws.String("arn:aws:secretsmanager:eu-west-1:123:secret:llm")})
	}
	awsclienttest.Compare(t, s, API(awssm.NewFromConfig(ac)), API(ours), []string{"Content-Type", "X-Amz-Target"}, []awsclienttest.Case[API]{
		{Name: "value", Answer: answer(200, `{"ARN":"arn:aws:secretsmanager:eu-west-1:123:secret:llm","Name":"llm","SecretString":"sk-x","VersionId":"v1","VersionStages":["AWSCURRENT"],"CreatedDate":1.7e9}`), Call: get},
		{Name: "binary", Answer: answer(200, `{"Name":"llm","SecretBinary":"AAEC"}`), Call: get},
		{Name: "not found", Answer: answer(400, `{"__type":"ResourceNotFoundException","Message":"Secrets Manager can't find the specified secret."}`), Call: get},
		{Name: "denied", Answer: answer(400, `{"__type":"AccessDeniedException","Message":"no"}`), Call: get},
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
	out, err := ours.GetSecretValue(t.Context(), &awssm.GetSecretValueInput{SecretId: created.ARN})
	if err != nil || aws.ToString(out.SecretString) != `{"api_key":"sk-x"}` {
		t.Fatalf("secret %+v %v", out, err)
	}
	_, err = ours.GetSecretValue(t.Context(), &awssm.GetSecretValueInput{SecretId: aws.String("missing")})
	var nf *types.ResourceNotFoundException
	if !errors.As(err, &nf) {
		t.Errorf("a missing secret: %#v", err)
	}
}
