package main

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
)

// png is a 1x1 red PNG.
const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

// wav is a WAV file of a short silence.
func wav() string {
	const rate, n = 8000, 80
	b := make([]byte, 44+n)
	copy(b, "RIFF")
	binary.LittleEndian.PutUint32(b[4:], 36+n)
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1) // PCM
	binary.LittleEndian.PutUint16(b[22:], 1) // mono
	binary.LittleEndian.PutUint32(b[24:], rate)
	binary.LittleEndian.PutUint32(b[28:], rate)
	binary.LittleEndian.PutUint16(b[32:], 1)
	binary.LittleEndian.PutUint16(b[34:], 8)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], n)
	for i := 44; i < len(b); i++ {
		b[i] = 128
	}
	return base64.StdEncoding.EncodeToString(b)
}

type obj = map[string]any

var noArgs = obj{"type": "object", "properties": obj{}}

func tool(name, desc string, schema obj) obj {
	return obj{"name": name, "description": desc, "inputSchema": schema}
}

func stringArg(names ...string) obj {
	props := obj{}
	for _, n := range names {
		props[n] = obj{"type": "string"}
	}
	return obj{"type": "object", "properties": props, "required": names}
}

func text(s string) obj { return obj{"type": "text", "text": s} }

func result(items ...obj) obj { return obj{"content": items} }

//go:wasmexport list_tools
func listTools() int32 {
	return serve(func(request) (any, error) {
		return obj{"tools": []obj{
			tool("test_simple_text", "Returns simple text", noArgs),
			tool("test_image_content", "Returns an image", noArgs),
			tool("test_audio_content", "Returns audio", noArgs),
			tool("test_embedded_resource", "Returns an embedded resource", noArgs),
			tool("test_resource_link", "Returns a resource link", noArgs),
			tool("test_multiple_content_types", "Returns text, an image and a resource", noArgs),
			tool("test_tool_with_logging", "Logs three messages", noArgs),
			tool("test_tool_with_progress", "Reports progress three times", noArgs),
			tool("test_error_handling", "Always fails", noArgs),
			tool("test_sampling", "Asks the client's model", stringArg("prompt")),
			tool("test_elicitation", "Asks the user", stringArg("message")),
			tool("test_elicitation_sep1034_defaults", "Asks the user, with defaults", noArgs),
			tool("test_elicitation_sep1330_enums", "Asks the user to choose", noArgs),
			tool("test_reconnection", "Answers on the stream of its call, which the client may drop and resume", noArgs),
			{
				"name": "json_schema_2020_12_tool", "description": "Tool with JSON Schema 2020-12 features",
				"inputSchema": obj{
					"$schema": "https://json-schema.org/draft/2020-12/schema",
					"type":    "object",
					"$defs": obj{"address": obj{"type": "object", "properties": obj{
						"street": obj{"type": "string"}, "city": obj{"type": "string"}}}},
					"properties": obj{
						"name":    obj{"type": "string"},
						"address": obj{"$ref": "#/$defs/address"},
					},
					"additionalProperties": false,
				},
				"annotations":  obj{"readOnlyHint": true, "title": "Schema 2020-12"},
				"outputSchema": obj{"type": "object", "properties": obj{"ok": obj{"type": "boolean"}}},
			},
		}}, nil
	})
}

//go:wasmexport call_tool
func callTool() int32 {
	return serve(func(r request) (any, error) {
		var p struct {
			Name      string            `json:"name"`
			Arguments map[string]string `json:"arguments"`
		}
		if err := json.Unmarshal(r.Request, &p); err != nil {
			return nil, err
		}
		switch p.Name {
		case "test_simple_text":
			return result(text("This is a simple text response for testing.")), nil
		case "test_image_content":
			return result(obj{"type": "image", "data": png, "mimeType": "image/png"}), nil
		case "test_audio_content":
			return result(obj{"type": "audio", "data": wav(), "mimeType": "audio/wav"}), nil
		case "test_embedded_resource":
			return result(obj{"type": "resource", "resource": obj{"uri": "test://embedded-resource", "mimeType": "text/plain", "text": "This is an embedded resource content."}}), nil
		case "test_resource_link":
			return result(obj{"type": "resource_link", "uri": "test://static-text", "name": "static-text", "mimeType": "text/plain"}), nil
		case "test_multiple_content_types":
			return result(text("Multiple content types test:"),
				obj{"type": "image", "data": png, "mimeType": "image/png"},
				obj{"type": "resource", "resource": obj{"uri": "test://mixed-content-resource", "mimeType": "application/json", "text": `{"test":"data","value":123}`}}), nil
		case "test_error_handling":
			return obj{"content": []obj{text("This tool intentionally returns an error for testing")}, "isError": true}, nil
		case "test_reconnection":
			return result(text("Reconnection test completed")), nil
		case "json_schema_2020_12_tool":
			return obj{"content": []obj{text("ok")}, "structuredContent": obj{"ok": true}}, nil
		}
		return callWithHost(r, p.Name, p.Arguments)
	})
}

var resources = []obj{
	{"uri": "test://static-text", "name": "static-text", "description": "A static text resource", "mimeType": "text/plain"},
	{"uri": "test://static-binary", "name": "static-binary", "description": "A static binary resource", "mimeType": "image/png"},
	{"uri": "test://watched-resource", "name": "watched-resource", "description": "A resource clients may subscribe to", "mimeType": "text/plain"},
}

//go:wasmexport list_resources
func listResources() int32 {
	return serve(func(request) (any, error) { return obj{"resources": resources}, nil })
}

//go:wasmexport list_resource_templates
func listResourceTemplates() int32 {
	return serve(func(request) (any, error) {
		return obj{"resourceTemplates": []obj{{"uriTemplate": "test://template/{id}/data", "name": "template", "description": "Data by id", "mimeType": "application/json"}}}, nil
	})
}

//go:wasmexport read_resource
func readResource() int32 {
	return serve(func(r request) (any, error) {
		var p struct {
			URI string `json:"uri"`
		}
		if err := json.Unmarshal(r.Request, &p); err != nil {
			return nil, err
		}
		var c obj
		switch {
		case p.URI == "test://static-text":
			c = obj{"uri": p.URI, "mimeType": "text/plain", "text": "This is the content of the static text resource."}
		case p.URI == "test://static-binary":
			c = obj{"uri": p.URI, "mimeType": "image/png", "blob": png}
		case p.URI == "test://watched-resource":
			c = obj{"uri": p.URI, "mimeType": "text/plain", "text": "watched"}
		case strings.HasPrefix(p.URI, "test://template/") && strings.HasSuffix(p.URI, "/data"):
			id := strings.TrimSuffix(strings.TrimPrefix(p.URI, "test://template/"), "/data")
			b, _ := json.Marshal(obj{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			c = obj{"uri": p.URI, "mimeType": "application/json", "text": string(b)}
		default:
			return nil, fmt.Errorf("no resource %q", p.URI)
		}
		return obj{"contents": []obj{c}}, nil
	})
}

//go:wasmexport list_prompts
func listPrompts() int32 {
	arg := func(name string) obj { return obj{"name": name, "description": name, "required": true} }
	return serve(func(request) (any, error) {
		return obj{"prompts": []obj{
			{"name": "test_simple_prompt", "description": "A prompt without arguments"},
			{"name": "test_prompt_with_arguments", "description": "A prompt with arguments", "arguments": []obj{arg("arg1"), arg("arg2")}},
			{"name": "test_prompt_with_embedded_resource", "description": "A prompt with a resource", "arguments": []obj{arg("resourceUri")}},
			{"name": "test_prompt_with_image", "description": "A prompt with an image"},
		}}, nil
	})
}

//go:wasmexport get_prompt
func getPrompt() int32 {
	return serve(func(r request) (any, error) {
		var p struct {
			Name      string            `json:"name"`
			Arguments map[string]string `json:"arguments"`
		}
		if err := json.Unmarshal(r.Request, &p); err != nil {
			return nil, err
		}
		user := func(c obj) obj { return obj{"role": "user", "content": c} }
		var msgs []obj
		switch p.Name {
		case "test_simple_prompt":
			msgs = []obj{user(text("This is a simple prompt for testing."))}
		case "test_prompt_with_arguments":
			msgs = []obj{user(text(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", p.Arguments["arg1"], p.Arguments["arg2"])))}
		case "test_prompt_with_embedded_resource":
			msgs = []obj{
				user(obj{"type": "resource", "resource": obj{"uri": p.Arguments["resourceUri"], "mimeType": "text/plain", "text": "Embedded resource content for testing."}}),
				user(text("Please process the embedded resource above.")),
			}
		case "test_prompt_with_image":
			msgs = []obj{user(obj{"type": "image", "data": png, "mimeType": "image/png"}), user(text("Please analyze the image above."))}
		default:
			return nil, fmt.Errorf("no prompt %q", p.Name)
		}
		return obj{"messages": msgs}, nil
	})
}

//go:wasmexport complete
func complete() int32 {
	return serve(func(r request) (any, error) {
		var p struct {
			Argument struct{ Name, Value string } `json:"argument"`
		}
		if err := json.Unmarshal(r.Request, &p); err != nil {
			return nil, err
		}
		var vals []string
		for _, v := range []string{"paris", "park", "party", "test", "testing"} {
			if strings.HasPrefix(v, p.Argument.Value) {
				vals = append(vals, v)
			}
		}
		return obj{"completion": obj{"values": vals, "total": len(vals), "hasMore": false}}, nil
	})
}
