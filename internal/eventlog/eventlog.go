// Package eventlog is the durable event log behind the event stream: one
// append-only stream per execution (or conversation) and tenant, with ids
// that increase by one from 1, so a client that reconnects with the last id
// it saw reads exactly what it missed.
//
// This package holds the events, their bounds and the Log port; the
// adapters are package file (internal/eventlog/file: one fsynced
// JSON-lines file per stream under --data) and package dynamo
// (internal/eventlog/dynamo: one item per event, the id as numeric sort
// key), the AWS one; package eventlogtest holds what their tests share.
package eventlog

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/veredicto/veredicto"
)

// Event is one message of a stream.
type Event struct {
	// ID is assigned by Append: 1 for a stream's first event, then +1.
	ID int64 `json:"id"`
	// Type is the message type ("execution-step", "pending-confirmation",
	// "confirmation-resolved", "finish").
	Type string `json:"type"`
	// Key, when set, makes Append idempotent: an event whose key is
	// already among the stream's last DedupeWindow events is not appended
	// again (a retried task, a replayed history hook).
	Key  string    `json:"key,omitempty"`
	Time time.Time `json:"time"`
	// Data is the message's JSON object as clients receive it.
	Data json.RawMessage `json:"data"`
}

// Bounds.
const (
	// MaxEventBytes bounds one event's Data.
	MaxEventBytes = 64 << 10
	// MaxEvents bounds a stream (Step Functions bounds a history at 25 000
	// events; a stream holds fewer).
	MaxEvents = 25000
	// DedupeWindow is how many of a stream's last events Append checks for
	// a repeated Key.
	DedupeWindow = 256
	// MaxReadLimit bounds one Read.
	MaxReadLimit = 1000
)

// TypeOrigin is the one event of an origin stream (OriginStream): data
// {"stream": S}, the stream the execution also reports to.
const TypeOrigin = "origin"

// OriginStream records which other stream an execution's confirmations go
// to as well: the conversation that started it (seed 004: every
// confirmation on the conversation's one stream).
func OriginStream(executionARN string) string { return "origin/" + executionARN }

// TypeError is the message that stands for an event a stream holds but
// cannot read (a damaged line): data {"type": "error", "id": N, "error":
// "damaged", "message"}. The stream goes on with the events after it.
const TypeError = "error"

// Damaged is the TypeError message for event id of a stream.
func Damaged(id int64) Event {
	data := fmt.Sprintf(`{"type":%q,"id":%d,"error":"damaged","message":"event %d of this stream is damaged and cannot be shown; the stream goes on with the next events"}`, TypeError, id, id)
	return Event{ID: id, Type: TypeError, Data: json.RawMessage(data)}
}

// Finished reports whether ev ends its stream.
func (ev Event) Finished() bool { return ev.Type == TypeFinish }

// Message types.
const (
	TypeExecutionStep        = "execution-step"
	TypePendingConfirmation  = "pending-confirmation"
	TypeConfirmationResolved = "confirmation-resolved"
	TypeFinish               = "finish"
)

// Appender appends ev to a tenant's stream and returns it as stored, its
// ID assigned; an ev whose Key is among the stream's last DedupeWindow
// events is not appended again, and the stored one is returned.
type Appender interface {
	Append(ctx context.Context, tenant, stream string, ev Event) (Event, error)
}

// Reader reads at most limit events of a tenant's stream whose ids follow
// after, in order.
type Reader interface {
	Read(ctx context.Context, tenant, stream string, after int64, limit int) ([]Event, error)
}

// Log appends and reads: what each adapter is.
type Log interface {
	Appender
	Reader
}

// New builds an event of typ whose data is v with "type" added; v must
// encode as a JSON object.
func New(typ, key string, v any) (Event, error) {
	if m, ok := v.(map[string]any); ok {
		// the common case, encoded once: a map's keys come out sorted, as
		// they do from the decoding and encoding below
		withType := make(map[string]any, len(m)+1)
		maps.Copy(withType, m)
		withType["type"] = typ
		data, err := json.Marshal(withType)
		if err != nil {
			return Event{}, fmt.Errorf("encode %s event: %w", typ, err)
		}
		return Event{Type: typ, Key: key, Data: data}, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return Event{}, fmt.Errorf("encode %s event: %w", typ, err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return Event{}, fmt.Errorf("encode %s event: data is not a JSON object", typ)
	}
	m["type"], _ = json.Marshal(typ)
	data, err := json.Marshal(m)
	if err != nil {
		return Event{}, fmt.Errorf("encode %s event: %w", typ, err)
	}
	return Event{Type: typ, Key: key, Data: data}, nil
}

// Validate checks what Append may store: every adapter calls it first.
func Validate(tenant, stream string, ev Event) error {
	switch {
	case tenant == "":
		return &veredicto.InvalidInputError{Field: "tenant", Problem: "is empty"}
	case len(tenant) > 128:
		return &veredicto.InvalidInputError{Field: "tenant", Problem: "is longer than 128 bytes"}
	case stream == "":
		return &veredicto.InvalidInputError{Field: "stream", Problem: "is empty"}
	case len(stream) > 1024:
		return &veredicto.InvalidInputError{Field: "stream", Problem: "is longer than 1024 bytes"}
	case ev.Type == "":
		return &veredicto.InvalidInputError{Field: "type", Problem: "is empty"}
	case len(ev.Data) > MaxEventBytes:
		return &veredicto.InvalidInputError{Field: "data", Problem: fmt.Sprintf("is %d bytes, over %d", len(ev.Data), MaxEventBytes)}
	case !json.Valid(ev.Data):
		return &veredicto.InvalidInputError{Field: "data", Problem: "is not JSON"}
	}
	return nil
}

// ClampLimit is the number of events a Read returns at most for limit:
// MaxReadLimit when limit is not in 1–MaxReadLimit.
func ClampLimit(limit int) int {
	if limit <= 0 || limit > MaxReadLimit {
		return MaxReadLimit
	}
	return limit
}
