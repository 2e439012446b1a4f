package term

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/agenthost/agenthost/internal/termtext"
	"github.com/agenthost/agenthost/internal/textcut"
)

// What the chat shows of tools: the /tools list and, on the progress
// line, what a call is about.

const (
	toolColumnMax = 32 // a longer name pushes its own description only
	toolDescMax   = 80
	// keyArgMax is the most of a key argument the progress line shows.
	keyArgMax = 40
)

// WriteTools writes the /tools list of agent: its tools' names in a
// column as wide as the longest (up to toolColumnMax), the first line of
// each description (desc, by name) after it, cut to fit a line; escaped
// when escape is set (stdout is a terminal).
func WriteTools(w io.Writer, agent string, tools []string, desc map[string]string, escape bool) {
	esc := func(s string) string {
		if escape {
			return termtext.Escape(s)
		}
		return s
	}
	if len(tools) == 0 {
		fmt.Fprintf(w, "%s has no tools\n", esc(agent))
	}
	width := 0
	for _, t := range tools {
		width = max(width, utf8.RuneCountInString(esc(t)))
	}
	width = min(width, toolColumnMax)
	for _, t := range tools {
		n := esc(t)
		d, _, _ := strings.Cut(desc[t], "\n")
		d = textcut.Runes(esc(strings.TrimSpace(d)), toolDescMax)
		fmt.Fprintf(w, "  %s%s  %s\n", n, strings.Repeat(" ", max(0, width-utf8.RuneCountInString(n))), d)
	}
}

// KeyArgs maps each tool to its key argument: the first property in its
// schema's "required" list that is a string ("path" of read_file).
type KeyArgs map[string]string

// NewKeyArgs reads the key arguments of tools from their input schemas
// (by tool name).
func NewKeyArgs(schemas map[string]json.RawMessage) KeyArgs {
	keys := KeyArgs{}
	for name, schema := range schemas {
		var s struct {
			Required   []string `json:"required"`
			Properties map[string]struct {
				Type any `json:"type"`
			} `json:"properties"`
		}
		if json.Unmarshal(schema, &s) != nil {
			continue
		}
		for _, r := range s.Required {
			if p, ok := s.Properties[r]; ok && p.Type == "string" {
				keys[name] = r
				break
			}
		}
	}
	return keys
}

// Of is what the call of tool with these arguments is about, for the
// progress line: its key argument's value on one line, cut to keyArgMax
// runes and escaped; "" when there is none.
func (k KeyArgs) Of(tool, args string) string {
	key := k[tool]
	if key == "" {
		return ""
	}
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) != nil {
		return ""
	}
	v, ok := m[key].(string)
	if !ok {
		return ""
	}
	return termtext.Escape(textcut.Line(v, keyArgMax))
}
