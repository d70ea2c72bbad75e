package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
	"github.com/veredicto/veredicto/internal/asl/asltest"
	"github.com/veredicto/veredicto/internal/poll"
)

func activityMachine(arn string) string {
	return `{"StartAt":"Resize","States":{"Resize":{"Type":"Task","Resource":"` + arn + `","ResultPath":"$.resized","End":true}}}`
}

// code is the API error code of err ("" for none).
func code(err error) string {
	var ce *Error
	if errors.As(err, &ce) {
		return ce.Code
	}
	return ""
}

// pollAsync runs GetActivityTask in the background.
func pollAsync(m *Manager, ctx context.Context, arn, worker, tenant string) chan ActivityTask {
	got := make(chan ActivityTask, 1)
	go func() {
		t, err := m.GetActivityTask(ctx, arn, worker, tenant)
		if err != nil {
			t = ActivityTask{Input: "error: " + err.Error()}
		}
		got <- t
	}()
	return got
}

// queuedTasks waits until n activity tasks wait for a worker.
func queuedTasks(t *testing.T, m *Manager, n int, what string) {
	t.Helper()
	poll.Until(t, 10*time.Second, func() bool {
		m.acts.mu.Lock()
		defer m.acts.mu.Unlock()
		return len(m.acts.queued) == n
	}, what)
}

func received(t *testing.T, got chan ActivityTask) ActivityTask {
	t.Helper()
	select {
	case task := <-got:
		return task
	case <-time.After(30 * time.Second):
		t.Fatal("GetActivityTask did not answer")
		return ActivityTask{}
	}
}

// A task a worker took before a restart is not handed out again: its
// worker answers it after the restart. One no worker took is queued again
// and taken after the restart.
func TestActivityTasksSurviveARestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := newFixture()
	m := f.open(t, dir)
	act, err := m.CreateActivity(ctx, "resize", "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.CreateStateMachine(ctx, "Resizer", activityMachine(act.ARN), "arn:aws:iam::000000000000:role/x", ""); err != nil {
		t.Fatal(err)
	}
	smARN := StateMachineARN("Resizer")
	taken, err := m.StartExecution(ctx, smARN, "taken", `{"tenant":"acme","n":1}`)
	if err != nil {
		t.Fatal(err)
	}
	task := received(t, pollAsync(m, ctx, act.ARN, "w1", ""))
	if task.Token == "" || task.Input != `{"n":1,"tenant":"acme"}` {
		t.Fatalf("first task %+v", task)
	}
	waiting, err := m.StartExecution(ctx, smARN, "waiting", `{"tenant":"acme","n":2}`)
	if err != nil {
		t.Fatal(err)
	}
	queuedTasks(t, m, 1, "the second task to be queued")
	m.Close()

	m = f.open(t, dir)
	defer m.Close()
	if err := m.SendTaskSuccess(ctx, task.Token, `{"w":1}`); err != nil {
		t.Fatalf("SendTaskSuccess after the restart: %v", err)
	}
	if x := waitClosed(t, m, taken.ARN); x.Status != asl.StatusSucceeded || string(x.Output) != `{"n":1,"resized":{"w":1},"tenant":"acme"}` {
		t.Errorf("taken: %s %s %s", x.Status, x.Output, x.Cause)
	}
	again := received(t, pollAsync(m, ctx, act.ARN, "w2", "acme"))
	if again.Input != `{"n":2,"tenant":"acme"}` {
		t.Fatalf("after the restart the worker got %+v, want the task no one had taken", again)
	}
	if err := m.SendTaskSuccess(ctx, again.Token, `{"w":2}`); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, m, waiting.ARN)

	events, _, err := m.History(ctx, taken.ARN, "", 100, false)
	if err != nil {
		t.Fatal(err)
	}
	var started []string
	for _, ev := range events {
		if ev.Type == "ActivityStarted" {
			started = append(started, ev.WorkerName)
		}
	}
	if strings.Join(started, " ") != "w1" {
		t.Errorf("ActivityStarted by %q, want once by w1", started)
	}
}

// GetActivityTask waits ActivityPollTimeout and answers without a task;
// at most MaxActivityPollers wait at once; a tenant's worker never takes
// another tenant's task.
func TestGetActivityTaskBounds(t *testing.T) {
	ctx := context.Background()
	clock := asltest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	f := newFixture()
	m, err := Open(ctx, Config{Dir: t.TempDir(), Registry: f.reg, Clock: clock, MaxActivityPollers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	act, err := m.CreateActivity(ctx, "bounded", "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.GetActivityTask(ctx, ActivityARN("missing"), "", ""); code(err) != CodeActivityDoesNotExist {
		t.Errorf("a missing activity: %v", err)
	}
	if _, err := m.GetActivityTask(ctx, "arn:aws:states:us-east-1:000000000000:stateMachine:x", "", ""); code(err) != CodeInvalidArn {
		t.Errorf("a state machine's ARN: %v", err)
	}
	bravo := pollAsync(m, ctx, act.ARN, "b", "bravo")
	other := pollAsync(m, ctx, act.ARN, "b2", "bravo")
	poll.Until(t, 10*time.Second, func() bool { return len(clock.Pending()) == 2 }, "two pollers waiting")
	if _, err := m.GetActivityTask(ctx, act.ARN, "c", ""); code(err) != CodeActivityWorkerLimitExceeded {
		t.Errorf("a third poller: %v, want ActivityWorkerLimitExceeded", err)
	}
	if _, err := m.CreateStateMachine(ctx, "Scoped", activityMachine(act.ARN), "arn:aws:iam::000000000000:role/x", ""); err != nil {
		t.Fatal(err)
	}
	x, err := m.StartExecution(ctx, StateMachineARN("Scoped"), "acme-1", `{"tenant":"acme"}`)
	if err != nil {
		t.Fatal(err)
	}
	queuedTasks(t, m, 1, "acme's task queued past bravo's waiting workers")
	clock.Advance(ActivityPollTimeout)
	if got := received(t, bravo); got != (ActivityTask{}) {
		t.Errorf("bravo's worker got %+v", got)
	}
	if got := received(t, other); got != (ActivityTask{}) {
		t.Errorf("bravo's other worker got %+v", got)
	}
	task := received(t, pollAsync(m, ctx, act.ARN, "a", "acme"))
	if err := m.SendTaskFailure(ctx, task.Token, "Broken", "no"); err != nil {
		t.Fatal(err)
	}
	if got := waitClosed(t, m, x.ARN); got.Status != asl.StatusFailed || got.Error != "Broken" {
		t.Errorf("%s %s", got.Status, got.Error)
	}
}

// A task whose activity does not exist fails its execution at once
// (States.Runtime, see asl.MissingActivity); deleting an activity answers
// its waiting workers without a task.
func TestMissingAndDeletedActivities(t *testing.T) {
	ctx := context.Background()
	f := newFixture()
	m := f.open(t, t.TempDir())
	defer m.Close()
	if _, err := m.CreateStateMachine(ctx, "Lost", activityMachine(ActivityARN("nowhere")), "arn:aws:iam::000000000000:role/x", ""); err != nil {
		t.Fatalf("a machine naming an activity not created yet: %v", err)
	}
	x, err := m.StartExecution(ctx, StateMachineARN("Lost"), "x", `{"tenant":"acme"}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := waitClosed(t, m, x.ARN); got.Status != asl.StatusFailed || got.Error != asl.ErrRuntime || !strings.HasSuffix(got.Cause, "The activity "+ActivityARN("nowhere")+" does not exist.") {
		t.Errorf("%s %s %s", got.Status, got.Error, got.Cause)
	}
	act, err := m.CreateActivity(ctx, "doomed", "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := pollAsync(m, ctx, act.ARN, "w", "")
	poll.Until(t, 10*time.Second, func() bool {
		m.acts.mu.Lock()
		defer m.acts.mu.Unlock()
		return m.acts.pollers == 1
	}, "the worker waiting")
	if err := m.DeleteActivity(ctx, act.ARN); err != nil {
		t.Fatal(err)
	}
	if got := received(t, w); got != (ActivityTask{}) {
		t.Errorf("a worker of a deleted activity got %+v", got)
	}
	if err := m.DeleteActivity(ctx, act.ARN); err != nil {
		t.Errorf("deleting it again: %v", err)
	}
	if _, err := m.DescribeActivity(ctx, act.ARN); code(err) != CodeActivityDoesNotExist {
		t.Errorf("describe a deleted activity: %v", err)
	}
}

func TestCreateActivity(t *testing.T) {
	ctx := context.Background()
	f := newFixture()
	dir := t.TempDir()
	m := f.open(t, dir)
	a, err := m.CreateActivity(ctx, "mine", "acme", []Tag{{"team", "a"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	again, err := m.CreateActivity(ctx, "mine", "acme", []Tag{{"team", "b"}}, nil)
	if err != nil || again != a {
		t.Errorf("created again: %+v %v, want the same", again, err)
	}
	if tags, _ := m.ListTagsForResource(ctx, a.ARN); len(tags) != 1 || tags[0].Value != "a" {
		t.Errorf("tags after an idempotent create %+v, want the first ones", tags)
	}
	if _, err := m.CreateActivity(ctx, "mine", "bravo", nil, nil); code(err) != CodeActivityAlreadyExists {
		t.Errorf("another tenant takes the name: %v", err)
	}
	if _, err := m.CreateActivity(ctx, "mine", "acme", nil, &EncryptionConfiguration{Type: EncryptionCustomerMK, KMSKeyID: "k"}); code(err) != CodeActivityAlreadyExists {
		t.Errorf("another encryption: %v", err)
	}
	for _, tt := range []struct {
		name string
		enc  *EncryptionConfiguration
		code string
	}{
		{"bad name", nil, CodeInvalidName},
		{"ok", &EncryptionConfiguration{Type: "NOPE"}, CodeValidation},
		{"ok", &EncryptionConfiguration{Type: EncryptionCustomerMK}, CodeInvalidEncryptionConfiguration},
	} {
		if _, err := m.CreateActivity(ctx, tt.name, "", nil, tt.enc); code(err) != tt.code {
			t.Errorf("CreateActivity(%q, %+v): %v, want %s", tt.name, tt.enc, err, tt.code)
		}
	}
	m.Close()
	m = f.open(t, dir)
	defer m.Close()
	got, err := m.DescribeActivity(ctx, a.ARN)
	if err != nil || got.Tenant != "acme" || !got.Created.Equal(a.Created) {
		t.Errorf("after a restart: %+v %v", got, err)
	}
	list, next, err := m.ListActivities(ctx, "", 100, nil)
	if err != nil || len(list) != 1 || next != "" {
		t.Errorf("ListActivities: %+v %q %v", list, next, err)
	}
}

func TestTags(t *testing.T) {
	ctx := context.Background()
	f := newFixture()
	dir := t.TempDir()
	m := f.open(t, dir)
	arn := StateMachineARN("Tagged")
	create := func(name string, a Attributes) error {
		return m.CreateStateMachineWith(ctx, name, a, func() error {
			_, err := m.CreateStateMachine(ctx, name, checkOnce, "arn:aws:iam::000000000000:role/x", "")
			return err
		})
	}
	if err := create("Tagged", Attributes{Tags: []Tag{{"a", "1"}, {"b", "2"}}}); err != nil {
		t.Fatal(err)
	}
	if err := m.TagResource(ctx, arn, []Tag{{"b", "3"}, {"c", ""}}); err != nil {
		t.Fatal(err)
	}
	if err := m.UntagResource(ctx, arn, []string{"a", "zz"}); err != nil {
		t.Fatal(err)
	}
	tags, err := m.ListTagsForResource(ctx, arn)
	if got := fmt.Sprint(tags); err != nil || got != "[{b 3} {c }]" {
		t.Errorf("tags %s %v", got, err)
	}
	many := make([]Tag, MaxTags-1)
	for i := range many {
		many[i] = Tag{Key: fmt.Sprintf("k%d", i)}
	}
	var ce *Error
	if err := m.TagResource(ctx, arn, many); !errors.As(err, &ce) || ce.Code != CodeTooManyTags || ce.ResourceName != arn {
		t.Errorf("past %d tags: %v", MaxTags, err)
	}
	for _, tt := range []struct {
		arn  string
		tags []Tag
		code string
	}{
		{StateMachineARN("Nope"), nil, CodeResourceNotFound},
		{ActivityARN("nope"), nil, CodeResourceNotFound},
		{ExecutionARN("Tagged", "x"), nil, CodeInvalidArn},
		{arn, []Tag{{"", "v"}}, CodeValidation},
		{arn, []Tag{{strings.Repeat("k", 129), ""}}, CodeValidation},
		{arn, []Tag{{"k", strings.Repeat("v", 257)}}, CodeValidation},
		{arn, []Tag{{"k!", "v"}}, CodeValidation},
	} {
		if err := m.TagResource(ctx, tt.arn, tt.tags); code(err) != tt.code {
			t.Errorf("TagResource(%s, %v): %v, want %s", tt.arn, tt.tags, err, tt.code)
		}
	}
	if err := create("Tagged", Attributes{Tracing: &TracingConfiguration{Enabled: true}}); code(err) != CodeStateMachineExists {
		t.Errorf("created again with another configuration: %v", err)
	}
	if err := create("Tagged", Attributes{Tags: []Tag{{"x", "y"}}, Tracing: &TracingConfiguration{}}); err != nil {
		t.Errorf("created again, the same configuration in effect: %v", err)
	}
	m.Close()

	m = f.open(t, dir)
	defer m.Close()
	if tags, _ := m.ListTagsForResource(ctx, arn); fmt.Sprint(tags) != "[{b 3} {c }]" {
		t.Errorf("after a restart: %v", tags)
	}
	if err := m.DeleteStateMachine(ctx, arn); err != nil {
		t.Fatal(err)
	}
	if err := create("Tagged", Attributes{}); err != nil {
		t.Fatal(err)
	}
	if tags, _ := m.ListTagsForResource(ctx, arn); len(tags) != 0 {
		t.Errorf("a machine created again after its deletion has tags %v", tags)
	}
}

// A state machine's configuration: Step Functions' defaults, what was
// given, and what an update changes.
func TestConfiguration(t *testing.T) {
	ctx := context.Background()
	f := newFixture()
	m := f.open(t, t.TempDir())
	defer m.Close()
	eff := Configuration{}.Effective()
	b, _ := json.Marshal(eff)
	if got, want := string(b), `{"loggingConfiguration":{"level":"OFF","includeExecutionData":false},"tracingConfiguration":{"enabled":false},"encryptionConfiguration":{"type":"AWS_OWNED_KEY"}}`; got != want {
		t.Errorf("defaults %s, want %s", got, want)
	}
	group := json.RawMessage(`{"cloudWatchLogsLogGroup":{"logGroupArn":"arn:aws:logs:us-east-1:000000000000:log-group:sfn:*"}}`)
	for _, tt := range []struct {
		c    Configuration
		code string
	}{
		{Configuration{Logging: &LoggingConfiguration{Level: "ALL"}}, CodeInvalidLogging},
		{Configuration{Logging: &LoggingConfiguration{Level: "LOUD"}}, CodeValidation},
		{Configuration{Encryption: &EncryptionConfiguration{Type: EncryptionAWSOwned, KMSKeyID: "k"}}, CodeInvalidEncryptionConfiguration},
		{Configuration{Encryption: &EncryptionConfiguration{Type: EncryptionCustomerMK, KMSKeyID: "k", KMSDataKeyReusePeriodSeconds: new(int)}}, CodeValidation},
		{Configuration{Logging: &LoggingConfiguration{Level: "ALL", IncludeExecutionData: true, Destinations: []json.RawMessage{group}}}, ""},
	} {
		if err := tt.c.Check(); code(err) != tt.code {
			t.Errorf("Check(%+v): %v, want %q", tt.c, err, tt.code)
		}
	}
	if err := m.CreateStateMachineWith(ctx, "Traced", Attributes{Tracing: &TracingConfiguration{Enabled: true}}, func() error {
		_, err := m.CreateStateMachine(ctx, "Traced", checkOnce, "arn:aws:iam::000000000000:role/x", "")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.SetLoggingConfiguration(ctx, StateMachineARN("Traced"), LoggingConfiguration{Level: LogError, Destinations: []json.RawMessage{group}}, true); err != nil {
		t.Fatal(err)
	}
	c := m.Configuration(StateMachineARN("Traced"))
	if !c.Tracing.Enabled || c.Logging.Level != LogError || c.Encryption.Type != EncryptionAWSOwned {
		t.Errorf("configuration %+v %+v %+v", *c.Logging, *c.Tracing, *c.Encryption)
	}
	if _, err := m.ConfigureStateMachine(ctx, StateMachineARN("Nope"), Configuration{}); code(err) != CodeStateMachineDoesNotExist {
		t.Errorf("configure a missing machine: %v", err)
	}
}

// TestState refuses an activity Task at once, as it refuses a
// .waitForTaskToken one: no worker could take a test's task.
func TestTestStateRefusesAnActivity(t *testing.T) {
	f := newFixture()
	m := f.open(t, t.TempDir())
	defer m.Close()
	_, err := m.TestState(context.Background(), TestStateRequest{Definition: `{"Type":"Task","Resource":"` + ActivityARN("a") + `","End":true}`, Input: `{}`, RoleARN: "arn:aws:iam::000000000000:role/x"})
	if code(err) != CodeValidation {
		t.Errorf("TestState of an activity Task: %v, want ValidationException", err)
	}
}

// TestActivityDeletedWhileItsTaskWaits: a task scheduled on an activity
// that is deleted afterwards waits on until its TimeoutSeconds, which its
// Catch sees as any timeout (DeleteActivity) — parked meanwhile, and
// across a restart. Only an activity missing when its task is first
// scheduled fails the execution (States.Runtime).
func TestActivityDeletedWhileItsTaskWaits(t *testing.T) {
	for _, restart := range []bool{false, true} {
		t.Run(map[bool]string{false: "parked", true: "restarted"}[restart], func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			p := newParkingFixture()
			m := p.open(t, dir)
			defer func() { m.Close() }()
			act, err := m.CreateActivity(ctx, "gone", "", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			def := `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"` + act.ARN + `","TimeoutSeconds":60,
			  "Catch":[{"ErrorEquals":["States.Timeout"],"Next":"Late"}],"End":true},"Late":{"Type":"Pass","End":true}}}`
			if _, err := m.CreateStateMachine(ctx, "Gone", def, "arn:aws:iam::000000000000:role/x", ""); err != nil {
				t.Fatal(err)
			}
			x, err := m.StartExecution(ctx, StateMachineARN("Gone"), "x", `{"tenant":"acme"}`)
			if err != nil {
				t.Fatal(err)
			}
			awaitParked(t, m, 1)
			if err := m.DeleteActivity(ctx, act.ARN); err != nil {
				t.Fatal(err)
			}
			if restart {
				m.Close()
				m = p.open(t, dir)
				awaitParked(t, m, 1)
			}
			p.clock.Advance(60 * time.Second)
			if got := waitClosed(t, m, x.ARN); got.Status != asl.StatusSucceeded {
				t.Errorf("%s %s %q; want its TimeoutSeconds caught (SUCCEEDED through Late)", got.Status, got.Error, got.Cause)
			}
		})
	}
}

// TestAnotherTenantsActivityIsMissing: a tenant's execution whose Task
// names another tenant's activity fails exactly as if it did not exist
// (States.Runtime, no task scheduled), so a definition cannot learn which
// activities another tenant has; the owner's execution queues its task.
func TestAnotherTenantsActivityIsMissing(t *testing.T) {
	ctx := context.Background()
	p := newParkingFixture()
	m := p.open(t, t.TempDir())
	defer m.Close()
	act, err := m.CreateActivity(ctx, "resize", "acme", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	missing := ActivityARN("never-made")
	for _, name := range []string{"Theirs", "Missing"} {
		arn := act.ARN
		if name == "Missing" {
			arn = missing
		}
		def := `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"` + arn + `","Catch":[{"ErrorEquals":["States.ALL"],"Next":"C"}],"End":true},"C":{"Type":"Pass","End":true}}}`
		if _, err := m.CreateStateMachine(ctx, name, def, "arn:aws:iam::000000000000:role/x", ""); err != nil {
			t.Fatal(err)
		}
	}
	histories := map[string]string{}
	for _, name := range []string{"Theirs", "Missing"} {
		x, err := m.StartExecution(ctx, StateMachineARN(name), "b", `{"tenant":"bravo"}`)
		if err != nil {
			t.Fatal(err)
		}
		got := waitClosed(t, m, x.ARN)
		res := act.ARN
		if name == "Missing" {
			res = missing
		}
		if got.Status != asl.StatusFailed || got.Error != asl.ErrRuntime || !strings.HasSuffix(got.Cause, "The activity "+res+" does not exist.") {
			t.Errorf("%s, bravo's: %s %s %q; want FAILED States.Runtime, the activity missing", name, got.Status, got.Error, got.Cause)
		}
		histories[name] = entered(t, m, x.ARN)
	}
	if histories["Theirs"] != histories["Missing"] {
		t.Errorf("another tenant's activity: %q; a missing one: %q — want the same story", histories["Theirs"], histories["Missing"])
	}
	if _, err := m.StartExecution(ctx, StateMachineARN("Theirs"), "a", `{"tenant":"acme"}`); err != nil {
		t.Fatal(err)
	}
	queuedTasks(t, m, 1, "acme's task queued on its own activity")
}
