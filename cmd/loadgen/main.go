// Command loadgen measures how many executions `veredicto serve` starts
// and completes per second through its signed Step Functions API, with
// the Go SDK's sfn client: N workers start executions of a chain of Pass
// states at a target rate (or as fast as they go) for a duration, then it
// waits for them to complete and prints starts/s, the latency of the
// starts (p50, p90, p99, max), completions/s, the server's CPU and RSS
// (--pid) and the machine's load. See internal/loadgen; `make
// bench-starts` builds serve, starts it on a fresh folder and runs this.
//
// It signs with an operator's key of the server's --data folder (created
// on first use, as "veredicto credentials --operator" does), or with the
// key in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY when those are set.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/loadgen"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

type config struct {
	endpoint, data, region string
	states                 int
	run                    loadgen.Config
}

func parse(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := config{}
	fs.StringVar(&c.endpoint, "endpoint", "http://127.0.0.1:8080", "the server's Step Functions endpoint")
	fs.StringVar(&c.data, "data", ".veredicto-local", "the server's --data folder, whose operator key signs the calls")
	fs.StringVar(&c.region, "region", "us-east-1", "the server's --region")
	fs.IntVar(&c.states, "states", 5, "Pass states in the chain each execution runs")
	fs.StringVar(&c.run.Machine, "machine", "", "the state machine's name (default LoadPass<states>)")
	fs.StringVar(&c.run.Input, "input", `{"tenant":"loadgen"}`, "every execution's input")
	fs.IntVar(&c.run.Workers, "workers", 32, "concurrent callers")
	fs.Float64Var(&c.run.Rate, "rate", 0, "starts per second to send (0: as fast as the workers go)")
	fs.DurationVar(&c.run.Duration, "duration", 10*time.Second, "how long starts are sent")
	fs.IntVar(&c.run.Count, "count", 0, "stop after this many starts (0: the duration alone)")
	fs.DurationVar(&c.run.Drain, "drain", time.Minute, "how long to wait for the started executions to complete (0: do not count completions)")
	fs.IntVar(&c.run.ServerPID, "pid", 0, "the server's process id, whose CPU and RSS are reported")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	switch {
	case c.run.Workers < 1:
		return c, fmt.Errorf("-workers must be at least 1")
	case c.states < 1:
		return c, fmt.Errorf("-states must be at least 1")
	case c.run.Rate < 0 || c.run.Count < 0 || c.run.Duration < 0 || c.run.Drain < 0:
		return c, fmt.Errorf("-rate, -count, -duration and -drain cannot be negative")
	case c.run.Duration == 0 && c.run.Count == 0:
		return c, fmt.Errorf("give -duration or -count")
	}
	if c.run.Machine == "" {
		c.run.Machine = fmt.Sprintf("LoadPass%d", c.states)
	}
	c.run.Definition = loadgen.PassChain(c.states)
	return c, nil
}

func run(ctx context.Context, args []string, stdout io.Writer, getenv func(string) string) error {
	c, err := parse(args, os.Stderr)
	if err == flag.ErrHelp {
		return nil
	}
	if err != nil {
		return err
	}
	var creds aws.CredentialsProvider
	if id, secret := getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY"); id != "" && secret != "" {
		creds = credentials.NewStaticCredentialsProvider(id, secret, getenv("AWS_SESSION_TOKEN"))
	} else {
		k, err := auth.OpenKeys(c.data).Ensure(auth.KeySpec{Name: "loadgen", Operator: true})
		if err != nil {
			return fmt.Errorf("the operator key of %s: %w", c.data, err)
		}
		creds = credentials.NewStaticCredentialsProvider(k.AccessKeyID, k.SecretAccessKey, "")
	}
	c.run.Client = loadgen.NewClient(c.endpoint, c.region, creds, c.run.Workers)
	r, err := loadgen.Run(ctx, c.run)
	if err != nil && r.Started == 0 && len(r.Refused) == 0 {
		return err
	}
	// What was measured before a failure (a drain cut short, Ctrl-C) is
	// still printed, then the failure.
	fmt.Fprintf(stdout, "%d-state Pass chain against %s\n", c.states, c.endpoint)
	r.Write(stdout)
	return err
}
