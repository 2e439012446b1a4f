package config

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/pluginkind"
)

func TestExtismBlock(t *testing.T) {
	src := base + `plugin "vowels" {
  source = "cv.wasm"
  config = { vowels = "aeiou" }
  http {
    allow = ["https://api.github.com", "http://127.0.0.1:8080", "https://*.example.com"]
  }
  tool "count_vowels" {
    description  = "Count the vowels"
    input_schema = { type = "object", properties = { text = { type = "string" } }, required = ["text"] }
    function     = "count_vowels"
    input        = args.text
  }
  tool "raw" {}
}
agent "a" {
  tools = ["count_vowels", "raw"]
}
`
	cfg, diags := parseIn(t, src, map[string]string{"cv.wasm": string(coreModule)})
	if diags.HasErrors() {
		t.Fatal(dump(diags))
	}
	p := cfg.Plugins[0]
	if p.Kind != pluginkind.Extism || p.Config["vowels"] != "aeiou" || len(p.HTTPAllow) != 3 || len(p.Tools) != 2 {
		t.Fatalf("%+v", p)
	}
	cv, raw := p.Tools[0], p.Tools[1]
	if cv.Function != "count_vowels" || raw.Function != "" {
		t.Fatalf("functions %q %q", cv.Function, raw.Function)
	}
	argv, in, err := cv.EvalInput(json.RawMessage(`{"text":"hello"}`))
	if err != nil || argv != nil || string(in) != "hello" {
		t.Fatalf("input = %q, %v", in, err)
	}
	// Without input, the arguments as JSON.
	if _, in, err = raw.EvalInput(json.RawMessage(`{"a":1}`)); err != nil || string(in) != `{"a":1}` {
		t.Fatalf("default input = %q, %v", in, err)
	}
	if _, _, err = cv.EvalInput(json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), "input") {
		t.Fatalf("missing text: %v", err)
	}
}

func TestExtismValidation(t *testing.T) {
	files := map[string]string{"x.wasm": string(coreModule)}
	tests := []struct {
		name, src, summary, detail, at string
	}{
		{"bad origin", "plugin \"x\" {\n  source = \"x.wasm\"\n  kind   = \"extism\"\n  http {\n    allow = [\"api.github.com\"]\n  }\n}\nagent \"a\" {}\n",
			"Invalid http allow entry", `"api.github.com" is not an origin`, "7:13"},
		{"origin with a path", "plugin \"x\" {\n  source = \"x.wasm\"\n  kind   = \"extism\"\n  http {\n    allow = [\"https://a.com/v1\"]\n  }\n}\nagent \"a\" {}\n",
			"Invalid http allow entry", "no path", "7:13"},
		{"wildcard inside", "plugin \"x\" {\n  source = \"x.wasm\"\n  kind   = \"extism\"\n  http {\n    allow = [\"https://a.*.com\"]\n  }\n}\nagent \"a\" {}\n",
			"Invalid http allow entry", `may start with "*."`, "7:13"},
		{"config on wasi_cli", "plugin \"x\" {\n  source = \"x.wasm\"\n  kind   = \"wasi_cli\"\n  config = { a = \"b\" }\n  tool \"t\" {\n    argv = [\"t\"]\n  }\n}\nagent \"a\" {}\n",
			"config on a wasi_cli plugin", "only for kind = \"extism\"", "6:12"},
		{"http on agenthost", "plugin \"x\" {\n  source = \"builtin:core\"\n  http {\n    allow = []\n  }\n}\nagent \"a\" {}\n",
			"http on a agenthost plugin", "Extism plugins", "5:3"},
		{"argv on an extism tool", "plugin \"x\" {\n  source = \"x.wasm\"\n  kind   = \"extism\"\n  tool \"t\" {\n    argv = [\"t\"]\n  }\n}\nagent \"a\" {}\n",
			"Invalid attribute for an Extism tool", "argv is for wasi_cli tools", "7:12"},
		{"function on a wasi_cli tool", "plugin \"x\" {\n  source = \"x.wasm\"\n  kind   = \"wasi_cli\"\n  tool \"t\" {\n    argv     = [\"t\"]\n    function = \"f\"\n  }\n}\nagent \"a\" {}\n",
			"Invalid attribute for a wasi_cli tool", "function is for tools of Extism plugins", "8:16"},
		{"input refers to other than args", "plugin \"x\" {\n  source = \"x.wasm\"\n  kind   = \"extism\"\n  tool \"t\" {\n    input = arg.text\n  }\n}\nagent \"a\" {}\n",
			"Invalid reference", "input is evaluated per call", "7:13"},
		{"input not a string", "plugin \"x\" {\n  source = \"x.wasm\"\n  kind   = \"extism\"\n  tool \"t\" {\n    input = [args.text]\n  }\n}\nagent \"a\" {}\n",
			"Invalid input", "input must be a string or null", "7:13"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := parseIn(t, base+tc.src, files)
			if len(diags) != 1 {
				t.Fatalf("want exactly one %s, got:%s", tc.summary, dump(diags))
			}
			d := diags[0]
			if d.Summary != tc.summary || !strings.Contains(d.Detail, tc.detail) || pos(d) != tc.at {
				t.Errorf("got %q at %s: %s\nwant %q at %s with %q", d.Summary, pos(d), d.Detail, tc.summary, tc.at, tc.detail)
			}
		})
	}
}
