package asl

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Distributed Map states: loading them. A Map whose ItemProcessor's
// ProcessorConfig has Mode DISTRIBUTED runs each item (or batch of items)
// as a child execution of the item processor, reads its items from the
// state input or through an ItemReader (a bucket's listing, or a JSON,
// JSON Lines or CSV object), may batch them (ItemBatcher), write the
// children's results to a bucket (ResultWriter) and tolerate some failed
// items (ToleratedFailureCount, ToleratedFailurePercentage): "Using Map
// state in Distributed mode" in the Step Functions developer guide. How
// they run is maprun.go.

// Limits of a Distributed Map, as Step Functions documents them.
const (
	// MaxMapRunItems is the most items a ReaderConfig's MaxItems limits
	// a run to; a larger MaxItems reads every item, as on AWS.
	MaxMapRunItems = 100_000_000
	// MaxBatchBytes bounds MaxInputBytesPerBatch: a child's input is a
	// state payload.
	MaxBatchBytes = MaxPayloadBytes
	// maxLabelLength bounds a Map state's Label.
	maxLabelLength = 40
)

// Execution types of a Distributed Map's children.
const (
	ChildStandard = "STANDARD"
	ChildExpress  = "EXPRESS"
)

// The S3 API actions a Distributed Map reads and writes through.
const (
	resourceListObjects = "arn:aws:states:::s3:listObjectsV2"
	resourceGetObject   = "arn:aws:states:::s3:getObject"
	resourcePutObject   = "arn:aws:states:::s3:putObject"
)

// distributed is a DISTRIBUTED Map state's configuration.
type distributed struct {
	executionType string // STANDARD or EXPRESS
	// definition is the item processor as a state machine definition of
	// its own (without ProcessorConfig, with the machine's QueryLanguage),
	// what a child execution runs and records.
	definition []byte
	label      string
	reader     *itemReader
	batcher    *itemBatcher
	writer     *resultWriter

	toleratedCount   numField
	toleratedPercent numField
}

// itemReader is a Distributed Map's ItemReader.
type itemReader struct {
	resource string // resourceListObjects or resourceGetObject
	params   *template
	args     *jvalue // JSONata: Arguments
	// ReaderConfig
	inputType    string // JSON, JSONL, CSV ("" for a listing)
	csvHeaderRow bool   // CSVHeaderLocation FIRST_ROW (the default)
	csvHeaders   []string
	csvDelimiter rune
	maxItems     numField
}

// itemBatcher is a Distributed Map's ItemBatcher.
type itemBatcher struct {
	maxItems   numField
	maxBytes   numField
	batchInput *template
	batchJ     *jvalue
}

// resultWriter is a Distributed Map's ResultWriter.
type resultWriter struct {
	params *template // nil when only WriterConfig is given
	args   *jvalue
	export bool // Resource and Parameters (or Arguments) are set
	// WriterConfig
	transformation string // NONE, COMPACT or FLATTEN
	outputType     string // JSON or JSONL
}

// numField is a number a Distributed Map takes literally, from a path
// (its …Path field) or, in a JSONata state, from an expression.
type numField struct {
	name string // the field's name: "ToleratedFailureCount"
	set  bool
	lit  float64
	path *path
	expr *jvalue
}

func (f numField) given() bool { return f.set || f.path != nil || f.expr != nil }

var (
	processorConfigFields = set("Mode", "ExecutionType")
	itemReaderFields      = set("Resource", "Parameters", "Arguments", "ReaderConfig")
	readerConfigFields    = set("InputType", "CSVHeaderLocation", "CSVHeaders", "CSVDelimiter", "MaxItems", "MaxItemsPath")
	itemBatcherFields     = set("MaxItemsPerBatch", "MaxItemsPerBatchPath", "MaxInputBytesPerBatch", "MaxInputBytesPerBatchPath", "BatchInput")
	resultWriterFields    = set("Resource", "Parameters", "Arguments", "WriterConfig")
	writerConfigFields    = set("Transformation", "OutputType")
	// distributedOnly are the Map fields a Map in INLINE mode refuses.
	distributedOnly = []string{"ItemReader", "ItemBatcher", "ResultWriter", "ToleratedFailureCount", "ToleratedFailureCountPath",
		"ToleratedFailurePercentage", "ToleratedFailurePercentagePath"}
	csvDelimiters = map[string]rune{"COMMA": ',', "PIPE": '|', "SEMICOLON": ';', "SPACE": ' ', "TAB": '\t'}
)

// processorMode reads an item processor's ProcessorConfig: its Mode
// (INLINE by default) and, for DISTRIBUTED, its ExecutionType.
func (v *validator) processorMode(body map[string]any, where string) (mode, execType string) {
	mode = "INLINE"
	raw, ok := body["ProcessorConfig"]
	if !ok {
		return mode, ""
	}
	pc, ok := raw.(map[string]any)
	if !ok {
		v.addf("%s: ProcessorConfig must be an object", where)
		return mode, ""
	}
	for _, k := range sortedKeys(pc) {
		if !processorConfigFields[k] {
			v.addf("%s: ProcessorConfig: unknown field %q", where, k)
		}
	}
	if m, ok := pc["Mode"]; ok {
		s, _ := m.(string)
		if s != "INLINE" && s != "DISTRIBUTED" {
			v.addf("%s: ProcessorConfig: Mode must be INLINE or DISTRIBUTED, got %v", where, m)
			return "INLINE", ""
		}
		mode = s
	}
	et, hasET := pc["ExecutionType"]
	switch {
	case mode == "INLINE" && hasET:
		v.addf("%s: ProcessorConfig: ExecutionType is only supported in DISTRIBUTED mode", where)
	case mode == "DISTRIBUTED" && !hasET:
		v.addf("%s: ProcessorConfig: ExecutionType (STANDARD or EXPRESS) is required in DISTRIBUTED mode", where)
	case mode == "DISTRIBUTED" && et != ChildStandard && et != ChildExpress:
		v.addf("%s: ProcessorConfig: ExecutionType must be STANDARD or EXPRESS, got %v", where, et)
	default:
		execType, _ = et.(string)
	}
	return mode, execType
}

// distributedMap loads what a DISTRIBUTED Map adds to a Map: its child
// definition, Label, ItemReader, ItemBatcher, ResultWriter and tolerated
// failures (m is the state, body its item processor).
func (v *validator) distributedMap(st *State, m, body map[string]any, execType, where string) {
	d := &distributed{executionType: execType}
	st.dist = d
	def := make(map[string]any, len(body)+1)
	for k, val := range body {
		if k != "ProcessorConfig" {
			def[k] = val
		}
	}
	if v.topJSONata {
		def["QueryLanguage"] = langJSONata
	}
	d.definition, _ = json.Marshal(def)

	if l, ok := m["Label"]; ok {
		s, isStr := l.(string)
		switch {
		case !isStr || s == "":
			v.addf("%s: Label must be a non-empty string", where)
		case utf8.RuneCountInString(s) > maxLabelLength:
			v.addf("%s: Label %q is longer than %d characters", where, s, maxLabelLength)
		case !labelName(s):
			v.addf("%s: Label %q may not contain whitespace, brackets, wildcards, special characters (\" # %% \\ ^ | ~ ` $ & , ; : /) or control characters", where, s)
		}
		d.label = s
	}
	ja := st.jsonata
	d.toleratedCount = v.numberField(m, "ToleratedFailureCount", where, ja, 0, -1)
	d.toleratedPercent = v.numberField(m, "ToleratedFailurePercentage", where, ja, 0, 100)
	if r, ok := m["ItemReader"]; ok {
		d.reader = v.itemReader(r, where+": ItemReader", ja)
	}
	if b, ok := m["ItemBatcher"]; ok {
		d.batcher = v.itemBatcher(b, where+": ItemBatcher", ja)
	}
	if w, ok := m["ResultWriter"]; ok {
		d.writer = v.resultWriter(w, where+": ResultWriter", ja)
	}
}

// labelName reports whether s may label a Map Run: the characters an
// execution name may hold.
func labelName(s string) bool {
	for _, r := range s {
		if r <= ' ' || r == 0x7f || strings.ContainsRune("<>{}[]?*\"#%\\^|~`$&,;:/", r) {
			return false
		}
	}
	return true
}

// numberField loads field (a number from min to max, max < 0 for none)
// and, in a JSONPath state, field+"Path"; in a JSONata state the field may
// be a {% %} expression.
func (v *validator) numberField(m map[string]any, field, where string, jsonata bool, min, max float64) numField {
	f := numField{name: field}
	raw, has := m[field]
	if has {
		if s, ok := raw.(string); ok && jsonata && isJSONataString(s) {
			j, err := compileJValue(s, where+": "+field, jsonataAccess{})
			if err != nil {
				v.addf("%v", err)
			}
			f.expr = j
		} else {
			n, ok := asFloat(raw)
			switch {
			case !ok:
				v.addf("%s: %s must be a number", where, field)
			case n < min || (max >= 0 && n > max):
				if max >= 0 {
					v.addf("%s: %s must be from %v to %v", where, field, min, max)
				} else {
					v.addf("%s: %s must be at least %v", where, field, min)
				}
			}
			f.set, f.lit = true, n
		}
	}
	if p, ok := m[field+"Path"]; ok {
		if jsonata {
			v.addf("%s: field %q: the QueryLanguage is set to 'JSONata', but field '%sPath' is only supported for the 'JSONPath' QueryLanguage (write %s as a {%% %%} expression)", where, field+"Path", field, field)
		}
		if has {
			v.addf("%s: %s and %sPath are mutually exclusive", where, field, field)
		}
		f.path = v.refPath(p, where+": "+field+"Path")
	}
	return f
}

// object reads raw as an object of the allowed fields.
func (v *validator) object(raw any, where string, allowed map[string]bool) (map[string]any, bool) {
	m, ok := raw.(map[string]any)
	if !ok {
		v.addf("%s must be an object", where)
		return nil, false
	}
	for _, k := range sortedKeys(m) {
		if !allowed[k] {
			v.addf("%s: unknown field %q", where, k)
		}
	}
	return m, true
}

// arguments loads the request of an ItemReader or ResultWriter: its
// Parameters (JSONPath) or Arguments (JSONata).
func (v *validator) arguments(m map[string]any, where string, jsonata bool) (*template, *jvalue, bool) {
	field, other := "Parameters", "Arguments"
	if jsonata {
		field, other = other, field
	}
	if _, bad := m[other]; bad {
		v.addf("%s: field %q is not supported for the %s QueryLanguage (use %s)", where, other, map[bool]string{true: "JSONata", false: "JSONPath"}[jsonata], field)
	}
	raw, ok := m[field]
	if !ok {
		return nil, nil, false
	}
	if _, isObj := raw.(map[string]any); !isObj {
		if s, isStr := raw.(string); !(jsonata && isStr && isJSONataString(s)) {
			v.addf("%s: %s must be an object", where, field)
			return nil, nil, false
		}
	}
	if jsonata {
		j, err := compileJValue(raw, where+": "+field, jsonataAccess{})
		if err != nil {
			v.addf("%v", err)
		}
		return nil, j, true
	}
	return v.template(raw, where+": "+field), nil, true
}

func (v *validator) itemReader(raw any, where string, jsonata bool) *itemReader {
	m, ok := v.object(raw, where, itemReaderFields)
	if !ok {
		return nil
	}
	r := &itemReader{csvHeaderRow: true, csvDelimiter: ',', maxItems: numField{name: "MaxItems"}}
	r.resource, _ = m["Resource"].(string)
	switch r.resource {
	case resourceListObjects, resourceGetObject:
	case "":
		v.addf("%s: Resource is required (%s or %s)", where, resourceListObjects, resourceGetObject)
	default:
		v.addf("%s: Resource %q is not an ItemReader resource: this engine reads %s and %s", where, r.resource, resourceListObjects, resourceGetObject)
	}
	var hasArgs bool
	r.params, r.args, hasArgs = v.arguments(m, where, jsonata)
	if !hasArgs {
		v.addf("%s: %s with the Bucket to read is required", where, map[bool]string{true: "Arguments", false: "Parameters"}[jsonata])
	}
	if r.params != nil && r.params.kind == tmplLiteral {
		lit, _ := r.params.literal.(map[string]any)
		if _, ok := lit["Bucket"]; !ok {
			v.addf("%s: Parameters must name the Bucket", where)
		}
		if _, ok := lit["Key"]; !ok && r.resource == resourceGetObject {
			v.addf("%s: Parameters must name the Key of the object to read", where)
		}
	}
	cfgRaw, hasCfg := m["ReaderConfig"]
	if !hasCfg {
		if r.resource == resourceGetObject {
			v.addf("%s: ReaderConfig with an InputType is required to read an object", where)
		}
		return r
	}
	cfg, ok := v.object(cfgRaw, where+": ReaderConfig", readerConfigFields)
	if !ok {
		return r
	}
	if it, ok := cfg["InputType"]; ok {
		s, _ := it.(string)
		switch s {
		case "JSON", "JSONL", "CSV":
			r.inputType = s
		case "MANIFEST", "PARQUET":
			r.inputType = s
			v.unsupported = append(v.unsupported, fmt.Sprintf("%s: ReaderConfig InputType %s (S3 inventory manifests and Parquet files are not read locally)", where, s))
		default:
			v.addf("%s: ReaderConfig: InputType must be CSV, JSON, JSONL, MANIFEST or PARQUET, got %v", where, it)
		}
	} else if r.resource == resourceGetObject {
		v.addf("%s: ReaderConfig: InputType is required to read an object", where)
	}
	if r.resource == resourceListObjects && r.inputType != "" {
		v.addf("%s: ReaderConfig: InputType is not used with %s", where, resourceListObjects)
	}
	if loc, ok := cfg["CSVHeaderLocation"]; ok {
		switch loc {
		case "FIRST_ROW":
		case "GIVEN":
			r.csvHeaderRow = false
		default:
			v.addf("%s: ReaderConfig: CSVHeaderLocation must be FIRST_ROW or GIVEN, got %v", where, loc)
		}
		if r.inputType != "CSV" {
			v.addf("%s: ReaderConfig: CSVHeaderLocation is only used with InputType CSV", where)
		}
	}
	if hs, ok := cfg["CSVHeaders"]; ok {
		list, isList := hs.([]any)
		if !isList || len(list) == 0 {
			v.addf("%s: ReaderConfig: CSVHeaders must be a non-empty array of strings", where)
		}
		for _, h := range list {
			s, isStr := h.(string)
			if !isStr {
				v.addf("%s: ReaderConfig: CSVHeaders must be a non-empty array of strings", where)
				break
			}
			r.csvHeaders = append(r.csvHeaders, s)
		}
		if r.csvHeaderRow {
			v.addf("%s: ReaderConfig: CSVHeaders are only used with CSVHeaderLocation GIVEN", where)
		}
	} else if !r.csvHeaderRow {
		v.addf("%s: ReaderConfig: CSVHeaderLocation GIVEN needs CSVHeaders", where)
	}
	if d, ok := cfg["CSVDelimiter"]; ok {
		s, _ := d.(string)
		c, known := csvDelimiters[s]
		if !known {
			v.addf("%s: ReaderConfig: CSVDelimiter must be COMMA, PIPE, SEMICOLON, SPACE or TAB, got %v", where, d)
		}
		r.csvDelimiter = c
	}
	r.maxItems = v.numberField(cfg, "MaxItems", where+": ReaderConfig", jsonata, 0, -1)
	if r.maxItems.set && r.maxItems.lit != float64(int64(r.maxItems.lit)) {
		v.addf("%s: ReaderConfig: MaxItems must be an integer", where)
	}
	return r
}

func (v *validator) itemBatcher(raw any, where string, jsonata bool) *itemBatcher {
	m, ok := v.object(raw, where, itemBatcherFields)
	if !ok {
		return nil
	}
	b := &itemBatcher{}
	b.maxItems = v.numberField(m, "MaxItemsPerBatch", where, jsonata, 1, -1)
	b.maxBytes = v.numberField(m, "MaxInputBytesPerBatch", where, jsonata, 1, MaxBatchBytes)
	if !b.maxItems.given() && !b.maxBytes.given() {
		v.addf("%s: needs MaxItemsPerBatch or MaxInputBytesPerBatch (or their …Path)", where)
	}
	if bi, ok := m["BatchInput"]; ok {
		if jsonata {
			j, err := compileJValue(bi, where+": BatchInput", jsonataAccess{})
			if err != nil {
				v.addf("%v", err)
			}
			b.batchJ = j
		} else {
			if _, isObj := bi.(map[string]any); !isObj {
				v.addf("%s: BatchInput must be an object", where)
			}
			b.batchInput = v.template(bi, where+": BatchInput")
		}
	}
	return b
}

func (v *validator) resultWriter(raw any, where string, jsonata bool) *resultWriter {
	m, ok := v.object(raw, where, resultWriterFields)
	if !ok {
		return nil
	}
	w := &resultWriter{transformation: "NONE", outputType: "JSON"}
	res, hasRes := m["Resource"]
	var hasArgs bool
	w.params, w.args, hasArgs = v.arguments(m, where, jsonata)
	switch {
	case hasRes && res != resourcePutObject:
		v.addf("%s: Resource must be %s, got %v", where, resourcePutObject, res)
	case hasRes != hasArgs:
		v.addf("%s: Resource and %s go together: both to export the results, neither to only format them (WriterConfig)", where, map[bool]string{true: "Arguments", false: "Parameters"}[jsonata])
	}
	w.export = hasRes && hasArgs
	if w.params != nil && w.params.kind == tmplLiteral {
		lit, _ := w.params.literal.(map[string]any)
		if _, ok := lit["Bucket"]; !ok {
			v.addf("%s: Parameters must name the Bucket", where)
		}
	}
	cfgRaw, hasCfg := m["WriterConfig"]
	if !hasCfg {
		if !w.export {
			v.addf("%s: cannot be empty: give Resource and %s, WriterConfig, or all three", where, map[bool]string{true: "Arguments", false: "Parameters"}[jsonata])
		}
		return w
	}
	if !w.export {
		w.transformation = "COMPACT" // WriterConfig alone: the default without a ResultWriter
	}
	cfg, ok := v.object(cfgRaw, where+": WriterConfig", writerConfigFields)
	if !ok {
		return w
	}
	if t, ok := cfg["Transformation"]; ok {
		switch t {
		case "NONE", "COMPACT", "FLATTEN":
			w.transformation = t.(string)
		default:
			v.addf("%s: WriterConfig: Transformation must be NONE, COMPACT or FLATTEN, got %v", where, t)
		}
	}
	if o, ok := cfg["OutputType"]; ok {
		switch o {
		case "JSON", "JSONL":
			w.outputType = o.(string)
		default:
			v.addf("%s: WriterConfig: OutputType must be JSON or JSONL, got %v", where, o)
		}
	}
	return w
}
