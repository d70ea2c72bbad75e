package infra

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// maxStageSeconds is the documented bound on one stage, retries included:
// a provider that never answers must end a stage by then (README, "LLM").
const maxStageSeconds = 600

// TestModelTasksHaveABound: every Task on a function that holds the LLM
// secret has a TimeoutSeconds (or TimeoutSecondsPath). With a static one,
// the function's own Timeout is longer, so a silent provider ends the Task
// as States.Timeout (which the workflow routes) rather than as a Lambda
// timeout that the Retry repeats; and the Task's attempts with their retry
// waits stay within maxStageSeconds.
func TestModelTasksHaveABound(t *testing.T) {
	tpl := loadTemplate(t, filepath.Join(root, "template.yaml"))
	files, err := filepath.Glob(filepath.Join(root, "statemachines", "*.asl.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no statemachines/*.asl.json (err %v)", err)
	}
	arn := regexp.MustCompile(`^\$\{(\w+Function)Arn\}$`)
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var def map[string]any
		if err := json.Unmarshal(b, &def); err != nil {
			t.Fatalf("parse %s: %v", f, err)
		}
		for name, st := range tasks(asMap(def["States"])) {
			res := asString(st["Resource"])
			if strings.HasSuffix(res, ".waitForTaskToken") {
				continue // a person's wait: bounded by its own TimeoutSeconds(Path)
			}
			if strings.HasPrefix(res, "arn:aws:states:::lambda:invoke") {
				res = asString(asMap(st["Parameters"])["FunctionName"])
			}
			m := arn.FindStringSubmatch(res)
			if m == nil {
				continue
			}
			props := tpl.functionProperties(m[1])
			if _, llm := asMap(asMap(props["Environment"])["Variables"])["LLM_SECRET_ARN"]; !llm {
				continue
			}
			checked++
			where := filepath.Base(f) + " " + name + " (" + m[1] + ")"
			timeout, static := num(st["TimeoutSeconds"])
			if _, path := st["TimeoutSecondsPath"]; !static && !path {
				t.Errorf("%s calls the LLM without TimeoutSeconds or TimeoutSecondsPath", where)
				continue
			}
			if !static {
				continue
			}
			if fn, _ := num(props["Timeout"]); fn <= timeout {
				t.Errorf("%s: the function's Timeout %v s is not longer than the Task's TimeoutSeconds %v s: a silent provider would end as a Lambda timeout, retried", where, fn, timeout)
			}
			if worst := worstStage(timeout, asList(st["Retry"])); worst > maxStageSeconds {
				t.Errorf("%s: TimeoutSeconds %v s with its Retry may run %.0f s, over the documented %d s per stage", where, timeout, worst, maxStageSeconds)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no Task on a function holding LLM_SECRET_ARN: the check found nothing to check")
	}
}

// tasks returns the Task states of a States object, nested ones included,
// by name.
func tasks(states map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for name, v := range states {
		st := asMap(v)
		if asString(st["Type"]) == "Task" {
			out[name] = st
		}
		var subs []any
		for _, k := range []string{"ItemProcessor", "Iterator"} {
			if p := asMap(st[k]); p != nil {
				subs = append(subs, p)
			}
		}
		subs = append(subs, asList(st["Branches"])...)
		for _, sub := range subs {
			for n, s := range tasks(asMap(asMap(sub)["States"])) {
				out[n] = s
			}
		}
	}
	return out
}

// worstStage is the longest a Task may run: each attempt up to its
// timeout, every retrier that does not match States.Timeout spent to its
// MaxAttempts, and the longest wait before each retry (ASL defaults:
// IntervalSeconds 1, MaxAttempts 3, BackoffRate 2).
func worstStage(timeout float64, retry []any) float64 {
	attempts, waits := 1.0, 0.0
	for _, r := range retry {
		rm := asMap(r)
		if matchesTimeout(stringsOf(rm["ErrorEquals"])) {
			return math.Inf(1) // a timeout retried: the bound is the retrier's, not this one
		}
		interval, tries, rate := 1.0, 3.0, 2.0
		if v, ok := num(rm["IntervalSeconds"]); ok {
			interval = v
		}
		if v, ok := num(rm["MaxAttempts"]); ok {
			tries = v
		}
		if v, ok := num(rm["BackoffRate"]); ok {
			rate = v
		}
		maxDelay, capped := num(rm["MaxDelaySeconds"])
		for i := 0.0; i < tries; i++ {
			w := interval * math.Pow(rate, i)
			if capped && w > maxDelay {
				w = maxDelay
			}
			waits += w
		}
		attempts += tries
	}
	return attempts*timeout + waits
}

func matchesTimeout(names []string) bool {
	for _, n := range names {
		if n == "States.ALL" || n == "States.Timeout" {
			return true
		}
	}
	return false
}
