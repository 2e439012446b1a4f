package provider

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agenthost/agenthost/loop"
)

const doneStream = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"

// sent streams req to a recording server and returns the decoded body.
func sent(t *testing.T, o Options, req loop.Request) (map[string]any, *server) {
	t.Helper()
	s := newServer(t, sse(doneStream))
	if _, err := s.provider(o).Stream(context.Background(), req, nil); err != nil {
		t.Fatalf("Stream: %v", err)
	}
	return s.lastBody(t), s
}

// roundTrip re-encodes v to compare decoded JSON with a literal.
func asJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad literal %s: %v", s, err)
	}
	return v
}

func TestRequestTools(t *testing.T) {
	t.Run("tools offered", func(t *testing.T) {
		body, _ := sent(t, Options{}, loop.Request{Messages: ask("hi").Messages, Tools: []loop.ToolSpec{readFile, {Name: "now"}}})
		diff(t, body["tools"], asJSON(t, `[
			{"type":"function","function":{"name":"read_file","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}},
			{"type":"function","function":{"name":"now","parameters":{"type":"object","properties":{}}}}]`))
		if _, ok := body["tool_choice"]; ok {
			t.Errorf("tool_choice sent for an auto request: %v", body["tool_choice"])
		}
	})
	t.Run("no tools", func(t *testing.T) {
		body, _ := sent(t, Options{}, loop.Request{Messages: ask("hi").Messages, ToolChoice: loop.ToolChoiceNone})
		for _, k := range []string{"tools", "tool_choice"} {
			if v, ok := body[k]; ok {
				t.Errorf("%s sent without tools: %v", k, v)
			}
		}
	})
	t.Run("tool_choice none keeps the tools", func(t *testing.T) {
		body, _ := sent(t, Options{}, loop.Request{Messages: ask("hi").Messages, Tools: []loop.ToolSpec{readFile}, ToolChoice: loop.ToolChoiceNone})
		if body["tool_choice"] != "none" {
			t.Errorf("tool_choice = %v, want none", body["tool_choice"])
		}
		if tools, _ := body["tools"].([]any); len(tools) != 1 {
			t.Errorf("tools = %v, want the one tool", body["tools"])
		}
	})
	t.Run("invalid schema is refused before sending", func(t *testing.T) {
		s := newServer(t, sse(doneStream))
		_, err := s.provider(Options{}).Stream(context.Background(), loop.Request{
			Messages: ask("hi").Messages,
			Tools:    []loop.ToolSpec{{Name: "bad", InputSchema: json.RawMessage(`{"type":`)}},
		}, nil)
		checkError(t, err, want{code: "invalid_request", contains: `tool "bad"`})
		if s.count() != 0 {
			t.Errorf("server saw %d requests, want 0", s.count())
		}
	})
}

func TestRequestOptions(t *testing.T) {
	zero, warm := 0.0, 0.7
	cases := []struct {
		name  string
		opts  Options
		check func(t *testing.T, body map[string]any)
	}{
		{"temperature 0 is sent", Options{Temperature: &zero}, func(t *testing.T, b map[string]any) {
			if v, ok := b["temperature"]; !ok || v != 0.0 {
				t.Errorf("temperature = %v (present %v), want 0", v, ok)
			}
		}},
		{"temperature 0.7 is sent exactly", Options{Temperature: &warm}, func(t *testing.T, b map[string]any) {
			if b["temperature"] != 0.7 {
				t.Errorf("temperature = %v, want 0.7", b["temperature"])
			}
		}},
		{"temperature unset is absent", Options{}, func(t *testing.T, b map[string]any) {
			if v, ok := b["temperature"]; ok {
				t.Errorf("temperature = %v, want absent", v)
			}
		}},
		{"streaming with usage", Options{ModelID: "qwen2.5:7b"}, func(t *testing.T, b map[string]any) {
			if b["stream"] != true || b["model"] != "qwen2.5:7b" {
				t.Errorf("stream = %v, model = %v", b["stream"], b["model"])
			}
			diff(t, b["stream_options"], asJSON(t, `{"include_usage":true}`))
		}},
		{"max_tokens for ordinary models", Options{MaxTokens: 512}, func(t *testing.T, b map[string]any) {
			if b["max_tokens"] != 512.0 || b["max_completion_tokens"] != nil {
				t.Errorf("max_tokens = %v, max_completion_tokens = %v", b["max_tokens"], b["max_completion_tokens"])
			}
		}},
		{"max_completion_tokens for reasoning models", Options{ModelID: "gpt-5-mini", MaxTokens: 512}, func(t *testing.T, b map[string]any) {
			if b["max_completion_tokens"] != 512.0 || b["max_tokens"] != nil {
				t.Errorf("max_tokens = %v, max_completion_tokens = %v", b["max_tokens"], b["max_completion_tokens"])
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body, _ := sent(t, tc.opts, ask("hi"))
			tc.check(t, body)
		})
	}
}

func TestRequestHeaders(t *testing.T) {
	_, s := sent(t, Options{APIKey: "sk-test", Headers: map[string]string{"X-Title": "agenthost", "api-key": "azure"}}, ask("hi"))
	h := s.headers[0]
	for k, v := range map[string]string{"Authorization": "Bearer sk-test", "X-Title": "agenthost", "Api-Key": "azure", "Accept": "text/event-stream"} {
		if h.Get(k) != v {
			t.Errorf("header %s = %q, want %q", k, h.Get(k), v)
		}
	}
}

func TestRequestHistory(t *testing.T) {
	history := []loop.Message{
		{Role: loop.RoleSystem, Content: "be brief"},
		{Role: loop.RoleUser, Content: "look"},
		{Role: loop.RoleAssistant, Reasoning: "I should list.", ToolCalls: []loop.ToolCall{
			{ID: "call_a", Name: "list_dir", Arguments: ""},
			{ID: "function-call-9", Name: "read_file", Arguments: `{"path":"x"}`, Extra: json.RawMessage(`{"google":{"thought_signature":"c2ln"}}`)},
		}},
		{Role: loop.RoleTool, ToolCallID: "call_a", Name: "list_dir", Content: "x\ny"},
		{Role: loop.RoleTool, ToolCallID: "function-call-9", Name: "read_file", Content: "", IsError: true},
		{Role: loop.RoleAssistant, Content: "Done.", Reasoning: "not echoed on a text turn"},
	}
	body, _ := sent(t, Options{}, loop.Request{Messages: history})
	diff(t, body["messages"], asJSON(t, `[
		{"role":"system","content":"be brief"},
		{"role":"user","content":"look"},
		{"role":"assistant","reasoning_content":"I should list.","tool_calls":[
			{"id":"call_a","type":"function","function":{"name":"list_dir","arguments":"{}"}},
			{"id":"function-call-9","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"x\"}"},
			 "extra_content":{"google":{"thought_signature":"c2ln"}}}]},
		{"role":"tool","tool_call_id":"call_a","content":"x\ny"},
		{"role":"tool","tool_call_id":"function-call-9","content":""},
		{"role":"assistant","content":"Done."}]`))
}

// TestRequestIDMapping: ids that cannot go to the wire as they are (empty,
// with spaces, repeated in the history) get fresh wire ids, and each tool
// message follows its call.
func TestRequestIDMapping(t *testing.T) {
	history := []loop.Message{
		{Role: loop.RoleUser, Content: "go"},
		{Role: loop.RoleAssistant, ToolCalls: []loop.ToolCall{{ID: "0", Name: "a", Arguments: "{}"}, {ID: "bad id", Name: "b", Arguments: "{}"}}},
		{Role: loop.RoleTool, ToolCallID: "0", Content: "ra"},
		{Role: loop.RoleTool, ToolCallID: "bad id", Content: "rb"},
		{Role: loop.RoleAssistant, ToolCalls: []loop.ToolCall{{ID: "0", Name: "c", Arguments: "{}"}}},
		{Role: loop.RoleTool, ToolCallID: "0", Content: "rc"},
	}
	body, _ := sent(t, Options{}, loop.Request{Messages: history})
	msgs := body["messages"].([]any)
	id := func(i, j int) any {
		return msgs[i].(map[string]any)["tool_calls"].([]any)[j].(map[string]any)["id"]
	}
	answer := func(i int) any { return msgs[i].(map[string]any)["tool_call_id"] }
	if id(1, 0) != "0" || answer(2) != "0" {
		t.Errorf("sane id changed: call %v, answer %v", id(1, 0), answer(2))
	}
	if id(1, 1) != "call00001" || answer(3) != "call00001" {
		t.Errorf("id with a space: call %v, answer %v, want call00001 for both", id(1, 1), answer(3))
	}
	if id(4, 0) != "call00002" || answer(5) != "call00002" {
		t.Errorf("repeated id: call %v, answer %v, want call00002 for both", id(4, 0), answer(5))
	}
}

// TestRequestResponseFormat: an output schema goes out as response_format,
// json_schema with the schema verbatim (not strict) or json_object; none
// without one.
func TestRequestResponseFormat(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","anyOf":[{"required":["a"]}],"title":"T"}`)
	body, _ := sent(t, Options{}, loop.Request{Messages: ask("hi").Messages,
		ResponseFormat: &loop.ResponseFormat{Type: "json_schema", Name: "main", Schema: schema}})
	diff(t, body["response_format"], asJSON(t, `{"type":"json_schema","json_schema":{"name":"main","schema":`+string(schema)+`,"strict":false}}`))
	body, _ = sent(t, Options{}, loop.Request{Messages: ask("hi").Messages, ResponseFormat: &loop.ResponseFormat{Type: "json_object"}})
	diff(t, body["response_format"], asJSON(t, `{"type":"json_object"}`))
	body, _ = sent(t, Options{}, ask("hi"))
	if v, ok := body["response_format"]; ok {
		t.Errorf("response_format sent without a schema: %v", v)
	}
}
