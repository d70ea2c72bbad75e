package confirm

import (
	"encoding/json"
	"time"

	"github.com/veredicto/veredicto"
)

// Decision is what a person decided.
type Decision struct {
	Approved  bool      `json:"approved"`
	DecidedBy string    `json:"decided_by"`
	DecidedAt time.Time `json:"decided_at"`
	Comment   string    `json:"comment,omitempty"`
	// PreviewSHA256 is the hash of the preview decided on (PreviewHash):
	// what the person was shown, for the audit record.
	PreviewSHA256 string `json:"preview_sha256,omitempty"`
}

// Ask is what a confirmation asks, for which execution, and until when:
// the fields a stored Record, the View clients read and the
// pending-confirmation event share. Embedded, its fields keep their place
// in each one's JSON.
type Ask struct {
	Execution   string          `json:"execution"`
	ToolName    string          `json:"toolName"`
	Category    string          `json:"category"`
	Sensitivity string          `json:"sensitivity"`
	Undoable    bool            `json:"undoable"`
	Preview     json.RawMessage `json:"preview"`
	CreatedAt   time.Time       `json:"created_at"`
	ExpiresAt   time.Time       `json:"expires_at"`
}

// Record is a stored confirmation, token included. Version increases by
// one with every write; stores write conditionally on it.
type Record struct {
	ID     string `json:"id"`
	Tenant string `json:"tenant"`
	Ask
	Status   string    `json:"status"`
	Decision *Decision `json:"decision,omitempty"`
	// Attempts counts deliveries started (SendTask calls about to be made).
	Attempts int `json:"attempts,omitempty"`
	// LeaseUntil: a delivery is under way until then; no other may start
	// (it is released when an attempt fails, and lapses after a crash).
	LeaseUntil time.Time `json:"lease_until,omitzero"`
	// Delivery is "unconfirmed" when a redelivery found the token used and
	// an earlier attempt may have delivered the decision, DeliveryNextRun
	// when no task was waiting for it.
	Delivery string `json:"delivery,omitempty"`
	// Key is the question a keyed confirmation answers (Request.Key).
	Key string `json:"key,omitempty"`
	// Resolver names the process that delivers decisions to this record's
	// task when that is not a Step Functions API (a "veredicto search run
	// --review" waiting in its own engine: Service.Resolver); empty for
	// serve and AWS.
	Resolver   string    `json:"resolver,omitempty"`
	ResolvedAt time.Time `json:"resolved_at,omitzero"`
	TaskToken  string    `json:"task_token"`
	Version    int       `json:"version"`
	// Damage is set on a StatusDamaged record.
	Damage *Damage `json:"damage,omitempty"`
}

// Damage says why a stored confirmation could not be read: what stands
// for it (StatusDamaged) once a store moved its bytes aside.
type Damage struct {
	// Reason says what is wrong with the bytes, never what they hold.
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
	// Quarantined is where the bytes are now ("" when the store could not
	// move them: they are still in place).
	Quarantined string `json:"quarantined,omitempty"`
}

// DamagedRecord is what a Store returns, and lists, for the confirmation
// id of tenant whose stored bytes do not decode, found at at.
func DamagedRecord(tenant, id, reason string, at time.Time) Record {
	at = at.UTC()
	return Record{ID: id, Tenant: tenant, Ask: Ask{CreatedAt: at}, Status: StatusDamaged, Damage: &Damage{Reason: reason, At: at}}
}

// DamagedError is the refusal to decide on a damaged confirmation.
func (r Record) DamagedError() error {
	e := &veredicto.DamagedError{What: "confirmation " + r.ID}
	if d := r.Damage; d != nil {
		e.Reason, e.Quarantined = d.Reason, d.Quarantined
	}
	e.Reason += "; it cannot be decided: its workflow still waits and an operator must look (veredicto doctor)"
	return e
}

// View is a confirmation as clients see it: never the task token.
type View struct {
	ID string `json:"id"`
	Ask
	Status    string     `json:"status"`
	Approved  *bool      `json:"approved,omitempty"`
	DecidedBy string     `json:"decided_by,omitempty"`
	DecidedAt *time.Time `json:"decided_at,omitempty"`
	Comment   string     `json:"comment,omitempty"`
	Delivery  string     `json:"delivery,omitempty"`
	Resolver  string     `json:"resolver,omitempty"`
	// Damage says why a damaged confirmation cannot be read.
	Damage string `json:"damage,omitempty"`
}

// View returns what clients see of r at now (a pending confirmation past
// its expiry shows as expired).
func (r Record) View(now time.Time) View {
	v := View{ID: r.ID, Ask: r.Ask, Status: r.Status, Delivery: r.Delivery, Resolver: r.Resolver}
	if r.Status == StatusPending && !now.Before(r.ExpiresAt) {
		v.Status = StatusExpired
	}
	if d := r.Decision; d != nil && r.Status != StatusExpired {
		v.Approved, v.DecidedBy, v.DecidedAt, v.Comment = &d.Approved, d.DecidedBy, &d.DecidedAt, d.Comment
	}
	if r.Damage != nil {
		v.Damage = r.Damage.Reason
	}
	return v
}

// Open reports whether r still awaits a decision (pending and not
// expired at now) or the delivery of one (resolving), or is damaged: a
// damaged confirmation stays listed for Retention after it was found, so
// the damage is seen rather than a question silently gone.
func (r Record) Open(now time.Time) bool {
	if r.Status == StatusDamaged {
		return now.Before(r.EndedAt().Add(Retention))
	}
	return r.Status == StatusResolving || r.Status == StatusPending && now.Before(r.ExpiresAt)
}

// EndedAt is when r stopped being open: its resolution, or the expiry of
// a pending confirmation nobody decided (zero while it is open). Stores
// keep a confirmation for Retention after it.
func (r Record) EndedAt() time.Time {
	if r.Status == StatusDamaged && r.Damage != nil {
		return r.Damage.At
	}
	if !r.ResolvedAt.IsZero() {
		return r.ResolvedAt
	}
	if r.Status == StatusPending {
		return r.ExpiresAt
	}
	return time.Time{}
}
