package control

import (
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

func checkMachineARN(arn string) error {
	kind, rest, ok := parseARN(arn)
	if !ok || kind != "stateMachine" || strings.Contains(rest, ":") {
		return errorf(CodeInvalidArn, "Invalid Arn: 'Resource type not valid in this context: %s'", arn)
	}
	return nil
}

func checkExecutionARN(arn string) error {
	kind, rest, ok := parseARN(arn)
	if ok && kind == "express" {
		// an Express execution's: no operation on one execution takes it
		return errorf(CodeInvalidArn, "Invalid Arn: 'Resource type not valid in this context: express'")
	}
	if !ok || kind != "execution" || strings.Count(rest, ":") != 1 {
		return errorf(CodeInvalidArn, "Invalid Arn: 'Resource type not valid in this context: %s'", arn)
	}
	return nil
}
