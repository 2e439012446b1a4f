package plugin

import (
	"encoding/json"
	"testing"
)

// TestAppendRequest: the agenthost/1 request carries the checked
// arguments' text as it is, is one line whatever the arguments' layout,
// and escapes the tool name and call id as encoding/json does.
func TestAppendRequest(t *testing.T) {
	tool, id := "t\"<x>", "id\u2028"
	qtool, _ := json.Marshal(tool)
	qid, _ := json.Marshal(id)
	for _, tt := range []struct{ args, want string }{
		{`{"path":"a <b> & c","n":1.50}`, `{"path":"a <b> & c","n":1.50}`},
		{"{\n  \"path\": \"a\",\r\n  \"n\": [1, 2]\n}", `{"path":"a","n":[1,2]}`},
	} {
		got := string(appendRequest(nil, tool, json.RawMessage(tt.args), id))
		want := `{"tool":` + string(qtool) + `,"arguments":` + tt.want + `,"call_id":` + string(qid) + `}`
		if got != want {
			t.Errorf("request of %q:\n got %s\nwant %s", tt.args, got, want)
		}
	}
}
