package lambdaapi

import "testing"

func TestParseFunction(t *testing.T) {
	tests := []struct {
		in   string
		want Function
		ok   bool
	}{
		{"Gem1Function", Function{Name: "Gem1Function"}, true},
		{"my-function:v1", Function{Name: "my-function", Qualifier: "v1"}, true},
		{"my-function:$LATEST", Function{Name: "my-function", Qualifier: "$LATEST"}, true},
		{"123456789012:function:f", Function{Name: "f", Account: "123456789012"}, true},
		{"arn:aws:lambda:us-east-1:123456789012:function:HelloWorld", Function{Name: "HelloWorld", Region: "us-east-1", Account: "123456789012"}, true},
		{"arn:aws:lambda:us-gov-west-1:123456789012:function:f:prod", Function{Name: "f", Qualifier: "prod", Region: "us-gov-west-1", Account: "123456789012"}, true},
		{"${Gem1FunctionArn}", Function{}, false},
		{"", Function{}, false},
		{"a:b:c", Function{}, false},
		{"arn:aws:lambda:us-east-1:123:function:f", Function{}, false},
		{"arn:aws:states:::lambda:invoke", Function{}, false},
		{"name with spaces", Function{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseFunction(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("ParseFunction(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	if got := (Function{Name: "f"}).ARN("us-east-1", "000000000000"); got != "arn:aws:lambda:us-east-1:000000000000:function:f" {
		t.Errorf("ARN = %s", got)
	}
}
