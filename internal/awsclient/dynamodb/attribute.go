package dynamodb

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

var attributeValueType = reflect.TypeFor[types.AttributeValue]()

// encodeUnion encodes an attribute value, the one union of DynamoDB's item
// operations, as {"<type>": value}.
func encodeUnion(v reflect.Value) (any, error) {
	a, ok := v.Interface().(types.AttributeValue)
	if !ok {
		return nil, fmt.Errorf("cannot encode a %s", v.Type())
	}
	return encodeAttribute(a)
}

func encodeAttribute(a types.AttributeValue) (any, error) {
	switch a := a.(type) {
	case *types.AttributeValueMemberS:
		return map[string]any{"S": a.Value}, nil
	case *types.AttributeValueMemberN:
		return map[string]any{"N": a.Value}, nil
	case *types.AttributeValueMemberB:
		return map[string]any{"B": a.Value}, nil
	case *types.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": a.Value}, nil
	case *types.AttributeValueMemberNULL:
		return map[string]any{"NULL": a.Value}, nil
	case *types.AttributeValueMemberSS:
		return map[string]any{"SS": nonNil(a.Value)}, nil
	case *types.AttributeValueMemberNS:
		return map[string]any{"NS": nonNil(a.Value)}, nil
	case *types.AttributeValueMemberBS:
		return map[string]any{"BS": nonNil(a.Value)}, nil
	case *types.AttributeValueMemberL:
		l := make([]any, len(a.Value))
		for i, e := range a.Value {
			v, err := encodeAttribute(e)
			if err != nil {
				return nil, err
			}
			l[i] = v
		}
		return map[string]any{"L": l}, nil
	case *types.AttributeValueMemberM:
		m := make(map[string]any, len(a.Value))
		for k, e := range a.Value {
			v, err := encodeAttribute(e)
			if err != nil {
				return nil, err
			}
			m[k] = v
		}
		return map[string]any{"M": m}, nil
	}
	return nil, fmt.Errorf("cannot encode the attribute value %T", a)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// decodeUnion decodes an attribute value: a document of one member named
// by its type; another member name is a *types.UnknownUnionMember, as the
// SDK's client answers it.
func decodeUnion(t reflect.Type, doc any) (reflect.Value, error) {
	if t != attributeValueType {
		return reflect.Value{}, fmt.Errorf("cannot decode a %s", t)
	}
	a, err := decodeAttribute(doc)
	if err != nil {
		return reflect.Value{}, err
	}
	v := reflect.New(t).Elem()
	v.Set(reflect.ValueOf(a))
	return v, nil
}

func decodeAttribute(doc any) (types.AttributeValue, error) {
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("attribute value: got %T, want an object", doc)
	}
	for tag, v := range obj {
		if v == nil {
			continue
		}
		bad := fmt.Errorf("attribute value %s: got %T", tag, v)
		switch tag {
		case "S", "N":
			s, ok := v.(string)
			if !ok {
				return nil, bad
			}
			if tag == "S" {
				return &types.AttributeValueMemberS{Value: s}, nil
			}
			return &types.AttributeValueMemberN{Value: s}, nil
		case "B":
			b, err := decodeBytes(v)
			if err != nil {
				return nil, err
			}
			return &types.AttributeValueMemberB{Value: b}, nil
		case "BOOL", "NULL":
			b, ok := v.(bool)
			if !ok {
				return nil, bad
			}
			if tag == "BOOL" {
				return &types.AttributeValueMemberBOOL{Value: b}, nil
			}
			return &types.AttributeValueMemberNULL{Value: b}, nil
		case "SS", "NS", "BS", "L":
			arr, ok := v.([]any)
			if !ok {
				return nil, bad
			}
			return decodeList(tag, arr)
		case "M":
			m, ok := v.(map[string]any)
			if !ok {
				return nil, bad
			}
			out := make(map[string]types.AttributeValue, len(m))
			for k, e := range m {
				a, err := decodeAttribute(e)
				if err != nil {
					return nil, err
				}
				out[k] = a
			}
			return &types.AttributeValueMemberM{Value: out}, nil
		default:
			raw, _ := json.Marshal(v)
			return &types.UnknownUnionMember{Tag: tag, Value: raw}, nil
		}
	}
	return nil, fmt.Errorf("attribute value: no member set")
}

func decodeList(tag string, arr []any) (types.AttributeValue, error) {
	switch tag {
	case "SS", "NS":
		out := make([]string, len(arr))
		for i, e := range arr {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("attribute value %s: got %T", tag, e)
			}
			out[i] = s
		}
		if tag == "SS" {
			return &types.AttributeValueMemberSS{Value: out}, nil
		}
		return &types.AttributeValueMemberNS{Value: out}, nil
	case "BS":
		out := make([][]byte, len(arr))
		for i, e := range arr {
			b, err := decodeBytes(e)
			if err != nil {
				return nil, err
			}
			out[i] = b
		}
		return &types.AttributeValueMemberBS{Value: out}, nil
	}
	out := make([]types.AttributeValue, len(arr))
	for i, e := range arr {
		a, err := decodeAttribute(e)
		if err != nil {
			return nil, err
		}
		out[i] = a
	}
	return &types.AttributeValueMemberL{Value: out}, nil
}

func decodeBytes(v any) ([]byte, error) {
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("binary attribute value: got %T", v)
	}
	return base64.StdEncoding.DecodeString(s)
}
