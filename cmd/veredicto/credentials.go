package main

import (
	"context"
	"flag"
	"fmt"
	"slices"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/auth"
)

const credentialsUsage = `Usage: veredicto credentials (--tenant T | --operator) [--name NAME] [--data DIR]

Prints the access key of NAME (default: your OS user) for the Step
Functions API of "veredicto serve --data DIR", as shell exports:

  eval "$(veredicto credentials --tenant acme --data DIR)"
  aws stepfunctions --endpoint-url http://127.0.0.1:8080 list-executions --state-machine-arn …

The key is created on first use and kept under DIR/auth/credentials.json
(mode 0600); asking again prints the same key. A tenant's key starts
executions (they belong to its tenant) and sees and acts on that tenant's
executions only; an operator's key manages state machines and sees every
tenant. The name is the principal every decision taken with the key
records. AWS_DISABLE_HOST_PREFIX_INJECTION keeps the AWS CLI's test-state
and start-sync-execution on the server's own address.

Flags:
`

// servicePrincipals are the names of the server's own keys, which this
// command never issues to a person.
var servicePrincipals = []string{app.PrincipalQueue, app.PrincipalAPI, app.PrincipalConfirmations, app.PrincipalChat, app.PrincipalLambda}

func (m *Main) runCredentials(_ context.Context, args []string) int {
	var spec auth.KeySpec
	var data, region string
	fs := subcommandFlags("credentials", credentialsUsage, m.Stderr)
	fs.StringVar(&spec.Tenant, "tenant", "", "the tenant the key acts for")
	fs.BoolVar(&spec.Operator, "operator", false, "an operator key: manages state machines, sees every tenant")
	fs.StringVar(&spec.Name, "name", "", "who the key is for (default: local:$USER)")
	fs.StringVar(&data, "data", app.DefaultDataDir, "data folder of the server")
	fs.StringVar(&region, "region", app.DefaultRegion, "the server's --region")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		return exitUsage
	}
	switch {
	case len(pos) > 0:
		fmt.Fprintf(m.Stderr, "veredicto credentials: unexpected argument %q\n", pos[0])
		return exitUsage
	case spec.Operator == (spec.Tenant != ""):
		fmt.Fprintln(m.Stderr, "veredicto credentials: give either --tenant T or --operator")
		return exitUsage
	case spec.Tenant != "" && !veredicto.ValidID(spec.Tenant):
		fmt.Fprintf(m.Stderr, "veredicto credentials: --tenant must be a tenant id: %s\n", veredicto.IDRule)
		return exitUsage
	case slices.Contains(servicePrincipals, spec.Name):
		fmt.Fprintf(m.Stderr, "veredicto credentials: %s is the name of one of the server's own services; choose another --name\n", spec.Name)
		return exitUsage
	}
	if spec.Name == "" {
		spec.Name = "local:" + localUser()
	}
	k, err := auth.OpenKeys(data).Ensure(spec)
	if err != nil {
		fmt.Fprintf(m.Stderr, "veredicto credentials: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(m.Stdout, "export AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=%s AWS_DEFAULT_REGION=%s AWS_DISABLE_HOST_PREFIX_INJECTION=true\n",
		k.AccessKeyID, k.SecretAccessKey, region)
	return exitOK
}
