// Package dynalite starts dynalite, a DynamoDB implementation in Node.js,
// on 127.0.0.1 for the tests of the packages with DynamoDB adapters: one
// process per test binary, started on first use and stopped by Stop from
// TestMain. Without dynalite in node_modules (npm ci) a test is skipped,
// or fails when CI is set, so CI never skips it silently.
package dynalite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/veredicto/veredicto/internal/poll"
)

var peer struct {
	once     sync.Once
	endpoint string
	missing  string
	err      error
	cmd      *exec.Cmd
	exited   chan struct{}
}

// Client returns a client for the binary's dynalite, starting it first.
func Client(tb testing.TB) *dynamodb.Client {
	tb.Helper()
	ac := Config(tb)
	return dynamodb.New(dynamodb.Options{Region: ac.Region, Credentials: ac.Credentials, BaseEndpoint: ac.BaseEndpoint})
}

// Config returns an AWS configuration whose DynamoDB is the binary's
// dynalite, starting it first: for the Lambdas' own client
// (internal/awsclient/dynamodb).
func Config(tb testing.TB) aws.Config {
	tb.Helper()
	peer.once.Do(start)
	if peer.missing != "" {
		if os.Getenv("CI") != "" {
			tb.Fatal(peer.missing)
		}
		tb.Skip(peer.missing)
	}
	if peer.err != nil {
		tb.Fatalf("start dynalite: %v", peer.err)
	}
	return aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""), BaseEndpoint: aws.String(peer.endpoint)}
}

// Stop ends the binary's dynalite, if one was started. Call it from TestMain.
func Stop() {
	if peer.cmd == nil {
		return
	}
	_ = peer.cmd.Process.Kill()
	<-peer.exited
}

func start() {
	root, err := moduleRoot()
	if err != nil {
		peer.err = err
		return
	}
	node := filepath.Join(root, "node_modules", ".bin", "node")
	pkg := filepath.Join(root, "node_modules", "dynalite")
	if _, err := os.Stat(node); err != nil {
		peer.missing = "node 22 is not installed in node_modules: run `npm ci` in " + root
		return
	}
	cli, err := binScript(pkg)
	if err != nil {
		peer.missing = fmt.Sprintf("dynalite is not installed in node_modules (%v): run `npm ci` in %s", err, root)
		return
	}
	for range 3 { // the probed port can be taken before dynalite binds it
		if peer.err = launch(node, cli); peer.err == nil {
			return
		}
	}
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod above the test's directory")
		}
		dir = up
	}
}

// binScript is the dynalite entry named by "bin" in its package.json.
func binScript(pkg string) (string, error) {
	b, err := os.ReadFile(filepath.Join(pkg, "package.json"))
	if err != nil {
		return "", err
	}
	var meta struct {
		Bin json.RawMessage `json:"bin"`
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return "", err
	}
	var one string
	if json.Unmarshal(meta.Bin, &one) == nil && one != "" {
		return filepath.Join(pkg, one), nil
	}
	var named map[string]string
	if json.Unmarshal(meta.Bin, &named) == nil && named["dynalite"] != "" {
		return filepath.Join(pkg, named["dynalite"]), nil
	}
	return "", fmt.Errorf("no bin in %s/package.json", pkg)
}

func launch(node, cli string) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	var out bytes.Buffer
	cmd := exec.Command(node, cli, "--host", "127.0.0.1", "--port", port,
		"--createTableMs", "0", "--deleteTableMs", "0", "--updateTableMs", "0")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("run %s: %w", node, err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	addr := net.JoinHostPort("127.0.0.1", port)
	var gone, listening bool
	poll.Within(10*time.Second, func() bool {
		select {
		case <-exited:
			gone = true
			return true
		default:
		}
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			listening = true
		}
		return listening
	})
	switch {
	case gone:
		return fmt.Errorf("dynalite exited before listening on %s: %v\n%s", addr, waitErr, out.String())
	case !listening:
		_ = cmd.Process.Kill()
		<-exited
		return fmt.Errorf("dynalite did not listen on %s within 10s\n%s", addr, out.String())
	}
	peer.cmd, peer.exited, peer.endpoint = cmd, exited, "http://"+addr
	return nil
}

// CreateTable creates a table from schema and waits until it is active.
func CreateTable(tb testing.TB, client *dynamodb.Client, schema *dynamodb.CreateTableInput) {
	tb.Helper()
	ctx := tb.Context()
	if _, err := client.CreateTable(ctx, schema); err != nil {
		tb.Fatalf("create table %s: %v", aws.ToString(schema.TableName), err)
	}
	// The table lives as long as the test: a test run again in the same
	// process (-count) creates it anew, empty.
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: schema.TableName}); err != nil {
			tb.Logf("delete table %s: %v", aws.ToString(schema.TableName), err)
		}
	})
	w := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) { o.MinDelay = 10 * time.Millisecond })
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: schema.TableName}, 10*time.Second); err != nil {
		tb.Fatalf("table %s not active: %v", aws.ToString(schema.TableName), err)
	}
}
