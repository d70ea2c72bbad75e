package lambdaapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// CheckTenant lets a tenant's key invoke a function with event only when
// the event names that tenant where the project's functions read it: its
// "tenant" member (a Task's input), or the custom:tenant claim of an API
// Gateway event (requestContext.authorizer.jwt.claims), and names no
// other. An event naming neither, naming another tenant, or with a member
// given twice at any depth (a function's decoder would read one of them,
// which one depends on it; encoding/json matches names without regard to
// case, so "Tenant" and "tenant" are the same member) is refused.
func CheckTenant(event []byte, tenant string) error {
	if err := uniqueMembers(event); err != nil {
		return err
	}
	var ev struct {
		Tenant         json.RawMessage `json:"tenant"`
		RequestContext struct {
			Authorizer struct {
				JWT struct {
					Claims map[string]json.RawMessage `json:"claims"`
				} `json:"jwt"`
			} `json:"authorizer"`
		} `json:"requestContext"`
	}
	if bytes.TrimSpace(event)[0] != '{' {
		return errors.New("the event is not a JSON object naming its tenant")
	}
	json.Unmarshal(event, &ev) // members of unexpected types are checked below
	named := 0
	for _, v := range []json.RawMessage{ev.Tenant, ev.RequestContext.Authorizer.JWT.Claims["custom:tenant"]} {
		if v == nil {
			continue
		}
		named++
		var s string
		if json.Unmarshal(v, &s) != nil || s != tenant {
			return fmt.Errorf("the event's tenant is not %s, the tenant of this key", tenant)
		}
	}
	if named == 0 {
		return errors.New(`the event names no tenant (a "tenant" member, or an API event's custom:tenant claim)`)
	}
	return nil
}

// uniqueMembers refuses a JSON document with an object member given twice
// (names compared without regard to case).
func uniqueMembers(doc []byte) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	type object struct {
		names map[string]bool
		key   bool // the next token is a member name
	}
	var stack []*object
	for {
		tok, err := dec.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		var top *object
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if s, isName := tok.(string); top != nil && top.key && isName {
			name := strings.ToLower(s)
			if top.names[name] {
				return fmt.Errorf("the event gives the member %q twice", s)
			}
			top.names[name] = true
			top.key = false
			continue
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
