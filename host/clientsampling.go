package host

import (
	"fmt"
	"path/filepath"

	"github.com/agenthost/agenthost/host/config"
)

// ClientNeeds is what a run of an agent needs of the MCP client that calls
// it (ClientNeeds).
type ClientNeeds struct {
	// Sampling is set when the agent or one of its subagents has a model
	// with provider = "mcp_client"; Agent and Model name the first such.
	Sampling bool
	Agent    string
	Model    *config.Model
	// Tools is set when one of those agents can offer its model tools
	// (it has tools or subagents, and more than one step): the client
	// must offer tools in sampling.
	Tools bool
	// ToolsAgent is the first agent that needs Tools.
	ToolsAgent string
}

// ClientNeeds says what a run of the agent called name needs of the MCP
// client that calls it. It is worked out at load: an agent's tools can
// only narrow after it (tooltab.go), so Tools may ask for tools in
// sampling that a run no longer offers, never the other way round.
func (h *Host) ClientNeeds(name string) ClientNeeds { return h.needs[name] }

// clientNeeds works out ClientNeeds for the agent called name; top, when
// not nil, is the model of that agent for one run (RunRequest.Model), its
// subagents keeping theirs.
func (h *Host) clientNeeds(name string, top *config.Model) ClientNeeds {
	var out ClientNeeds
	for _, a := range h.Config.AgentTree(h.Config.Agent(name)) {
		m := h.Config.Model(a.Model)
		if top != nil && a.Name == name {
			m = top
		}
		if m != nil && m.Provider == config.ProviderMCPClient {
			if !out.Sampling {
				out.Sampling, out.Agent, out.Model = true, a.Name, m
			}
			la := h.agents[a.Name]
			offers := la != nil && la.Tools != nil && len(la.Tools.Tools()) > 0
			offers = offers || (len(a.Subagents) > 0 && h.Config.Host.MaxDepth > 0)
			if offers && h.Config.StepsMax(a) > 1 && !out.Tools {
				out.Tools, out.ToolsAgent = true, a.Name
			}
		}
	}
	return out
}

// ModelWhere is where model block m is: "agents.hcl:12".
func ModelWhere(m *config.Model) string {
	return fmt.Sprintf("%s:%d", filepath.Base(m.DefRange.Filename), m.DefRange.Start.Line)
}

// NoClientError is a run refused before it starts: its agent, or one of
// its subagents, has a model with provider = "mcp_client", and the run has
// no MCP client to send the model's requests to.
type NoClientError struct{ ClientNeeds }

func (e *NoClientError) Error() string {
	return fmt.Sprintf("agent %q runs on model %q (%s), whose provider = %q sends each request to the MCP client that calls the agent, and there is none here: "+
		"serve the agent with 'agenthost mcp serve --agents' to an MCP client that offers sampling, or give model %q an OpenAI-compatible provider block",
		e.Agent, e.Model.Name, ModelWhere(e.Model), config.ProviderMCPClient, e.Model.Name)
}
