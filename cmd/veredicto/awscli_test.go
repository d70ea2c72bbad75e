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
	cmd := exec.Command(c.bin, append([]string{"stepfunctions", "--endpoint-url", c.endpoint, "--output", "json"}, args...)...)
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+k.AccessKeyID, "AWS_SECRET_ACCESS_KEY="+k.SecretAccessKey, "AWS_DEFAULT_REGION=us-east-1",
		"AWS_DISABLE_HOST_PREFIX_INJECTION=true", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PAGER=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("aws %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	var out map[string]any
	if stdout.Len() > 0 {
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			return nil, fmt.Errorf("aws %s: output %q: %v", args[0], stdout.String(), err)
		}
	}
	return out, nil
}
