//go:build v2

package main

import "encoding/json"

// requestContext is hyper-mcp v2's request context; its PDK's types
// refuse input without _meta or id.
type requestContext struct {
	Meta map[string]any  `json:"_meta"`
	ID   json.RawMessage `json:"id"`
}

func checkContext(c *requestContext) string {
	switch {
	case c == nil:
		return "missing field `context`"
	case c.Meta == nil:
		return "missing field `_meta`"
	case c.ID == nil:
		return "missing field `id`"
	}
	return ""
}

//go:wasmexport list_tools
func listToolsExport() int32 {
	var in struct {
		Context *requestContext `json:"context"`
	}
	if err := json.Unmarshal(input(), &in); err != nil {
		return fail("bad input: " + err.Error())
	}
	if msg := checkContext(in.Context); msg != "" {
		return fail(msg)
	}
	list, msg := listTools()
	if msg != "" {
		return fail(msg)
	}
	output([]byte(list))
	return 0
}

// listTools gives list_tools' output, or why it fails.
var listTools = func() (string, string) { return tools, "" }

//go:wasmexport call_tool
func callTool() int32 {
	var in struct {
		Context *requestContext `json:"context"`
		Request struct {
			Name      string            `json:"name"`
			Arguments map[string]string `json:"arguments"`
		} `json:"request"`
	}
	if err := json.Unmarshal(input(), &in); err != nil {
		return fail("bad input: " + err.Error())
	}
	if msg := checkContext(in.Context); msg != "" {
		return fail(msg)
	}
	output(run(in.Request.Name, in.Request.Arguments))
	return 0
}
