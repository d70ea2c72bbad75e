package control

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/quarantine"
)

// On-disk layout under the manager's folder:
//
//	statemachines/<name>.json                 a created state machine (atomic rename)
//	journal/<seq>.wal                         the write-ahead log of every write below
//	                                          to executions/ and mapruns/ (journal.go)
//	executions/<machine>/<name>/meta.json     an execution's metadata (rewritten in place);
//	                                          a damaged one is moved to DATA/quarantine/sfn
//	                                          and replaced by one naming the damage
//	executions/<machine>/<name>/history.jsonl its history, one line per record, appended
//	activities/<name>.json                    an activity (atomic rename)
//	attributes/<kind>/<name>.json             a state machine's or an activity's tags and
//	                                          configuration (atomic rename)
//	mapruns/<id>/maprun.json                  a map run (rewritten in place; mapruns.go)
//	mapruns/<id>/executions/<name>/…          its children, laid out as executions
//
// The files under executions/ and mapruns/ are written through the
// journal: durable there (one fdatasync for a batch of writes) before
// they are written, without a sync of their own, and acknowledged; Open
// writes them again from the journal after a crash. The others are
// written by atomic rename, fsynced.
//
// A history line is one of: a persisted event (with its id and the id of
// the event before it), a task token the execution handed out, a
// SendTaskSuccess/SendTaskFailure accepted for a token, or where the
// execution parked (park.go: what the next Open indexes it from). A line
// cut short by a crash is dropped (and cut off) when the history is read
// back.

// line is one record of history.jsonl.
type line struct {
	Event *asl.Event `json:"event,omitempty"`
	Prev  int        `json:"prev,omitempty"`
	// Worker, beside an ActivityStarted event, names the worker that
	// took the activity task.
	Worker   string      `json:"worker,omitempty"`
	Token    *tokenLine  `json:"token,omitempty"`
	Resolved *resolution `json:"resolved,omitempty"`
	Parked   *parkLine   `json:"parked,omitempty"`
}

// tokenLine records a task token handed to a .waitForTaskToken attempt.
type tokenLine struct {
	Token string `json:"token"`
	Scope string `json:"scope,omitempty"`
	State string `json:"state"`
}

// resolution is a SendTaskSuccess / SendTaskFailure accepted for a token.
type resolution struct {
	Token  string          `json:"token"`
	Output json.RawMessage `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
	Cause  string          `json:"cause,omitempty"`
	Failed bool            `json:"failed,omitempty"`
}

// execMeta is meta.json. A damaged execution's (Damage set, Status
// StatusDamaged) holds what could be recovered of it; it keeps the name
// reserved.
type execMeta struct {
	ARN             string          `json:"executionArn"`
	StateMachineARN string          `json:"stateMachineArn"`
	Name            string          `json:"name"`
	Tenant          string          `json:"tenant"`
	Status          string          `json:"status"`
	Definition      string          `json:"definition"`
	Input           json.RawMessage `json:"input"`
	Output          json.RawMessage `json:"output,omitempty"`
	Error           string          `json:"error,omitempty"`
	Cause           string          `json:"cause,omitempty"`
	Start           time.Time       `json:"startDate"`
	Stop            time.Time       `json:"stopDate,omitzero"`
	Damage          *damage         `json:"damage,omitempty"`
	// Later fields, absent from older records.
	VersionARN   string        `json:"stateMachineVersionArn,omitempty"`
	AliasARN     string        `json:"stateMachineAliasArn,omitempty"`
	RedriveCount int           `json:"redriveCount,omitempty"`
	RedriveDate  time.Time     `json:"redriveDate,omitzero"`
	Redrives     []redriveCall `json:"redrives,omitempty"` // the latest clientTokens (redrive.go)
	TestCase     string        `json:"mockTestCase,omitempty"`
	// MapRunARN and MapRunIndex place a map run's child (mapruns.go).
	MapRunARN   string `json:"mapRunArn,omitempty"`
	MapRunIndex int    `json:"mapRunIndex,omitempty"`
}

// damage is why an execution's metadata could not be read.
type damage struct {
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
	// Quarantined is where the damaged meta.json is now ("" when there was
	// none to move, or it could not be moved).
	Quarantined string `json:"quarantined,omitempty"`
}

// disk is a seam for tests that make the disk fail (Config.disk):
// refuse, when set, fails the journaling of a history line l, or of a
// metadata file (l nil), at path, as a full disk would.
type disk struct {
	refuse func(path string, l *line) error
}

// put journals v, JSON, as the new content of path (a meta.json, a
// maprun.json) and waits until it is durable and written.
func (m *Manager) put(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	r := &record{kind: kindReplace, path: path, data: b}
	if m.disk.refuse != nil {
		r.refused = m.disk.refuse(path, nil)
	}
	return m.journal.write(r)
}

// machineMeta is statemachines/<name>.json.
type machineMeta struct {
	ARN        string    `json:"stateMachineArn"`
	Name       string    `json:"name"`
	Definition string    `json:"definition"`
	RoleARN    string    `json:"roleArn"`
	Type       string    `json:"type"`
	Created    time.Time `json:"creationDate"`
	// RevisionID changes with every update that changes the machine
	// ("" until the first); LastVersion is the number of the last version
	// published (see versions.go).
	RevisionID  string `json:"revisionId,omitempty"`
	LastVersion int    `json:"lastVersion,omitempty"`
	// Logging is the machine's loggingConfiguration (nil: OFF).
	Logging *LoggingConfiguration `json:"loggingConfiguration,omitempty"`
}

// writeAtomic writes v as JSON to path through a synced temporary file
// renamed into place, then syncs the folder, so a reader (or a restart)
// sees the old file or the new one, never half of either.
func writeAtomic(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	return nil
}

// decodeError is a file whose bytes do not decode: damaged, not worth a
// retry.
type decodeError struct {
	path, reason string
}

func (e *decodeError) Error() string { return "decode " + e.path + ": " + e.reason }

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return &decodeError{path: path, reason: quarantine.Reason(err)}
	}
	return nil
}

// maxLineBytes bounds one history record: an event carries at most a
// 256 KiB payload, JSON-escaped.
const maxLineBytes = 4 * asl.MaxPayloadBytes

// readLines calls fn with every complete record of a history file, in order.
// A trailing record cut short by a crash is cut off the file when repair is
// set, so later appends start on a clean line. A record that does not
// decode ends the history there too: with repair, what follows it (whole
// records a restart cannot trust after a hole) is cut off after its bytes
// are kept in the quarantine; if the quarantine cannot take them, nothing
// is cut and the error says so.
func readLines(path string, repair *quarantine.Box, fn func(line) error) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64*1024)
	var good int64
	for {
		b, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// a long record: gather it whole, within the bound
			buf := append([]byte(nil), b...)
			for errors.Is(err, bufio.ErrBufferFull) && len(buf) <= maxLineBytes {
				b, err = r.ReadSlice('\n')
				buf = append(buf, b...)
			}
			b = buf
		}
		if err == io.EOF {
			if len(bytes.TrimSpace(b)) > 0 && repair != nil {
				return truncate(path, good)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		var l line
		if jerr := json.Unmarshal(b, &l); jerr != nil {
			if repair == nil {
				return &decodeError{path: path, reason: fmt.Sprintf("the record at byte %d: %s", good, quarantine.Reason(jerr))}
			}
			return cutDamage(repair, path, good, quarantine.Reason(jerr))
		}
		good += int64(len(b))
		if err := fn(l); err != nil {
			return err
		}
	}
}

// cutDamage keeps what follows byte good of a history file, from a record
// that does not decode, in the quarantine, then cuts it off.
func cutDamage(box *quarantine.Box, path string, good int64, reason string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	rest, err := io.ReadAll(io.NewSectionReader(f, good, 1<<62))
	f.Close()
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	why := fmt.Sprintf("the history record at byte %d does not decode (%s); it and the %d bytes after it were cut off", good, reason, len(rest))
	if _, err := box.Keep(path, rest, why); err != nil {
		return err
	}
	return truncate(path, good)
}

func truncate(path string, size int64) error {
	if err := os.Truncate(path, size); err != nil {
		return fmt.Errorf("cut the unfinished record off %s: %w", path, err)
	}
	return nil
}
