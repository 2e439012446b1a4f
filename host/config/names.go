package config

import (
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/agenthost/agenthost/internal/toolname"
)

// ToolName is the name the agent's world (the model, agent tools lists,
// events, cassettes) knows the plugin's tool own by: its rename when the
// rename map has one, else ToolPrefix + own. The plugin itself is always
// called with own.
func (p *Plugin) ToolName(own string) string {
	if n, ok := p.Rename[own]; ok {
		return n
	}
	return p.ToolPrefix + own
}

// Renamed reports whether the plugin's tools are known by other names.
func (p *Plugin) Renamed() bool { return p.ToolPrefix != "" || len(p.Rename) > 0 }

// RenameKeys are the keys of the rename map, sorted.
func (p *Plugin) RenameKeys() []string {
	keys := make([]string, 0, len(p.Rename))
	for k := range p.Rename {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// toolNames reads tool_prefix and rename. The names they make are checked
// against the tool-name rule here where they can be (the new names of
// rename); prefixed names and rename keys are checked by the host once it
// knows the plugin's tools (a plugin of kind agenthost or a discovering
// Extism plugin lists its own).
func (b *builder) toolNames(p *Plugin, rp *rawPlugin) {
	p.ToolPrefixRange, p.RenameRange = rp.ToolPrefixRange, rp.RenameRange
	if b.set(rp.ToolPrefixRange) {
		switch {
		case rp.ToolPrefix == "":
			b.errorf(rp.ToolPrefixRange, "Empty tool_prefix", "tool_prefix is put before the name of each of the plugin's tools, like \"gh_\"; remove it or give it a value.")
		case len(rp.ToolPrefix) >= toolname.MaxLen || !toolname.Valid(rp.ToolPrefix):
			b.errorf(rp.ToolPrefixRange, "Invalid tool_prefix",
				"tool_prefix %q makes tool names that do not match %s (letters, digits, _ and -, at most %d in all); try %q.",
				rp.ToolPrefix, toolname.Pattern, toolname.MaxLen, fixPrefix(rp.ToolPrefix))
		default:
			p.ToolPrefix = rp.ToolPrefix
		}
	}
	if !b.set(rp.RenameRange) || len(rp.Rename) == 0 {
		return
	}
	p.Rename = map[string]string{}
	to := map[string]string{}
	for _, own := range sortedKeys(rp.Rename) {
		n := rp.Rename[own]
		switch {
		case !toolname.Valid(n):
			b.errorf(rp.RenameRange, "Invalid tool name",
				"rename gives tool %q the name %q, which does not match %s (letters, digits, _ and -, at most %d); try %q.",
				own, n, toolname.Pattern, toolname.MaxLen, toolname.Fix(n))
		case to[n] != "":
			b.errorf(rp.RenameRange, "Duplicate tool name",
				"rename gives both %q and %q the name %q; give each tool its own name.", to[n], own, n)
		default:
			to[n] = own
			p.Rename[own] = n
		}
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// declaredTool records a tool block of p under the name the agents know it
// by: tool names are unique across plugins after tool_prefix and rename.
func (b *builder) declaredTool(p *Plugin, rt *rawTool, seen map[string]hcl.Range) bool {
	if strings.TrimSpace(rt.Name) == "" {
		return b.declared("tool", rt.Name, rt.NameRange, seen)
	}
	return b.declared("tool", p.ToolName(rt.Name), rt.NameRange, seen)
}

// fixPrefix is a valid tool_prefix close to p, ending in _ or -.
func fixPrefix(p string) string {
	f := toolname.Fix(strings.TrimSpace(p))
	if len(f) > toolname.MaxLen/2 {
		f = f[:toolname.MaxLen/2]
	}
	if !strings.HasSuffix(f, "_") && !strings.HasSuffix(f, "-") {
		f += "_"
	}
	return f
}
