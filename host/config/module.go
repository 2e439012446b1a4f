package config

import (
	"fmt"
	"strconv"
)

// ModulePlugin is the plugin block of ForModule's config.
const ModulePlugin = "plugin"

// ForModule is the config of `agenthost plugin call FILE.wasm`: one plugin
// block (ModulePlugin) for the module src (a path or builtin:NAME) with
// nothing granted: no mounts, network, clock, randomness or environment,
// the default limits. The model and agent it declares are never used.
func ForModule(src string, opts Options) (*Config, error) {
	hcl := fmt.Sprintf(`provider "none" {
  base_url = "http://127.0.0.1:1/v1"
}

model "none" {
  provider = "none"
  name     = "none"
}

plugin %q {
  source = %s
}

agent "plugin-call" {
  model  = "none"
  prompt = "unused"
}
`, ModulePlugin, strconv.Quote(src))
	cfg, diags := Parse([]byte(hcl), "plugin-call.hcl", opts)
	if diags.HasErrors() {
		return nil, diags
	}
	return cfg, nil
}
