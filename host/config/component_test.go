package config

import (
	"strings"
	"testing"

	"github.com/agenthost/agenthost/internal/pluginkind"
)

// TestComponentBlock: a component's kind is detected from the binary's
// layer field, whatever other attributes suggest, and its config and http
// grants are kept.
func TestComponentBlock(t *testing.T) {
	src := base + `plugin "fetch" {
  source = "fetch.wasm"
  config = { base = "http://127.0.0.1:8080" }
  env    = { LANG = "C" }
  http {
    allow = ["http://127.0.0.1:8080"]
  }
  mount "data" {
    host  = "data"
    guest = "/data"
  }
  tool_prefix = "web_"
}
agent "a" {
  tools = ["web_fetch-url"]
}
`
	cfg, diags := parseIn(t, src, map[string]string{"fetch.wasm": string(component), "data/x": ""})
	if diags.HasErrors() {
		t.Fatal(dump(diags))
	}
	p := cfg.Plugins[0]
	if p.Kind != pluginkind.Component || p.Config["base"] != "http://127.0.0.1:8080" || len(p.HTTPAllow) != 1 || len(p.Mounts) != 1 || p.ToolName("fetch-url") != "web_fetch-url" {
		t.Fatalf("%+v", p)
	}
}

// TestComponentValidation: settings of other kinds on a component, and
// kind = "component" on a core module, are errors naming the block and
// the fix.
func TestComponentValidation(t *testing.T) {
	files := map[string]string{"c.wasm": string(component), "m.wasm": string(coreModule)}
	tests := []struct {
		name, src, summary, detail, at string
	}{
		{"tool block without argv", "plugin \"c\" {\n  source = \"c.wasm\"\n  tool \"t\" {\n    stdin = \"x\"\n  }\n}\nagent \"a\" {}\n",
			"Missing argv", `Tool "t" of component plugin "c" needs argv`, "5:3"},
		{"extism tool block", "plugin \"c\" {\n  source = \"c.wasm\"\n  tool \"t\" {\n    argv     = [\"t\"]\n    function = \"f\"\n  }\n}\nagent \"a\" {}\n",
			"Invalid attribute for a component tool", "A tool block is for a command component (one that exports wasi:cli/run)", "7:16"},
		{"reuse", "plugin \"c\" {\n  source = \"c.wasm\"\n  reuse  = true\n}\nagent \"a\" {}\n",
			"reuse on a component plugin", "a component runs every call in fresh instances", "5:12"},
		{"declared another kind", "plugin \"c\" {\n  source = \"c.wasm\"\n  kind   = \"extism\"\n}\nagent \"a\" {}\n",
			"Invalid kind", `c.wasm is a WASI 0.2 component, not an extism plugin; set kind = "component"`, "5:12"},
		{"component kind on a core module", "plugin \"m\" {\n  source = \"m.wasm\"\n  kind   = \"component\"\n}\nagent \"a\" {}\n",
			"Invalid kind", `m.wasm is a core WebAssembly module, not a WASI 0.2 component`, "5:12"},
		{"bad origin", "plugin \"c\" {\n  source = \"c.wasm\"\n  http {\n    allow = [\"example.com\"]\n  }\n}\nagent \"a\" {}\n",
			"Invalid http allow entry", `"example.com" is not an origin`, "6:13"},
		{"http on wasi_cli", "plugin \"m\" {\n  source = \"m.wasm\"\n  kind   = \"wasi_cli\"\n  http {\n    allow = []\n  }\n  tool \"t\" {\n    argv = [\"t\"]\n  }\n}\nagent \"a\" {}\n",
			"http on a wasi_cli plugin", `components (kind = "component")`, "6:3"},
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

// TestKindBlocks: every plugin kind of internal/pluginkind has its own
// checks of a plugin block, and no other kind has any.
func TestKindBlocks(t *testing.T) {
	if len(kindBlocks) != len(PluginKinds) {
		t.Errorf("kindBlocks has %d kinds, internal/pluginkind %d (%q)", len(kindBlocks), len(PluginKinds), PluginKinds)
	}
	for _, k := range PluginKinds {
		if kindBlocks[k] == nil {
			t.Errorf("kind %q has no checks in kindBlocks", k)
		}
	}
}
