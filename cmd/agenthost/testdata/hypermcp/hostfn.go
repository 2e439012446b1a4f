package main

import (
	"encoding/json"
	"fmt"
)

// hyper-mcp v2's host functions, as its PDK imports them.

//go:wasmimport extism:host/user notify_logging_message
func notifyLoggingMessage(uint64)

//go:wasmimport extism:host/user notify_progress
func notifyProgress(uint64)

//go:wasmimport extism:host/user create_message
func createMessage(uint64) uint64

//go:wasmimport extism:host/user create_elicitation
func createElicitation(uint64) uint64

func putJSON(v any) uint64 {
	b, _ := json.Marshal(v)
	return put(b)
}

// elicit asks the user with schema and reports the answer as the
// scenarios want it.
func elicit(message string, schema obj) (any, error) {
	out := get(createElicitation(putJSON(obj{"message": message, "requestedSchema": schema})))
	var res struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("create_elicitation returned %q: %v", out, err)
	}
	c, _ := json.Marshal(res.Content)
	return result(text(fmt.Sprintf("Elicitation completed: action=%s, content=%s", res.Action, c))), nil
}

func titled(key string, pairs ...string) []obj {
	var out []obj
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, obj{"const": pairs[i], key: pairs[i+1]})
	}
	return out
}

// callWithHost serves the tools that need the host's functions.
func callWithHost(r request, name string, args map[string]string) (any, error) {
	switch name {
	case "test_tool_with_logging":
		for _, m := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			notifyLoggingMessage(putJSON(obj{"level": "info", "data": m}))
		}
		return result(text("Logged three messages.")), nil
	case "test_tool_with_progress":
		token, _ := r.Context.Meta["progressToken"].(string)
		for _, p := range []float64{0, 50, 100} {
			notifyProgress(putJSON(obj{"progress": p, "total": 100, "progressToken": token}))
		}
		return result(text("Progress reported.")), nil
	case "test_sampling":
		out := get(createMessage(putJSON(obj{
			"messages":  []obj{{"role": "user", "content": text(args["prompt"])}},
			"maxTokens": 100,
		})))
		var res struct {
			Content struct{ Text string } `json:"content"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return nil, fmt.Errorf("create_message returned %q: %v", out, err)
		}
		return result(text("LLM response: " + res.Content.Text)), nil
	case "test_elicitation":
		return elicit(args["message"], obj{"type": "object", "properties": obj{
			"username": obj{"type": "string", "description": "User's response"},
			"email":    obj{"type": "string", "description": "User's email address"},
		}, "required": []string{"username", "email"}})
	case "test_elicitation_sep1034_defaults":
		return elicit("Please check these values", obj{"type": "object", "properties": obj{
			"name":     obj{"type": "string", "default": "John Doe"},
			"age":      obj{"type": "integer", "default": 30},
			"score":    obj{"type": "number", "default": 95.5},
			"status":   obj{"type": "string", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
			"verified": obj{"type": "boolean", "default": true},
		}})
	case "test_elicitation_sep1330_enums":
		return elicit("Please choose", obj{"type": "object", "properties": obj{
			"untitledSingle": obj{"type": "string", "enum": []string{"option1", "option2", "option3"}},
			"titledSingle":   obj{"type": "string", "oneOf": titled("title", "value1", "First Option", "value2", "Second Option")},
			"legacyEnum":     obj{"type": "string", "enum": []string{"opt1", "opt2", "opt3"}, "enumNames": []string{"Option One", "Option Two", "Option Three"}},
			"untitledMulti":  obj{"type": "array", "items": obj{"type": "string", "enum": []string{"option1", "option2", "option3"}}},
			"titledMulti":    obj{"type": "array", "items": obj{"anyOf": titled("title", "value1", "First Choice", "value2", "Second Choice")}},
		}})
	}
	return nil, fmt.Errorf("unknown tool %q", name)
}
