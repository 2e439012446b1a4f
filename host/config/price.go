package config

import (
	"fmt"
	"strconv"

	"github.com/hashicorp/hcl/v2"
)

// Token and cost limits: an agent's tokens and cost, host.max_cost, and the
// price block of a model. A cost limit needs the price of every model its
// run can use (the agent's and its subagents', transitively).

// priceExample is the fix shown when a price block is missing or wrong.
const priceExample = "  price {\n    input        = 0.15   # USD per 1M prompt tokens\n    output       = 0.60   # USD per 1M completion tokens\n    cached_input = 0.075  # optional, defaults to input\n  }"

// positive reads an optional number attribute that must be above 0.
func (b *builder) positive(v *float64, r hcl.Range, attr, why string) (float64, bool) {
	if v == nil || !b.set(r) {
		return 0, false
	}
	if !(*v > 0) {
		b.errorf(r, "Invalid "+attr, "%s must be more than 0 (%s).", attr, why)
		return 0, false
	}
	return *v, true
}

func (b *builder) hostCost(cfg *Config, h *rawHost) {
	cfg.Host.MaxCostRange = h.MaxCostRange
	if c, ok := b.positive(h.MaxCost, h.MaxCostRange, "max_cost", "USD, the cost ceiling of every agent's run; remove it for no ceiling"); ok {
		cfg.Host.MaxCost = c
	}
}

func (b *builder) price(rp *rawPrice) *Price {
	if rp == nil {
		return nil
	}
	const why = "USD per million tokens; a price block needs input and output"
	in, okIn := b.positive(rp.Input, rp.InputRange, "input", why)
	out, okOut := b.positive(rp.Output, rp.OutputRange, "output", why)
	for _, m := range []struct {
		v    *float64
		name string
	}{{rp.Input, "input"}, {rp.Output, "output"}} {
		if m.v == nil {
			b.errorf(rp.DefRange, "Missing "+m.name, "A price block needs input and output, in USD per million tokens:\n%s", priceExample)
		}
	}
	p := &Price{Input: in, Output: out, CachedInput: in}
	if c, ok := b.positive(rp.CachedInput, rp.CachedInputRange, "cached_input", "USD per million cached prompt tokens; remove it to price them as input"); ok {
		p.CachedInput = c
	}
	if !okIn || !okOut {
		return nil
	}
	return p
}

func (b *builder) agentSpend(a *Agent, ra *rawAgent, ex *agentExtra) {
	if ra.Tokens != nil && b.set(ra.TokensRange) {
		if n := *ra.Tokens; n < 1 {
			b.errorf(ra.TokensRange, "Invalid tokens", "tokens is the most prompt and completion tokens a run may use, subagents included, and must be at least 1; remove it for no limit.")
		} else {
			a.Tokens = &n
		}
	}
	if c, ok := b.positive(ra.Cost, ra.CostRange, "cost", "USD a run may spend, subagents included; remove it for no limit"); ok {
		a.Cost = &c
		ex.costRange = ra.CostRange
	}
}

// CostMax is the agent's cost limit in USD: min(cost ?? max_cost,
// max_cost), where an unset max_cost is no ceiling; 0 is no limit.
func (c *Config) CostMax(a *Agent) float64 {
	switch {
	case a.Cost == nil:
		return c.Host.MaxCost
	case c.Host.MaxCost > 0 && *a.Cost > c.Host.MaxCost:
		return c.Host.MaxCost
	}
	return *a.Cost
}

// prices checks that every agent with a cost limit can price each request
// of its run: its model and its subagents' models need a price block. The
// error points at the agent's cost attribute, or at host.max_cost when the
// limit comes from there.
func (b *builder) prices(cfg *Config, extras []agentExtra) {
	reported := map[string]bool{} // "range|model": one error per place and model
	for i, a := range cfg.Agents {
		if cfg.CostMax(a) == 0 {
			continue
		}
		where, what := extras[i].costRange, fmt.Sprintf("agent %q has cost = %s", a.Name, strconv.FormatFloat(cfg.CostMax(a), 'f', -1, 64))
		if a.Cost == nil {
			where, what = cfg.Host.MaxCostRange, fmt.Sprintf("host.max_cost = %s limits agent %q", strconv.FormatFloat(cfg.Host.MaxCost, 'f', -1, 64), a.Name)
		}
		for _, use := range modelsUsed(cfg, a) {
			m := cfg.Model(use.model)
			if m == nil || m.Price != nil {
				continue
			}
			key := fmt.Sprintf("%v|%s", where, m.Name)
			if reported[key] {
				continue
			}
			reported[key] = true
			by := ""
			if use.agent != a.Name {
				by = fmt.Sprintf(" (used by its subagent %q)", use.agent)
			}
			b.errorf(where, "Missing price",
				"%s, but model %q%s has no price, so the cost of its requests is unknown. Add a price block to model %q (line %d):\n%s\nor remove the cost limit.",
				what, m.Name, by, m.Name, m.DefRange.Start.Line, priceExample)
		}
	}
}

type modelUse struct{ agent, model string }

// modelsUsed lists the models a run of a can use, with the agent using each:
// a's own, then its subagents', depth first, each agent once.
func modelsUsed(cfg *Config, a *Agent) []modelUse {
	var out []modelUse
	for _, x := range cfg.AgentTree(a) {
		if x.Model != "" {
			out = append(out, modelUse{x.Name, x.Model})
		}
	}
	return out
}
