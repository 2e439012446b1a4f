package config

import (
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/agenthost/agenthost/internal/toolname"
)

// ToolNames are the tool_prefix and rename of a plugin or mcp_server
// block: they give its tools other names in the agent's world (the model,
// agent tools lists, events, cassettes), while the plugin or server is
// still called with its own names.
type ToolNames struct {
	ToolPrefix      string
	Rename          map[string]string
	ToolPrefixRange hcl.Range
	RenameRange     hcl.Range
}

// named is the name own is known by with prefix as the tool prefix: its
// rename when the rename map has one, else prefix + own.
func (n *ToolNames) named(prefix, own string) string {
	if r, ok := n.Rename[own]; ok {
		return r
	}
	return prefix + own
}

// RenameKeys are the keys of the rename map, sorted.
func (n *ToolNames) RenameKeys() []string { return sortedKeys(n.Rename) }

// ToolName is the name the agent's world knows the plugin's tool own by:
// its rename when the rename map has one, else ToolPrefix + own. The
// plugin itself is always called with own.
func (p *Plugin) ToolName(own string) string { return p.named(p.ToolPrefix, own) }

// Renamed reports whether the plugin's tools are known by other names.
func (p *Plugin) Renamed() bool { return p.ToolPrefix != "" || len(p.Rename) > 0 }

// toolNames reads a block's tool_prefix and rename into n. The names they
// make are checked against the tool-name rule here where they can be (the
// new names of rename); prefixed names and rename keys are checked by the
// host once it knows the tools (a plugin of kind agenthost, a discovering
// Extism plugin and an MCP server list their own).
func (b *builder) toolNames(n *ToolNames, prefix string, prefixRange hcl.Range, rename map[string]string, renameRange hcl.Range) {
	n.ToolPrefixRange, n.RenameRange = prefixRange, renameRange
	if b.set(prefixRange) {
		switch {
		case prefix == "":
			b.errorf(prefixRange, "Empty tool_prefix", "tool_prefix is put before the name of each of the block's tools, like \"gh_\"; remove it or give it a value.")
		case len(prefix) >= toolname.MaxLen || !toolname.Valid(prefix):
			b.errorf(prefixRange, "Invalid tool_prefix",
				"tool_prefix %q makes tool names that do not match %s (letters, digits, _ and -, at most %d in all); try %q.",
				prefix, toolname.Pattern, toolname.MaxLen, fixPrefix(prefix))
		default:
			n.ToolPrefix = prefix
		}
	}
	if !b.set(renameRange) || len(rename) == 0 {
		return
	}
	n.Rename = map[string]string{}
	to := map[string]string{}
	for _, own := range sortedKeys(rename) {
		r := rename[own]
		switch {
		case !toolname.Valid(r):
			b.errorf(renameRange, "Invalid tool name",
				"rename gives tool %q the name %q, which does not match %s (letters, digits, _ and -, at most %d); try %q.",
				own, r, toolname.Pattern, toolname.MaxLen, toolname.Fix(r))
		case to[r] != "":
			b.errorf(renameRange, "Duplicate tool name",
				"rename gives both %q and %q the name %q; give each tool its own name.", to[r], own, r)
		default:
			to[r] = own
			n.Rename[own] = r
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
