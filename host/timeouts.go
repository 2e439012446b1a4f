package host

import "time"

// ModelTimeout is the longest one model request of the agent called name
// may take: its provider's request_timeout; 0 for an unknown agent.
func (h *Host) ModelTimeout(name string) time.Duration {
	a := h.Config.Agent(name)
	if a == nil {
		return 0
	}
	m := h.Config.Model(a.Model)
	if m == nil {
		return 0
	}
	if p := h.Config.Provider(m.Provider); p != nil {
		return p.RequestTimeout
	}
	return 0
}

// ToolTimeout is the longest one call of the tool called name (as agents
// know it) may take: its plugin's limits.timeout, or its MCP server's
// timeout; 0 for an unknown tool.
func (h *Host) ToolTimeout(name string) time.Duration {
	ref, ok := h.tab.Load().refs[name]
	switch {
	case !ok:
		return 0
	case ref.mcp != nil:
		return ref.mcp.timeout
	case ref.plugin != nil:
		return ref.plugin.Limits().Timeout
	}
	return 0
}
