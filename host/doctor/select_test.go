package doctor

import (
	"reflect"
	"testing"

	"github.com/hashicorp/hcl/v2"

	"github.com/agenthost/agenthost/host/config"
)

// TestSelect: -a selects the agent and its subagents (each once, through
// a cycle), the models they name (each once) and the plugins whose tools
// they name, or that failed to load; without -a every agent and every
// plugin is selected.
func TestSelect(t *testing.T) {
	def := func(line int) hcl.Range { return hcl.Range{Filename: "agents.hcl", Start: hcl.Pos{Line: line}} }
	cfg := &config.Config{
		Models: []*config.Model{{Name: "m1"}, {Name: "m2"}, {Name: "m3"}},
		Agents: []*config.Agent{
			{Name: "top", Model: "m2", Tools: []string{"fs_read"}, Subagents: []string{"helper", "missing"}},
			{Name: "helper", Model: "m2", Tools: []string{"ping"}, Subagents: []string{"top", "leaf"}},
			{Name: "leaf", Model: "m1"},
			{Name: "other", Model: "m3", Tools: []string{"other_tool"}},
		},
		Plugins: []*config.Plugin{
			{Name: "fs", ToolNames: config.ToolNames{ToolPrefix: "fs_"}, Tools: []*config.CLITool{{Name: "read"}}, DefRange: def(10)},
			{Name: "net", Tools: []*config.CLITool{{Name: "ping"}}, DefRange: def(20)},
			{Name: "unused", Tools: []*config.CLITool{{Name: "other_tool_not"}}, DefRange: def(30)},
			{Name: "broken", DefRange: def(40)},
		},
	}
	names := func(as []*config.Agent) (out []string) {
		for _, a := range as {
			out = append(out, a.Name)
		}
		return out
	}
	models := func(ms []*config.Model) (out []string) {
		for _, m := range ms {
			out = append(out, m.Name)
		}
		return out
	}

	s := Select(cfg, cfg.Agent("top"))
	if got, want := names(s.Agents), []string{"top", "helper", "leaf"}; !reflect.DeepEqual(got, want) {
		t.Errorf("agents of -a top: %q, want %q", got, want)
	}
	if got, want := models(s.Models), []string{"m2", "m1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("models of -a top: %q, want %q", got, want)
	}
	// The host did not load: the tool blocks tell the plugins used, and
	// a plugin a diagnostic points at counts as used.
	diags := hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "bad", Subject: &hcl.Range{Filename: "agents.hcl", Start: hcl.Pos{Line: 40}}}}
	if got, want := s.Plugins(cfg, nil, diags), []string{"fs", "net", "broken"}; !reflect.DeepEqual(got, want) {
		t.Errorf("plugins of -a top: %q, want %q", got, want)
	}
	if got, want := s.Plugins(cfg, nil, nil), []string{"fs", "net"}; !reflect.DeepEqual(got, want) {
		t.Errorf("plugins of -a top, no diagnostics: %q, want %q", got, want)
	}

	all := Select(cfg, nil)
	if got, want := names(all.Agents), []string{"top", "helper", "leaf", "other"}; !reflect.DeepEqual(got, want) {
		t.Errorf("every agent: %q, want %q", got, want)
	}
	if got, want := models(all.Models), []string{"m2", "m1", "m3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("every agent's models: %q, want %q", got, want)
	}
	if got, want := all.Plugins(cfg, nil, nil), []string{"fs", "net", "unused", "broken"}; !reflect.DeepEqual(got, want) {
		t.Errorf("every plugin: %q, want %q", got, want)
	}
}
