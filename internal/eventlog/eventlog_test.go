package eventlog

import (
	"encoding/json"
	"testing"
)

// TestNewMapEncodesAsBefore: a map's data, encoded once, is byte for byte
// what decoding and encoding it again with "type" added gives (the path
// any other value takes).
func TestNewMapEncodesAsBefore(t *testing.T) {
	type step struct {
		ID       string         `json:"id"`
		Content  string         `json:"content"`
		Metadata map[string]any `json:"metadata"`
	}
	v := map[string]any{"step": step{ID: "h3", Content: "a <b> & \"c\"\n", Metadata: map[string]any{"z": 1, "a": []int{1, 2}}}, "type": "ignored", "alpha": nil}
	got, err := New("execution-step", "h:3", v)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(v)
	want, err := New("execution-step", "h:3", json.RawMessage(raw)) // not a map: the general path
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Data) != string(want.Data) || got.Type != "execution-step" || got.Key != "h:3" {
		t.Errorf("New(map) = %s\nthe general path %s", got.Data, want.Data)
	}
}
