package asl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Buckets is where a Distributed Map reads its items (ItemReader) and
// writes its results (ResultWriter): S3 on AWS; under "veredicto serve" the
// local buckets, which package control confines to the execution's tenant
// (StartOptions.Buckets). Errors are reported in the Map's States.
// ItemReaderFailed or States.ResultWriterFailed cause, by their text.
type Buckets interface {
	// List calls fn with every object of bucket whose key starts with
	// prefix, in key order, as S3's ListObjectsV2 lists them; it stops at
	// the first error fn returns and returns it.
	List(ctx context.Context, bucket, prefix string, fn func(Object) error) error
	// Open opens an object for reading.
	Open(ctx context.Context, bucket, key string) (io.ReadCloser, error)
	// Put writes an object, replacing any previous one.
	Put(ctx context.Context, bucket, key string, body []byte) error
}

// Object is one object of a bucket's listing.
type Object struct {
	Key          string
	Size         int64
	ETag         string // quoted, as S3 reports it
	LastModified time.Time
}

// item is an Object as a listing's item: the members Step Functions
// passes for each object ListObjectsV2 returns.
func (o Object) item() map[string]any {
	return map[string]any{"Etag": o.ETag, "Key": o.Key, "LastModified": o.LastModified.Unix(), "Size": o.Size, "StorageClass": "STANDARD"}
}

// readerRequest is what an ItemReader reads, once its Parameters (or
// Arguments) are evaluated.
type readerRequest struct {
	bucket, key, prefix string
	maxItems            int64 // 0: every item
}

// errNoBuckets is an ItemReader's or ResultWriter's failure when the
// execution has no buckets (StartOptions.Buckets).
var errNoBuckets = errors.New("no bucket is reachable from this execution: run it under \"veredicto serve\", whose local buckets are folders of its --data")

// readItems calls yield with each item the reader reads, at most
// req.maxItems of them. An object is streamed, never read whole: a JSON
// array item by item, JSON Lines and CSV line by line. The error is the
// ItemReader's failure (States.ItemReaderFailed), or yield's own.
func (rd *itemReader) readItems(ctx context.Context, b Buckets, req readerRequest, yield func(any) error) error {
	if b == nil {
		return readerFailed("%v", errNoBuckets)
	}
	n := int64(0)
	emit := func(v any) error {
		if req.maxItems > 0 && n >= req.maxItems {
			return errEnough
		}
		n++
		if err := yield(v); err != nil {
			return &yieldError{err}
		}
		return nil
	}
	var err error
	if rd.resource == resourceListObjects {
		err = b.List(ctx, req.bucket, req.prefix, func(o Object) error { return emit(o.item()) })
	} else {
		err = rd.readObject(ctx, b, req, emit)
	}
	var y *yieldError
	var se *StatesError
	switch {
	case err == nil, errors.Is(err, errEnough):
		return nil
	case errors.As(err, &y):
		return y.err
	case errors.As(err, &se):
		return se
	}
	return readerFailed("%v", err)
}

// errEnough stops a read once MaxItems items are read.
var errEnough = errors.New("enough items")

// yieldError carries the error the consumer of the items returned, which
// must not be mistaken for the reader's own.
type yieldError struct{ err error }

func (e *yieldError) Error() string { return e.err.Error() }
func (e *yieldError) Unwrap() error { return e.err }

func readerFailed(format string, args ...any) *StatesError {
	return newError(ErrItemReaderFailed, format, args...)
}

// readData reads the items of data as the reader would read its source
// (a listing's items are a JSON array), at most maxItems of them.
func (rd *itemReader) readData(data []byte, maxItems int64, yield func(any) error) error {
	n := int64(0)
	emit := func(v any) error {
		if maxItems > 0 && n >= maxItems {
			return errEnough
		}
		n++
		return yield(v)
	}
	r := bytes.NewReader(data)
	var err error
	switch rd.inputType {
	case "JSONL":
		err = readJSONLines(r, emit)
	case "CSV":
		err = rd.readCSV(r, emit)
	default:
		err = readJSONArray(r, emit)
	}
	if errors.Is(err, errEnough) {
		return nil
	}
	return err
}

// readObject reads the items of one object.
func (rd *itemReader) readObject(ctx context.Context, b Buckets, req readerRequest, emit func(any) error) error {
	if rd.inputType == "MANIFEST" || rd.inputType == "PARQUET" {
		return readerFailed("ReaderConfig InputType %s is not read by this engine", rd.inputType)
	}
	f, err := b.Open(ctx, req.bucket, req.key)
	if err != nil {
		return err
	}
	defer f.Close()
	switch rd.inputType {
	case "JSON":
		return readJSONArray(f, emit)
	case "JSONL":
		return readJSONLines(f, emit)
	}
	return rd.readCSV(f, emit)
}

// readJSONArray streams the elements of a JSON array. Anything else is
// AWS's "Attempting to map over non-iterable node."
func readJSONArray(r io.Reader, yield func(any) error) error {
	dec := json.NewDecoder(bufio.NewReader(r))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return readerFailed("the object is not JSON: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return readerFailed("Attempting to map over non-iterable node.")
	}
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return readerFailed("the object is not a JSON array: %v", err)
		}
		v, err := parseJSON(raw)
		if err != nil {
			return readerFailed("the object is not a JSON array: %v", err)
		}
		if err := yield(v); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return readerFailed("the object is not a JSON array: %v", err)
	}
	return nil
}

// maxLineBytes bounds one line of a JSON Lines or CSV object: a line is
// an item, and an item is at most a state's payload.
const maxLineBytes = MaxPayloadBytes + 1

// readJSONLines streams the values of a JSON Lines object, one a line
// (blank lines skipped).
func readJSONLines(r io.Reader, yield func(any) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxLineBytes)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		v, err := parseJSON([]byte(text))
		if err != nil {
			return readerFailed("line %d of the JSON Lines object is not JSON: %v", line, err)
		}
		if err := yield(v); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return readerFailed("read the JSON Lines object: %v", err)
	}
	return nil
}

// readCSV streams a CSV object's rows as objects of the header's names,
// every value a string: a missing value is "", a value beyond the header
// dropped, as Step Functions reads them.
func (rd *itemReader) readCSV(r io.Reader, yield func(any) error) error {
	cr := csv.NewReader(bufio.NewReader(r))
	cr.Comma = rd.csvDelimiter
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = true
	headers := rd.csvHeaders
	if rd.csvHeaderRow {
		row, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return readerFailed("read the CSV header: %v", err)
		}
		headers = append([]string(nil), row...)
	}
	seen := make(map[string]bool, len(headers))
	for _, h := range headers {
		if seen[h] {
			return readerFailed("CSV headers cannot contain duplicates.")
		}
		seen[h] = true
	}
	for {
		row, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return readerFailed("read the CSV object: %v", err)
		}
		item := make(map[string]any, len(headers))
		for i, h := range headers {
			v := ""
			if i < len(row) {
				v = row[i]
			}
			item[h] = v
		}
		if err := yield(item); err != nil {
			return err
		}
	}
}

// readerRequestOf evaluates an ItemReader's Parameters (JSONPath, against
// the Map's effective input) or Arguments (JSONata) and its MaxItems.
func (r *stateRun) readerRequestOf(ctx context.Context, rd *itemReader, input, eff any) (readerRequest, error) {
	var args any
	var err error
	switch {
	case rd.args != nil:
		args, err = rd.args.eval(r.jsonataEnv(ctx, input, nil), "ItemReader/Arguments")
	case rd.params != nil:
		args, err = rd.params.eval(r.scope(eff))
	}
	if err != nil {
		return readerRequest{}, err
	}
	m, _ := resolve(args).(map[string]any)
	req := readerRequest{}
	var ok bool
	if req.bucket, ok = stringMember(m, "Bucket"); !ok {
		return req, newError(ErrRuntime, "The ItemReader's Bucket must be a string, got %s", describe(m["Bucket"], m["Bucket"] != nil))
	}
	if rd.resource == resourceGetObject {
		if req.key, ok = stringMember(m, "Key"); !ok {
			return req, newError(ErrRuntime, "The ItemReader's Key must be a string, got %s", describe(m["Key"], m["Key"] != nil))
		}
	} else {
		req.prefix, _ = stringMember(m, "Prefix")
	}
	n, err := r.numValue(ctx, rd.maxItems, input, eff, true)
	if err != nil {
		return req, err
	}
	switch {
	case n < 0:
		return req, readerFailed("field MaxItems must be positive")
	case n > MaxMapRunItems:
		n = 0 // beyond the limit: every item, as on AWS
	}
	req.maxItems = int64(n)
	return req, nil
}

func stringMember(m map[string]any, k string) (string, bool) {
	s, ok := resolve(m[k]).(string)
	return s, ok
}

// numValue evaluates a numeric field of a Distributed Map: literal, from
// its …Path (JSONPath, against the effective input) or an expression
// (JSONata). integer demands a whole number. An absent field is 0.
func (r *stateRun) numValue(ctx context.Context, f numField, input, eff any, integer bool) (float64, error) {
	switch {
	case f.expr != nil:
		v, err := f.expr.eval(r.jsonataEnv(ctx, input, nil), f.name)
		if err != nil {
			return 0, err
		}
		n, ok := asFloat(v)
		if !ok || (integer && n != float64(int64(n))) {
			want := "number"
			if integer {
				want = "integer"
			}
			return 0, queryError(f.name, "The JSONata expression '%s' specified for the field '%s' returned an unexpected result type. Expected '%s', but was '%s' for value: %s", f.expr.src, f.name, want, typeName(v), describe(v, true))
		}
		return n, nil
	case f.path != nil:
		v, found := r.scope(eff).lookup(f.path)
		if !found {
			return 0, newError(ErrRuntime, "Invalid path '%s' : No results for path: %s", f.path.raw, f.path.normalized())
		}
		n, ok := asFloat(v)
		if !ok || (integer && n != float64(int64(n))) {
			s, isStr := v.(string)
			if !isStr {
				b, _ := marshalJSON(v)
				s = string(b)
			}
			return 0, newError(ErrRuntime, "The %sPath field refers to value \"%s\" which is not a valid %s: %s", f.name, s, map[bool]string{true: "integer", false: "number"}[integer], f.path.raw)
		}
		return n, nil
	case f.set:
		return f.lit, nil
	}
	return 0, nil
}

// String names a bucket object as S3 URIs do, for causes and logs.
func objectURI(bucket, key string) string { return fmt.Sprintf("s3://%s/%s", bucket, key) }
