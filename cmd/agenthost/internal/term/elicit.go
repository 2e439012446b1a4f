package term

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agenthost/agenthost/internal/termtext"
	"github.com/agenthost/agenthost/internal/textcut"
)

// Bounds of what an MCP server's question (elicitation) may make agenthost
// show and ask: the server is untrusted.
const (
	maxElicitFields  = 32   // fields asked; a form with more is declined
	maxElicitText    = 2000 // bytes of the message shown
	maxElicitLabel   = 200  // bytes of a field's title or description shown
	maxElicitOptions = 100  // choices of an enum field shown
	maxElicitTries   = 3    // answers to one field that do not fit its type, before it is cancelled
)

// Elicitor asks the person at the terminal the questions of MCP
// servers (elicitation/create), one question at a time. Everything the
// server sent is escaped and bounded before it is shown.
type Elicitor struct {
	// Open opens the terminal for a question (nil when nobody can
	// answer: the question is declined).
	Open func() *Asker
	// Hold, when set, holds the chat's spinner while asking.
	Hold func() (release func())
	mu   sync.Mutex
}

// elicitField is a field of the form a server asks to fill.
type elicitField struct {
	name     string
	Type     string   `json:"type"`
	Title    string   `json:"title"`
	Desc     string   `json:"description"`
	Enum     []string `json:"enum"`
	Default  any      `json:"default"`
	required bool
}

// Elicit asks a server's question.
func (t *Elicitor) Elicit(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.Hold != nil {
		defer t.Hold()() // the chat's spinner is off while asking
	}
	a := t.Open()
	if a == nil {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	defer a.Close()
	if p.Mode == "url" {
		fmt.Fprintf(a.Out, "\nMCP server %s asks you to open a page: %s\n  %s\nDone? [y] yes  [n] no, decline (default)  [c] cancel: ",
			termtext.Escape(server), termtext.Escape(textcut.Clip(p.Message, maxElicitText)), termtext.Escape(textcut.Clip(p.URL, maxElicitText)))
		return t.confirm(ctx, a), nil
	}
	fields, err := formFields(p.RequestedSchema)
	if err != nil {
		fmt.Fprintf(a.Out, "\nMCP server %s asked a question agenthost cannot show (%s): declined.\n", termtext.Escape(server), termtext.Escape(err.Error()))
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	fmt.Fprintf(a.Out, "\nMCP server %s asks: %s\nAnswer? [y] yes  [n] no, decline (default)  [c] cancel: ",
		termtext.Escape(server), termtext.Escape(textcut.Clip(p.Message, maxElicitText)))
	if r := t.confirm(ctx, a); r.Action != "accept" {
		return r, nil
	}
	content := map[string]any{}
	for _, f := range fields {
		v, ok, err := t.askField(ctx, a, f)
		if err != nil {
			return &mcp.ElicitResult{Action: "cancel"}, nil
		}
		if ok {
			content[f.name] = v
		}
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}

// confirm reads y (accept), c (cancel) or anything else (decline).
func (t *Elicitor) confirm(ctx context.Context, a *Asker) *mcp.ElicitResult {
	line, err := a.ReadLine(ctx)
	if err != nil {
		return &mcp.ElicitResult{Action: "cancel"}
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return &mcp.ElicitResult{Action: "accept"}
	case "c", "cancel":
		return &mcp.ElicitResult{Action: "cancel"}
	}
	return &mcp.ElicitResult{Action: "decline"}
}

// askField asks one field until the answer fits its type (at most
// maxElicitTries times). An empty answer leaves the field out (the
// server's default, if it has one, is then filled in): ok is false.
func (t *Elicitor) askField(ctx context.Context, a *Asker, f elicitField) (any, bool, error) {
	label := f.name
	if f.Title != "" {
		label += " (" + textcut.Clip(f.Title, maxElicitLabel) + ")"
	}
	kind := f.Type
	if len(f.Enum) > 0 {
		opts := f.Enum
		more := ""
		if len(opts) > maxElicitOptions {
			opts, more = opts[:maxElicitOptions], ", …"
		}
		kind = "one of " + strings.Join(opts, ", ") + more
	}
	hint := ""
	if f.Desc != "" {
		hint = ": " + textcut.Clip(f.Desc, maxElicitLabel)
	}
	def := ""
	if f.Default != nil {
		b, _ := json.Marshal(f.Default)
		def = " [" + textcut.Clip(string(b), maxElicitLabel) + "]"
	} else if f.required {
		def = " (required)"
	}
	for try := 0; try < maxElicitTries; try++ {
		fmt.Fprintf(a.Out, "  %s, %s%s%s: ", termtext.Escape(label), termtext.Escape(kind), termtext.Escape(hint), termtext.Escape(def))
		line, err := a.ReadLine(ctx)
		if err != nil {
			return nil, false, err
		}
		line = strings.TrimSpace(line)
		if line == "" {
			if f.required && f.Default == nil {
				fmt.Fprintln(a.Out, "  an answer is required")
				continue
			}
			return nil, false, nil
		}
		v, err := f.parse(line)
		if err != nil {
			fmt.Fprintf(a.Out, "  %s\n", err)
			continue
		}
		return v, true, nil
	}
	return nil, false, ErrNoAnswer
}

// parse reads an answer as the field's type.
func (f elicitField) parse(s string) (any, error) {
	if len(f.Enum) > 0 {
		if !slices.Contains(f.Enum, s) {
			return nil, fmt.Errorf("not one of the choices")
		}
		return s, nil
	}
	switch f.Type {
	case "integer":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("not a whole number")
		}
		return n, nil
	case "number":
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, fmt.Errorf("not a number")
		}
		return x, nil
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, fmt.Errorf("answer yes or no")
	}
	return s, nil
}

// formFields reads the fields of a form's schema (an object of primitive
// properties, as the MCP specification restricts it), in the order of
// their names (the SDK hands the schema over as a map).
func formFields(schema any) ([]elicitField, error) {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("the form is not a JSON object")
	}
	names, err := objectKeys(s.Properties)
	if err != nil {
		return nil, err
	}
	if len(names) > maxElicitFields {
		return nil, fmt.Errorf("%d fields, more than %d", len(names), maxElicitFields)
	}
	var props map[string]json.RawMessage
	if len(s.Properties) > 0 {
		if err := json.Unmarshal(s.Properties, &props); err != nil {
			return nil, fmt.Errorf("the form's properties are not an object")
		}
	}
	var out []elicitField
	for _, n := range names {
		var f elicitField
		if err := json.Unmarshal(props[n], &f); err != nil {
			return nil, fmt.Errorf("field %q is not a property the form may have", textcut.Clip(n, maxElicitLabel))
		}
		switch f.Type {
		case "string", "integer", "number", "boolean":
		default:
			if len(f.Enum) == 0 {
				return nil, fmt.Errorf("field %q has type %q, not string, number, integer or boolean", textcut.Clip(n, maxElicitLabel), textcut.Clip(f.Type, 40))
			}
		}
		f.name = n
		f.required = slices.Contains(s.Required, n)
		out = append(out, f)
	}
	return out, nil
}

// objectKeys are the keys of a JSON object, in order.
func objectKeys(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("the form's properties are not an object")
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
		if len(keys) > maxElicitFields {
			break
		}
	}
	return keys, nil
}
