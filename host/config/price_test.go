package config

import (
	"strings"
	"testing"
)

func TestSpendLimits(t *testing.T) {
	const base = `
provider "p" {
  base_url = "http://127.0.0.1:1/v1"
}
model "m" {
  provider = "p"
  price {
    input  = 0.15
    output = 0.6
  }
}
`
	t.Run("decoded", func(t *testing.T) {
		cfg, diags := Parse([]byte(base+`
host {
  max_cost = 2
}
agent "a" {
  tokens = 400000
  cost   = 5
}
`), "/x/agents.hcl", Options{})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		a := cfg.Agent("a")
		if a.Tokens == nil || *a.Tokens != 400000 || a.Cost == nil || *a.Cost != 5 {
			t.Errorf("tokens %v cost %v", a.Tokens, a.Cost)
		}
		if got := cfg.CostMax(a); got != 2 {
			t.Errorf("CostMax = %v, want host.max_cost 2 (the ceiling)", got)
		}
		if p := cfg.Model("m").Price; p == nil || p.Input != 0.15 || p.Output != 0.6 || p.CachedInput != 0.15 {
			t.Errorf("price %+v, want cached_input = input", p)
		}
	})
	t.Run("no limit without max_cost and cost", func(t *testing.T) {
		cfg, diags := Parse([]byte(base+`agent "a" {}`), "/x/agents.hcl", Options{})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		if got := cfg.CostMax(cfg.Agent("a")); got != 0 {
			t.Errorf("CostMax = %v, want 0", got)
		}
	})
	t.Run("subagent model without price", func(t *testing.T) {
		_, diags := Parse([]byte(base+`
model "free" {
  provider = "p"
}
agent "a" {
  model     = "m"
  subagents = ["b"]
  default   = true
  cost      = 1
}
agent "b" {
  model     = "free"
  subagents = ["c"]
}
agent "c" {
  model = "free"
}
`), "/x/agents.hcl", Options{})
		var got []string
		for _, d := range diags {
			got = append(got, d.Summary+": "+d.Detail)
		}
		if len(diags) != 1 || !strings.Contains(got[0], `model "free" (used by its subagent "b") has no price`) {
			t.Errorf("diagnostics %q, want one Missing price for model free", got)
		}
	})
}
