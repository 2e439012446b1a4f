package config

import (
	"strings"
	"testing"
)

// Two wasi_cli plugins declaring a tool of the same name conflict, unless
// tool_prefix or rename sets them apart; rename wins over tool_prefix.
func TestToolNamesWASICLI(t *testing.T) {
	files := map[string]string{"a.wasm": string(coreModule), "b.wasm": string(coreModule)}
	plugins := func(b string) string {
		return base + `plugin "a" {
  source = "a.wasm"
  tool "echo" { argv = ["a"] }
}
plugin "b" {
  source = "b.wasm"
` + b + `
  tool "echo" { argv = ["b"] }
  tool "cat" { argv = ["b"] }
}
agent "x" {}
`
	}
	_, diags := parseIn(t, plugins(""), files)
	if !diags.HasErrors() || !strings.Contains(dump(diags), `A tool named "echo" is already declared on line 5`) {
		t.Fatalf("same name without a prefix:%s", dump(diags))
	}
	cfg, diags := parseIn(t, plugins(`  tool_prefix = "b_"
  rename      = { cat = "concat" }`), files)
	if diags.HasErrors() {
		t.Fatalf("with tool_prefix:%s", dump(diags))
	}
	p := cfg.Plugin("b")
	for own, want := range map[string]string{"echo": "b_echo", "cat": "concat"} {
		if got := p.ToolName(own); got != want {
			t.Errorf("ToolName(%q) = %q, want %q", own, got, want)
		}
	}
	if got := cfg.Plugin("a").ToolName("echo"); got != "echo" {
		t.Errorf("plugin without a prefix: ToolName(echo) = %q", got)
	}
	// rename onto the other plugin's name conflicts again
	_, diags = parseIn(t, plugins(`  rename = { echo = "echo2", cat = "echo" }`), files)
	if !strings.Contains(dump(diags), `A tool named "echo" is already declared on line 5`) {
		t.Errorf("rename onto a taken name:%s", dump(diags))
	}
	_, diags = parseIn(t, plugins(`  rename = { echo = "same", cat = "same" }`), files)
	if !strings.Contains(dump(diags), `rename gives both "cat" and "echo" the name "same"`) {
		t.Errorf("two tools renamed alike:%s", dump(diags))
	}
	_, diags = parseIn(t, plugins(`  tool_prefix = ""`), files)
	if !strings.Contains(dump(diags), "Empty tool_prefix") {
		t.Errorf("empty prefix:%s", dump(diags))
	}
}

func TestFixPrefix(t *testing.T) {
	for in, want := range map[string]string{"gh.": "gh_", "gh": "gh_", "a-": "a-", " x y ": "x_y_"} {
		if got := fixPrefix(in); got != want {
			t.Errorf("fixPrefix(%q) = %q, want %q", in, got, want)
		}
	}
}

// The same holds for the tool blocks of plain Extism plugins.
func TestToolNamesExtism(t *testing.T) {
	files := map[string]string{"a.wasm": string(coreModule), "b.wasm": string(coreModule)}
	src := func(b string) string {
		return base + `plugin "a" {
  source = "a.wasm"
  kind   = "extism"
  tool "count" { function = "count_vowels" }
}
plugin "b" {
  source = "b.wasm"
  kind   = "extism"
` + b + `
  tool "count" { function = "count_vowels" }
}
agent "x" {}
`
	}
	_, diags := parseIn(t, src(""), files)
	if !strings.Contains(dump(diags), `A tool named "count" is already declared on line 6`) {
		t.Fatalf("same name without a prefix:%s", dump(diags))
	}
	cfg, diags := parseIn(t, src(`  tool_prefix = "b-"`), files)
	if diags.HasErrors() {
		t.Fatalf("with tool_prefix:%s", dump(diags))
	}
	if got := cfg.Plugin("b").ToolName("count"); got != "b-count" {
		t.Errorf("ToolName = %q", got)
	}
}
