package asl

import (
	"maps"
	"sync/atomic"
)

// ResultPath "$.x" (and a Catch's) returns the state input with one member
// set. Copying the input's map for that was, after parsing, the largest
// cost of a Task or Pass state: a Go map of even two members is 336 bytes,
// and the copy rehashes or copies its slots. An *overlay is that object
// without the copy: the input's map and the members set over it, read
// through (path.get descends into it), written and measured member by
// member, and made a map only when something needs the whole object as one
// (resolve, deepResolve), once. It stands wherever a *rawJSON may (raw.go)
// and is kept out of the same places. A payload template's object of at
// most maxOverlay members is built as an overlay too, of its members over
// no base.

// maxOverlay bounds the members an overlay sets over its base: setting
// one more makes a map, so that reading a member never walks far.
const maxOverlay = 4

// overlay is an object: base (a map that holds no overlay at its top
// level; nil for an object made only of set, such as a small Parameters
// object) with the members of set set over it, each key once.
type overlay struct {
	base map[string]any
	set  []member
	m    atomic.Pointer[map[string]any] // the object as a map, once made
}

// An overlay and its members are one allocation: 80 bytes with one
// member, 176 with four (maxOverlay), where a Go map of even one member
// is 336.
type (
	overlay1 struct {
		o overlay
		a [1]member
	}
	overlay2 struct {
		o overlay
		a [2]member
	}
	overlay3 struct {
		o overlay
		a [3]member
	}
	overlay4 struct {
		o overlay
		a [maxOverlay]member
	}
)

// makeOverlay returns an overlay of base with room for n ≤ maxOverlay
// members in set (which is empty).
func makeOverlay(base map[string]any, n int) *overlay {
	var (
		o   *overlay
		set []member
	)
	switch n {
	case 0, 1:
		h := new(overlay1)
		o, set = &h.o, h.a[:0]
	case 2:
		h := new(overlay2)
		o, set = &h.o, h.a[:0]
	case 3:
		h := new(overlay3)
		o, set = &h.o, h.a[:0]
	default:
		h := new(overlay4)
		o, set = &h.o, h.a[:0]
	}
	o.base, o.set = base, set
	return o
}

// newOverlay returns base with key set to val.
func newOverlay(base map[string]any, key string, val any) *overlay {
	o := makeOverlay(base, 1)
	o.set = append(o.set, member{key, val})
	return o
}

// get returns member key.
func (o *overlay) get(key string) (any, bool) {
	if i := memberIndex(o.set, key); i >= 0 {
		return o.set[i].val, true
	}
	v, ok := o.base[key]
	return v, ok
}

// with returns the object with key set to val: an overlay while few
// members are set, otherwise a map.
func (o *overlay) with(key string, val any) any {
	n := len(o.set)
	if !o.overrides(key) {
		n++
	}
	if n > maxOverlay {
		m := overlaid(o.base, o.set)
		m[key] = val
		return m
	}
	w := makeOverlay(o.base, n)
	replaced := false
	for _, s := range o.set {
		if s.key == key {
			s.val, replaced = val, true
		}
		w.set = append(w.set, s)
	}
	if !replaced {
		w.set = append(w.set, member{key, val})
	}
	return w
}

// overlaid returns a new map: base with the members of set set over it.
func overlaid(base map[string]any, set []member) map[string]any {
	m := make(map[string]any, len(base)+len(set))
	maps.Copy(m, base)
	for _, s := range set {
		m[s.key] = s.val
	}
	return m
}

// value returns the object as a map (made once and kept; its members may
// still be lazy values).
func (o *overlay) value() map[string]any {
	if p := o.m.Load(); p != nil {
		return *p
	}
	m := overlaid(o.base, o.set)
	if !o.m.CompareAndSwap(nil, &m) {
		return *o.m.Load()
	}
	return m
}

// size is jsonSize of the object.
func (o *overlay) size() int {
	n, count := 2, 0
	for k, v := range o.base {
		if o.overrides(k) {
			continue
		}
		n += jsonStringSize(k) + 1 + jsonSize(v)
		count++
	}
	for _, s := range o.set {
		n += jsonStringSize(s.key) + 1 + jsonSize(s.val)
		count++
	}
	return n + max(count-1, 0)
}

func (o *overlay) overrides(key string) bool { return memberIndex(o.set, key) >= 0 }

// MarshalJSON writes the object, for encoding/json.
func (o *overlay) MarshalJSON() ([]byte, error) { return marshalJSON(o.value()) }
