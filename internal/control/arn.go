package control

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The account and region of every local ARN.
const (
	Region  = "us-east-1"
	Account = "000000000000"

	arnPrefix = "arn:aws:states:" + Region + ":" + Account + ":"
)

// StateMachineARN is the local ARN of the state machine name.
func StateMachineARN(name string) string { return arnPrefix + "stateMachine:" + name }

// ExecutionARN is the local ARN of the execution name of machine.
func ExecutionARN(machine, name string) string {
	return arnPrefix + "execution:" + machine + ":" + name
}

// ValidName reports whether s is a valid state machine or execution name
// for Step Functions: 1 to 80 characters, no whitespace, brackets,
// wildcards, the characters " # % \ ^ | ~ ` $ & , ; : / or control
// characters. "." and ".." are refused too (they would name folders), and
// so is invalid UTF-8 (never read as U+FFFD).
func ValidName(s string) bool {
	if s == "" || !utf8.ValidString(s) || len([]rune(s)) > 80 || s == "." || s == ".." {
		return false
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune("<>{}[]?*\"#%\\^|~`$&,;:/", r) {
			return false
		}
	}
	return true
}

// parseARN splits a local state machine or execution ARN. kind is
// "stateMachine" or "execution"; rest is the name (or "machine:name").
func parseARN(arn string) (kind, rest string, ok bool) {
	var parts [6]string // arn:partition:states:region:account:kind:rest, cut without allocating
	rest = arn
	for i := range parts {
		if parts[i], rest, ok = strings.Cut(rest, ":"); !ok {
			return "", "", false
		}
	}
	if parts[0] != "arn" || parts[2] != "states" || parts[1] == "" || rest == "" {
		return "", "", false
	}
	return parts[5], rest, true
}

// invalidArn is the InvalidArn answer for arn where an ARN of one of the
// resource types kinds is expected. Step Functions' words (recorded on
// AWS: LocalStack snapshots test_sfn_api.snapshot.json,
// test_sfn_api_activities.snapshot.json and
// test_sfn_api_versioning.snapshot.json) for a string that is not an ARN
// are "Invalid ARN prefix: <it>" in every operation recorded; for a Step
// Functions ARN of another type they name the type, not the ARN (recorded
// on AWS: LocalStack snapshot test_sfn_api_express.snapshot.json, an
// Express execution's ARN: "Resource type not valid in this context:
// express"; the other types are taken to answer alike). An ARN of the
// right type that is malformed (a qualifier too many) keeps the second
// form with the whole ARN: no recording shows that case.
func invalidArn(arn string, kinds ...string) error {
	if !strings.HasPrefix(arn, "arn:") {
		return errorf(CodeInvalidArn, "Invalid Arn: 'Invalid ARN prefix: %s'", arn)
	}
	if kind, _, ok := parseARN(arn); ok && !slices.Contains(kinds, kind) {
		return errorf(CodeInvalidArn, "Invalid Arn: 'Resource type not valid in this context: %s'", kind)
	}
	return errorf(CodeInvalidArn, "Invalid Arn: 'Resource type not valid in this context: %s'", arn)
}

func checkMachineARN(arn string) error {
	kind, rest, ok := parseARN(arn)
	if !ok || kind != "stateMachine" || strings.Contains(rest, ":") {
		return invalidArn(arn, "stateMachine")
	}
	return nil
}

// checkExecutionARN refuses an Express execution's ARN too: no operation
// on one execution takes it.
func checkExecutionARN(arn string) error {
	kind, rest, ok := parseARN(arn)
	if !ok || kind != "execution" || strings.Count(rest, ":") != 1 {
		return invalidArn(arn, "execution")
	}
	return nil
}
