package host

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestClientElicitorOutsideCall: a question asked outside a served call
// (no MCP client in the context) is declined.
func TestClientElicitorOutsideCall(t *testing.T) {
	res, err := ClientElicitor{}.Elicit(context.Background(), "s", &mcp.ElicitParams{Message: "Which colour?"})
	if err != nil || res.Action != "decline" || res.Content != nil {
		t.Fatalf("got %+v, %v; want a decline", res, err)
	}
}

// TestCheckElicitAnswer: what a client's answer may be to be passed on.
func TestCheckElicitAnswer(t *testing.T) {
	for _, tc := range []struct {
		raw, action, err string
	}{
		{`{"action":"accept","content":{"s":"x","n":3,"b":true,"l":["a","b"]}}`, "accept", ""},
		{`{"action":"accept"}`, "accept", ""},
		{`{"action":"decline","content":{"s":"dropped"}}`, "decline", ""},
		{`{"action":"cancel"}`, "cancel", ""},
		{`{"action":"maybe"}`, "", `action "maybe" is not accept, decline or cancel`},
		{`{"action":"accept","content":{"o":{"a":1}}}`, "", `field "o" is not a string`},
		{`{"action":"accept","content":{"l":[1]}}`, "", `field "l" is not a string`},
		{`{"action":"accept","content":{"z":null}}`, "", `field "z" is not a string`},
		{`{"action":"accept","content":{"s":"` + strings.Repeat("x", MaxElicitAnswer) + `"}}`, "", "more than 65536"},
		{`[]`, "", "not an elicitation result"},
	} {
		res, err := checkElicitAnswer([]byte(tc.raw))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%.60s: got %+v, %v; want error %q", tc.raw, res, err, tc.err)
			}
			continue
		}
		if err != nil || res.Action != tc.action {
			t.Errorf("%.60s: got %+v, %v; want action %s", tc.raw, res, err, tc.action)
		}
		if tc.action != "accept" && res.Content != nil {
			t.Errorf("%.60s: content %v passed on with action %s", tc.raw, res.Content, tc.action)
		}
	}
}
