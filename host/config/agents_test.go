package config

import (
	"reflect"
	"testing"
)

// TestAgentTree: an agent's subagents, theirs too, depth first in list
// order, each once through a cycle, unknown names left out; nil for no
// agent.
func TestAgentTree(t *testing.T) {
	c := &Config{Agents: []*Agent{
		{Name: "a", Subagents: []string{"b", "nope", "d"}},
		{Name: "b", Subagents: []string{"c", "a"}},
		{Name: "c", Subagents: []string{"b"}},
		{Name: "d", Subagents: []string{"c"}},
		{Name: "e"},
	}}
	names := func(as []*Agent) (out []string) {
		for _, a := range as {
			out = append(out, a.Name)
		}
		return out
	}
	for _, tc := range []struct {
		from string
		want []string
	}{
		{"a", []string{"a", "b", "c", "d"}},
		{"c", []string{"c", "b", "a", "d"}},
		{"e", []string{"e"}},
		{"nope", nil},
	} {
		if got := names(c.AgentTree(c.Agent(tc.from))); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("AgentTree(%s) = %q, want %q", tc.from, got, tc.want)
		}
	}
}
