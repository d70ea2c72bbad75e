package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// SchemaFor generates the strict JSON schema of the Go type of v, as OpenAI
// structured outputs (strict mode) require: every field is required (even
// with omitempty — strict mode rejects optional properties), objects forbid
// additional properties, pointers are nullable. Struct tags: `json` names
// the field, `enum:"A,B"` restricts a string, `desc:"…"` describes it.
func SchemaFor(v any) (json.RawMessage, error) {
	b, err := sharedSchema(reflect.TypeOf(v))
	return bytes.Clone(b), err
}

// sharedSchema is t's schema as kept: only read, never handed to callers
// of SchemaFor (Generate sends it with the request).
func sharedSchema(t reflect.Type) (json.RawMessage, error) {
	if b, ok := schemas.Load(t); ok {
		return b.([]byte), nil
	}
	s, err := schemaOf(t, "")
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	schemas.Store(t, b)
	return b, nil
}

// schemas holds SchemaFor's answers by Go type (a program has a fixed set
// of them): a structured call asks for its type's schema every time.
var schemas sync.Map // reflect.Type → []byte

// MustSchemaFor is SchemaFor for package-level schemas of fixed types.
func MustSchemaFor(v any) json.RawMessage {
	s, err := SchemaFor(v)
	if err != nil {
		panic(err)
	}
	return s
}

// Null is a field that must be JSON null: its schema is {"type": "null"}.
// A contract uses it where the protocol fixes a value to null (GEM5's
// score_dimension), so the schema encodes the rule instead of a check
// rejecting a legal answer after the fact.
type Null struct{}

// MarshalJSON writes null.
func (Null) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// UnmarshalJSON accepts only null.
func (*Null) UnmarshalJSON(b []byte) error {
	if string(b) != "null" {
		return fmt.Errorf("want null, got %s", b)
	}
	return nil
}

var nullType = reflect.TypeOf(Null{})

func schemaOf(t reflect.Type, where string) (map[string]any, error) {
	if t == nullType {
		return map[string]any{"type": "null"}, nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		inner, err := schemaOf(t.Elem(), where)
		if err != nil {
			return nil, err
		}
		if typ, ok := inner["type"].(string); ok && typ != "object" && typ != "array" {
			inner["type"] = []any{typ, "null"}
			return inner, nil
		}
		return map[string]any{"anyOf": []any{inner, map[string]any{"type": "null"}}}, nil
	case reflect.String:
		return map[string]any{"type": "string"}, nil
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, nil
	case reflect.Slice, reflect.Array:
		items, err := schemaOf(t.Elem(), where+"[]")
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": items}, nil
	case reflect.Struct:
		props := map[string]any{}
		required := []any{}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name := f.Name
			if tag, ok := f.Tag.Lookup("json"); ok {
				n, _, _ := strings.Cut(tag, ",")
				if n == "-" {
					continue
				}
				if n != "" {
					name = n
				}
			}
			fs, err := schemaOf(f.Type, where+"."+name)
			if err != nil {
				return nil, err
			}
			if enum, ok := f.Tag.Lookup("enum"); ok {
				vals := []any{}
				for _, e := range strings.Split(enum, ",") {
					vals = append(vals, e)
				}
				if f.Type.Kind() == reflect.Pointer {
					vals = append(vals, nil)
				}
				fs["enum"] = vals
			}
			if d, ok := f.Tag.Lookup("desc"); ok {
				fs["description"] = d
			}
			props[name] = fs
			required = append(required, name)
		}
		return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}, nil
	}
	return nil, fmt.Errorf("schema %s: unsupported Go type %s", strings.TrimPrefix(where, "."), t)
}

// Validate checks a JSON document against a schema made by SchemaFor and
// returns the first problem, naming its location ("content.findings[2].source").
func Validate(schema json.RawMessage, doc []byte) error {
	s, err := parsedSchema(schema)
	if err != nil {
		return err
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("not valid JSON: %w", err)
	}
	if dec.More() {
		return fmt.Errorf("not valid JSON: trailing data after the object")
	}
	return validate(s, v, "$")
}

// parsed holds the schemas Validate has decoded, by their text, at most
// maxParsed of them: every answer of an agent is checked against the same
// schema. The decoded schemas are only read.
var parsed struct {
	sync.Mutex
	m map[string]map[string]any
}

const maxParsed = 256

func parsedSchema(schema json.RawMessage) (map[string]any, error) {
	parsed.Lock()
	s, ok := parsed.m[string(schema)]
	parsed.Unlock()
	if ok {
		return s, nil
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("bad schema: %w", err)
	}
	parsed.Lock()
	defer parsed.Unlock()
	if parsed.m == nil || len(parsed.m) >= maxParsed {
		parsed.m = map[string]map[string]any{}
	}
	parsed.m[string(schema)] = s
	return s, nil
}

func validate(s map[string]any, v any, at string) error {
	if anyOf, ok := s["anyOf"].([]any); ok {
		var first error
		for _, alt := range anyOf {
			err := validate(alt.(map[string]any), v, at)
			if err == nil {
				return nil
			}
			if first == nil {
				first = err
			}
		}
		return first
	}
	if enum, ok := s["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			if e == v {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("%s: is not one of %v", at, enum)
		}
	}
	types := []string{}
	switch t := s["type"].(type) {
	case string:
		types = append(types, t)
	case []any:
		for _, e := range t {
			types = append(types, e.(string))
		}
	}
	if len(types) == 0 {
		return nil
	}
	var mismatch error
	for _, typ := range types {
		err := validateType(s, typ, v, at)
		if err == nil {
			return nil
		}
		if mismatch == nil {
			mismatch = err
		}
	}
	return mismatch
}

func validateType(s map[string]any, typ string, v any, at string) error {
	switch typ {
	case "null":
		if v != nil {
			return fmt.Errorf("%s: want null, got %s", at, kind(v))
		}
	case "string":
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%s: want a string, got %s", at, kind(v))
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s: want a boolean, got %s", at, kind(v))
		}
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return fmt.Errorf("%s: want an integer, got %s", at, kind(v))
		}
		if _, err := n.Int64(); err != nil {
			return fmt.Errorf("%s: want an integer, got %s", at, n)
		}
	case "number":
		if _, ok := v.(json.Number); !ok {
			return fmt.Errorf("%s: want a number, got %s", at, kind(v))
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: want an array, got %s", at, kind(v))
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, e := range arr {
				if err := validate(items, e, fmt.Sprintf("%s[%d]", at, i)); err != nil {
					return err
				}
			}
		}
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object, got %s", at, kind(v))
		}
		props, _ := s["properties"].(map[string]any)
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if _, ok := obj[r.(string)]; !ok {
					return fmt.Errorf("%s.%s: required field is missing", at, r)
				}
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ps, ok := props[k].(map[string]any)
			if !ok {
				if s["additionalProperties"] == false {
					return fmt.Errorf("%s: unexpected field %q", at, k)
				}
				continue
			}
			if err := validate(ps, obj[k], at+"."+k); err != nil {
				return err
			}
		}
	}
	return nil
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
