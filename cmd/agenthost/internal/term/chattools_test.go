package term

import (
	"encoding/json"
	"strings"
	"testing"
)

// The key argument is the first required string property, on one line,
// cut and escaped; a tool without one shows none.
func TestChatKeyArg(t *testing.T) {
	k := NewKeyArgs(map[string]json.RawMessage{
		"read_file": []byte(`{"type":"object","properties":{"limit":{"type":"integer"},"path":{"type":"string"}},"required":["limit","path"]}`),
		"count":     []byte(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`),
	})
	for _, tc := range []struct{ tool, args, want string }{
		{"read_file", `{"path":"notes.md","limit":3}`, "notes.md"},
		{"read_file", `{"path":"a\nb\u001b[2Jc"}`, `a b\x1b[2Jc`},
		{"read_file", `{"path":"` + strings.Repeat("d", 60) + `"}`, strings.Repeat("d", keyArgMax-1) + "…"},
		{"read_file", `{"path":3}`, ""},
		{"read_file", `not json`, ""},
		{"count", `{"n":3}`, ""},
		{"other", `{"path":"x"}`, ""},
	} {
		if got := k.Of(tc.tool, tc.args); got != tc.want {
			t.Errorf("keyArg(%s, %s) = %q, want %q", tc.tool, tc.args, got, tc.want)
		}
	}
}
