package companion

import (
	"context"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/audit"
	"github.com/veredicto/veredicto/internal/confirm"
)

// Commands of a folder run, as its audit record names them.
const (
	CommandRun      = "run"      // a new application
	CommandResume   = "resume"   // a run started again from its saved context
	CommandContinue = "continue" // the answer to the anti-impostor pause, and what follows it
)

// Command runs one command of an application run into a folder with r
// over c, in the audit scope ctx carries: the command, what the runner
// did, then the application's status and the summary that closes the
// command's part of the record. Run's error is returned; a record that
// cannot be written fails the command.
func Command(ctx context.Context, r *Runner, c *Context, command string) error {
	if err := decide(ctx, audit.Decision{Name: DecisionCommand, Outcome: command}); err != nil {
		return err
	}
	return r.runAndEnd(ctx, c)
}

func (r *Runner) runAndEnd(ctx context.Context, c *Context) error {
	err := r.Run(ctx, c)
	if eerr := End(ctx, c, err); eerr != nil {
		return eerr
	}
	return err
}

// CheckPaused is a *veredicto.ConflictError unless c waits for the
// answer to the anti-impostor confirmation.
func CheckPaused(c *Context) error {
	if c.Pause == nil || c.Status != StatusPaused {
		return &veredicto.ConflictError{What: "application " + c.ApplicationID, Problem: "is not waiting for the anti_impostor confirmation"}
	}
	return nil
}

// Continue is the command "continue": principal's answer to the
// anti-impostor pause of c (proceed or stop) is recorded, with the time
// it was given and the hash of the preview decided on, then applied, and
// the run goes on (phase 3 when proceeding).
func Continue(ctx context.Context, r *Runner, c *Context, proceed bool, principal string) error {
	if err := CheckPaused(c); err != nil {
		return err
	}
	if err := decide(ctx, audit.Decision{Name: DecisionCommand, Outcome: CommandContinue}); err != nil {
		return err
	}
	at, err := audit.Now(ctx, clockAntiImpostorReply)
	if err != nil {
		return err
	}
	a := PauseAnswer{Status: confirm.StatusRejected, Principal: principal, DecidedAt: at.UTC()}
	if proceed {
		a.Status = confirm.StatusApproved
	}
	_, a.Preview = PauseQuestion(r.Tenant, c)
	if err := RecordAnswer(ctx, r.Tenant, c, a); err != nil {
		return err
	}
	if err := Resolve(c, proceed); err != nil {
		return err
	}
	return r.runAndEnd(ctx, c)
}

// FollowUpCommand is a phase the user triggers after the pipeline (4–7,
// or a refinement) as a command of the application's record: run does
// the phase (its model calls recorded through ctx), save writes and
// records the files it changed, then the status and the summary.
func FollowUpCommand(ctx context.Context, c *Context, command string, run, save func(context.Context) error) error {
	if err := decide(ctx, audit.Decision{Name: DecisionCommand, Outcome: command}); err != nil {
		return err
	}
	err := run(ctx)
	if err == nil {
		err = save(ctx)
	}
	if eerr := End(ctx, c, err); eerr != nil {
		return eerr
	}
	return err
}

// Replayable reports whether a command of a folder run is one a replay
// runs again (the pipeline's: run, resume, continue); the phases the user
// triggers afterwards are recorded, not replayed.
func Replayable(command string) bool {
	return command == CommandRun || command == CommandResume || command == CommandContinue
}
