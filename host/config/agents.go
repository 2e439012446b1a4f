package config

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"

	"github.com/agenthost/agenthost/internal/toolname"
)

// named returns the item of list named name, or nil; nameOf reads an
// item's name.
func named[T any](list []*T, name string, nameOf func(*T) string) *T {
	for _, x := range list {
		if nameOf(x) == name {
			return x
		}
	}
	return nil
}

// Agent returns the agent named name, or nil.
func (c *Config) Agent(name string) *Agent {
	return named(c.Agents, name, func(a *Agent) string { return a.Name })
}

// AgentTree is a and the agents it can call as subagents, theirs too:
// depth first in the order of each subagents list, each agent once (a
// cycle is followed no further), names that match no agent left out.
// Every walk of an agent's subagents goes through it.
func (c *Config) AgentTree(a *Agent) []*Agent {
	var out []*Agent
	seen := map[string]bool{}
	var walk func(*Agent)
	walk = func(x *Agent) {
		if x == nil || seen[x.Name] {
			return
		}
		seen[x.Name] = true
		out = append(out, x)
		for _, s := range x.Subagents {
			walk(c.Agent(s))
		}
	}
	walk(a)
	return out
}

// Model returns the model named name, or nil.
func (c *Config) Model(name string) *Model {
	return named(c.Models, name, func(m *Model) string { return m.Name })
}

// Provider returns the provider named name, or nil.
func (c *Config) Provider(name string) *Provider {
	return named(c.Providers, name, func(p *Provider) string { return p.Name })
}

// Plugin returns the plugin named name, or nil.
func (c *Config) Plugin(name string) *Plugin {
	return named(c.Plugins, name, func(p *Plugin) string { return p.Name })
}

// MCPServer returns the mcp_server named name, or nil.
func (c *Config) MCPServer(name string) *MCPServer {
	return named(c.MCPServers, name, func(s *MCPServer) string { return s.Name })
}

// DefaultAgent returns the agent with default = true, else the only agent;
// with several agents and no default it returns an error listing them.
func (c *Config) DefaultAgent() (*Agent, error) {
	for _, a := range c.Agents {
		if a.Default {
			return a, nil
		}
	}
	switch len(c.Agents) {
	case 1:
		return c.Agents[0], nil
	case 0:
		return nil, fmt.Errorf("no agent declared in %s", c.File)
	}
	return nil, fmt.Errorf("several agents and none has default = true: choose one of %s, or set default = true on one", quoteList(agentNames(c)))
}

// CheckTools reports every tool an agent lists that is not among available
// (the names of the tools the loaded plugins offer), at the reference, with
// a did-you-mean. The host calls it once plugins are loaded.
func (c *Config) CheckTools(available []string) hcl.Diagnostics {
	set := map[string]bool{}
	for _, n := range available {
		set[n] = true
	}
	offers := "No plugin offers"
	if len(c.MCPServers) > 0 {
		offers = "No plugin or mcp_server offers"
	}
	var diags hcl.Diagnostics
	for _, a := range c.Agents {
		for i, t := range a.Tools {
			if set[t] {
				continue
			}
			hint := fmt.Sprintf(" Declared tools: %s.", quoteList(available))
			if s := toolname.Suggest(t, available); s != "" {
				hint = fmt.Sprintf(" Did you mean %q?", s)
			} else if len(available) == 0 {
				hint = ""
			}
			d := &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Unknown tool",
				Detail:   fmt.Sprintf("%s a tool named %q.%s", offers, t, hint),
			}
			if i < len(a.ToolRanges) {
				d.Subject = a.ToolRanges[i].Ptr()
			}
			diags = append(diags, d)
		}
	}
	return diags
}
