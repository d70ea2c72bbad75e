package awsclient

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/aws/smithy-go"
	smithytime "github.com/aws/smithy-go/time"
)

// The AWS JSON protocol for services whose SDK module still serialises with
// generated code rather than schemas (Step Functions): the SDK's input and
// output structs mapped by reflection, member by member, as that code does.

var timeType = reflect.TypeFor[time.Time]()

// MarshalJSONShape encodes the SDK input struct in points to as the AWS JSON
// protocol's document: each exported field (but ResultMetadata) under
// name(field name), a nil pointer, slice or map and a zero string, number
// or bool left out, times as epoch seconds, []byte as base64.
func MarshalJSONShape(in any, name func(field string) string) ([]byte, error) {
	v, err := shapeValue(reflect.ValueOf(in), name)
	if err != nil {
		return nil, err
	}
	if v == nil {
		v = map[string]any{}
	}
	return json.Marshal(v)
}

func shapeValue(v reflect.Value, name func(string) string) (any, error) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil, nil
		}
		return shapeValue(v.Elem(), name)
	case reflect.Struct:
		if v.Type() == timeType {
			return smithytime.FormatEpochSeconds(v.Interface().(time.Time)), nil
		}
		out := map[string]any{}
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() || f.Name == "ResultMetadata" || v.Field(i).IsZero() {
				continue
			}
			m, err := shapeValue(v.Field(i), name)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.Name, err)
			}
			out[name(f.Name)] = m
		}
		return out, nil
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return base64.StdEncoding.EncodeToString(v.Bytes()), nil
		}
		out := make([]any, v.Len())
		for i := range out {
			m, err := shapeValue(v.Index(i), name)
			if err != nil {
				return nil, err
			}
			out[i] = m
		}
		return out, nil
	case reflect.Map:
		out := map[string]any{}
		for it := v.MapRange(); it.Next(); {
			m, err := shapeValue(it.Value(), name)
			if err != nil {
				return nil, err
			}
			out[it.Key().String()] = m
		}
		return out, nil
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int32, reflect.Int64, reflect.Float32, reflect.Float64:
		return v.Interface(), nil
	}
	return nil, fmt.Errorf("cannot encode a %s", v.Type())
}

// UnmarshalJSONShape decodes an AWS JSON protocol document into the SDK
// output struct out points to: members matched to fields by name, case
// aside, as the generated code names them; epoch seconds into times; members
// without a field ignored.
func UnmarshalJSONShape(data []byte, out any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var doc any
	if err := d.Decode(&doc); err != nil {
		return err
	}
	return setShape(reflect.ValueOf(out).Elem(), doc)
}

func setShape(v reflect.Value, doc any) error {
	if doc == nil {
		return nil
	}
	if v.Kind() == reflect.Pointer {
		p := reflect.New(v.Type().Elem())
		if err := setShape(p.Elem(), doc); err != nil {
			return err
		}
		v.Set(p)
		return nil
	}
	if v.Type() == timeType {
		n, ok := doc.(json.Number)
		if !ok {
			return fmt.Errorf("time: got %T, want epoch seconds", doc)
		}
		f, err := n.Float64()
		if err != nil {
			return err
		}
		v.Set(reflect.ValueOf(smithytime.ParseEpochSeconds(f)))
		return nil
	}
	mismatch := fmt.Errorf("%s: cannot hold %T", v.Type(), doc)
	switch v.Kind() {
	case reflect.Struct:
		obj, ok := doc.(map[string]any)
		if !ok {
			return mismatch
		}
		for k, m := range obj {
			f := v.FieldByNameFunc(func(n string) bool { return strings.EqualFold(n, k) })
			if !f.IsValid() || !f.CanSet() || k == "ResultMetadata" {
				continue
			}
			if err := setShape(f, m); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			s, ok := doc.(string)
			if !ok {
				return mismatch
			}
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return err
			}
			v.SetBytes(b)
			return nil
		}
		arr, ok := doc.([]any)
		if !ok {
			return mismatch
		}
		s := reflect.MakeSlice(v.Type(), len(arr), len(arr))
		for i, m := range arr {
			if err := setShape(s.Index(i), m); err != nil {
				return err
			}
		}
		v.Set(s)
	case reflect.Map:
		obj, ok := doc.(map[string]any)
		if !ok {
			return mismatch
		}
		mv := reflect.MakeMapWithSize(v.Type(), len(obj))
		for k, m := range obj {
			e := reflect.New(v.Type().Elem()).Elem()
			if err := setShape(e, m); err != nil {
				return err
			}
			mv.SetMapIndex(reflect.ValueOf(k).Convert(v.Type().Key()), e)
		}
		v.Set(mv)
	case reflect.String:
		s, ok := doc.(string)
		if !ok {
			return mismatch
		}
		v.SetString(s)
	case reflect.Bool:
		b, ok := doc.(bool)
		if !ok {
			return mismatch
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int32, reflect.Int64:
		n, ok := doc.(json.Number)
		if !ok {
			return mismatch
		}
		i, err := n.Int64()
		if err != nil {
			return err
		}
		v.SetInt(i)
	case reflect.Float32, reflect.Float64:
		n, ok := doc.(json.Number)
		if !ok {
			return mismatch
		}
		f, err := n.Float64()
		if err != nil {
			return err
		}
		v.SetFloat(f)
	default:
		return mismatch
	}
	return nil
}

// JSONError is the error of an AWS JSON protocol response as the SDK's
// clients make an error they do not model: a smithy.GenericAPIError with
// the code and message (JSONErrorCode), and the fault of the status. For a
// service that answers in the query protocol's terms too (SQS), the
// X-Amzn-Query-Error header's code and fault come first, as in the SDK.
func JSONError(resp *http.Response, body []byte) error {
	code, message, err := JSONErrorCode(resp, body)
	if err != nil {
		return err
	}
	fault := smithy.FaultUnknown
	if q := resp.Header.Get("X-Amzn-Query-Error"); q != "" {
		qc, qf, _ := strings.Cut(q, ";")
		code = qc
		switch qf {
		case "Sender":
			fault = smithy.FaultClient
		case "Receiver":
			fault = smithy.FaultServer
		}
	}
	return &smithy.GenericAPIError{Code: code, Message: message, Fault: fault}
}

// JSONErrorCode is the error code and message of an AWS JSON protocol
// error response, found as the SDK's generated code finds them: the
// X-Amzn-ErrorType header, else the body's __type, else its code, without
// the namespace before "#" or anything after ":".
func JSONErrorCode(resp *http.Response, body []byte) (code, message string, err error) {
	var info struct {
		Type    string `json:"__type"`
		Message string
		Code    any
	}
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &info); err != nil {
			return "", "", &smithy.DeserializationError{Err: fmt.Errorf("failed to decode response body, %w", err), Snapshot: body}
		}
	}
	code = resp.Header.Get("X-Amzn-ErrorType")
	if code == "" {
		code = info.Type
	}
	if s, ok := info.Code.(string); code == "" && ok {
		code = s
	}
	if code == "" {
		code = "UnknownError"
	}
	code, _, _ = strings.Cut(code, ":")
	if _, after, ok := strings.Cut(code, "#"); ok {
		code = after
	}
	message = info.Message
	if message == "" {
		message = "UnknownError"
	}
	return code, message, nil
}
