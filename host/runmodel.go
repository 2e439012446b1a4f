package host

import (
	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/loop"
)

// RunModel is the model block a run of agent uses when asked for model
// name (RunRequest.Model, run and chat's -m): the model block of that
// name; else the block on the agent's provider whose model id is name;
// else the agent's own model block with name as its model id, and no
// price (the block's price is another model's): block is false then,
// and the caller checks that the provider serves such an id
// (doctor.CheckRunModel). m is nil when agent is not one of cfg's agents.
func RunModel(cfg *config.Config, agent, name string) (m *config.Model, block bool) {
	if m := cfg.Model(name); m != nil {
		return m, true
	}
	a := cfg.Agent(agent)
	if a == nil {
		return nil, false
	}
	own := cfg.Model(a.Model)
	for _, m := range cfg.Models {
		if m.Provider == own.Provider && m.ID == name {
			return m, true
		}
	}
	c := *own
	c.ID, c.IDEnv, c.Price = name, nil, nil
	return &c, false
}

// withModel is la, the agent called agent, with model name for one run
// (RunModel); its subagents keep their own models.
// It returns the model block too: what the run needs of an MCP client and
// what its trace says follow it.
func (h *Host) withModel(la *loop.Agent, name string) (*loop.Agent, *config.Model) {
	m, block := RunModel(h.Config, la.Name, name)
	lm := h.lms[m.Name]
	if !block {
		lm = h.loopModel(m)
	}
	out := h.newAgent(h.Config.Agent(la.Name), m, lm)
	out.Subagents = la.Subagents
	return out, m
}
