package doctor

import (
	"slices"

	"github.com/hashicorp/hcl/v2"

	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/host/config"
)

// Selection is what doctor checks: every agent of the config, or one
// agent and its subagents (agenthost doctor -a), with the models and
// plugins they use.
type Selection struct {
	// Agents are the agents checked, in config order, or the one agent
	// and its subagents (config.AgentTree).
	Agents []*config.Agent
	// Models are the models the agents name, each once, in the order the
	// agents name them.
	Models []*config.Model

	all   bool     // every agent: every plugin is checked
	tools []string // the tools the agents name
}

// Select is the selection of agent a and its subagents, or of every agent
// when a is nil.
func Select(cfg *config.Config, a *config.Agent) Selection {
	s := Selection{Agents: cfg.Agents, all: a == nil}
	if a != nil {
		s.Agents = cfg.AgentTree(a)
	}
	for _, a := range s.Agents {
		s.tools = append(s.tools, a.Tools...)
		for _, m := range cfg.Models {
			if m.Name == a.Model && !slices.Contains(s.Models, m) {
				s.Models = append(s.Models, m)
			}
		}
	}
	return s
}

// Plugins names the plugins of cfg the selection uses, in config order
// (every plugin when every agent is selected). h is the host built from
// cfg, or nil when host.New failed: diags then hold its diagnostics.
func (s Selection) Plugins(cfg *config.Config, h *host.Host, diags hcl.Diagnostics) []string {
	var out []string
	for _, p := range cfg.Plugins {
		if s.all || pluginUsed(h, diags, p, s.tools) {
			out = append(out, p.Name)
		}
	}
	return out
}

// pluginUsed reports whether one of tools is p's (by its names after
// tool_prefix and rename). When the host did not load, only the tool
// blocks of wasi_cli and Extism plugins are known, and a plugin that
// failed to load counts as used, so that its failure is reported.
func pluginUsed(h *host.Host, diags hcl.Diagnostics, p *config.Plugin, tools []string) bool {
	var names []string
	if h != nil {
		for _, t := range h.Tools() {
			if t.Plugin == p.Name {
				names = append(names, t.Name)
			}
		}
	} else {
		for _, t := range p.Tools {
			names = append(names, p.ToolName(t.Name))
		}
		for _, d := range diags {
			if d.Severity == hcl.DiagError && d.Subject != nil && *d.Subject == p.DefRange {
				return true
			}
		}
	}
	for _, n := range names {
		if slices.Contains(tools, n) {
			return true
		}
	}
	return false
}
