package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	fileconfirm "github.com/veredicto/veredicto/internal/confirm/file"
	fileeventlog "github.com/veredicto/veredicto/internal/eventlog/file"

	"github.com/veredicto/veredicto/internal/auth"
	"github.com/veredicto/veredicto/internal/control"
	"github.com/veredicto/veredicto/internal/doctor"
	"github.com/veredicto/veredicto/internal/quarantine"
	"github.com/veredicto/veredicto/internal/queue"
)

// ControlDir is where serve keeps its control plane (state machines and
// executions) under the data folder.
func ControlDir(data string) string { return filepath.Join(data, "sfn") }

// LogsDir is where Express executions log, as CloudWatch Logs holds them
// on AWS: <tenant>/<machine>.log (see sfnapi.Logs).
func LogsDir(data string) string { return filepath.Join(data, "logs", "states") }

// DoctorChecks are the checks "veredicto doctor --data DIR" runs, in
// order. They only read: the server may be running on the same folder.
// A new check is one more entry here.
func DoctorChecks(data string) []doctor.Check {
	return []doctor.Check{
		{Name: "data-folder", Run: func(context.Context) (string, []doctor.Finding, error) { return checkDataFolder(data) }},
		{Name: "key-permissions", Run: func(context.Context) (string, []doctor.Finding, error) { return checkKeyPermissions(data) }},
		{Name: "damaged-records", Run: func(context.Context) (string, []doctor.Finding, error) { return checkDamage(data) }},
	}
}

// accessRWX is access(2)'s R_OK|W_OK|X_OK.
const accessRWX = 0x4 | 0x2 | 0x1

func checkDataFolder(data string) (string, []doctor.Finding, error) {
	info, err := os.Stat(data)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "missing", []doctor.Finding{{What: "the data folder", Where: data,
			Why: `it does not exist: give the folder "veredicto serve --data" uses`}}, nil
	case err != nil:
		return "", nil, err
	case !info.IsDir():
		return "not a folder", []doctor.Finding{{What: "the data folder", Where: data, Why: "it is a file, not a folder"}}, nil
	}
	if err := syscall.Access(data, accessRWX); err != nil {
		return "not usable", []doctor.Finding{{What: "the data folder", Where: data,
			Why: fmt.Sprintf("this user cannot read, write and enter it (%v)", err)}}, nil
	}
	return data + " exists and this user can read and write it", nil, nil
}

// checkKeyPermissions: the signing key and the access keys are readable
// by their owner alone: files 0600 in a folder 0700.
func checkKeyPermissions(data string) (string, []doctor.Finding, error) {
	dir := filepath.Join(data, filepath.Dir(auth.KeyFile))
	info, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "no keys yet (serve creates them)", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	var problems []doctor.Finding
	if perm := info.Mode().Perm(); !info.IsDir() || perm != 0o700 {
		problems = append(problems, doctor.Finding{What: "the keys' folder", Where: dir,
			Why: fmt.Sprintf("its mode is %04o; it must be a folder with mode 0700 (chmod 700 %s)", perm, dir)})
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", problems, err
	}
	files := 0
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		files++
		if perm := fi.Mode().Perm(); perm != 0o600 {
			p := filepath.Join(dir, e.Name())
			problems = append(problems, doctor.Finding{What: "a key file", Where: p,
				Why: fmt.Sprintf("its mode is %04o; it must be 0600, readable by its owner alone (chmod 600 %s)", perm, p)})
		}
	}
	if len(problems) > 0 {
		return fmt.Sprintf("%d problem(s) in %s", len(problems), dir), problems, nil
	}
	return fmt.Sprintf("%d key file(s) in %s, each 0600, the folder 0700", files, dir), nil, nil
}

// recordKind names a store's records for a person.
var recordKind = map[string]string{
	"confirmations":   "confirmation record",
	"events":          "event-log line",
	"sfn":             "execution record",
	inputsQueueFolder: "inputs queue file",
}

func kindOf(store string) string {
	if k, ok := recordKind[store]; ok {
		return k
	}
	return store + " record"
}

// checkDamage lists every damaged record: those the stores moved to the
// quarantine, and those still in place (no server has read them yet).
func checkDamage(data string) (string, []doctor.Finding, error) {
	if _, err := os.Stat(data); errors.Is(err, fs.ErrNotExist) {
		return "no data folder", nil, nil
	}
	var problems []doctor.Finding
	moved, err := quarantine.List(data)
	if err != nil {
		return "", nil, err
	}
	for _, it := range moved {
		problems = append(problems, doctor.Finding{What: fmt.Sprintf("%s %s, moved to quarantine", kindOf(it.Store), it.Path),
			Where: it.Quarantined, Why: it.Reason, When: it.At})
	}
	scans := []func() ([]quarantine.Item, error){
		fileconfirm.Local(data).Damaged,
		func() ([]quarantine.Item, error) { return control.Damaged(ControlDir(data)) },
		fileeventlog.Local(data).Damaged,
		func() ([]quarantine.Item, error) {
			return queue.Damaged(InputsQueueDir(data), InputsQuarantine(data, nil))
		},
	}
	inPlace := 0
	var errs []error
	for _, scan := range scans {
		found, err := scan()
		if err != nil {
			errs = append(errs, err)
		}
		for _, it := range found {
			inPlace++
			problems = append(problems, doctor.Finding{What: fmt.Sprintf("%s %s, damaged in place", kindOf(it.Store), it.Path),
				Where: filepath.Join(data, filepath.FromSlash(it.Store), filepath.FromSlash(it.Path)), Why: it.Reason, When: it.At})
		}
	}
	if len(problems) == 0 {
		return "none", nil, errors.Join(errs...)
	}
	return fmt.Sprintf("%d damaged record(s): %d moved to %s (kept: review, then delete them), %d still in place",
		len(problems), len(moved), filepath.Join(data, quarantine.Folder), inPlace), problems, errors.Join(errs...)
}
