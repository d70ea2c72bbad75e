package lambdaapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
)

// CheckTenant lets a tenant's key invoke a function with event only when
// the event is a JSON object that names that tenant and no other. The
// project's functions read the tenant from a member named "tenant" (at the
// top of a Task's input, or under "input" or "flow") or from an API
// Gateway event's custom:tenant claim: every member of either name, at
// any depth, must be a string equal to the key's tenant, and there must
// be one. A member given twice in one object is refused as well (a
// function's decoder would read one of them; encoding/json matches names
// without regard to case, so "Tenant" and "tenant" are the same member).
func CheckTenant(event []byte, tenant string) error {
	if b := bytes.TrimSpace(event); len(b) == 0 || b[0] != '{' {
		return errors.New("the event is not a JSON object naming its tenant")
	}
	named := 0
	err := walkMembers(event, func(name string, value json.Token) error {
		if !strings.EqualFold(name, "tenant") && !strings.EqualFold(name, "custom:tenant") {
			return nil
		}
		named++
		if s, ok := value.(string); !ok || s != tenant {
			return fmt.Errorf("the event's %s is not %s, the tenant of this key", name, tenant)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if named == 0 {
		return errors.New(`the event names no tenant (a "tenant" member, or an API event's custom:tenant claim)`)
	}
	return nil
}

// walkMembers calls member with the name of every object member of a
// JSON document, at any depth, and the first token of its value (a
// json.Delim for an object or array); a member given twice in one object
// (names compared without regard to case) is an error.
func walkMembers(doc []byte, member func(name string, value json.Token) error) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	type object struct {
		names map[string]bool
		key   bool // the next token is a member name
	}
	var stack []*object // nil for an array
	pending := ""       // the member whose value comes next
	hasPending := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if s, isName := tok.(string); len(stack) > 0 && stack[len(stack)-1] != nil && stack[len(stack)-1].key && isName {
			top := stack[len(stack)-1]
			folded := foldName(s)
			if top.names[folded] {
				return fmt.Errorf("the event gives the member %q twice", s)
			}
			top.names[folded], top.key = true, false
			pending, hasPending = s, true
			continue
		}
		if hasPending {
			hasPending = false
			if err := member(pending, tok); err != nil {
				return err
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &object{names: map[string]bool{}, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, nil)
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// a value ended: in an object, a name comes next
		if len(stack) > 0 && stack[len(stack)-1] != nil {
			stack[len(stack)-1].key = true
		}
	}
}

// foldName is name as encoding/json compares member names with a
// struct's fields: without regard to case, Unicode's included ("ſtep"
// and "step", "Key" and "key" are the same member to a decoder).
func foldName(name string) string {
	return strings.Map(func(r rune) rune { return unicode.ToUpper(unicode.ToLower(r)) }, name)
}
