// Package jsonata is a parser and evaluator for the JSONata 2.0.6 query and
// transformation language, the version AWS Step Functions documents for
// QueryLanguage "JSONata" (without $eval).
//
// # Why a package of our own
//
// The Go library that exists, github.com/blues/jsonata-go, implements the
// older JSONata 1.5 language; adopting it would mean finding and patching
// every behaviour that changed up to 2.0.6, with no way to prove the result
// matches. This package implements the 2.0.6 semantics directly, written
// from the JSONata documentation, and is checked differentially against
// the reference implementation, jsonata@2.0.6 from npm: testdata/corpus.json holds
// several hundred expressions with inputs, scripts/jsonata-crosscheck.mjs
// records the reference's outcome of each (result, undefined, function or
// error code) in testdata/expected.json (make jsonata-expected), and
// TestCorpusMatchesReference compares this evaluator with it on every
// go test; make test-node re-runs the reference to check that the
// recorded file is current.
//
// # Use
//
// Compile parses an expression once; a syntax error is an *Error carrying
// the JSONata code (S0xxx), the 1-based position and a message. Eval runs
// it against a value in the encoding/json model (map[string]any, []any,
// float64, string, bool, nil) with variable bindings such as AWS's
// $states; the result is in the same model, or Undefined when the
// expression selects nothing (distinct from nil, JSON null). An evaluation
// error is an *Error with the reference's code (T0410, T2001, D3001, …).
// WithFunction adds Go functions ($partition, $uuid, … for ASL). An Expr
// is immutable and safe for concurrent use. Input and bindings must be in
// the encoding/json model (Go ints are accepted as numbers); other Go types
// are opaque to expressions.
//
// # Bounds
//
// Evaluation depth (recursion, including user function calls) and the
// number of evaluation steps are bounded (WithMaxDepth, WithMaxSteps; by
// default 500 and 10 million): a runaway expression ends with error U1001
// (depth) or U1002 (steps), and Eval stops with the context's error when
// ctx is cancelled. Steps include the traversals of values (equality,
// copies, serialisation, field lookups), because a few reductions can
// build a value that shares itself exponentially. Strings built by the
// evaluation are bounded to 16 MiB and arrays to 10 million items
// (WithMaxSize; error U1003), so that doubling a value in a loop cannot
// exhaust memory. The parser bounds nesting to 500 levels (U1001). The
// range operator refuses sequences over 10 million items (D2014), as the
// reference does. The reference itself has no such bounds (its
// asynchronous recursion runs until the process is out of memory).
//
// # Supported
//
// Paths, predicates, array and object constructors, wildcards * and **,
// the parent operator %, the focus (@$v) and index (#$i) variable bindings
// with their tuple streams (joins, grouping), arithmetic, comparison,
// and/or, &, ranges, conditionals, 'in', variable binding, blocks, lambdas
// with closures and signatures, partial application, function application
// and chaining (~>), order-by ^( ), grouping with object constructors,
// regular expressions, transforms |pattern|update,delete|, and the
// built-in function library of 2.0.6 except $eval. $now and $millis
// return the same instant throughout one Eval, as in the reference.
//
// # Not supported, and deliberate differences
//
//   - Regular expressions are compiled with Go's RE2 syntax, not
//     JavaScript's: look-around and back-references are compile errors
//     (S0303). Match indexes are in UTF-16 code units, as in JavaScript.
//   - Go maps keep no key order. Objects the expression builds (object
//     constructors, $merge, $sift, transforms, $clone) remember their
//     insertion order during the evaluation, so $string, $keys, $each, *
//     and the like list their keys as the reference does; objects from the
//     input, which arrives as map[string]any, list their keys sorted. The
//     result of Eval is a plain map: its key order is lost.
//   - $formatInteger supports decimal, letter (a, A), roman (i, I, up to a
//     million) and English word (w, W, Ww) pictures with the ordinal
//     modifier; $parseInteger decimal, letter and roman ones (not words).
//     The date/time pictures of $fromMillis, $toMillis and $now support
//     the components Y M D d H h m s f P Z z F with those presentations and
//     names, not W w X x E C; parsing ($toMillis with a picture) handles
//     numeric components, month and day names, am/pm and offsets.
//   - The elvis (?:) and coalescing (??) operators belong to later JSONata
//     versions; like jsonata@2.0.6, this evaluator rejects them (S0211).
//   - Where the reference fails with a JavaScript exception rather than a
//     JSONata error ($pad with a non-integer width, $contains with an
//     undefined pattern), this evaluator returns a result or a T0410;
//     where the reference pastes a replacement function's JavaScript
//     source into the result ($replace with a string pattern and a
//     function), this evaluator calls the function;
//     where the reference wrongly rejects calling a partial application
//     directly ($f(?)(x), S0208), this evaluator calls it.
//   - When an expression has several errors in sibling expressions (the
//     members of an array or object constructor), the reference evaluates
//     those concurrently and reports whichever fails first; this evaluator
//     goes left to right, so it may report another of the errors.
//   - Non-finite numbers (1/0) come out as nil, as JSON.stringify writes
//     them. Kept from the reference on purpose: $base64encode encodes each
//     UTF-16 unit's low byte (Latin-1), and $base64decode decodes to
//     Latin-1, and a negative time zone offset with minutes is written as
//     the reference floors it ("-0330" gives "-04:30").
package jsonata
