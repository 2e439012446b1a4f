package provider

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/agenthost/agenthost/loop"
)

// FuzzStreamBody feeds arbitrary response bodies through the whole read
// path. Whatever a server sends, Stream must not panic, and a response it
// returns must keep the loop's invariants.
func FuzzStreamBody(f *testing.F) {
	for _, seed := range []string{
		doneStream,
		stream200(),
		"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":{\"x\":1}}},{\"function\":{\"name\":\"g\"}}]},\"finish_reason\":\"stop\"}]}\n",
		"event: error\ndata: {\"error\":{\"code\":500}}\n\n",
		"error: nope\n",
		"{\"choices\":[{\"message\":{\"content\":[{\"type\":\"thinking\",\"thinking\":\"t\"}]}}]}",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":-1,\"id\":\"x\",\"function\":{\"name\":\"f\",\"arguments\":\"{\"}},{\"index\":\"-1\",\"id\":\"x\",\"function\":{\"name\":\"f\",\"arguments\":\"}\"}}]},\"finish_reason\":\"length\"}],\"x_groq\":{\"usage\":{\"total_tokens\":\"3\"}}}\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p := New(Options{BaseURL: "http://fuzz.local/v1", ModelID: "m",
			HTTPClient: &http.Client{Transport: memTransport{body: body}}})
		history := loop.Request{Messages: []loop.Message{
			{Role: loop.RoleUser, Content: "go"},
			{Role: loop.RoleAssistant, ToolCalls: []loop.ToolCall{{ID: "x", Name: "f", Arguments: "{}"}}},
			{Role: loop.RoleTool, ToolCallID: "x", Content: "ok"},
		}}
		resp, err := p.Stream(context.Background(), history, nil)
		if err != nil {
			providerError(t, err)
			return
		}
		seen := map[string]bool{"x": true}
		for _, c := range resp.Message.ToolCalls {
			if c.ID == "" || seen[c.ID] {
				t.Errorf("call id %q empty or not unique in the run", c.ID)
			}
			seen[c.ID] = true
			if c.Arguments == "" {
				t.Errorf("call %q has empty arguments", c.ID)
			}
			if !resp.Truncated && !json.Valid([]byte(c.Arguments)) {
				t.Errorf("call %q has invalid arguments %q but the response is not truncated", c.ID, c.Arguments)
			}
			if len(c.Extra) > 0 && !json.Valid(c.Extra) {
				t.Errorf("call %q has invalid extra %q", c.ID, c.Extra)
			}
		}
		if resp.Message.Role != loop.RoleAssistant {
			t.Errorf("role = %q", resp.Message.Role)
		}
	})
}
