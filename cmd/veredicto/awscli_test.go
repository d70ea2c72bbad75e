package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/veredicto/veredicto/internal/auth"
)

// awsCLI runs `aws stepfunctions` against a server under test: the AWS CLI
// v1 of the machine image (or any aws on the PATH that honours
// AWS_DISABLE_HOST_PREFIX_INJECTION), signing with the key it is given, as
// LOCAL-STACK.md says to sign for a local endpoint.
type awsCLI struct {
	bin, endpoint string
}

// findAWSCLI is the AWS CLI, its endpoint yet to be set, or skips the
// test where there is none (a failure in CI, which must have it).
func findAWSCLI(t *testing.T) awsCLI {
	t.Helper()
	bin, err := exec.LookPath("aws")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the AWS CLI is required in CI: %v", err)
		}
		t.Skipf("no AWS CLI on the PATH: %v", err)
	}
	return awsCLI{bin: bin}
}

// run calls `aws stepfunctions ARGS…` signing with k and returns its JSON
// answer; an error carries the CLI's message, with the error code in
// parentheses.
func (c awsCLI) run(k auth.Key, args ...string) (map[string]any, error) {
	stdout, err := c.text(k, "", "stepfunctions", args...)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if len(stdout) > 0 {
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			return nil, fmt.Errorf("aws %s: output %q: %v", args[0], stdout, err)
		}
	}
	return out, nil
}

// text calls `aws SERVICE ARGS…` (in dir, when given) signing with k and
// returns what it prints (JSON unless ARGS say otherwise).
func (c awsCLI) text(k auth.Key, dir, service string, args ...string) (string, error) {
	cmd := exec.Command(c.bin, append([]string{service, "--endpoint-url", c.endpoint, "--output", "json"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+k.AccessKeyID, "AWS_SECRET_ACCESS_KEY="+k.SecretAccessKey, "AWS_DEFAULT_REGION=us-east-1",
		"AWS_DISABLE_HOST_PREFIX_INJECTION=true", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PAGER=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("aws %s %s: %v: %s", service, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}
