package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/veredicto/veredicto/internal/auth"
)

const tokenUsage = `Usage: veredicto token --tenant T [--data DIR] [--ttl D] [--sub NAME]

Prints a JWT that "veredicto serve --data DIR" accepts: HS256, signed with
the key kept in DIR/auth/hs256.key (created, mode 0600, on first use), with
the claims sub, custom:tenant, iss "veredicto-local", iat and exp. Send it
as "Authorization: Bearer <token>".

Flags:
`

// LocalIssuer is the iss claim of local tokens.
const LocalIssuer = "veredicto-local"

var tenantPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

type tokenConfig struct {
	tenant string
	data   string
	ttl    time.Duration
	sub    string
}

func (m *Main) runToken(_ context.Context, args []string) int {
	var cfg tokenConfig
	fs := subcommandFlags("token", tokenUsage, m.Stderr)
	fs.StringVar(&cfg.tenant, "tenant", "", "tenant the token speaks for (required)")
	fs.StringVar(&cfg.data, "data", ".veredicto-local", "data folder of the server")
	fs.DurationVar(&cfg.ttl, "ttl", 24*time.Hour, "how long the token is valid")
	fs.StringVar(&cfg.sub, "sub", "", "subject (default: local:$USER)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		return exitUsage
	}
	switch {
	case fs.NArg() != 0:
		fmt.Fprintf(m.Stderr, "veredicto token: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	case !tenantPattern.MatchString(cfg.tenant):
		fmt.Fprintln(m.Stderr, "veredicto token: --tenant is required: 1-64 letters, digits or _.-")
		return exitUsage
	case cfg.ttl <= 0 || cfg.ttl > 366*24*time.Hour:
		fmt.Fprintln(m.Stderr, "veredicto token: --ttl must be positive and at most a year")
		return exitUsage
	}
	if cfg.sub == "" {
		cfg.sub = "local:" + localUser()
	}
	key, err := auth.LoadOrCreateKey(cfg.data)
	if err != nil {
		fmt.Fprintf(m.Stderr, "veredicto token: %v\n", err)
		return exitFailed
	}
	now := time.Now()
	tok, err := auth.SignHS256(key, auth.Claims{Subject: cfg.sub, Tenant: cfg.tenant, Issuer: LocalIssuer,
		IssuedAt: now, ExpiresAt: now.Add(cfg.ttl)}, auth.DefaultTenantClaim)
	if err != nil {
		fmt.Fprintf(m.Stderr, "veredicto token: %v\n", err)
		return exitFailed
	}
	fmt.Fprintln(m.Stdout, tok)
	return exitOK
}

func localUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "cli"
}
