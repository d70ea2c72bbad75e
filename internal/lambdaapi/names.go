// Package lambdaapi is Lambda as `veredicto serve` offers and reaches it.
//
// Handler serves the Lambda Invoke API (POST
// /2015-03-31/functions/{name}/invocations, as `aws lambda invoke
// --endpoint-url` and the SDK's lambda client call it, like `sam local
// start-lambda`) for the project's functions, on the same address and
// with the same signed keys as the Step Functions API.
//
// Remote calls the functions that are not the project's on another
// endpoint (serve --lambda-endpoint: `sam local start-lambda`'s, for
// example), and Resolver decides, for the local engine, how a Task that no
// registered handler serves is served: a project function named by its
// ARN, a function on that endpoint, or an error saying what to give.
package lambdaapi

import (
	"regexp"
	"strings"
)

// Function names a Lambda function as Invoke and a Task take it: a name
// ("my-function"), a name with a qualifier ("my-function:v1"), a partial
// ARN ("123456789012:function:my-function") or a full one
// ("arn:aws:lambda:us-west-2:123456789012:function:my-function").
type Function struct {
	Name      string
	Qualifier string // "" when none is given
	// Region and Account are the ARN's ("" when not given).
	Region, Account string
}

// ARN is the function's full ARN, with region and account filled in from
// the defaults when the name did not give them.
func (f Function) ARN(region, account string) string {
	if f.Region != "" {
		region = f.Region
	}
	if f.Account != "" {
		account = f.Account
	}
	arn := "arn:aws:lambda:" + region + ":" + account + ":function:" + f.Name
	if f.Qualifier != "" {
		arn += ":" + f.Qualifier
	}
	return arn
}

// The forms of FunctionName Lambda's API model accepts.
var (
	functionName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	qualifier    = regexp.MustCompile(`^(\$LATEST|[a-zA-Z0-9_-]{1,128})$`)
	fullARN      = regexp.MustCompile(`^arn:aws[a-zA-Z-]*:lambda:([a-z]{2}(?:-gov)?-[a-z]+-\d{1}|local):(\d{12}):function:(.+)$`)
	partialARN   = regexp.MustCompile(`^(\d{12}):function:(.+)$`)
)

// ParseFunction reads a function name in any of Function's forms.
func ParseFunction(s string) (Function, bool) {
	var f Function
	rest := s
	if m := fullARN.FindStringSubmatch(s); m != nil {
		f.Region, f.Account, rest = m[1], m[2], m[3]
	} else if m := partialARN.FindStringSubmatch(s); m != nil {
		f.Account, rest = m[1], m[2]
	}
	name, q, hasQ := strings.Cut(rest, ":")
	if !functionName.MatchString(name) || (hasQ && !qualifier.MatchString(q)) {
		return Function{}, false
	}
	f.Name, f.Qualifier = name, q
	return f, true
}

// IsFunctionARN reports whether a Task resource is a Lambda function's
// ARN (a Task may name its function directly, instead of through
// arn:aws:states:::lambda:invoke).
func IsFunctionARN(resource string) bool {
	return fullARN.MatchString(resource)
}
