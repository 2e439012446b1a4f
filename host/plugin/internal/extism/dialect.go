package extism

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/agenthost/agenthost/internal/bytesize"
	"github.com/agenthost/agenthost/internal/sandbox"
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

// ListInput is the input of the export that lists the tools; id is the
// request's id (hyper-mcp v2).
func (d Dialect) ListInput(id int64) []byte {
	if d == DialectHyperMCP2 {
		return RequestInput(id, nil, nil)
	}
	return []byte("{}")
}

// CallInput is the input of a call of tool with args (checked JSON); id
// and progressToken (nil: none) go in hyper-mcp v2's request context.
func (d Dialect) CallInput(tool string, args json.RawMessage, id int64, progressToken any) []byte {
	if d == DialectHyperMCP2 {
		return RequestInput(id, progressToken, map[string]any{"name": tool, "arguments": args})
	}
	b, _ := json.Marshal(map[string]any{"params": map[string]any{"name": tool, "arguments": args}})
	return b
}

// RequestInput is the input of a hyper-mcp v2 export: {"context":
// {"_meta": {...}, "id": id}, "request": request}, as the PDK's request
// types require (_meta and id are not optional there); request nil leaves
// "request" out (the list exports take none). _meta holds progressToken
// when it is not nil.
func RequestInput(id int64, progressToken any, request any) []byte {
	meta := map[string]any{}
	if progressToken != nil {
		meta["progressToken"] = progressToken
	}
	v := map[string]any{"context": map[string]any{"_meta": meta, "id": id}}
	if request != nil {
		v["request"] = request
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
		s := sandbox.ValidUTF8(out)
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
	URI      string `json:"uri"`
	Resource *struct {
		URI      string `json:"uri"`
		MimeType string `json:"mimeType"`
		Text     string `json:"text"`
		Blob     string `json:"blob"`
	} `json:"resource"`
}

// Result reads the output of a call in an MCP dialect, a CallToolResult:
// its text items joined, other items as a short note naming their type
// and size (never their data). items is the content array as the plugin
// gave it when it holds anything but text, else nil. Output that is not a
// CallToolResult is the text itself.
func Result(out []byte) (text string, isError bool, items json.RawMessage) {
	var cr struct {
		Content *[]json.RawMessage `json:"content"`
		IsError bool               `json:"isError"`
	}
	trimmed := bytes.TrimSpace(out)
	if err := json.Unmarshal(trimmed, &cr); err != nil || cr.Content == nil {
		return sandbox.ValidUTF8(out), false, nil
	}
	text, rich := ContentText(*cr.Content)
	if rich {
		items, _ = json.Marshal(*cr.Content)
	}
	return text, cr.IsError, items
}

// ContentText is the text the model reads for MCP content items: text
// items as they are, others as a note naming their type and size; rich
// reports whether there were any but text items.
func ContentText(raw []json.RawMessage) (text string, rich bool) {
	parts := make([]string, 0, len(raw))
	for _, b := range raw {
		var c content
		if json.Unmarshal(b, &c) != nil {
			parts = append(parts, "[content item that is not an MCP content object omitted]")
			rich = true
			continue
		}
		switch {
		case c.Type == "text":
			parts = append(parts, c.Text)
			continue
		case c.Type == "resource" && c.Resource != nil:
			r := c.Resource
			n := len(r.Text) + len(r.Blob)
			parts = append(parts, fmt.Sprintf("[resource %s (%s, %s) omitted]", r.URI, orUnknown(r.MimeType), bytesize.Exact(uint64(n))))
		case c.Type == "resource_link":
			parts = append(parts, fmt.Sprintf("[resource link %s (%s)]", c.URI, orUnknown(c.MimeType)))
		default:
			parts = append(parts, fmt.Sprintf("[%s content (%s, %s of base64) omitted]", c.Type, orUnknown(c.MimeType), bytesize.Exact(uint64(len(c.Data)))))
		}
		rich = true
	}
	return sandbox.ValidUTF8([]byte(strings.Join(parts, "\n"))), rich
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}
