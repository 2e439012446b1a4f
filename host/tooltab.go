package host

import (
	"context"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/host/plugin"
	"github.com/agenthost/agenthost/internal/toolname"
	"github.com/agenthost/agenthost/loop"
)

// toolTab is every tool of the host at one version: the plugins' and the
// MCP servers' tools by the names agents know them by. The load makes
// version 0; a plugin or an MCP server that says its tools changed makes
// the next (refreshTools). A tab is replaced whole, never changed.
type toolTab struct {
	version uint64
	refs    map[string]toolRef
	// list is what Host.Tools returns: the plugins' tools in config
	// order, then the MCP servers'.
	list []Tool
	// mcpGens are the MCP servers' RefreshTools counts the tab was built
	// from, by index in Host.mcpServers.
	mcpGens []int
}

// firstTab is the tab of the load: the tools it checked.
func (h *Host) firstTab() *toolTab {
	tab := &toolTab{refs: h.tools, mcpGens: make([]int, len(h.mcpServers))}
	for _, p := range h.Plugins {
		cp := h.Config.Plugin(p.Name())
		for _, s := range p.Tools() {
			tab.list = append(tab.list, pluginTool(p.Name(), p.Kind(), cp.ToolName(s.Name), s))
		}
	}
	// The servers' tools were listed before any change notification
	// counted (gen 0); one that came since makes the tab stale at once.
	tab.list = append(tab.list, h.mcpTools...)
	return tab
}

// toolsStale reports whether a plugin or an MCP server said its tools
// changed since tab was built. It is cheap: atomic loads and a lock each.
func (h *Host) toolsStale(tab *toolTab) bool {
	for _, p := range h.Plugins {
		if p.ToolsStale() {
			return true
		}
	}
	for i, s := range h.mcpServers {
		if s.ToolsGen() != tab.mcpGens[i] {
			return true
		}
	}
	return false
}

// refreshTools brings the host's tools up to date and returns their
// version: when a plugin or an MCP server said its tools changed, they are
// listed again (one refresh at a time; the others wait for it) and, when
// the list differs, a new tab is made and Options.OnToolsChanged told.
// A listing that fails keeps that source's tools as they were, with a
// warning. It costs a few atomic loads when nothing changed.
func (h *Host) refreshTools(ctx context.Context) uint64 {
	tab := h.tab.Load()
	if tab == nil {
		return 0 // still loading: the first tab takes in what changed
	}
	if !h.toolsStale(tab) {
		return tab.version
	}
	h.tabMu.Lock()
	defer h.tabMu.Unlock()
	tab = h.tab.Load()
	log := zerolog.Ctx(ctx)
	changed := false
	for _, p := range h.Plugins {
		ok, err := p.Relist(ctx)
		if err != nil {
			log.Warn().Err(err).Str("plugin", p.Name()).Msg("tools not listed again")
		}
		changed = changed || ok
	}
	gens := make([]int, len(h.mcpServers))
	for i, s := range h.mcpServers {
		gens[i] = s.RefreshTools(ctx)
		changed = changed || gens[i] != tab.mcpGens[i]
	}
	if !changed {
		return tab.version
	}
	next := h.nextTab(ctx, tab, gens)
	h.tab.Store(next)
	log.Info().Uint64("version", next.version).Int("tools", len(next.refs)).Msg("the host's tools changed")
	if h.onToolsChanged != nil {
		h.onToolsChanged()
	}
	return next.version
}

// nextTab lists every tool again, after tab: the plugins' as they list
// them now, the MCP servers' as last listed (gens). Names come from the
// blocks' tool_prefix and rename as at load; a tool whose name breaks the
// rule or is taken already is left out with a warning (at load both are
// errors), as is a server's listing that failed (its tools stay as in
// tab).
func (h *Host) nextTab(ctx context.Context, tab *toolTab, gens []int) *toolTab {
	log := zerolog.Ctx(ctx)
	next := &toolTab{version: tab.version + 1, refs: map[string]toolRef{}, mcpGens: gens}
	taken := map[string]string{}
	add := func(ref toolRef, t Tool, from string) {
		if !toolname.Valid(ref.spec.Name) {
			log.Warn().Str("tool", ref.spec.Name).Str("from", from).Msgf("tool left out: its name does not match %s", toolname.Pattern)
			return
		}
		if prev, dup := taken[ref.spec.Name]; dup {
			log.Warn().Str("tool", ref.spec.Name).Str("from", from).Str("taken_by", prev).Msg("tool left out: another tool has its name")
			return
		}
		taken[ref.spec.Name] = from
		next.refs[ref.spec.Name] = ref
		next.list = append(next.list, t)
	}
	for _, p := range h.Plugins {
		cp := h.Config.Plugin(p.Name())
		for _, s := range p.Tools() {
			spec := s
			spec.Name = cp.ToolName(s.Name)
			add(toolRef{plugin: p, spec: spec, own: s.Name}, pluginTool(p.Name(), p.Kind(), spec.Name, s), "plugin "+p.Name())
		}
	}
	for i, srv := range h.mcpServers {
		block := h.Config.MCPServers[i]
		from := "mcp_server " + block.Name
		specs, err := srv.Tools(ctx)
		if err != nil {
			log.Warn().Err(err).Str("mcp_server", block.Name).Msg("tools not listed again: they stay as they were")
			for _, t := range tab.list {
				if ref := tab.refs[t.Name]; ref.mcp != nil && ref.mcp.server == srv {
					add(ref, t, from)
				}
			}
			continue
		}
		for _, spec := range specs {
			tool := spec.Name
			spec.Name = block.ToolName(tool)
			add(toolRef{spec: spec, mcp: &mcpTool{server: srv, tool: tool, timeout: block.Timeout}},
				Tool{Name: spec.Name, Plugin: block.Name, Kind: KindMCP, Description: spec.Description, InputSchema: spec.InputSchema,
					Annotations: spec.Annotations, OutputSchema: spec.OutputSchema}, from)
		}
	}
	return next
}

// pluginTool is how Host.Tools shows tool s of a plugin (s.Name is the
// plugin's own name), known to agents as name.
func pluginTool(pluginName string, kind plugin.Kind, name string, s loop.ToolSpec) Tool {
	t := Tool{Name: s.Name, Plugin: pluginName, Kind: kind, Description: s.Description, InputSchema: s.InputSchema,
		Annotations: s.Annotations, OutputSchema: s.OutputSchema}
	if name != s.Name {
		t.Name, t.PluginTool = name, s.Name
	}
	return t
}

// toolset is the set of tools one agent may call: the tools it names
// (allow), of the host's current tab; every tool of the host, by name,
// when all is set. Its view of the tab is remade when the tab changes.
type toolset struct {
	h     *Host
	allow []string
	all   bool
	view  atomic.Pointer[toolView]
}

// toolView is a toolset at one version of the host's tools.
type toolView struct {
	version uint64
	specs   []loop.ToolSpec
	names   []string
	byName  map[string]toolRef
}

// agentTools is the toolset of an agent that names the tools allow.
func agentTools(h *Host, allow []string) *toolset {
	return &toolset{h: h, allow: slices.Clone(allow)}
}

// allTools is the toolset of every tool of the host.
func allTools(h *Host) *toolset { return &toolset{h: h, all: true} }

// current is the toolset's view of the host's current tools.
func (t *toolset) current() *toolView {
	tab := t.h.tab.Load()
	if v := t.view.Load(); v != nil && v.version == tab.version {
		return v
	}
	names := t.allow
	if t.all {
		names = slices.Sorted(maps.Keys(tab.refs))
	}
	v := &toolView{version: tab.version, byName: make(map[string]toolRef, len(names))}
	for _, n := range names {
		ref, ok := tab.refs[n]
		if !ok {
			continue // gone since the load; back when its source lists it again
		}
		v.specs = append(v.specs, ref.spec)
		v.names = append(v.names, n)
		v.byName[n] = ref
	}
	t.view.Store(v)
	return v
}

func (t *toolset) Tools() []loop.ToolSpec { return t.current().specs }

// Refresh implements loop.RefreshingToolset: the host's tools are brought
// up to date (Host.refreshTools).
func (t *toolset) Refresh(ctx context.Context) uint64 {
	t.h.refreshTools(ctx)
	return t.current().version
}

// lookup finds the tool called name, or gives the error result of a call
// of a tool the set does not have: the host's one decision of "unknown
// tool" (the loop makes it for a run's calls before they get here).
func (t *toolset) lookup(name string) (toolRef, string) {
	v := t.current()
	if ref, ok := v.byName[name]; ok {
		return ref, ""
	}
	return toolRef{}, loop.UnknownTool(name, v.names)
}
