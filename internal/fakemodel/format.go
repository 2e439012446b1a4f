package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// lastUserMax caps the runes of last_user in the summary.
const lastUserMax = 80

// FormatRequests renders recorded request bodies for golden comparison.
//
// Mode "summary" (or "") prints one line per request:
//
//	#1 model=m tools=[read_file,list_dir] tool_choice=- msgs=system,user last_user="List the files."
//	#2 model=m tools=- tool_choice=- msgs=system,user,assistant(list_dir),tool,user last_user="You have reached..."
//
// model is the request's model ("-" when absent); tools lists the offered
// tool names in order ("-" when the request has no
// tools key, "[]" when it is empty); tool_choice is the string sent,
// function:NAME for a forced function, or "-"; msgs lists the roles, with the
// names of an assistant message's tool calls in parentheses; last_user is
// the last user message, quoted, cut to 80 runes with "...". A request with
// a response_format adds response_format=TYPE (json_schema:NAME for a
// schema) before last_user. A body that is not JSON prints as "#N invalid
// JSON: ...".
//
// Mode "json" pretty-prints every body with sorted keys after a "#N" line,
// with tool call ids (tool_calls[].id and tool_call_id) replaced by their
// ordinal in the request ("call_1", "call_2", ...) so the output does not
// depend on how the host generates ids.
//
// Server.Format renders the same and adds a line "! #N answered STATUS:
// MESSAGE" after each request that got no scripted reply.
func FormatRequests(reqs [][]byte, mode string) string {
	return formatRequests(reqs, nil, mode)
}

// formatRequests renders reqs; notes, when not nil, holds a remark per
// request printed after it as "! #N remark".
func formatRequests(reqs [][]byte, notes []string, mode string) string {
	var b strings.Builder
	for i, body := range reqs {
		n := i + 1
		switch mode {
		case "", "summary":
			b.WriteString(summary(n, body))
		case "json":
			b.WriteString(pretty(n, body))
		default:
			return fmt.Sprintf("fakemodel: unknown format mode %q (want summary or json)\n", mode)
		}
		if i < len(notes) && notes[i] != "" {
			fmt.Fprintf(&b, "! #%d %s\n", n, notes[i])
		}
	}
	return b.String()
}

// wireRequest is the part of a chat-completions request the summary shows.
type wireRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		ToolCalls []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools *[]struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	ToolChoice     json.RawMessage `json:"tool_choice"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name string `json:"name"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

func summary(n int, body []byte) string {
	var req wireRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return fmt.Sprintf("#%d invalid JSON: %v\n", n, err)
	}
	tools := "-"
	if req.Tools != nil {
		names := make([]string, len(*req.Tools))
		for i, t := range *req.Tools {
			names[i] = t.Function.Name
		}
		tools = "[" + strings.Join(names, ",") + "]"
	}
	roles := make([]string, len(req.Messages))
	lastUser, haveUser := "", false
	for i, m := range req.Messages {
		roles[i] = m.Role
		if len(m.ToolCalls) > 0 {
			names := make([]string, len(m.ToolCalls))
			for j, c := range m.ToolCalls {
				names[j] = c.Function.Name
			}
			roles[i] += "(" + strings.Join(names, ",") + ")"
		}
		if m.Role == "user" {
			lastUser, haveUser = contentText(m.Content), true
		}
	}
	model := req.Model
	if model == "" {
		model = "-"
	}
	line := fmt.Sprintf("#%d model=%s tools=%s tool_choice=%s msgs=%s", n, model, tools, toolChoice(req.ToolChoice), strings.Join(roles, ","))
	if rf := req.ResponseFormat; rf != nil {
		line += " response_format=" + rf.Type
		if rf.JSONSchema != nil {
			line += ":" + rf.JSONSchema.Name
		}
	}
	if haveUser {
		line += " last_user=" + strconv.Quote(cut(lastUser, lastUserMax))
	}
	return line + "\n"
}

// toolChoice renders a tool_choice value compactly.
func toolChoice(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "-"
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Function.Name != "" {
		return "function:" + obj.Function.Name
	}
	var buf bytes.Buffer
	_ = json.Compact(&buf, raw)
	return buf.String()
}

// contentText is the text of a message content: a string, or the text parts
// of an array of content parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return string(raw)
}

// cut shortens s to max runes, marking the cut with "...".
func cut(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max]) + "..."
}

func pretty(n int, body []byte) string {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Sprintf("#%d invalid JSON: %v\n", n, err)
	}
	normaliseIDs(v)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("#%d encode: %v\n", n, err)
	}
	return fmt.Sprintf("#%d\n%s", n, buf.String())
}

// normaliseIDs replaces tool call ids in a decoded request by their ordinal
// of first appearance.
func normaliseIDs(v any) {
	req, ok := v.(map[string]any)
	if !ok {
		return
	}
	msgs, _ := req["messages"].([]any)
	ids := map[string]string{}
	ordinal := func(id any) any {
		s, ok := id.(string)
		if !ok {
			return id
		}
		if o, ok := ids[s]; ok {
			return o
		}
		o := fmt.Sprintf("call_%d", len(ids)+1)
		ids[s] = o
		return o
	}
	for _, m := range msgs {
		msg, ok := m.(map[string]any)
		if !ok {
			continue
		}
		calls, _ := msg["tool_calls"].([]any)
		for _, c := range calls {
			if call, ok := c.(map[string]any); ok {
				if id, ok := call["id"]; ok {
					call["id"] = ordinal(id)
				}
			}
		}
		if id, ok := msg["tool_call_id"]; ok {
			msg["tool_call_id"] = ordinal(id)
		}
	}
}
