package extism

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Dialect is how the tools of an Extism plugin are found and called.
type Dialect string

const (
	// DialectPlain: any Extism plugin; the host names the export each tool
	// calls and builds its input.
	DialectPlain Dialect = "plain"
	// DialectMCPRun: mcp.run servlets and hyper-mcp v1 plugins, exporting
	// describe and call.
	DialectMCPRun Dialect = "mcp.run"
	// DialectHyperMCP2: hyper-mcp v2 plugins, exporting list_tools and
	// call_tool.
	DialectHyperMCP2 Dialect = "hyper-mcp-v2"
)

// DialectOf detects the dialect of a module from its exports.
func DialectOf(exports func(name string) bool) Dialect {
	switch {
	case exports("list_tools") && exports("call_tool"):
		return DialectHyperMCP2
	case exports("describe") && exports("call"):
		return DialectMCPRun
	}
	return DialectPlain
}

// Functions are the exports that list a plugin's tools and call one; ""
// for the plain dialect.
func (d Dialect) Functions() (list, call string) {
	switch d {
	case DialectMCPRun:
		return "describe", "call"
	case DialectHyperMCP2:
		return "list_tools", "call_tool"
	}
	return "", ""
}

// ListInput is the input of the export that lists the tools.
func (d Dialect) ListInput() []byte {
	if d == DialectHyperMCP2 {
		return []byte(`{"context":{},"request":{}}`)
	}
	return []byte("{}")
}

// CallInput is the input of a call of tool with args (checked JSON).
func (d Dialect) CallInput(tool string, args json.RawMessage) []byte {
	var v any
	if d == DialectHyperMCP2 {
		v = map[string]any{"context": map[string]any{}, "request": map[string]any{"name": tool, "arguments": args}}
	} else {
		v = map[string]any{"params": map[string]any{"name": tool, "arguments": args}}
	}
	b, _ := json.Marshal(v)
	return b
}

// Tool is a tool as describe and list_tools return it.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// ParseTools reads the output of the export that lists the tools,
// {"tools":[...]}; the error quotes the start of anything else.
func ParseTools(out []byte) ([]Tool, error) {
	var doc struct {
		Tools *[]Tool `json:"tools"`
	}
	if err := json.Unmarshal(out, &doc); err != nil || doc.Tools == nil {
		s := validUTF8(out)
		if len(s) > 200 {
			s = s[:200] + "…"
		}
		return nil, fmt.Errorf("did not return {\"tools\":[...]}: %s", s)
	}
	return *doc.Tools, nil
}

// content is one item of an MCP CallToolResult.
type content struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
	Resource *struct {
		URI      string `json:"uri"`
		MimeType string `json:"mimeType"`
		Text     string `json:"text"`
		Blob     string `json:"blob"`
	} `json:"resource"`
}

// Result reads the output of a call in an MCP dialect, a CallToolResult:
// its text items joined, other items as a short note naming their type
// and size (never their data). Output that is not a CallToolResult is the
// text itself.
func Result(out []byte) (text string, isError bool) {
	var cr struct {
		Content *[]content `json:"content"`
		IsError bool       `json:"isError"`
	}
	trimmed := bytes.TrimSpace(out)
	if err := json.Unmarshal(trimmed, &cr); err != nil || cr.Content == nil {
		return validUTF8(out), false
	}
	parts := make([]string, 0, len(*cr.Content))
	for _, c := range *cr.Content {
		switch {
		case c.Type == "text":
			parts = append(parts, c.Text)
		case c.Type == "resource" && c.Resource != nil:
			r := c.Resource
			n := len(r.Text) + len(r.Blob)
			parts = append(parts, fmt.Sprintf("[resource %s (%s, %s) omitted]", r.URI, orUnknown(r.MimeType), sizeString(uint64(n))))
		default:
			parts = append(parts, fmt.Sprintf("[%s content (%s, %s of base64) omitted]", c.Type, orUnknown(c.MimeType), sizeString(uint64(len(c.Data)))))
		}
	}
	return validUTF8([]byte(strings.Join(parts, "\n"))), cr.IsError
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}
