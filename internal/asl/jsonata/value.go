package jsonata

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"sort"
	"strconv"
)

// undefinedType is JSONata's "no value", distinct from JSON null (nil).
type undefinedType struct{}

// Undefined is the result of an expression that selects nothing, such as a
// path that matches no field. It is distinct from nil, which is JSON null.
var Undefined any = &undefinedType{}

// IsUndefined reports whether v is JSONata's undefined.
func IsUndefined(v any) bool { return v == Undefined }

// sequence is an internal array with the flags the JSONata evaluator keeps on
// arrays: a result sequence (flattened and collapsed to a single value when it
// has one item), an array built by a constructor (never flattened in a path),
// and the outer wrapper of an array given as input.
type sequence struct {
	items         []any
	seq           bool
	cons          bool
	keepSingleton bool
	outerWrapper  bool
	tupleStream   bool // items are tuples: map[string]any with "@" and bindings
}

func newSeq(items ...any) *sequence { return &sequence{items: items, seq: true} }

// asArray returns the items of an array value (a JSON array or an internal
// sequence) and whether v is one.
func asArray(v any) ([]any, bool) {
	switch a := v.(type) {
	case []any:
		return a, true
	case *sequence:
		return a.items, true
	}
	return nil, false
}

func isSeq(v any) bool {
	s, ok := v.(*sequence)
	return ok && s.seq
}

// toNumber accepts the numeric types a Go caller may put into the input.
func toNumber(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case float32:
		return float64(n), true
	case uint:
		return float64(n), true
	case uint64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

func isFunc(v any) bool {
	switch v.(type) {
	case *lambda, *builtin, Function, func(context.Context, []any) (any, error), *regexValue, *transformer:
		return true
	}
	return false
}

// recordOrder remembers the insertion order of the keys of an object the
// evaluation built (object constructors, $merge), so that $string, $keys,
// $each, * and the like list them as JavaScript would.
func (ev *evaluator) recordOrder(m map[string]any, order []string) {
	if ev == nil || len(m) < 2 {
		return
	}
	if ev.keyOrder == nil {
		ev.keyOrder = map[uintptr][]string{}
	}
	keys := make([]string, 0, len(m))
	for _, k := range order {
		if _, ok := m[k]; ok {
			keys = append(keys, k)
		}
	}
	ev.keyOrder[reflect.ValueOf(m).Pointer()] = keys
}

// keys lists an object's keys in JavaScript's order where it is known: keys
// that are array indexes first, ascending, then the others in insertion
// order. Objects from the input have no known order and list sorted.
func (ev *evaluator) keys(m map[string]any) []string {
	if ev != nil && ev.keyOrder != nil && len(m) > 1 {
		if ks, ok := ev.keyOrder[reflect.ValueOf(m).Pointer()]; ok && len(ks) == len(m) {
			valid := true
			for _, k := range ks {
				if _, ok := m[k]; !ok {
					valid = false
					break
				}
			}
			if valid {
				var idx, rest []string
				for _, k := range ks {
					if isArrayIndex(k) {
						idx = append(idx, k)
					} else {
						rest = append(rest, k)
					}
				}
				if len(idx) == 0 {
					return ks
				}
				sort.Slice(idx, func(i, j int) bool {
					a, _ := strconv.ParseUint(idx[i], 10, 32)
					b, _ := strconv.ParseUint(idx[j], 10, 32)
					return a < b
				})
				return append(idx, rest...)
			}
		}
	}
	return sortedKeys(m)
}

func isArrayIndex(k string) bool {
	if k == "" || len(k) > 10 || (len(k) > 1 && k[0] == '0') {
		return false
	}
	n, err := strconv.ParseUint(k, 10, 32)
	return err == nil && n < 1<<32-1
}

// sortedKeys gives a deterministic key order: Go maps do not keep insertion
// order, so JSONata's "order of the keys" is the sorted order here.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// finalize converts an internal value to the encoding/json model: sequences
// become []any (a one-item result sequence its item), recursively. Values
// that need no change are returned as they are, without copying.
func (ev *evaluator) finalize(v any) any {
	out, _ := ev.fin(v)
	return out
}

func (ev *evaluator) fin(v any) (any, bool) {
	ev.count()
	switch x := v.(type) {
	case *sequence:
		if x.seq && !x.keepSingleton {
			if len(x.items) == 0 {
				return Undefined, true
			}
			if len(x.items) == 1 {
				f, _ := ev.fin(x.items[0])
				return f, true
			}
		}
		out := make([]any, 0, len(x.items))
		for _, it := range x.items {
			if it == Undefined {
				out = append(out, nil) // as JSON.stringify writes it
				continue
			}
			f, _ := ev.fin(it)
			out = append(out, f)
		}
		return out, true
	case []any:
		var out []any
		for i, it := range x {
			f, changed := ev.fin(it)
			if out == nil {
				if !changed {
					continue
				}
				out = make([]any, i, len(x))
				copy(out, x[:i])
			}
			if f == Undefined {
				f = nil // as JSON.stringify writes it
			}
			out = append(out, f)
		}
		if out == nil {
			return x, false
		}
		return out, true
	case map[string]any:
		var out map[string]any
		for k, it := range x {
			f, changed := ev.fin(it)
			if !changed {
				continue
			}
			if out == nil {
				out = make(map[string]any, len(x))
				for k2, v2 := range x {
					out[k2] = v2
				}
			}
			if f == Undefined {
				delete(out, k)
			} else {
				out[k] = f
			}
		}
		if out == nil {
			return x, false
		}
		return out, true
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, true // as JSON.stringify writes them
		}
	case int, int64, int32, float32, uint, uint64, json.Number:
		f, _ := toNumber(x)
		return f, true
	}
	return v, false
}

func (ev *evaluator) deepEqual(a, b any) bool {
	ev.count()
	if a == Undefined || b == Undefined {
		return a == b
	}
	if an, ok := toNumber(a); ok {
		bn, ok := toNumber(b)
		return ok && an == bn
	}
	if aa, ok := asArray(a); ok {
		ba, ok := asArray(b)
		if !ok || len(aa) != len(ba) {
			return false
		}
		for i := range aa {
			if !ev.deepEqual(aa[i], ba[i]) {
				return false
			}
		}
		return true
	}
	if am, ok := a.(map[string]any); ok {
		bm, ok := b.(map[string]any)
		if !ok || len(am) != len(bm) {
			return false
		}
		for k, v := range am {
			w, ok := bm[k]
			if !ok || !ev.deepEqual(v, w) {
				return false
			}
		}
		return true
	}
	switch a.(type) {
	case string, bool, nil:
		return a == b
	}
	return a == b
}

func isInteger(f float64) bool { return f == math.Trunc(f) && !math.IsInf(f, 0) }
