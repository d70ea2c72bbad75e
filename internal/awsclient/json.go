package awsclient

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/aws/smithy-go"
	smithytime "github.com/aws/smithy-go/time"
)

// The AWS JSON protocol by reflection over the SDK's input and output
// structs, member by member, as the SDK's generated code maps them.

var timeType = reflect.TypeFor[time.Time]()

// JSONShapes maps a service's SDK structs to and from its AWS JSON
// documents: each exported field (but ResultMetadata) is the member
// Name(field) (the field's own name when Name is nil, its json tag's name
// when it has one: the SDK's have none); a nil pointer,
// slice or map and a zero string, number or bool are left out; times are
// epoch seconds, []byte base64. A field of an interface type is a union
// (DynamoDB's AttributeValue): EncodeUnion and DecodeUnion map it.
type JSONShapes struct {
	Name        func(field string) string
	EncodeUnion func(v reflect.Value) (any, error)
	DecodeUnion func(t reflect.Type, doc any) (reflect.Value, error)
}

// Marshal encodes the SDK input struct in points to as a document.
func (s JSONShapes) Marshal(in any) ([]byte, error) {
	v, err := s.Encode(reflect.ValueOf(in))
	if err != nil {
		return nil, err
	}
	if v == nil {
		v = map[string]any{}
	}
	return json.Marshal(v)
}

// Encode is the JSON value (for encoding/json) of v.
func (s JSONShapes) Encode(v reflect.Value) (any, error) {
	switch v.Kind() {
	case reflect.Interface:
		if v.IsNil() {
			return nil, nil
		}
		if s.EncodeUnion == nil {
			return nil, fmt.Errorf("cannot encode a %s", v.Type())
		}
		return s.EncodeUnion(v)
	case reflect.Pointer:
		if v.IsNil() {
			return nil, nil
		}
		return s.Encode(v.Elem())
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
			m, err := s.Encode(v.Field(i))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.Name, err)
			}
			out[s.member(f)] = m
		}
		return out, nil
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return base64.StdEncoding.EncodeToString(v.Bytes()), nil
		}
		out := make([]any, v.Len())
		for i := range out {
			m, err := s.Encode(v.Index(i))
			if err != nil {
				return nil, err
			}
			out[i] = m
		}
		return out, nil
	case reflect.Map:
		out := map[string]any{}
		for it := v.MapRange(); it.Next(); {
			m, err := s.Encode(it.Value())
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

// member is the member name of a field.
func (s JSONShapes) member(f reflect.StructField) string {
	if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" {
		return tag
	}
	if s.Name != nil {
		return s.Name(f.Name)
	}
	return f.Name
}

// Unmarshal decodes a document into the SDK output struct out points to:
// members matched to fields by name, case aside, as the generated code
// names them; epoch seconds into times; members without a field ignored.
func (s JSONShapes) Unmarshal(data []byte, out any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var doc any
	if err := d.Decode(&doc); err != nil {
		return err
	}
	return s.Decode(reflect.ValueOf(out).Elem(), doc)
}

// Decode sets v from doc, a value decoded by encoding/json with
// UseNumber.
func (s JSONShapes) Decode(v reflect.Value, doc any) error {
	if doc == nil {
		return nil
	}
	switch {
	case v.Kind() == reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if err := s.Decode(p.Elem(), doc); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case v.Kind() == reflect.Interface:
		if s.DecodeUnion == nil {
			return fmt.Errorf("cannot decode a %s", v.Type())
		}
		u, err := s.DecodeUnion(v.Type(), doc)
		if err != nil {
			return err
		}
		v.Set(u)
		return nil
	case v.Type() == timeType:
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
			f := s.field(v, k)
			if !f.IsValid() || !f.CanSet() || k == "ResultMetadata" {
				continue
			}
			if err := s.Decode(f, m); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			str, ok := doc.(string)
			if !ok {
				return mismatch
			}
			b, err := base64.StdEncoding.DecodeString(str)
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
		sl := reflect.MakeSlice(v.Type(), len(arr), len(arr))
		for i, m := range arr {
			if err := s.Decode(sl.Index(i), m); err != nil {
				return err
			}
		}
		v.Set(sl)
	case reflect.Map:
		obj, ok := doc.(map[string]any)
		if !ok {
			return mismatch
		}
		mv := reflect.MakeMapWithSize(v.Type(), len(obj))
		for k, m := range obj {
			e := reflect.New(v.Type().Elem()).Elem()
			if err := s.Decode(e, m); err != nil {
				return err
			}
			mv.SetMapIndex(reflect.ValueOf(k).Convert(v.Type().Key()), e)
		}
		v.Set(mv)
	case reflect.String:
		str, ok := doc.(string)
		if !ok {
			return mismatch
		}
		v.SetString(str)
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

// field is the field of struct v that member k decodes into: the one its
// json tag names, else the one named k, case aside, as the SDK's generated
// code names them.
func (s JSONShapes) field(v reflect.Value, k string) reflect.Value {
	t := v.Type()
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); tag == k {
			return v.Field(i)
		}
	}
	return v.FieldByNameFunc(func(n string) bool { return strings.EqualFold(n, k) })
}

// JSONProtocol is a service of the AWS JSON protocol: its version
// ("1.0" or "1.1"), its X-Amz-Target prefix, the headers it adds to every
// request, its shapes and its modelled errors.
type JSONProtocol struct {
	Version, Target string
	Header          http.Header
	Shapes          JSONShapes
	// Modelled is a new value of the service's modelled error with the
	// code, nil for a code it does not model.
	Modelled func(code string) error
}

// CallJSON sends operation op with input in (an SDK input struct) and
// decodes the answer into a new O.
func CallJSON[O any](ctx context.Context, c *Client, p JSONProtocol, op string, in any) (*O, error) {
	body, err := p.Shapes.Marshal(in)
	if err != nil {
		return nil, &smithy.OperationError{ServiceID: c.service.ID, OperationName: op, Err: &smithy.SerializationError{Err: err}}
	}
	h := http.Header{"Content-Type": {"application/x-amz-json-" + p.Version}, "X-Amz-Target": {p.Target + "." + op}}
	for k, vs := range p.Header {
		h[k] = vs
	}
	resp, err := c.Do(ctx, op, &Request{Method: http.MethodPost, URL: c.Endpoint(), Body: body, Header: h}, p.decodeError)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, &smithy.OperationError{ServiceID: c.service.ID, OperationName: op, Err: &smithy.DeserializationError{Err: err}}
	}
	out := new(O)
	if err := p.Shapes.Unmarshal(b, out); err != nil {
		return nil, &smithy.OperationError{ServiceID: c.service.ID, OperationName: op, Err: &smithy.DeserializationError{Err: err, Snapshot: b}}
	}
	return out, nil
}

// decodeError is the modelled error of the code, its members decoded, else
// JSONError's.
func (p JSONProtocol) decodeError(resp *http.Response, body []byte) error {
	code, _, err := JSONErrorCode(resp, body)
	if err != nil {
		return err
	}
	if p.Modelled != nil {
		if modelled := p.Modelled(code); modelled != nil {
			if err := p.Shapes.Unmarshal(body, modelled); err != nil {
				return &smithy.DeserializationError{Err: err, Snapshot: body}
			}
			return modelled
		}
	}
	return JSONError(resp, body)
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
