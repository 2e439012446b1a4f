package config

import (
	"fmt"
	"strconv"
	"strings"
)

// ModulePlugin is the plugin block of ForModule's config.
const ModulePlugin = "plugin"

// ForModule is the config of `agenthost plugin call FILE.wasm`: one plugin
// block (ModulePlugin, marked Bare) for the module src (a path or
// builtin:NAME) with nothing granted but mounts (--mount: Host, Guest and
// Mode of each; Name is ignored): no network, clock, randomness or
// environment, the default limits. The mounts are checked as mount blocks
// are. The model and agent it declares are never used.
func ForModule(src string, mounts []Mount, opts Options) (*Config, error) {
	var mb strings.Builder
	for i, m := range mounts {
		mode := ""
		if m.Mode != "" {
			mode = fmt.Sprintf("\n    mode  = %s", hclQuote(string(m.Mode)))
		}
		fmt.Fprintf(&mb, "\n  mount \"mount%d\" {\n    host  = %s\n    guest = %s%s\n  }", i+1, hclQuote(m.Host), hclQuote(m.Guest), mode)
	}
	hcl := fmt.Sprintf(`provider "none" {
  base_url = "http://127.0.0.1:1/v1"
}

model "none" {
  provider = "none"
  name     = "none"
}

plugin %q {
  source = %s%s
}

agent "plugin-call" {
  model  = "none"
  prompt = "unused"
}
`, ModulePlugin, hclQuote(src), mb.String())
	cfg, diags := Parse([]byte(hcl), "plugin-call.hcl", opts)
	if diags.HasErrors() {
		return nil, diags
	}
	cfg.Plugins[0].Bare = true
	return cfg, nil
}

// hclQuote is s as an HCL string literal: quoted, and no template in it.
func hclQuote(s string) string {
	q := strconv.Quote(s)
	return strings.NewReplacer("${", "$${", "%{", "%%{").Replace(q)
}
