// Package doctor runs the named checks of "veredicto doctor": each looks
// at one thing an operator needs right (the data folder, its keys'
// permissions, damaged records…) and reports what it found. A check is a
// name and a function; the command runs the list it is given, so a new
// check (a provider's reachability, say) is one more entry in that list
// (app.DoctorChecks).
package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Statuses of a check.
const (
	StatusOK   = "ok"
	StatusFail = "fail"
)

// Check is one named check. Run returns a one-line summary and the
// problems it found (none: the check passes), or an error when it could
// not look at all, which fails it too.
type Check struct {
	Name string
	Run  func(ctx context.Context) (summary string, problems []Finding, err error)
}

// Finding is one problem a check found: what it is, where, why it is a
// problem and, when known, since when. Never a record's content: it may
// hold personal data.
type Finding struct {
	What  string    `json:"what"`
	Where string    `json:"where"`
	Why   string    `json:"why"`
	When  time.Time `json:"when,omitzero"`
}

// Result is a check's outcome.
type Result struct {
	Name     string    `json:"name"`
	Status   string    `json:"status"`
	Summary  string    `json:"summary"`
	Findings []Finding `json:"findings"`
}

// Report is every check's outcome, in the order they ran.
type Report struct {
	OK     bool     `json:"ok"`
	Checks []Result `json:"checks"`
}

// Run runs the checks one after the other.
func Run(ctx context.Context, checks []Check) Report {
	r := Report{OK: true, Checks: []Result{}}
	for _, c := range checks {
		summary, problems, err := c.Run(ctx)
		res := Result{Name: c.Name, Status: StatusOK, Summary: summary, Findings: []Finding{}}
		if err != nil {
			problems = append(problems, Finding{What: "the check itself", Why: "it could not run: " + err.Error()})
		}
		if len(problems) > 0 {
			res.Status, res.Findings = StatusFail, problems
			r.OK = false
		}
		r.Checks = append(r.Checks, res)
	}
	return r
}

// WriteJSON writes the report as one JSON document.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the report for a person: one line per check, its
// findings under it, and a last line saying whether all is well.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	failed := 0
	for _, c := range r.Checks {
		mark := "ok  "
		if c.Status != StatusOK {
			mark, failed = "FAIL", failed+1
		}
		fmt.Fprintf(&b, "[%s] %s: %s\n", mark, c.Name, c.Summary)
		for _, f := range c.Findings {
			fmt.Fprintf(&b, "       - %s\n", f.What)
			if f.Where != "" {
				fmt.Fprintf(&b, "         where: %s\n", f.Where)
			}
			fmt.Fprintf(&b, "         why:   %s\n", f.Why)
			if !f.When.IsZero() {
				fmt.Fprintf(&b, "         when:  %s\n", f.When.UTC().Format(time.RFC3339))
			}
		}
	}
	if failed == 0 {
		fmt.Fprintf(&b, "All %d checks passed.\n", len(r.Checks))
	} else {
		fmt.Fprintf(&b, "%d of %d checks found problems.\n", failed, len(r.Checks))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
