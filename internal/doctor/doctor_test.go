package doctor

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	checks := []Check{
		{Name: "fine", Run: func(context.Context) (string, []Finding, error) { return "all well", nil, nil }},
		{Name: "broken", Run: func(context.Context) (string, []Finding, error) {
			return "1 problem", []Finding{{What: "a file", Where: "/d/f", Why: "mode 0644"}}, nil
		}},
		{Name: "blind", Run: func(context.Context) (string, []Finding, error) { return "", nil, errors.New("permission denied") }},
	}
	r := Run(context.Background(), checks)
	if r.OK || len(r.Checks) != 3 {
		t.Fatalf("report %+v", r)
	}
	for i, want := range []string{StatusOK, StatusFail, StatusFail} {
		if r.Checks[i].Status != want || r.Checks[i].Findings == nil {
			t.Errorf("check %s: %+v, want %s with a list of findings", r.Checks[i].Name, r.Checks[i], want)
		}
	}
	if f := r.Checks[2].Findings; len(f) != 1 || !strings.Contains(f[0].Why, "could not run: permission denied") {
		t.Errorf("a check that cannot run: %+v", f)
	}
	var text bytes.Buffer
	r.WriteText(&text)
	for _, want := range []string{"[ok  ] fine: all well", "[FAIL] broken: 1 problem", "where: /d/f", "why:   mode 0644", "2 of 3 checks found problems."} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	Run(context.Background(), nil).WriteJSON(&js)
	if got := strings.Join(strings.Fields(js.String()), ""); got != `{"ok":true,"checks":[]}` {
		t.Errorf("no checks: %s", got)
	}
}
