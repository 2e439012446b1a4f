package complete

import (
	"slices"
	"testing"

	"github.com/spf13/cobra"

	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/host/config"
)

// source is a Source over a fixed config and tools, recording the
// --config value it was asked for.
func source(cfg *config.Config, tools []host.Tool, asked *string) Source {
	return Source{
		LoadConfig: func(f string) *config.Config { *asked = f; return cfg },
		LoadTools:  func(f string) []host.Tool { *asked = f; return tools },
	}
}

// TestPluginCall completes the plugin blocks (sorted), then a block's
// tools by the plugin's own names; without blocks, a .wasm file.
func TestPluginCall(t *testing.T) {
	cfg := &config.Config{Plugins: []*config.Plugin{{Name: "zz", Source: "dir/z.wasm"}, {Name: "core", Source: "builtin:core"}}}
	tools := []host.Tool{
		{Name: "fs_read", Plugin: "core", PluginTool: "read", Description: "Read a file.\nMore."},
		{Name: "write", Plugin: "core"},
		{Name: "other", Plugin: "zz"},
	}
	var asked string
	s := source(cfg, tools, &asked)
	cmd := &cobra.Command{Use: "call"}
	cmd.Flags().StringP("config", "c", "", "")
	_ = cmd.Flags().Set("config", "x.hcl")

	got, dir := s.PluginCall(cmd, nil, "")
	if want := []cobra.Completion{"core\tbuiltin:core", "zz\tz.wasm"}; !slices.Equal(got, want) || dir != cobra.ShellCompDirectiveNoFileComp {
		t.Errorf("blocks: %q %v, want %q", got, dir, want)
	}
	if asked != "x.hcl" {
		t.Errorf("the source was asked for config %q, want x.hcl", asked)
	}
	got, _ = s.PluginCall(cmd, []string{"core"}, "")
	if want := []cobra.Completion{"read\tRead a file.", "write\t"}; !slices.Equal(got, want) {
		t.Errorf("tools: %q, want %q", got, want)
	}
	if got, _ = s.PluginCall(cmd, []string{"a.wasm"}, ""); got != nil {
		t.Errorf("tools of a .wasm file: %q, want none", got)
	}
	if got, dir = source(&config.Config{}, nil, &asked).PluginCall(cmd, nil, ""); !slices.Equal(got, []cobra.Completion{"wasm"}) || dir != cobra.ShellCompDirectiveFilterFileExt {
		t.Errorf("no blocks: %q %v, want .wasm files", got, dir)
	}
}

// TestNoConfig completes nothing from a config that does not load.
func TestNoConfig(t *testing.T) {
	var asked string
	s := source(nil, nil, &asked)
	cmd := &cobra.Command{Use: "run"}
	for name, f := range map[string]cobra.CompletionFunc{"agents": s.Agents, "sessions": s.Sessions, "mcp servers": s.MCPServers, "tools": s.Tools} {
		if got, dir := f(cmd, nil, ""); got != nil || dir != cobra.ShellCompDirectiveNoFileComp {
			t.Errorf("%s: %q %v, want nothing and no files", name, got, dir)
		}
	}
}
