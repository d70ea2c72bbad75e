package audit

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// TestEntryLineIsJSONMarshal: the Recorder's encoding of an entry is
// byte for byte json.Marshal's, so the record reads and hashes as before.
func TestEntryLineIsJSONMarshal(t *testing.T) {
	data := func(v any) json.RawMessage {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	at := time.Date(2026, 11, 27, 18, 4, 5, 123456789, time.UTC)
	for _, e := range []Entry{
		{Seq: 0, Chain: MainChain, Kind: KindStart, At: at, Data: data(Start{Workflow: "executive_search", Documents: map[string]string{}}), Prev: Genesis(MainChain)},
		{Seq: 41, Chain: "candidate/c-001 <ñ> & \u2028", Kind: KindModel, At: at.Add(time.Hour), Prev: Hash([]byte("x")),
			Data: data(ModelCall{Agent: "gem1", Messages: []Message{{Role: "user", Text: new(string)}}, Verdict: "«<<< >>> & \u2029»"})},
		{Seq: 7, Chain: "c", Kind: KindClock, At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Data: nil, Prev: ""},
	} {
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.line()
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("line:\n got %s, %v\nwant %s", got, err, want)
		}
	}
}
