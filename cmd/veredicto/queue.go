package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/app"
	"github.com/veredicto/veredicto/internal/queue"
)

const queueUsage = `Usage:
  veredicto queue send KEY [--data DIR]
      Queue the S3 notification of an uploaded READY marker (KEY is
      searches/<tenant>/<search_id>/READY; any other key is refused at once,
      exit 2, since no consumer could do anything with it), as the inputs bucket does on AWS,
      with the marker's own upload time: a search runs again only for a READY
      written after its latest run started.
      "veredicto serve" also queues every READY marker written under
      DIR/inputs by itself, within a second.
  veredicto queue dlq list [--data DIR] [--json]
      List the dead-letter queue, each message with its receive count and
      the last error that kept it from being processed: messages received 5
      times without being processed (a body that is not a notification, a
      key outside the layout, a dependency that kept failing, documents
      still missing), and files of the queue's folder that were no message
      it could read (damaged or foreign: their bytes are under
      DIR/quarantine). --json prints one JSON array ([] when empty).
  veredicto queue dlq redrive [ID…] [--data DIR]
      Move dead letters (all, or the ids given) back to the queue, their
      receive count reset; "veredicto serve" processes them again. Dead
      letters of damaged files have nothing to redrive and stay.

The queue lives under DIR/queue/inputs and survives restarts; these
commands work whether or not "veredicto serve" is running on DIR.

Flags:
`

func (m *Main) runQueue(ctx context.Context, args []string) int {
	fs := subcommandFlags("queue", queueUsage, m.Stderr)
	data := fs.String("data", app.DefaultDataDir, "folder of the local stand-ins (as for serve)")
	asJSON := fs.Bool("json", false, "dlq list: print one JSON array")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		return exitUsage
	}
	usage := func(msg string) int {
		fmt.Fprintf(m.Stderr, "veredicto queue: %s\n\n", msg)
		fs.Usage()
		return exitUsage
	}
	if len(pos) == 0 {
		return usage("missing subcommand")
	}
	q, err := app.OpenInputs(*data, queue.Config{}, nil)
	if err != nil {
		fmt.Fprintf(m.Stderr, "veredicto queue: %v\n", err)
		return exitFailed
	}
	switch {
	case pos[0] == "send" && len(pos) == 2:
		key := strings.TrimPrefix(pos[1], "/")
		if err := readyKey(key); err != nil {
			fmt.Fprintf(m.Stderr, "veredicto queue send: %v\n", err)
			return exitUsage
		}
		// S3 notifies the time the object was written: an existing marker
		// keeps its own, so re-sending it never passes for a new upload.
		size, at := int64(0), time.Now()
		inputs, _, _ := app.LocalLayout(*data)
		if filepath.IsLocal(filepath.FromSlash(key)) {
			if fi, err := os.Stat(filepath.Join(inputs, filepath.FromSlash(key))); err == nil && fi.Mode().IsRegular() {
				size, at = fi.Size(), queue.UploadTime(fi)
			}
		}
		body, err := queue.S3Notification(app.LocalInputsBucket, key, size, at)
		if err == nil {
			var id string
			if id, err = q.Send(ctx, body); err == nil {
				fmt.Fprintln(m.Stdout, id)
				return exitOK
			}
		}
		fmt.Fprintf(m.Stderr, "veredicto queue send: %v\n", err)
		return exitFailed
	case pos[0] == "dlq" && len(pos) == 2 && pos[1] == "list":
		dead, err := q.Dead(ctx, 0)
		if err != nil {
			fmt.Fprintf(m.Stderr, "veredicto queue dlq list: %v\n", err)
			return exitFailed
		}
		if *asJSON {
			if dead == nil {
				dead = []queue.Message{} // a JSON array, [] when empty
			}
			enc := json.NewEncoder(m.Stdout)
			enc.SetIndent("", "  ")
			enc.Encode(dead)
			return exitOK
		}
		for i, d := range dead {
			if i > 0 {
				fmt.Fprintln(m.Stdout)
			}
			fmt.Fprintf(m.Stdout, "%s  received %d time(s), sent %s, dead since %s\n", d.ID, d.ReceiveCount, d.SentAt.Format(time.RFC3339), d.DeadAt.Format(time.RFC3339))
			if d.Damage != nil {
				fmt.Fprintf(m.Stdout, "  damaged file %s: %s (moved to quarantine; not redriven)\n", d.Damage.File, d.Damage.Reason)
				continue
			}
			fmt.Fprintf(m.Stdout, "  message:    %s\n", summarize(d.Body))
			why := d.LastError
			if why == "" {
				why = "not recorded (dead before the queue kept reasons)"
			}
			fmt.Fprintf(m.Stdout, "  last error: %s\n", why)
		}
		fmt.Fprintf(m.Stderr, "%d dead letter(s)\n", len(dead))
		return exitOK
	case pos[0] == "dlq" && len(pos) >= 2 && pos[1] == "redrive":
		n, err := q.Redrive(ctx, pos[2:]...)
		fmt.Fprintf(m.Stderr, "%d message(s) moved back to the queue\n", n)
		if err != nil {
			fmt.Fprintf(m.Stderr, "veredicto queue dlq redrive: %v\n", err)
			return exitFailed
		}
		return exitOK
	}
	return usage(fmt.Sprintf("unknown subcommand %q", strings.Join(pos, " ")))
}

// readyKey checks a key is a READY marker of the layout the inputs queue
// consumes: searches/<tenant>/<search_id>/READY.
func readyKey(key string) error {
	parts := strings.Split(key, "/")
	if len(parts) != 4 || parts[0] != "searches" || parts[3] != "READY" || !veredicto.ValidID(parts[1]) || !veredicto.ValidID(parts[2]) {
		return fmt.Errorf("%q is not a READY marker: the key must be searches/<tenant>/<search_id>/READY (tenant and search id: %s); nothing was queued", key, veredicto.IDRule)
	}
	return nil
}

// summarize shows what a dead letter is about in one short line: the keys
// of an S3 notification (never document text: bodies are notifications),
// else the body's start.
func summarize(body string) string {
	var n struct {
		Records []struct {
			S3 struct {
				Object struct {
					Key string `json:"key"`
				} `json:"object"`
			} `json:"s3"`
		} `json:"Records"`
	}
	if json.Unmarshal([]byte(body), &n) == nil && len(n.Records) > 0 {
		keys := make([]string, 0, len(n.Records))
		for _, r := range n.Records {
			keys = append(keys, r.S3.Object.Key)
		}
		return strings.Join(keys, " ")
	}
	const max = 60
	if len(body) > max {
		body = body[:max] + "…"
	}
	return strings.ReplaceAll(body, "\n", " ")
}
