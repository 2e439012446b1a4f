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
// of a tool p does not have, and what nameTool reports.
func (h *Host) addTools(cp *config.Plugin, p *plugin.Plugin, taken map[string]toolBlock) hcl.Diagnostics {
	specs := p.Tools()
	b := toolBlock{kind: "plugin", name: cp.Name, def: cp.DefRange, names: &cp.ToolNames}
	diags := unknownRenames(b.String(), &cp.ToolNames, specs)
	for _, spec := range specs {
		own := spec.Name
		spec.Name = cp.ToolName(own)
		if d := nameTool(b, own, spec.Name, taken); d != nil {
			diags = append(diags, d)
			continue
		}
		h.tools[spec.Name] = toolRef{plugin: p, spec: spec, own: own}
	}
	return diags
}

// toolBlock is a config block that offers tools: its kind ("plugin",
// "mcp_server"), name, range, and the tool_prefix and rename that name its
// tools.
type toolBlock struct {
	kind, name string
	def        hcl.Range
	names      *config.ToolNames
}

func (b toolBlock) String() string { return fmt.Sprintf("%s %q", b.kind, b.name) }

// nameTool takes name, the name block b's tool own is known by, for it,
// or reports why it cannot: a name that breaks the tool-name rule (at the
// rename or tool_prefix that made it, else at the block), or one a block
// before it took (taken, which nameTool fills).
func nameTool(b toolBlock, own, name string, taken map[string]toolBlock) *hcl.Diagnostic {
	if !toolname.Valid(name) {
		r, fix := b.def, "shorten tool_prefix or rename the tool"
		if b.kind == "mcp_server" {
			fix = "leave it out with tools = [...], shorten tool_prefix, or rename it"
		}
		if _, ok := b.names.Rename[own]; ok {
			r = b.names.RenameRange
		} else if b.names.ToolPrefix != "" {
			r = b.names.ToolPrefixRange
		}
		return &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid tool name",
			Detail: fmt.Sprintf("%s's tool %q would be called %q, which does not match %s (letters, digits, _ and -, at most %d); %s, e.g. rename = { %s = %q }.",
				b, own, name, toolname.Pattern, toolname.MaxLen, fix, own, toolname.Fix(name)),
			Subject: r.Ptr(),
		}
	}
	if prev, dup := taken[name]; dup {
		prefix := toolname.Fix(b.name) + "_"
		return &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Duplicate tool name",
			Detail: fmt.Sprintf("%s provides tool %q, which %s (%s) provides too; tool names must be unique: set tool_prefix = %q on this %s block (the model then sees %q), rename the tool with rename = { %s = \"...\" }, or drop one of the blocks.",
				b, name, prev, prev.def, prefix, b.kind, prefix+own, own),
			Subject: b.def.Ptr(),
		}
	}
	taken[name] = b
	return nil
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
