package host

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/host/plugin"
	"github.com/agenthost/agenthost/internal/toolname"
	"github.com/agenthost/agenthost/loop"
)

// addTools puts the tools of the loaded plugin p (block cp) in the host's
// tool map under the names the agents know them by (tool_prefix, rename),
// once, at load: a call then only swaps the name back. It reports a rename
// of a tool p does not have, a name that breaks the tool-name rule and a
// name another plugin already uses.
func (h *Host) addTools(cp *config.Plugin, p *plugin.Plugin, owner map[string]*config.Plugin) hcl.Diagnostics {
	specs := p.Tools()
	diags := unknownRenames(fmt.Sprintf("plugin %q", cp.Name), &cp.ToolNames, specs)
	for _, spec := range specs {
		own := spec.Name
		spec.Name = cp.ToolName(own)
		if spec.Name != own && !toolname.Valid(spec.Name) {
			r := cp.ToolPrefixRange
			if _, ok := cp.Rename[own]; ok {
				r = cp.RenameRange
			}
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid tool name",
				Detail: fmt.Sprintf("Plugin %q's tool %q would be called %q, which does not match %s (letters, digits, _ and -, at most %d); shorten tool_prefix or rename the tool, e.g. rename = { %s = %q }.",
					cp.Name, own, spec.Name, toolname.Pattern, toolname.MaxLen, own, toolname.Fix(spec.Name)),
				Subject: r.Ptr(),
			})
			continue
		}
		if prev, dup := owner[spec.Name]; dup {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Duplicate tool name",
				Detail: fmt.Sprintf("plugin %q provides tool %q, which plugin %q (%s) provides too; tool names must be unique across plugins: set tool_prefix = %q on this plugin block (the model then sees %q), rename the tool with rename = { %s = \"...\" }, or drop one plugin.",
					cp.Name, spec.Name, prev.Name, prev.DefRange.String(), prefixFor(cp.Name), prefixFor(cp.Name)+own, own),
				Subject: cp.DefRange.Ptr(),
			})
			continue
		}
		owner[spec.Name] = cp
		h.tools[spec.Name] = toolRef{plugin: p, spec: spec, own: own}
	}
	return diags
}

// unknownRenames reports each key of a block's rename map that is not
// one of the tools it has (specs, by their own names). block is how the
// message names the block, like `plugin "gh"`.
func unknownRenames(block string, n *config.ToolNames, specs []loop.ToolSpec) hcl.Diagnostics {
	if len(n.Rename) == 0 {
		return nil
	}
	has := make(map[string]bool, len(specs))
	names := make([]string, len(specs))
	for i, s := range specs {
		has[s.Name], names[i] = true, s.Name
	}
	var diags hcl.Diagnostics
	for _, own := range n.RenameKeys() {
		if has[own] {
			continue
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Unknown tool in rename",
			Detail: fmt.Sprintf("rename names tool %q, which %s does not have; its tools are: %s.%s",
				own, block, strings.Join(names, ", "), didYouMean(own, names)),
			Subject: n.RenameRange.Ptr(),
		})
	}
	return diags
}

// prefixFor suggests a tool_prefix from a plugin name.
func prefixFor(plugin string) string {
	return toolname.Fix(plugin) + "_"
}

func didYouMean(name string, candidates []string) string {
	if s := config.Suggest(name, candidates); s != "" {
		return fmt.Sprintf(" Did you mean %q?", s)
	}
	return ""
}

// hintRenamed adds to each unknown-tool diagnostic whose name is a
// plugin's own name for a renamed tool the name agents know it by now.
func (h *Host) hintRenamed(diags hcl.Diagnostics) {
	renamed := map[string][]string{}
	for name, ref := range h.tools {
		if ref.own != name {
			renamed[ref.own] = append(renamed[ref.own], name)
		}
	}
	if len(renamed) == 0 {
		return
	}
	for _, a := range h.Config.Agents {
		for i, t := range a.Tools {
			news := renamed[t]
			if _, known := h.tools[t]; known || len(news) == 0 || i >= len(a.ToolRanges) {
				continue
			}
			sort.Strings(news)
			for _, d := range diags {
				if d.Summary == "Unknown tool" && d.Subject != nil && *d.Subject == a.ToolRanges[i] {
					d.Detail += fmt.Sprintf(" tool_prefix or rename gave the plugin's tool %q another name here: %s.", t, strings.Join(news, ", "))
				}
			}
		}
	}
}
