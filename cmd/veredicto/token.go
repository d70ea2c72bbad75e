package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/auth"
)

const tokenUsage = `Usage: veredicto token --tenant T [--data DIR] [--ttl D] [--sub NAME] [--audience A]

Prints a JWT that "veredicto serve --data DIR" accepts: HS256, signed with
the key kept in DIR/auth/hs256.key (created, mode 0600, on first use), with
the claims sub, custom:tenant, iss "veredicto-local", aud (the server's
--audience, default "veredicto"), iat and exp (at most 24 hours, the
longest the server accepts by default). Send it as "Authorization: Bearer
<token>". Every decision taken with it records its sub.

Flags:
`

type tokenConfig struct {
	tenant   string
	data     string
	ttl      time.Duration
	sub      string
	audience string
}

func (m *Main) runToken(_ context.Context, args []string) int {
	var cfg tokenConfig
	fs := subcommandFlags("token", tokenUsage, m.Stderr)
	fs.StringVar(&cfg.tenant, "tenant", "", "tenant the token speaks for (required)")
	fs.StringVar(&cfg.data, "data", app.DefaultDataDir, "data folder of the server")
	fs.DurationVar(&cfg.ttl, "ttl", app.MaxLocalTokenTTL, "how long the token is valid (at most the server's --max-token-ttl)")
	fs.StringVar(&cfg.audience, "audience", app.LocalAudience, "aud claim: the server's --audience")
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
	case !veredicto.ValidID(cfg.tenant):
		fmt.Fprintf(m.Stderr, "veredicto token: --tenant is required: %s\n", veredicto.IDRule)
		return exitUsage
	case cfg.ttl <= 0 || cfg.ttl > 366*24*time.Hour:
		fmt.Fprintln(m.Stderr, "veredicto token: --ttl must be positive and at most a year (the server refuses tokens over its --max-token-ttl, 24h by default)")
		return exitUsage
	case cfg.audience == "":
		fmt.Fprintln(m.Stderr, "veredicto token: --audience must not be empty")
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
	tok, err := auth.SignHS256(key, auth.Claims{Subject: cfg.sub, Tenant: cfg.tenant, Issuer: app.LocalIssuer,
		Audience: []string{cfg.audience}, IssuedAt: now, ExpiresAt: now.Add(cfg.ttl)}, auth.DefaultTenantClaim)
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
