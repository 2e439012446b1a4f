package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// ParseMountFlag is a --mount HOST:GUEST[:ro|rw] of `agenthost plugin call
// FILE.wasm` (docker's -v form), a mount of ForModule: the guest is the
// part after the last ":" that starts an absolute path, so a host path may
// hold a colon; HOST is made absolute and must be a directory. The mode is
// left empty for the mount block's default (ro).
func ParseMountFlag(s string) (Mount, error) {
	var m Mount
	for _, mode := range []MountMode{MountRO, MountRW} {
		if rest, ok := strings.CutSuffix(s, ":"+string(mode)); ok {
			s, m.Mode = rest, mode
			break
		}
	}
	i := strings.LastIndex(s, ":/")
	if i <= 0 {
		return m, fmt.Errorf("use HOST:GUEST[:ro|rw], the guest an absolute path, like --mount .:/workspace:rw")
	}
	host, err := filepath.Abs(s[:i])
	if err != nil {
		return m, err
	}
	if fi, err := os.Stat(host); err != nil {
		return m, fmt.Errorf("the host directory %s: %w", host, errors.Unwrap(err))
	} else if !fi.IsDir() {
		return m, fmt.Errorf("%s is not a directory", host)
	}
	m.Host, m.Guest = host, s[i+1:]
	return m, nil
}

// hclQuote is s as an HCL string literal: quoted, and no template in it.
func hclQuote(s string) string {
	q := strconv.Quote(s)
	return strings.NewReplacer("${", "$${", "%{", "%%{").Replace(q)
}
