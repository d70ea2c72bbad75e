package control

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// A state machine's or an activity's attributes are what it carries beside
// its definition: its tags and, for a state machine, its tracing and
// encryption configuration (its logging configuration is the machine's
// own, see express.go; an activity's encryption configuration is part of
// the activity, see activities.go). They are kept beside the resource,
// one file each, so that a machine of template.yaml, registered again at
// every start, keeps them too:
//
//	attributes/stateMachine/<name>.json
//	attributes/activity/<name>.json
//
// The tracing and encryption configurations are accepted, validated and
// returned as Step Functions returns them; this server does not act on
// them (it writes no X-Ray traces and keeps its data in its folder).

// Tag is a resource tag.
type Tag struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// MaxTags is Step Functions' limit of tags on one resource.
const MaxTags = 50

// TracingConfiguration is a state machine's tracingConfiguration.
type TracingConfiguration struct {
	Enabled bool `json:"enabled"`
}

// EncryptionConfiguration is a state machine's or an activity's
// encryptionConfiguration.
type EncryptionConfiguration struct {
	KMSKeyID                     string `json:"kmsKeyId,omitempty"`
	KMSDataKeyReusePeriodSeconds *int   `json:"kmsDataKeyReusePeriodSeconds,omitempty"`
	Type                         string `json:"type"`
}

// Encryption types.
const (
	EncryptionAWSOwned   = "AWS_OWNED_KEY"
	EncryptionCustomerMK = "CUSTOMER_MANAGED_KMS_KEY"
)

// Configuration is a state machine's logging, tracing and encryption
// configuration; a nil member is one not given.
type Configuration struct {
	Logging    *LoggingConfiguration    `json:"loggingConfiguration,omitempty"`
	Tracing    *TracingConfiguration    `json:"tracingConfiguration,omitempty"`
	Encryption *EncryptionConfiguration `json:"encryptionConfiguration,omitempty"`
}

// Effective is c with Step Functions' defaults for what was not given:
// logging OFF without execution data, tracing disabled, an AWS-owned key.
func (c Configuration) Effective() Configuration {
	if c.Logging == nil {
		c.Logging = &LoggingConfiguration{Level: LogOff}
	} else if c.Logging.Level == "" {
		l := *c.Logging
		l.Level = LogOff
		c.Logging = &l
	}
	if c.Tracing == nil {
		c.Tracing = &TracingConfiguration{}
	}
	if c.Encryption == nil {
		c.Encryption = &EncryptionConfiguration{Type: EncryptionAWSOwned}
	}
	return c
}

// sameKept reports whether two configurations keep, in effect, the same
// tracing and encryption (the members attributes keep).
func (c Configuration) sameKept(o Configuration) bool {
	a, b := c.Effective(), o.Effective()
	return *a.Tracing == *b.Tracing && encryptionKey(a.Encryption) == encryptionKey(b.Encryption)
}

func encryptionKey(e *EncryptionConfiguration) string {
	if e == nil {
		return ""
	}
	reuse := 0
	if e.KMSDataKeyReusePeriodSeconds != nil {
		reuse = *e.KMSDataKeyReusePeriodSeconds
	}
	return fmt.Sprintf("%s|%s|%d", e.Type, e.KMSKeyID, reuse)
}

// Attributes are a resource's tags and, for a state machine, its tracing
// and encryption configuration and when it was last updated.
type Attributes struct {
	Tags       []Tag                    `json:"tags,omitempty"`
	Tracing    *TracingConfiguration    `json:"tracingConfiguration,omitempty"`
	Encryption *EncryptionConfiguration `json:"encryptionConfiguration,omitempty"`
	Updated    time.Time                `json:"updateDate,omitzero"`
}

// kept is the configuration a's members hold.
func (a Attributes) kept() Configuration {
	return Configuration{Tracing: a.Tracing, Encryption: a.Encryption}
}

// Configuration is a state machine's configuration as
// DescribeStateMachine returns it, Step Functions' defaults for what it
// was not given; a version's or an alias's ARN names its machine's.
func (m *Manager) Configuration(arn string) Configuration {
	if machineARN, _, ok := qualified(arn); ok {
		arn = machineARN
	}
	c := m.Attributes(arn).kept()
	m.mu.Lock()
	if mc, ok := m.machines[arn]; ok && mc.meta.Logging != nil {
		lc := *mc.meta.Logging
		c.Logging = &lc
	}
	m.mu.Unlock()
	return c.Effective()
}

// attributes holds every resource's attributes.
type attributes struct {
	// mu guards byARN and the files. It is a leaf: nothing else is locked
	// while it is held (DeleteStateMachine takes it under Manager.mu).
	mu    sync.Mutex
	byARN map[string]Attributes
	// create serialises CreateStateMachineWith, whose idempotency
	// depends on the machine and its attributes together.
	create sync.Mutex
}

func (m *Manager) attributesDir() string { return filepath.Join(m.cfg.Dir, "attributes") }

// taggedKinds are the resource types that have attributes (tags).
var taggedKinds = []string{"stateMachine", "activity"}

// attributesPath is the file of arn's attributes; ok is false for an ARN
// that names neither a state machine nor an activity.
func (m *Manager) attributesPath(arn string) (string, bool) {
	kind, name, ok := parseARN(arn)
	if !ok || strings.Contains(name, ":") || !slices.Contains(taggedKinds, kind) || !ValidName(name) {
		return "", false
	}
	return filepath.Join(m.attributesDir(), kind, name+".json"), true
}

// loadAttributes reads every resource's attributes at Open. A file that
// does not decode is quarantined: its resource has none.
func (m *Manager) loadAttributes() error {
	m.attrs.byARN = map[string]Attributes{}
	for kind, arnOf := range map[string]func(string) string{"stateMachine": StateMachineARN, "activity": ActivityARN} {
		dir := filepath.Join(m.attributesDir(), kind)
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("control: %w", err)
		}
		for _, e := range entries {
			name, ok := strings.CutSuffix(e.Name(), ".json")
			if e.IsDir() || !ok || strings.HasPrefix(name, ".") {
				continue
			}
			var a Attributes
			path := filepath.Join(dir, e.Name())
			if err := readJSON(path, &a); err != nil {
				var de *decodeError
				if !errors.As(err, &de) {
					return fmt.Errorf("control: %w", err)
				}
				_, _ = m.quarantine.Replace(path, "the attributes (tags, configuration) "+de.reason, nil)
				continue
			}
			m.attrs.byARN[arnOf(name)] = a
		}
	}
	return nil
}

// Attributes returns a resource's attributes (the zero Attributes when it
// has none).
func (m *Manager) Attributes(arn string) Attributes {
	m.attrs.mu.Lock()
	defer m.attrs.mu.Unlock()
	a := m.attrs.byARN[arn]
	a.Tags = append([]Tag(nil), a.Tags...)
	return a
}

// putAttributes persists a resource's attributes.
func (m *Manager) putAttributes(arn string, a Attributes) error {
	path, ok := m.attributesPath(arn)
	if !ok {
		return invalidArn(arn, taggedKinds...)
	}
	m.attrs.mu.Lock()
	defer m.attrs.mu.Unlock()
	if err := writeAtomic(path, a); err != nil {
		return fmt.Errorf("record the attributes of %s: %w", arn, err)
	}
	m.attrs.byARN[arn] = a
	return nil
}

// changeAttributes applies fn to a resource's attributes and persists
// them, as one step.
func (m *Manager) changeAttributes(arn string, fn func(*Attributes) error) error {
	path, ok := m.attributesPath(arn)
	if !ok {
		return invalidArn(arn, taggedKinds...)
	}
	m.attrs.mu.Lock()
	defer m.attrs.mu.Unlock()
	a := m.attrs.byARN[arn]
	a.Tags = append([]Tag(nil), a.Tags...)
	if err := fn(&a); err != nil {
		return err
	}
	if err := writeAtomic(path, a); err != nil {
		return fmt.Errorf("record the attributes of %s: %w", arn, err)
	}
	m.attrs.byARN[arn] = a
	return nil
}

// dropAttributes forgets a deleted resource's attributes: one created
// again under the same name starts without them.
func (m *Manager) dropAttributes(arn string) {
	path, ok := m.attributesPath(arn)
	if !ok {
		return
	}
	m.attrs.mu.Lock()
	defer m.attrs.mu.Unlock()
	delete(m.attrs.byARN, arn)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		m.log.Error("the attributes of a deleted resource could not be removed", "resource", arn, "error", err)
	}
}

// CreateStateMachineWith gives the state machine name, which create
// creates (a CreateStateMachine), its tags and its tracing and encryption
// configuration, checked first. Creating it again (create succeeds on an
// existing machine with the same definition, role and type) with the same
// configuration leaves its tags unchanged, as Step Functions does; with
// another configuration it is StateMachineAlreadyExists.
func (m *Manager) CreateStateMachineWith(_ context.Context, name string, a Attributes, create func() error) error {
	arn := StateMachineARN(name)
	if err := errors.Join(CheckTags(a.Tags, 0), a.Encryption.check()); err != nil {
		return withResource(firstError(err), arn)
	}
	a.Tags, a.Updated = uniqueTags(a.Tags), time.Time{}
	m.attrs.create.Lock()
	defer m.attrs.create.Unlock()
	m.mu.Lock()
	_, existed := m.machines[arn]
	m.mu.Unlock()
	if existed && !m.Attributes(arn).kept().sameKept(a.kept()) {
		return errorf(CodeStateMachineExists, "State Machine Already Exists: '%s'", arn)
	}
	if err := create(); err != nil || existed {
		return err
	}
	return m.putAttributes(arn, a)
}

// ConfigureStateMachine sets the tracing and encryption configuration c
// gives of a state machine (nil members are kept; its logging is set with
// SetLoggingConfiguration) and records the update's time, which it
// returns: UpdateStateMachine's, whatever it changed.
func (m *Manager) ConfigureStateMachine(ctx context.Context, arn string, c Configuration) (time.Time, error) {
	if err := c.Encryption.check(); err != nil {
		return time.Time{}, err
	}
	if _, err := m.DescribeStateMachine(ctx, arn); err != nil {
		return time.Time{}, err
	}
	at := m.now().UTC()
	err := m.changeAttributes(arn, func(a *Attributes) error {
		if c.Tracing != nil {
			a.Tracing = c.Tracing
		}
		if c.Encryption != nil {
			a.Encryption = c.Encryption
		}
		a.Updated = at
		return nil
	})
	return at, err
}

// Check validates a configuration as CreateStateMachine and
// UpdateStateMachine do.
func (c Configuration) Check() error {
	if c.Logging != nil {
		lc := *c.Logging
		if err := lc.Check(); err != nil {
			return err
		}
	}
	return c.Encryption.check()
}

// check validates an encryption configuration (nil: none given).
func (e *EncryptionConfiguration) check() error {
	if e == nil {
		return nil
	}
	switch e.Type {
	case "":
		return errorf(CodeValidation, "1 validation error detected: Value null at 'encryptionConfiguration.type' failed to satisfy constraint: Member must not be null")
	case EncryptionAWSOwned:
		if e.KMSKeyID != "" || e.KMSDataKeyReusePeriodSeconds != nil {
			return errorf(CodeInvalidEncryptionConfiguration, "Invalid Encryption Configuration: kmsKeyId and kmsDataKeyReusePeriodSeconds apply only to the type CUSTOMER_MANAGED_KMS_KEY.")
		}
	case EncryptionCustomerMK:
		if e.KMSKeyID == "" {
			return errorf(CodeInvalidEncryptionConfiguration, "Invalid Encryption Configuration: kmsKeyId is required for the type CUSTOMER_MANAGED_KMS_KEY.")
		}
		if len(e.KMSKeyID) > 2048 {
			return errorf(CodeValidation, "1 validation error detected: Value at 'encryptionConfiguration.kmsKeyId' failed to satisfy constraint: Member must have length less than or equal to 2048")
		}
	default:
		return errorf(CodeValidation, "1 validation error detected: Value '%s' at 'encryptionConfiguration.type' failed to satisfy constraint: Member must satisfy enum value set: [AWS_OWNED_KEY, CUSTOMER_MANAGED_KMS_KEY]", e.Type)
	}
	if p := e.KMSDataKeyReusePeriodSeconds; p != nil && (*p < 60 || *p > 900) {
		return errorf(CodeValidation, "1 validation error detected: Value '%d' at 'encryptionConfiguration.kmsDataKeyReusePeriodSeconds' failed to satisfy constraint: Member must have value between 60 and 900", *p)
	}
	return nil
}

// CheckTags validates tags to be added to a resource that has already
// tags: every key and value within Step Functions' lengths and
// characters, and at most MaxTags on the resource. It fails with the
// ValidationException, or the TooManyTags (whose ResourceName the caller
// sets), the API answers.
func CheckTags(tags []Tag, already int) error {
	for i, t := range tags {
		field := fmt.Sprintf("tags.%d.member", i+1)
		switch n := utf8.RuneCountInString(t.Key); {
		case n == 0:
			return errorf(CodeValidation, "1 validation error detected: Value '' at '%s.key' failed to satisfy constraint: Member must have length greater than or equal to 1", field)
		case n > 128:
			return errorf(CodeValidation, "1 validation error detected: Value '%s' at '%s.key' failed to satisfy constraint: Member must have length less than or equal to 128", t.Key, field)
		}
		if utf8.RuneCountInString(t.Value) > 256 {
			return errorf(CodeValidation, "1 validation error detected: Value '%s' at '%s.value' failed to satisfy constraint: Member must have length less than or equal to 256", t.Value, field)
		}
		if !tagText(t.Key) || !tagText(t.Value) {
			return errorf(CodeValidation, "1 validation error detected: Value at '%s' failed to satisfy constraint: Tags may only contain Unicode letters, digits, white space, or these symbols: _ . : / = + - @", field)
		}
	}
	if n := already + len(tags); n > MaxTags {
		return errorf(CodeTooManyTags, "Too many tags: a resource has at most %d tags, this one would have %d", MaxTags, n)
	}
	return nil
}

// tagText reports whether s holds only the characters tags may hold.
func tagText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.In(r, unicode.L, unicode.Z, unicode.N) && !unicode.IsSpace(r) && !strings.ContainsRune("_.:/=+-@", r) {
			return false
		}
	}
	return true
}

// resourceExists answers a missing tagged resource as Step Functions
// does: ResourceNotFound, naming it; an ARN that names neither a state
// machine nor an activity is InvalidArn.
func (m *Manager) resourceExists(arn string) error {
	if _, ok := m.attributesPath(arn); !ok {
		return invalidArn(arn, taggedKinds...)
	}
	kind, _, _ := parseARN(arn)
	m.mu.Lock()
	_, found := m.machines[arn]
	m.mu.Unlock()
	if kind == "activity" {
		_, found = m.activity(arn)
	}
	if !found {
		return ResourceNotFound(arn)
	}
	return nil
}

// ResourceNotFound is the answer for a missing tagged resource.
func ResourceNotFound(arn string) error {
	return &Error{Code: CodeResourceNotFound, Message: fmt.Sprintf("Resource not found: '%s'", arn), ResourceName: arn}
}

// TagResource adds tags to a state machine or an activity, replacing the
// value of a key it already has.
func (m *Manager) TagResource(_ context.Context, arn string, tags []Tag) error {
	if err := m.resourceExists(arn); err != nil {
		return err
	}
	if err := CheckTags(tags, 0); err != nil {
		return withResource(err, arn)
	}
	return m.changeAttributes(arn, func(a *Attributes) error {
		for _, t := range tags {
			a.Tags = setTag(a.Tags, t)
		}
		if len(a.Tags) > MaxTags {
			return withResource(CheckTags(nil, len(a.Tags)), arn)
		}
		return nil
	})
}

// uniqueTags is tags with each key once, its last value kept.
func uniqueTags(tags []Tag) []Tag {
	var out []Tag
	for _, t := range tags {
		out = setTag(out, t)
	}
	return out
}

func setTag(tags []Tag, t Tag) []Tag {
	for i := range tags {
		if tags[i].Key == t.Key {
			tags[i].Value = t.Value
			return tags
		}
	}
	return append(tags, t)
}

// UntagResource removes tags by key; a key the resource does not have is
// ignored.
func (m *Manager) UntagResource(_ context.Context, arn string, keys []string) error {
	if err := m.resourceExists(arn); err != nil {
		return err
	}
	return m.changeAttributes(arn, func(a *Attributes) error {
		kept := a.Tags[:0]
		for _, t := range a.Tags {
			drop := false
			for _, k := range keys {
				drop = drop || t.Key == k
			}
			if !drop {
				kept = append(kept, t)
			}
		}
		a.Tags = kept
		return nil
	})
}

// ListTagsForResource returns a resource's tags, in the order they were
// first set.
func (m *Manager) ListTagsForResource(_ context.Context, arn string) ([]Tag, error) {
	if err := m.resourceExists(arn); err != nil {
		return nil, err
	}
	return m.Attributes(arn).Tags, nil
}

// withResource names the resource of a TooManyTags error.
func withResource(err error, arn string) error {
	var ce *Error
	if errors.As(err, &ce) && ce.Code == CodeTooManyTags {
		ce.ResourceName = arn
	}
	return err
}

// firstError is the first of joined errors: the API answers one.
func firstError(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok && len(j.Unwrap()) > 0 {
		return j.Unwrap()[0]
	}
	return err
}
