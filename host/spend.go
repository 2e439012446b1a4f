package host

import (
	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/loop"
)

// spendLimits sets the token and cost limits of la, and the price of its
// model, from the config.
func spendLimits(la *loop.Agent, cfg *config.Config, a *config.Agent, m *config.Model) {
	if a.Tokens != nil {
		la.Tokens = *a.Tokens
	}
	la.Cost = cfg.CostMax(a)
	if p := m.Price; p != nil {
		la.Price = &loop.Price{Input: p.Input, Output: p.Output, CachedInput: p.CachedInput}
	}
}
