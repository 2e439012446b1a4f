package loop

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/agenthost/agenthost/internal/argcount"
	"github.com/agenthost/agenthost/internal/toolname"
)

// arguments is a call's arguments as the loop reads them, in one pass of
// encoding/json per call: the doom-loop signature, the object check and
// the decoded object that ArgumentChecker.Check receives all come from it.
type arguments struct {
	// obj is the decoded object (numbers as json.Number); nil when msg
	// is set.
	obj map[string]any
	// canon is the text re-marshalled with object keys sorted, or the
	// text itself when it is not one JSON value (canonicalJSON).
	canon string
	// msg is the error result for arguments that are not a JSON object.
	msg string
}

// readArguments reads c's arguments. It accepts exactly what
// json.Unmarshal into an any accepts (a number that overflows a float64
// among the refused), and refuses with encoding/json's own message, but
// keeps numbers exact (json.Number) for the tool's schema.
func readArguments(c ToolCall) arguments {
	argcount.Decoded()
	a := arguments{canon: c.Arguments}
	d := json.NewDecoder(strings.NewReader(c.Arguments))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	if err == nil && !d.More() {
		if b, merr := json.Marshal(v); merr == nil {
			a.canon = string(b)
		}
	}
	if err == nil && strings.TrimLeft(c.Arguments[d.InputOffset():], " \t\r\n") == "" && floats(v) {
		a.obj, a.msg = object(c, v)
		return a
	}
	// Not one JSON value as json.Unmarshal takes it: its error says why.
	// Only refused arguments come here, so the second pass is off the
	// usual path.
	var u any
	if uerr := json.Unmarshal([]byte(c.Arguments), &u); uerr != nil {
		a.msg = fmt.Sprintf("invalid arguments for tool %s: not valid JSON: %v", c.Name, uerr)
		return a
	}
	a.obj, a.msg = object(c, u)
	return a
}

// object returns v when it is a JSON object, else the error result.
func object(c ToolCall, v any) (map[string]any, string) {
	if obj, ok := v.(map[string]any); ok {
		return obj, ""
	}
	return nil, fmt.Sprintf("invalid arguments for tool %s: want a JSON object, got %s", c.Name, jsonKind(v))
}

// floats reports whether every number in v parses as a float64, as
// json.Unmarshal into an any requires.
func floats(v any) bool {
	switch v := v.(type) {
	case json.Number:
		_, err := strconv.ParseFloat(string(v), 64)
		return err == nil
	case map[string]any:
		for _, e := range v {
			if !floats(e) {
				return false
			}
		}
	case []any:
		for _, e := range v {
			if !floats(e) {
				return false
			}
		}
	}
	return true
}

// ParseArguments decodes call's arguments as the loop does before it
// checks a call: args is the JSON object with numbers as json.Number
// (exact), as ArgumentChecker.Check receives it; msg is the error result
// for arguments that are not a JSON object ("" when args is set). It is
// for callers that check a call outside a run.
func ParseArguments(call ToolCall) (args map[string]any, msg string) {
	a := readArguments(call)
	return a.obj, a.msg
}

// UnknownTool is the error result of a call of a tool that is not among
// names: with the likely meant one (the model wrote "fs.read_text_file"
// or "read_text_file" for "fs__read_text_file", or misspelt a name) and
// the tools there are. Every front door that answers a call of a tool it
// does not have answers this.
func UnknownTool(name string, names []string) string {
	if len(names) == 0 {
		return fmt.Sprintf("unknown tool %q: no tools are available", name)
	}
	hint := ""
	if s := toolname.Suggest(name, names); s != "" {
		hint = fmt.Sprintf(" Did you mean %q?", s)
	}
	return fmt.Sprintf("unknown tool %q.%s Available tools: %s", name, hint, strings.Join(names, ", "))
}
