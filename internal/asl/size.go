package asl

// Payload size accounting. Every state's output must fit MaxPayloadBytes;
// measuring it exactly (jsonSize) walks the whole payload at every
// transition. The engine instead carries, along a machine's run, an upper
// bound on the size of the current payload, derived from how each state
// builds its output (a subtree of a document is no longer than the
// document; ResultPath adds the result and at most a few bytes per step of
// its path). While the bound is within the limit the payload is too, and
// nothing is walked; once it could be over, the output is measured exactly
// and the exact size becomes the new bound. So no real
// States.DataLimitExceeded is missed, and a payload near the limit is
// measured as before.

// verifySizeBounds, set by the package's tests, makes every state check
// its bound against the exact size (and panic if the bound is short).
var verifySizeBounds bool

// sizeUnknown marks a payload whose size has no known bound.
const sizeUnknown = -1

// within reports whether bound proves a payload fits the limit.
func within(bound int) bool { return bound >= 0 && bound <= MaxPayloadBytes }

// selectBound bounds what an InputPath or OutputPath selects from a
// document of size at most doc: {} for a null path, no more than the
// document for a path to one subtree of it (not $$ or a variable).
func selectBound(op optPath, doc int) int {
	switch {
	case op.null:
		return 2
	case doc < 0 || op.p == nil:
		return sizeUnknown
	case op.p.context || op.p.variable != "" || op.p.simple == nil:
		return sizeUnknown
	}
	return doc
}

// resultPathBound bounds ResultPath's output, mirroring path.set: the input
// for a null ResultPath, the result for "$", else the input with the result
// placed at the path, where each object step adds at most its key, a colon,
// a comma and the braces of an object it creates.
func resultPathBound(rp optPath, in, res int) int {
	switch {
	case rp.null:
		return in
	case res < 0 || rp.p == nil:
		return sizeUnknown
	case rp.p.identity || len(rp.p.simple) == 0:
		return res
	case in < 0:
		return sizeUnknown
	}
	n := in + res
	for _, s := range rp.p.simple {
		if k, ok := s.(string); ok {
			n += jsonStringSize(k) + 4
		}
	}
	return n
}
