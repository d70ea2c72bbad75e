package control

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/veredicto/veredicto/internal/asl"
)

// Versions and aliases, as Step Functions has them: a version is an
// immutable snapshot of a state machine's definition and role, numbered
// from 1 and never renumbered (a deleted version's number is not used
// again); an alias routes StartExecution to one version, or splits it
// between two by weight. Their ARNs qualify the machine's:
// stateMachine:<name>:<number> and stateMachine:<name>:<alias>.
//
// On disk, beside statemachines/<name>.json:
//
//	statemachines/<name>/versions/<number>.json
//	statemachines/<name>/aliases/<alias>.json
//
// and the machine's record keeps its revision and the last version number
// it gave, so numbers survive the deletion of the newest version.

// Bounds Step Functions sets per state machine.
const (
	MaxVersions = 1000
	MaxAliases  = 100
)

// Error codes of versions and aliases.
const (
	CodeConflict             = "ConflictException"
	CodeResourceNotFound     = "ResourceNotFound"
	CodeServiceQuotaExceeded = "ServiceQuotaExceededException"
)

// initialRevision is the revisionId that names a machine never updated.
const initialRevision = "INITIAL"

// Version is a published state machine version.
type Version struct {
	ARN, MachineARN string
	Number          int
	Created         time.Time
}

// Route sends Weight percent of an alias's starts to a version.
type Route struct {
	VersionARN string `json:"stateMachineVersionArn"`
	Weight     int    `json:"weight"`
}

// Alias is a state machine alias.
type Alias struct {
	ARN, Name, Description string
	Routing                []Route
	Created, Updated       time.Time
}

// versionMeta is statemachines/<name>/versions/<number>.json.
type versionMeta struct {
	ARN         string    `json:"stateMachineVersionArn"`
	Number      int       `json:"version"`
	Definition  string    `json:"definition"`
	RoleARN     string    `json:"roleArn"`
	Type        string    `json:"type"`
	RevisionID  string    `json:"revisionId,omitempty"`
	Description string    `json:"description,omitempty"`
	Created     time.Time `json:"creationDate"`
}

type version struct {
	meta       versionMeta
	machineARN string
	sm         *asl.StateMachine
}

// aliasMeta is statemachines/<name>/aliases/<alias>.json.
type aliasMeta struct {
	ARN         string    `json:"stateMachineAliasArn"`
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Routing     []Route   `json:"routingConfiguration"`
	Created     time.Time `json:"creationDate"`
	Updated     time.Time `json:"updateDate"`
}

func (a *aliasMeta) view() Alias {
	return Alias{ARN: a.ARN, Name: a.Name, Description: a.Description, Routing: append([]Route(nil), a.Routing...), Created: a.Created, Updated: a.Updated}
}

// catalog holds every machine's versions and aliases; guarded by
// Manager.mu.
type catalog struct {
	versions map[string]*version     // by version ARN
	aliases  map[string]*aliasMeta   // by alias ARN
	route    *rand.Rand              // picks an alias's version
	byName   map[string][]*aliasMeta // machine ARN → aliases, in creation order
}

func (c *catalog) init(src rand.Source) {
	c.versions, c.aliases, c.byName = map[string]*version{}, map[string]*aliasMeta{}, map[string][]*aliasMeta{}
	if src == nil {
		src = rand.NewPCG(rand.Uint64(), rand.Uint64())
	}
	c.route = rand.New(src)
}

// qualified splits a qualified state machine ARN (a version's or an
// alias's) into the machine's ARN and the qualifier.
func qualified(arn string) (machineARN, qualifier string, ok bool) {
	kind, rest, ok := parseARN(arn)
	if !ok || kind != "stateMachine" {
		return "", "", false
	}
	name, q, found := strings.Cut(rest, ":")
	if !found || name == "" || q == "" || strings.Contains(q, ":") {
		return "", "", false
	}
	return arn[:len(arn)-len(q)-1], q, true
}

// versionNumber is the number a version ARN names (ok false for an alias
// or a machine).
func versionNumber(arn string) (machineARN string, n int, ok bool) {
	machineARN, q, ok := qualified(arn)
	if !ok || strings.TrimLeft(q, "0123456789") != "" {
		return "", 0, false
	}
	n, err := strconv.Atoi(q)
	return machineARN, n, err == nil && n > 0
}

func machineDoesNotExist(arn string) error {
	return errorf(CodeStateMachineDoesNotExist, "State Machine Does Not Exist: '%s'", arn)
}

func resourceNotFound() error {
	return errorf(CodeResourceNotFound, "Request references a resource that does not exist.")
}

func (m *Manager) machineDir(name string) string { return filepath.Join(m.machinesDir(), name) }

// loadVersions reads a created machine's versions and aliases at Open. A
// file that does not decode, or whose definition no longer validates, is
// skipped with a warning.
func (m *Manager) loadVersions(mc *machine) error {
	dir := m.machineDir(mc.meta.Name)
	versions, err := os.ReadDir(filepath.Join(dir, "versions"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("control: %w", err)
	}
	for _, f := range versions {
		var meta versionMeta
		if !strings.HasSuffix(f.Name(), ".json") || strings.HasPrefix(f.Name(), ".") {
			continue
		}
		if err := readJSON(filepath.Join(dir, "versions", f.Name()), &meta); err != nil {
			m.log.Warn("a state machine version does not decode; skipped", "state_machine", mc.meta.Name, "file", f.Name(), "error", err)
			continue
		}
		sm, err := m.parseDefinition(meta.Definition)
		if err != nil {
			m.log.Warn("a state machine version no longer validates; skipped", "version", meta.ARN, "error", err)
			continue
		}
		m.vc.versions[meta.ARN] = &version{meta: meta, machineARN: mc.meta.ARN, sm: sm}
	}
	aliases, err := os.ReadDir(filepath.Join(dir, "aliases"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("control: %w", err)
	}
	var list []*aliasMeta
	for _, f := range aliases {
		if !strings.HasSuffix(f.Name(), ".json") || strings.HasPrefix(f.Name(), ".") {
			continue
		}
		a := new(aliasMeta)
		if err := readJSON(filepath.Join(dir, "aliases", f.Name()), a); err != nil {
			m.log.Warn("a state machine alias does not decode; skipped", "state_machine", mc.meta.Name, "file", f.Name(), "error", err)
			continue
		}
		m.vc.aliases[a.ARN] = a
		list = append(list, a)
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Created.Before(list[j].Created) })
	m.vc.byName[mc.meta.ARN] = list
	return nil
}

// dropVersions forgets a deleted machine's versions and aliases and
// removes their folder. The caller holds m.mu.
func (m *Manager) dropVersions(mc *machine) error {
	for arn, v := range m.vc.versions {
		if v.machineARN == mc.meta.ARN {
			delete(m.vc.versions, arn)
		}
	}
	for _, a := range m.vc.byName[mc.meta.ARN] {
		delete(m.vc.aliases, a.ARN)
	}
	delete(m.vc.byName, mc.meta.ARN)
	if err := os.RemoveAll(m.machineDir(mc.meta.Name)); err != nil {
		return fmt.Errorf("delete the versions of %s: %w", mc.meta.Name, err)
	}
	return nil
}

// newRevision is a revision id, as Step Functions makes them (a UUID).
func newRevision() string {
	h := newID()
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// createdMachine is the created machine arn names, for versions: a
// machine of template.yaml has none (it is registered anew at every start).
func (m *Manager) createdMachine(arn string) (*machine, error) {
	if err := checkMachineARN(arn); err != nil {
		return nil, err
	}
	mc, ok := m.machines[arn]
	if !ok {
		return nil, machineDoesNotExist(arn)
	}
	if mc.template {
		return nil, errorf(CodeValidation, "state machine %s is registered from the template at every start of the server: it has no versions or aliases; create a state machine through the API for them", mc.meta.Name)
	}
	return mc, nil
}

// PublishStateMachineVersion publishes the machine's current revision as
// a version; when revisionID is set ("INITIAL" for a machine never
// updated) only if it is the current one. A revision already published
// answers with its version (Step Functions' idempotency).
func (m *Manager) PublishStateMachineVersion(_ context.Context, machineARN, revisionID, description string) (Version, error) {
	if len(description) > 256 {
		return Version{}, errorf(CodeValidation, "1 validation error detected: Value at 'description' failed to satisfy constraint: Member must have length less than or equal to 256")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	mc, err := m.createdMachine(machineARN)
	if err != nil {
		return Version{}, err
	}
	current := mc.meta.RevisionID
	if current == "" {
		current = initialRevision
	}
	if revisionID != "" && revisionID != current {
		return Version{}, errorf(CodeConflict, "Failed to publish the State Machine version for revision %s. The current State Machine revision is %s.", revisionID, current)
	}
	var count int
	var same *version
	for _, v := range m.vc.versions {
		if v.machineARN != machineARN {
			continue
		}
		count++
		if v.meta.RevisionID == mc.meta.RevisionID && (same == nil || v.meta.Number > same.meta.Number) {
			same = v
		}
	}
	if same != nil {
		return same.view(), nil
	}
	if count >= MaxVersions {
		return Version{}, errorf(CodeServiceQuotaExceeded, "Maximum number of versions (%d) reached for state machine '%s'", MaxVersions, machineARN)
	}
	// The number is recorded before the version, so a crash between the
	// two leaves a gap, never a number given twice.
	next := &machine{meta: mc.meta, sm: mc.sm}
	next.meta.LastVersion++
	if err := writeAtomic(filepath.Join(m.machinesDir(), mc.meta.Name+".json"), next.meta); err != nil {
		return Version{}, fmt.Errorf("publish a version of %s: %w", mc.meta.Name, err)
	}
	m.machines[machineARN] = next
	n := next.meta.LastVersion
	v := &version{machineARN: machineARN, sm: mc.sm, meta: versionMeta{ARN: machineARN + ":" + strconv.Itoa(n), Number: n,
		Definition: mc.meta.Definition, RoleARN: mc.meta.RoleARN, Type: mc.meta.Type, RevisionID: mc.meta.RevisionID,
		Description: description, Created: m.now().UTC()}}
	if err := writeAtomic(filepath.Join(m.machineDir(mc.meta.Name), "versions", strconv.Itoa(n)+".json"), v.meta); err != nil {
		return Version{}, fmt.Errorf("publish version %d of %s: %w", n, mc.meta.Name, err)
	}
	m.vc.versions[v.meta.ARN] = v
	return v.view(), nil
}

func (v *version) view() Version {
	return Version{ARN: v.meta.ARN, MachineARN: v.machineARN, Number: v.meta.Number, Created: v.meta.Created}
}

// describeVersion is DescribeStateMachine of a version ARN. The caller
// holds m.mu.
func (m *Manager) describeVersion(arn string) (StateMachine, error) {
	v, ok := m.vc.versions[arn]
	if !ok {
		return StateMachine{}, machineDoesNotExist(arn)
	}
	name := strings.TrimPrefix(v.machineARN, arnPrefix+"stateMachine:")
	return StateMachine{ARN: arn, Name: name, Definition: v.meta.Definition, RoleARN: v.meta.RoleARN, Type: v.meta.Type,
		Created: v.meta.Created, RevisionID: v.meta.RevisionID, Description: v.meta.Description}, nil
}

// ListStateMachineVersions lists a machine's versions, newest first; next
// is the token a previous page returned.
func (m *Manager) ListStateMachineVersions(_ context.Context, machineARN, next string, max int) ([]Version, string, error) {
	if err := checkMachineARN(machineARN); err != nil {
		return nil, "", err
	}
	below, err := pageToken(next, 2)
	if err != nil {
		return nil, "", err
	}
	m.mu.Lock()
	var all []Version
	for _, v := range m.vc.versions {
		if v.machineARN == machineARN && (below == 0 || v.meta.Number < below) {
			all = append(all, v.view())
		}
	}
	m.mu.Unlock()
	sort.Slice(all, func(i, j int) bool { return all[i].Number > all[j].Number })
	if len(all) > max {
		return all[:max], strconv.Itoa(all[max-1].Number), nil
	}
	return all, "", nil
}

// pageToken is the number a list's nextToken holds (0 for the first
// page); one under least, or not a number, is InvalidToken.
func pageToken(next string, least int) (int, error) {
	if next == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(next)
	if err != nil || n < least {
		return 0, errorf(CodeInvalidToken, "Invalid Token: 'Invalid token'")
	}
	return n, nil
}

// DeleteStateMachineVersion deletes a version (a missing one is no error);
// its running executions go on. A version an alias routes to is refused.
func (m *Manager) DeleteStateMachineVersion(_ context.Context, arn string) error {
	machineARN, n, ok := versionNumber(arn)
	if !ok {
		return invalidArn(arn, "stateMachine")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.vc.versions[arn]
	if !ok {
		return nil
	}
	var names []string
	for _, a := range m.vc.byName[machineARN] {
		for _, r := range a.Routing {
			if r.VersionARN == arn {
				names = append(names, a.Name)
			}
		}
	}
	if len(names) > 0 {
		return errorf(CodeConflict, "Version to be deleted must not be referenced by an alias. Current list of aliases referencing this version: [%s]", strings.Join(names, ", "))
	}
	name := strings.TrimPrefix(v.machineARN, arnPrefix+"stateMachine:")
	if err := os.Remove(filepath.Join(m.machineDir(name), "versions", strconv.Itoa(n)+".json")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("delete version %s: %w", arn, err)
	}
	delete(m.vc.versions, arn)
	return nil
}

// aliasName is the form Step Functions gives alias names: at least one
// character that is not a digit, so an alias never reads as a version.
var aliasName = regexp.MustCompile(`^[a-zA-Z0-9_.-]+$`)

func checkAliasName(name string) error {
	switch {
	case len(name) == 0:
		return errorf(CodeValidation, "1 validation error detected: Value at 'name' failed to satisfy constraint: Member must have length greater than or equal to 1")
	case len(name) > 80:
		return errorf(CodeValidation, "1 validation error detected: Value '%s' at 'name' failed to satisfy constraint: Member must have length less than or equal to 80", name)
	case !aliasName.MatchString(name) || strings.Trim(name, "0123456789") == "":
		return errorf(CodeValidation, `1 validation error detected: Value '%s' at 'name' failed to satisfy constraint: Member must satisfy regular expression pattern: ^(?=.*[a-zA-Z_\-\.])[a-zA-Z0-9_\-\.]+$`, name)
	}
	return nil
}

// checkRouting validates a routing configuration as Step Functions does
// and returns the machine its versions belong to. The caller holds m.mu.
func (m *Manager) checkRouting(routing []Route) (string, error) {
	switch {
	case len(routing) == 0:
		return "", errorf(CodeValidation, "1 validation error detected: Value '[]' at 'routingConfiguration' failed to satisfy constraint: Member must have length greater than or equal to 1")
	case len(routing) > 2:
		items := make([]string, len(routing))
		for i, r := range routing {
			items[i] = fmt.Sprintf("RoutingConfigurationListItem(stateMachineVersionArn=%s, weight=%d)", r.VersionARN, r.Weight)
		}
		return "", errorf(CodeValidation, "1 validation error detected: Value '[%s]' at 'routingConfiguration' failed to satisfy constraint: Member must have length less than or equal to 2", strings.Join(items, ", "))
	}
	arns, weights := make([]string, len(routing)), make([]string, len(routing))
	sum := 0
	for i, r := range routing {
		if r.Weight < 0 || r.Weight > 100 {
			bound := "less than or equal to 100"
			if r.Weight < 0 {
				bound = "greater than or equal to 0"
			}
			return "", errorf(CodeValidation, "1 validation error detected: Value '%d' at 'routingConfiguration.%d.member.weight' failed to satisfy constraint: Member must have value %s", r.Weight, i+1, bound)
		}
		arns[i], weights[i] = r.VersionARN, strconv.Itoa(r.Weight)
		sum += r.Weight
	}
	received := "[" + strings.Join(arns, ", ") + "]"
	var machineARN string
	for _, r := range routing {
		owner, _, ok := versionNumber(r.VersionARN)
		if !ok {
			return "", errorf(CodeValidation, "Routing configuration must contain state machine version ARNs. Received: %s", received)
		}
		if machineARN != "" && owner != machineARN {
			return "", errorf(CodeValidation, "Routing configuration must contain state machine version ARNs of the same state machine. Received: %s", received)
		}
		machineARN = owner
	}
	if len(routing) == 2 && routing[0].VersionARN == routing[1].VersionARN {
		return "", errorf(CodeValidation, "Routing configuration must contain distinct state machine version ARNs. Received: %s", received)
	}
	if sum != 100 {
		return "", errorf(CodeValidation, "Sum of routing configuration weights must equal 100. Received: [%s]", strings.Join(weights, ", "))
	}
	if _, err := m.createdMachine(machineARN); err != nil {
		return "", err
	}
	for _, r := range routing {
		if _, ok := m.vc.versions[r.VersionARN]; !ok {
			return "", resourceNotFound()
		}
	}
	return machineARN, nil
}

func sameRouting(a, b []Route) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// CreateStateMachineAlias creates an alias of the machine whose versions
// routing names. The same name with the same description and routing
// answers with the existing alias; with others, ConflictException.
func (m *Manager) CreateStateMachineAlias(_ context.Context, name, description string, routing []Route) (Alias, error) {
	if err := checkAliasName(name); err != nil {
		return Alias{}, err
	}
	if len(description) > 256 {
		return Alias{}, errorf(CodeValidation, "1 validation error detected: Value at 'description' failed to satisfy constraint: Member must have length less than or equal to 256")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	machineARN, err := m.checkRouting(routing)
	if err != nil {
		return Alias{}, err
	}
	arn := machineARN + ":" + name
	if old, ok := m.vc.aliases[arn]; ok {
		if old.Description == description && sameRouting(old.Routing, routing) {
			return old.view(), nil
		}
		return Alias{}, errorf(CodeConflict, "Failed to create alias because an alias with the same name and a different routing configuration already exists.")
	}
	if len(m.vc.byName[machineARN]) >= MaxAliases {
		return Alias{}, errorf(CodeServiceQuotaExceeded, "Maximum number of aliases (%d) reached for state machine '%s'", MaxAliases, machineARN)
	}
	now := m.now().UTC()
	a := &aliasMeta{ARN: arn, Name: name, Description: description, Routing: append([]Route(nil), routing...), Created: now, Updated: now}
	if err := m.writeAlias(machineARN, a); err != nil {
		return Alias{}, err
	}
	m.vc.aliases[arn] = a
	m.vc.byName[machineARN] = append(m.vc.byName[machineARN], a)
	return a.view(), nil
}

func (m *Manager) writeAlias(machineARN string, a *aliasMeta) error {
	name := strings.TrimPrefix(machineARN, arnPrefix+"stateMachine:")
	if err := writeAtomic(filepath.Join(m.machineDir(name), "aliases", a.Name+".json"), a); err != nil {
		return fmt.Errorf("write alias %s: %w", a.ARN, err)
	}
	return nil
}

// alias is the alias arn names. The caller holds m.mu.
func (m *Manager) alias(arn string) (*aliasMeta, error) {
	machineARN, q, ok := qualified(arn)
	if !ok || checkAliasName(q) != nil {
		return nil, invalidArn(arn, "stateMachine")
	}
	a, ok := m.vc.aliases[arn]
	if !ok || m.machines[machineARN] == nil {
		return nil, resourceNotFound()
	}
	return a, nil
}

// DescribeStateMachineAlias returns an alias.
func (m *Manager) DescribeStateMachineAlias(_ context.Context, arn string) (Alias, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, err := m.alias(arn)
	if err != nil {
		return Alias{}, err
	}
	return a.view(), nil
}

// ListStateMachineAliases lists a machine's aliases in the order they were
// created or, for a version ARN, the aliases that route to that version.
func (m *Manager) ListStateMachineAliases(_ context.Context, arn, next string, max int) ([]Alias, string, error) {
	machineARN, version := arn, ""
	if owner, _, ok := versionNumber(arn); ok {
		machineARN, version = owner, arn
	} else if err := checkMachineARN(arn); err != nil {
		return nil, "", err
	}
	from, err := pageToken(next, 1)
	if err != nil {
		return nil, "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.machines[machineARN]; !ok {
		return nil, "", machineDoesNotExist(machineARN)
	}
	if version != "" && m.vc.versions[version] == nil {
		return nil, "", resourceNotFound()
	}
	var all []Alias
	for _, a := range m.vc.byName[machineARN] {
		for _, r := range a.Routing {
			if version == "" || r.VersionARN == version {
				all = append(all, a.view())
				break
			}
		}
	}
	if from > len(all) {
		return nil, "", errorf(CodeInvalidToken, "Invalid Token: 'Invalid token'")
	}
	all = all[from:]
	if len(all) > max {
		return all[:max], strconv.Itoa(from + max), nil
	}
	return all, "", nil
}

// UpdateStateMachineAlias changes an alias's description (when set),
// its routing (when given) or both.
func (m *Manager) UpdateStateMachineAlias(_ context.Context, arn string, description *string, routing []Route) (time.Time, error) {
	if description == nil && routing == nil {
		return time.Time{}, errorf(CodeValidation, "Either the description or the routing configuration must be specified")
	}
	if description != nil && len(*description) > 256 {
		return time.Time{}, errorf(CodeValidation, "1 validation error detected: Value at 'description' failed to satisfy constraint: Member must have length less than or equal to 256")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	a, err := m.alias(arn)
	if err != nil {
		return time.Time{}, err
	}
	machineARN, _, _ := qualified(arn)
	next := *a
	if routing != nil {
		owner, err := m.checkRouting(routing)
		if err != nil {
			return time.Time{}, err
		}
		if owner != machineARN {
			return time.Time{}, errorf(CodeValidation, "Routing configuration must contain state machine version ARNs of the alias's state machine. Received: %s", routing[0].VersionARN)
		}
		next.Routing = append([]Route(nil), routing...)
	}
	if description != nil {
		next.Description = *description
	}
	next.Updated = m.now().UTC()
	if err := m.writeAlias(machineARN, &next); err != nil {
		return time.Time{}, err
	}
	*a = next
	return next.Updated, nil
}

// DeleteStateMachineAlias deletes an alias (a missing one is no error);
// the versions it routed to stay.
func (m *Manager) DeleteStateMachineAlias(_ context.Context, arn string) error {
	machineARN, q, ok := qualified(arn)
	if !ok || checkAliasName(q) != nil {
		return invalidArn(arn, "stateMachine")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.vc.aliases[arn]
	if !ok {
		return nil
	}
	name := strings.TrimPrefix(machineARN, arnPrefix+"stateMachine:")
	if err := os.Remove(filepath.Join(m.machineDir(name), "aliases", a.Name+".json")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("delete alias %s: %w", arn, err)
	}
	delete(m.vc.aliases, arn)
	list := m.vc.byName[machineARN]
	for i, x := range list {
		if x == a {
			m.vc.byName[machineARN] = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	return nil
}

// target is what StartExecution runs: a machine's current definition, or
// a version's (named, or picked by an alias).
type target struct {
	mc         *machine
	definition string
	typ        string
	sm         *asl.StateMachine
	versionARN string
	aliasARN   string
	testCase   string // the mock configuration's test case it runs (mock.go)
}

// target resolves the ARN StartExecution was given: a machine, a version
// or an alias, which picks one of its versions by weight. The caller
// holds m.mu.
func (m *Manager) target(arn string) (target, error) {
	if err := checkMachineARN(arn); err == nil {
		mc, ok := m.machines[arn]
		if !ok {
			return target{}, machineDoesNotExist(arn)
		}
		return target{mc: mc, definition: mc.meta.Definition, typ: mc.meta.Type, sm: mc.sm}, nil
	}
	machineARN, q, ok := qualified(arn)
	if !ok {
		return target{}, invalidArn(arn, "stateMachine")
	}
	mc, ok := m.machines[machineARN]
	if !ok {
		return target{}, machineDoesNotExist(arn)
	}
	t := target{mc: mc}
	if _, _, isVersion := versionNumber(arn); !isVersion {
		a, ok := m.vc.aliases[arn]
		if !ok || checkAliasName(q) != nil {
			return target{}, machineDoesNotExist(arn)
		}
		t.aliasARN, t.versionARN = arn, a.Routing[0].VersionARN
		if len(a.Routing) == 2 && m.vc.route.IntN(100) >= a.Routing[0].Weight {
			t.versionARN = a.Routing[1].VersionARN
		}
	} else {
		t.versionARN = arn
	}
	v, ok := m.vc.versions[t.versionARN]
	if !ok {
		return target{}, machineDoesNotExist(t.versionARN)
	}
	t.definition, t.typ, t.sm = v.meta.Definition, v.meta.Type, v.sm
	return t, nil
}
