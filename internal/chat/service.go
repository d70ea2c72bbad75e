package chat

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/veredicto/veredicto"
	"github.com/veredicto/veredicto/internal/confirm"
	"github.com/veredicto/veredicto/internal/eventlog"
)

// Event types of a conversation's stream besides eventlog's
// (execution-step, pending-confirmation, confirmation-resolved, finish).
const (
	TypeTextDelta        = "text-delta"
	TypeToolInvocation   = "tool-invocation"
	TypeDelegationIntent = "delegation-intent"
	TypeDelegationMissed = "delegation-missed"
)

// StreamName is the event-log stream of a conversation.
func StreamName(chatID string) string { return "chat/" + chatID }

var (
	chatIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)
)

// ValidChatID reports whether id can name a chat: 1-64 letters, digits,
// '_' or '-'.
func ValidChatID(id string) bool { return chatIDPattern.MatchString(id) }

// Bounds.
const (
	MaxMessageBytes = 8 << 10
	// MaxTurns bounds one chat's stored turns.
	MaxTurns = 1000
	// DefaultHistoryTurns is how many earlier turns go into the prompt.
	DefaultHistoryTurns = 10
	// DefaultMaxSteps bounds model calls per turn.
	DefaultMaxSteps = 4
	// MaxToolResultBytes bounds what one tool result tells the model.
	MaxToolResultBytes = 16 << 10
	maxReasonRunes     = 200
	deltaRunes         = 80
)

// Appender appends to the event log.
type Appender interface {
	Append(ctx context.Context, tenant, stream string, ev eventlog.Event) (eventlog.Event, error)
}

// KV is the context store (internal/store): write-once keys.
type KV interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	PutIfAbsent(ctx context.Context, key string, value []byte) (bool, error)
	List(ctx context.Context, prefix string) ([]string, error)
}

// Confirmations creates confirmations (*confirm.Service).
type Confirmations interface {
	Confirm(ctx context.Context, in confirm.Request) (confirm.Response, error)
}

// ConfirmationReader reads confirmations' state (confirm.Store): one, or
// a tenant's open ones (an interrupted turn's, CloseInterrupted).
type ConfirmationReader interface {
	Get(ctx context.Context, tenant, id string) (confirm.Record, error)
	List(ctx context.Context, tenant string, now time.Time, limit int) ([]confirm.Record, bool, error)
}

var (
	_ Confirmations      = (*confirm.Service)(nil)
	_ ConfirmationReader = (confirm.Store)(nil)
)

// Options are the chat's switches (seed §9) and bounds.
type Options struct {
	// DelegationOnly (CHAT_DELEGATION_ONLY=true) offers the model only the
	// delegation tools and the basic ones.
	DelegationOnly bool
	// DebugIntent (DEBUG_DELEGATION_INTENT=true) puts every turn's
	// delegation-intent on the stream.
	DebugIntent bool
	// HistoryTurns is how many earlier turns go into the prompt
	// (DefaultHistoryTurns when 0).
	HistoryTurns int
	// MaxSteps bounds model calls per turn (DefaultMaxSteps when 0).
	MaxSteps int
	// ConfirmWait bounds how long a turn waits for a confirmation
	// (default 10 minutes); ConfirmPoll is how often it looks (default
	// 300 ms).
	ConfirmWait, ConfirmPoll time.Duration
}

// OptionsFromEnv reads CHAT_DELEGATION_ONLY and DEBUG_DELEGATION_INTENT.
func OptionsFromEnv(getenv func(string) string) Options {
	return Options{DelegationOnly: getenv("CHAT_DELEGATION_ONLY") == "true", DebugIntent: getenv("DEBUG_DELEGATION_INTENT") == "true"}
}

// Service runs the chat's turns. Its fields are set once; it is safe for
// concurrent use.
type Service struct {
	Registry *Registry
	// Intents chooses each tenant's intent scorer (a learned model or the
	// registry's heuristic); nil scores with the registry.
	Intents *IntentModels
	// Model is the supervisor; nil runs the offline supervisor.
	Model Model
	// Tools implement the registry's actions, by action.
	Tools map[string]Tool
	// Store keeps the turns (history and metrics).
	Store  KV
	Events Appender
	// Confirmations and ConfirmationStore serve sensitive tools.
	Confirmations     Confirmations
	ConfirmationStore ConfirmationReader
	Options           Options
	// Corpus is what Recalibrate fits on and judges with (empty: it
	// refuses).
	Corpus Corpus
	// Audit, when set, keeps each chat's audit record (every turn's
	// message, intent decision, model and tool calls, confirmations).
	Audit Auditor
	// Links, when set, keeps and follows the workflows a conversation
	// starts; without it they are only linked by their origin, which
	// brings their confirmations to the conversation.
	Links  *Links
	Now    func() time.Time
	Logger *slog.Logger
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

func (s *Service) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// scorer is the delegation-intent scorer of tenant's turns.
func (s *Service) scorer(ctx context.Context, tenant string) Scorer {
	if s.Intents != nil {
		return s.Intents.For(ctx, tenant)
	}
	return s.Registry
}

func (s *Service) model() Model {
	if s.Model != nil {
		return s.Model
	}
	return Offline{Registry: s.Registry}
}

// Validate checks that every agent's action has a tool.
func (s *Service) Validate() error {
	for i, a := range s.Registry.Agents {
		if a.ID == s.Registry.Supervisor {
			continue
		}
		if s.Tools[a.Action] == nil {
			return &veredicto.InvalidInputError{File: s.Registry.File(), Field: fmt.Sprintf("agents[%d].action", i),
				Problem: fmt.Sprintf("names the tool implementation %q, which this runtime does not provide", a.Action)}
		}
		if _, err := schemaOf(s.Tools[a.Action]); err != nil {
			return fmt.Errorf("tool %s: %w", a.Tool, err)
		}
	}
	return nil
}

// Check validates a turn's request.
func Check(chatID, message string) error {
	switch {
	case !ValidChatID(chatID):
		return &veredicto.InvalidInputError{File: "body", Field: "chat_id", Problem: "must be 1-64 letters, digits, '_' or '-'"}
	case strings.TrimSpace(message) == "":
		return &veredicto.InvalidInputError{File: "body", Field: "message", Problem: "is empty"}
	case len(message) > MaxMessageBytes:
		return &veredicto.InvalidInputError{File: "body", Field: "message", Problem: fmt.Sprintf("is %d bytes, over %d", len(message), MaxMessageBytes)}
	case !utf8.ValidString(message):
		return &veredicto.InvalidInputError{File: "body", Field: "message", Problem: "is not UTF-8 text"}
	}
	return nil
}
