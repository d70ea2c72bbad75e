package sfnapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/veredicto/veredicto/internal/control"
)

// Logs writes the history events of executions whose state machine logs
// (control.Config.ExecutionLog), as Step Functions sends them to CloudWatch
// Logs: one JSON object a line ({"id", "type", "details",
// "previous_event_id", "event_timestamp", "execution_arn",
// "redrive_count"}, every value but details a string), details holding
// input and output only with includeExecutionData, and only the events the
// level keeps: ALL every one, ERROR the failures, FATAL the execution's
// own failure, abort or timeout.
//
// Each tenant's executions of a machine log to <dir>/<tenant>/<machine>.log.
// A file is bounded: once a line would take it past its limit it is
// renamed <machine>.log.1 (replacing the one before) and a new one starts,
// so a machine's logs take at most twice the limit. Writes are not synced:
// logs are best effort, as CloudWatch Logs' delivery is.
type Logs struct {
	dir string
	max int64
	log *slog.Logger

	mu sync.Mutex // one write at a time
}

// DefaultLogBytes is the limit of a log file when none is given.
const DefaultLogBytes = 16 << 20

// NewLogs writes logs under dir, each file at most maxBytes (0:
// DefaultLogBytes).
func NewLogs(dir string, maxBytes int64, logger *slog.Logger) *Logs {
	if maxBytes <= 0 {
		maxBytes = DefaultLogBytes
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Logs{dir: dir, max: maxBytes, log: logger}
}

// LogPath is the file tenant's executions of machine log to under dir.
func LogPath(dir, tenant, machine string) string {
	return filepath.Join(dir, segment(tenant), segment(machine)+".log")
}

// segment is name as one path segment: itself when it is plain, else a
// hash of it, so that no tenant or machine name reaches outside dir.
func segment(name string) string {
	plain := name != "" && !strings.HasPrefix(name, ".") && strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == ""
	if plain {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return "x-" + hex.EncodeToString(sum[:8])
}

// Log levels' events: ERROR keeps these, FATAL the execution's.
var (
	errorEvents = map[string]bool{"ActivityFailed": true, "ActivityScheduleFailed": true, "ActivityTimedOut": true, "ExecutionAborted": true, "ExecutionFailed": true, "ExecutionTimedOut": true, "FailStateEntered": true,
		"LambdaFunctionFailed": true, "LambdaFunctionScheduleFailed": true, "LambdaFunctionStartFailed": true, "LambdaFunctionTimedOut": true,
		"MapStateAborted": true, "MapStateFailed": true, "MapIterationAborted": true, "MapIterationFailed": true, "MapRunAborted": true,
		"MapRunFailed": true, "ParallelStateAborted": true, "ParallelStateFailed": true, "TaskFailed": true, "TaskStartFailed": true,
		"TaskStateAborted": true, "TaskSubmitFailed": true, "TaskTimedOut": true, "WaitStateAborted": true}
	fatalEvents = map[string]bool{"ExecutionAborted": true, "ExecutionFailed": true, "ExecutionTimedOut": true}
)

func logged(level, typ string) bool {
	switch level {
	case control.LogAll:
		return true
	case control.LogError:
		return errorEvents[typ]
	case control.LogFatal:
		return fatalEvents[typ]
	}
	return false
}

// logLine is one line of a log, its fields in CloudWatch's order.
type logLine struct {
	ID           string         `json:"id"`
	Type         string         `json:"type"`
	Details      map[string]any `json:"details"`
	PreviousID   string         `json:"previous_event_id"`
	Timestamp    string         `json:"event_timestamp"`
	ExecutionARN string         `json:"execution_arn"`
	RedriveCount string         `json:"redrive_count"`
}

// Write logs ev if its level keeps it. A write that fails is reported in
// the server's log; the execution goes on.
func (l *Logs) Write(ev control.LogEvent) {
	rendered := historyEvent(ev.Event, ev.Logging.IncludeExecutionData, ev.RoleARN)
	typ, _ := rendered["type"].(string)
	if !logged(ev.Logging.Level, typ) {
		return
	}
	details := map[string]any{}
	for k, v := range rendered {
		if d, ok := v.(map[string]any); ok && strings.HasSuffix(k, "EventDetails") {
			details = d
		}
	}
	b, err := json.Marshal(logLine{ID: strconv.Itoa(ev.Event.ID), Type: typ, Details: details, PreviousID: strconv.Itoa(ev.Event.PreviousID),
		Timestamp: strconv.FormatInt(ev.Event.Timestamp.UnixMilli(), 10), ExecutionARN: ev.ExecutionARN, RedriveCount: strconv.Itoa(ev.RedriveCount)})
	if err == nil {
		err = l.append(LogPath(l.dir, ev.Tenant, ev.StateMachineName), append(b, '\n'))
	}
	if err != nil {
		l.log.Warn("an execution's log line could not be written", "execution", ev.ExecutionARN, "event", typ, "error", err)
	}
}

// append adds line to the file at path, first rotating it if the line
// would take it past the limit.
func (l *Logs) append(path string, line []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if info, err := os.Stat(path); err == nil && info.Size() > 0 && info.Size()+int64(len(line)) > l.max {
		if err := os.Rename(path, path+".1"); err != nil {
			return fmt.Errorf("rotate %s: %w", path, err)
		}
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return fmt.Errorf("append to %s: %w", path, err)
	}
	return f.Close()
}
