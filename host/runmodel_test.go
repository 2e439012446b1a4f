package host

import "testing"

// TestRunModel: -m names a model block, else a block's id on the agent's
// provider, else an id on the agent's provider with the agent's block's
// settings and no price.
func TestRunModel(t *testing.T) {
	cfg := project(t, map[string]string{"agents.hcl": `
provider "p" {
  base_url = "http://127.0.0.1:1/v1"
}
provider "q" {
  base_url = "http://127.0.0.1:2/v1"
}
model "m" {
  provider       = "p"
  name           = "small"
  context_window = 8000
  price {
    input  = 1
    output = 2
  }
}
model "big" {
  provider = "p"
  name     = "large"
}
model "far" {
  provider = "q"
  name     = "remote"
}
agent "a" {
  prompt = "x"
  model  = "m"
}
`})
	for _, c := range []struct {
		name, wantBlock, wantID string
		block                   bool
	}{
		{"big", "big", "large", true},
		{"far", "far", "remote", true},   // a block by name, any provider
		{"large", "big", "large", true},  // a block's id on the agent's provider
		{"remote", "m", "remote", false}, // another provider's id is not that block
		{"other", "m", "other", false},
	} {
		m, block := RunModel(cfg, "a", c.name)
		if m.Name != c.wantBlock || m.ID != c.wantID || block != c.block {
			t.Errorf("RunModel(%q) = block %q id %q (%v), want %q %q (%v)", c.name, m.Name, m.ID, block, c.wantBlock, c.wantID, c.block)
		}
		if !block && (m.Price != nil || m.ContextWindow != 8000 || m.Provider != "p") {
			t.Errorf("RunModel(%q) = %+v, want the agent's block's settings without its price", c.name, m)
		}
	}
	if cfg.Model("m").ID != "small" {
		t.Error("RunModel changed the config's block")
	}
	if m, _ := RunModel(cfg, "nobody", "x"); m != nil {
		t.Errorf("RunModel of an unknown agent = %+v, want nil", m)
	}
}
