package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/blob/file"
)

// MaxWatchedMarkers bounds the READY markers one scan considers.
const MaxWatchedMarkers = 10_000

// Watcher plays the inputs bucket's notification locally: it scans the
// local inputs bucket (a folder) for searches/<tenant>/<id>/READY markers
// and sends the queue an S3 notification for each marker that is new or
// was written again since the last scan. What it notified is kept under
// the queue's directory (notified.json), so a restart does not notify the
// same upload again; a crash between the send and that record notifies it
// twice, which the deterministic execution name absorbs.
//
// A marker is looked at through the inputs bucket's own opener
// (file.Dir.Stat): a READY that is a symbolic link, a special file or a
// folder, or that sits in a linked folder, is never notified; it is logged
// once by name (again if what is wrong with it changes).
type Watcher struct {
	Inputs string // the local inputs bucket's folder
	Bucket string // the bucket name put in notifications
	Queue  *Dir
	Logger *slog.Logger

	mu     sync.Mutex
	warned map[string]string // marker key → the refusal last logged
}

func (w *Watcher) statePath() string { return filepath.Join(w.Queue.root, "notified.json") }

func (w *Watcher) logger() *slog.Logger {
	if w.Logger != nil {
		return w.Logger
	}
	return slog.Default()
}

// UploadTime is when a local file was uploaded, as S3's eventTime says of
// an object: the later of its modification time and its inode's change
// time, so a marker copied in with an old modification time (cp -p, tar,
// rsync -a) still counts from when it arrived.
func UploadTime(fi os.FileInfo) time.Time {
	if c := changeTime(fi); c.After(fi.ModTime()) {
		return c
	}
	return fi.ModTime()
}

// Scan sends one notification per new or rewritten READY marker and
// returns how many it sent.
func (w *Watcher) Scan(ctx context.Context) (int, error) {
	seen := map[string]string{}
	b, err := os.ReadFile(w.statePath())
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return 0, fmt.Errorf("read %s: %w", w.statePath(), err)
	default:
		if err := json.Unmarshal(b, &seen); err != nil {
			return 0, fmt.Errorf("read %s: %w", w.statePath(), err)
		}
	}
	paths, err := filepath.Glob(filepath.Join(w.Inputs, "searches", "*", "*", "READY"))
	if err != nil {
		return 0, err
	}
	if len(paths) > MaxWatchedMarkers {
		w.logger().WarnContext(ctx, "too many READY markers: only the first are watched", "markers", len(paths), "limit", MaxWatchedMarkers)
		paths = paths[:MaxWatchedMarkers]
	}
	inputs := file.NewDir(w.Inputs)
	sent := 0
	var werr error
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			werr = err
			break
		}
		rel, err := filepath.Rel(w.Inputs, p)
		if err != nil {
			continue
		}
		key := filepath.ToSlash(rel)
		fi, err := inputs.Stat(ctx, key)
		if err != nil {
			w.refused(ctx, key, err)
			continue
		}
		at := UploadTime(fi)
		stamp := strconv.FormatInt(fi.ModTime().UnixNano(), 10) + "/" + strconv.FormatInt(fi.Size(), 10) + "/" + strconv.FormatInt(at.UnixNano(), 10)
		if seen[key] == stamp {
			continue
		}
		body, err := S3Notification(w.Bucket, key, fi.Size(), at)
		if err == nil {
			_, err = w.Queue.Send(ctx, body)
		}
		if err != nil {
			werr = fmt.Errorf("notify %s: %w", key, err)
			break
		}
		w.logger().InfoContext(ctx, "READY marker queued", "key", key)
		seen[key] = stamp
		sent++
	}
	if sent > 0 {
		if err := w.saveState(seen); err != nil {
			return sent, err
		}
	}
	return sent, werr
}

// refused logs, once by key and refusal, a marker that is not notified:
// a link or special file named by the opener, or one that cannot be read.
// A marker gone since the glob is no news.
func (w *Watcher) refused(ctx context.Context, key string, err error) {
	if errors.As(err, new(*veredicto.NotFoundError)) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.warned == nil {
		w.warned = map[string]string{}
	}
	if w.warned[key] == err.Error() || len(w.warned) >= MaxWatchedMarkers {
		return
	}
	w.warned[key] = err.Error()
	w.logger().WarnContext(ctx, "READY marker not notified", "key", key, "error", err.Error())
}

func (w *Watcher) saveState(seen map[string]string) error {
	b, _ := json.Marshal(seen)
	tmp := w.statePath() + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", w.statePath(), err)
	}
	if err := os.Rename(tmp, w.statePath()); err != nil {
		return fmt.Errorf("write %s: %w", w.statePath(), err)
	}
	return nil
}

// Run scans every interval until ctx is done.
func (w *Watcher) Run(ctx context.Context, interval time.Duration) {
	for ctx.Err() == nil {
		if _, err := w.Scan(ctx); err != nil && ctx.Err() == nil {
			w.logger().ErrorContext(ctx, "watch inputs", "error", err.Error())
		}
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
}
