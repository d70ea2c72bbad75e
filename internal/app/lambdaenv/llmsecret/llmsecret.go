// Package llmsecret reads a Lambda's LLM API key from Secrets Manager and
// builds its model client: the functions whose agents call a model
// (search, flags, debate, chat, companion) import it; the others link no
// Secrets Manager client.
package llmsecret

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/veredicto/veredicto/internal/app/lambdaenv"
	"github.com/veredicto/veredicto/internal/awsclient/secretsmanager"
	"github.com/veredicto/veredicto/internal/llm"
)

// Client reads the LLM key from Secrets Manager (a plain string, or JSON
// with "api_key") and returns the client on cfg's model, base URL and call
// timeout; without a secret (LLM_SECRET_ARN unset) it returns nil and the
// offline baselines run.
func Client(ctx context.Context, ac aws.Config, cfg lambdaenv.Config) (*llm.OpenAI, error) {
	key, err := Key(ctx, ac, cfg)
	if key == "" || err != nil {
		return nil, err
	}
	return llm.NewOpenAI(llm.OpenAIConfig{APIKey: key, BaseURL: cfg.BaseURL, Model: cfg.Model, CallTimeout: cfg.OpenAITimeout})
}

// Key reads the LLM API key from Secrets Manager; "" without a secret.
func Key(ctx context.Context, ac aws.Config, cfg lambdaenv.Config) (string, error) {
	if cfg.LLMSecretARN == "" {
		return "", nil
	}
	client, err := secretsmanager.New(ac)
	if err != nil {
		return "", err
	}
	secret, err := client.SecretString(ctx, cfg.LLMSecretARN)
	if err != nil {
		return "", fmt.Errorf("read LLM secret: %w", err)
	}
	key, err := apiKeyFromSecret(secret)
	if err != nil {
		return "", fmt.Errorf("LLM secret %s: %w", cfg.LLMSecretARN, err)
	}
	return key, nil
}

// apiKeyFromSecret reads the API key from a secret's string: the key
// itself, or a JSON object with "api_key". The error never quotes the
// secret.
func apiKeyFromSecret(secret string) (string, error) {
	secret = strings.TrimSpace(secret)
	if strings.HasPrefix(secret, "{") {
		var js struct {
			APIKey string `json:"api_key"`
		}
		if err := json.Unmarshal([]byte(secret), &js); err != nil || strings.TrimSpace(js.APIKey) == "" {
			return "", fmt.Errorf("the secret is a JSON object without a non-empty \"api_key\"")
		}
		return strings.TrimSpace(js.APIKey), nil
	}
	if secret == "" {
		return "", fmt.Errorf("the secret is empty")
	}
	return secret, nil
}
