package veredicto

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// Named is an error that carries the ASL error name Retry and Catch match in
// ErrorEquals. Every error kind of this package implements it; so may a
// package's own kind (for example the LLM's InvalidOutputError).
type Named interface {
	error
	ErrorName() string
}

// ASL error names of the project's error kinds, as written in ErrorEquals.
const (
	NameTransient    = "TransientError"
	NameInvalidInput = "InvalidInputError"
	NameMissingInput = "MissingInputError"
	NameNotFound     = "NotFoundError"
	NameConflict     = "ConflictError"
	NameDamaged      = "DamagedError"
	// NameConfirmationRejected is the error a workflow's confirmation Task
	// fails with when a person rejects the action (SendTaskFailure), so a
	// Catch can take the fallback path.
	NameConfirmationRejected = "ConfirmationRejected"
)

// ErrorName is the ASL error name of err: the name of the first Named error in
// its chain (errors.As order, through fmt.Errorf %w and errors.Join), so a
// typed error keeps its name however it was wrapped. Without one it is the
// name of err's own dynamic type, pointer types by their element name, as the
// Go Lambda runtime reports it. It is "" for a nil error.
func ErrorName(err error) string {
	if err == nil {
		return ""
	}
	var n Named
	if errors.As(err, &n) {
		return n.ErrorName()
	}
	t := reflect.TypeOf(err)
	if t.Kind() == reflect.Pointer {
		return t.Elem().Name()
	}
	return t.Name()
}

// TransientError is a failure worth retrying later: a rate limit, a server
// error, a timeout, a storage outage that persisted through the client's own
// retries. The workflows retry it with backoff before anything escalates.
type TransientError struct {
	// Op names the operation that failed ("llm gem1", "get blob jd.md").
	Op  string
	Err error
	// RetryAfter is how long the peer asked us to wait (a 429's
	// Retry-After), zero when it did not say.
	RetryAfter time.Duration
}

func (e *TransientError) Error() string {
	msg := "temporary failure"
	if e.Err != nil {
		msg = e.Err.Error()
	}
	if e.Op != "" {
		msg = e.Op + ": " + msg
	}
	if e.RetryAfter > 0 {
		msg += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	return msg
}

func (e *TransientError) Unwrap() error   { return e.Err }
func (*TransientError) ErrorName() string { return NameTransient }

// InvalidInputError is bad input: a malformed file, a missing or unknown
// field, a value out of range. It names the file and, when there is one, the
// field ("gates.gem1", "answers[2].question_id").
type InvalidInputError struct {
	File    string
	Field   string
	Problem string
}

func (e *InvalidInputError) Error() string {
	file := e.File
	if file == "" {
		file = "(input)"
	}
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", file, e.Problem)
	}
	return fmt.Sprintf("%s: %s: %s", file, e.Field, e.Problem)
}

func (*InvalidInputError) ErrorName() string { return NameInvalidInput }

// MissingInputError names required documents that are absent, so the work is
// blocked before anything runs.
type MissingInputError struct {
	Files []string
}

func (e *MissingInputError) Error() string {
	return fmt.Sprintf("required document(s) missing: %s", strings.Join(e.Files, ", "))
}

func (*MissingInputError) ErrorName() string { return NameMissingInput }

// NotFoundError is something the caller cannot see: absent, or another
// tenant's (the two answer alike, so existence never leaks).
type NotFoundError struct {
	// What names it for a person: "search s-1", "blob searches/t/s-1/jd.md".
	What string
}

func (e *NotFoundError) Error() string   { return e.What + " not found" }
func (*NotFoundError) ErrorName() string { return NameNotFound }

// ConflictError is a write that lost to an earlier one: an id already in use,
// a confirmation already resolved, a record written concurrently.
type ConflictError struct {
	What    string
	Problem string
}

func (e *ConflictError) Error() string {
	if e.Problem == "" {
		return e.What + ": conflict"
	}
	return e.What + ": " + e.Problem
}

func (*ConflictError) ErrorName() string { return NameConflict }

// DamagedError is a stored record whose bytes no longer decode (a torn
// write, a full disk, a hand edit): retrying cannot help, so it is never a
// TransientError. The store that found it moved its bytes to the data
// folder's quarantine where it could; Reason says what is wrong without
// quoting the bytes, which may hold personal data.
type DamagedError struct {
	// What names the record for a person: "confirmation cf_…",
	// "execution arn:…".
	What   string
	Reason string
	// Quarantined is where its bytes are now ("" when they stay in place).
	Quarantined string
}

func (e *DamagedError) Error() string {
	msg := e.What + " is damaged"
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	if e.Quarantined != "" {
		msg += "; its bytes were moved to quarantine"
	}
	return msg
}

func (*DamagedError) ErrorName() string { return NameDamaged }

// ConfirmationRejected is a person's "no" to a sensitive action that a
// workflow asked to confirm. It reaches the waiting Task through
// SendTaskFailure under its name, which the workflow catches for its
// fallback.
type ConfirmationRejected struct {
	// ID is the confirmation's id; Comment what the person wrote, if anything.
	ID      string
	Comment string
}

func (e *ConfirmationRejected) Error() string {
	msg := "confirmation " + e.ID + " rejected"
	if e.Comment != "" {
		msg += ": " + e.Comment
	}
	return msg
}

func (*ConfirmationRejected) ErrorName() string { return NameConfirmationRejected }

// Kind is the name of the first error in err's tree — depth first, through
// %w wrapping and errors.Join alike — that is Named with one of the names
// among (the vocabulary's Names when among is empty); "" when there is
// none. A wrapper's own name never hides the kind it wraps.
func Kind(err error, among ...string) string {
	if len(among) == 0 {
		among = Names()
	}
	var walk func(error, int) string
	walk = func(e error, depth int) string {
		if e == nil || depth > 64 {
			return ""
		}
		if n, ok := e.(Named); ok {
			for _, name := range among {
				if n.ErrorName() == name {
					return name
				}
			}
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			return walk(u.Unwrap(), depth+1)
		case interface{ Unwrap() []error }:
			for _, inner := range u.Unwrap() {
				if k := walk(inner, depth+1); k != "" {
					return k
				}
			}
		}
		return ""
	}
	return walk(err, 0)
}

// Names lists the ASL error names of this package's kinds, for the check that
// every name an ErrorEquals uses exists in the vocabulary.
func Names() []string {
	return []string{NameTransient, NameInvalidInput, NameMissingInput, NameNotFound, NameConflict, NameDamaged, NameConfirmationRejected}
}
