// Package complete is the dynamic part of agenthost's shell completion
// (what `agenthost __complete`, called by the scripts of `agenthost
// completion`, answers): the values of the flags and arguments that name
// something of the config (agents, sessions, MCP servers, plugin blocks
// and their tools), read from the config the command line names. Finding
// and loading that config is the command line's (Source); a config that
// does not load completes nothing.
package complete

import (
	"cmp"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/internal/session"
)

// Source loads what a command line names, given the value of its
// -c/--config flag ("" when it has none).
type Source struct {
	// LoadConfig is the config; nil when it does not load.
	LoadConfig func(configFlag string) *config.Config
	// LoadTools are the tools of the config's plugins (loading them,
	// from the compilation cache usually); nil when they do not load.
	LoadTools func(configFlag string) []host.Tool
}

// NoFiles completes nothing (a prompt, no arguments).
func NoFiles(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// WasmFiles completes a .wasm file, the first argument.
func WasmFiles(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return []cobra.Completion{"wasm"}, cobra.ShellCompDirectiveFilterFileExt
}

// Flags completes the values of cmd's flags that name something of the
// config (--agent, --session, --approve), a config file (--config) or a
// log level.
func (s Source) Flags(cmd *cobra.Command) {
	fl := cmd.LocalFlags()
	funcs := map[string]cobra.CompletionFunc{
		"config": func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return []cobra.Completion{"hcl"}, cobra.ShellCompDirectiveFilterFileExt
		},
		"agent":     s.Agents,
		"session":   s.Sessions,
		"approve":   s.Tools,
		"log-level": cobra.FixedCompletions([]cobra.Completion{"debug", "info", "warn", "error"}, cobra.ShellCompDirectiveNoFileComp),
	}
	for name, f := range funcs {
		if fl.Lookup(name) != nil {
			_ = cmd.RegisterFlagCompletionFunc(name, f)
		}
	}
}

// config is the config cmd's command line names.
func (s Source) config(cmd *cobra.Command) *config.Config {
	return s.LoadConfig(configFlag(cmd))
}

// tools are the tools of the config cmd's command line names.
func (s Source) tools(cmd *cobra.Command) []host.Tool {
	return s.LoadTools(configFlag(cmd))
}

// configFlag is the value of cmd's -c/--config; "" without one.
func configFlag(cmd *cobra.Command) string {
	if f := cmd.Flags().Lookup("config"); f != nil {
		return f.Value.String()
	}
	return ""
}

// Agents completes the config's agent names, each with its model.
func (s Source) Agents(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	if cfg := s.config(cmd); cfg != nil {
		for _, a := range cfg.Agents {
			out = append(out, cobra.CompletionWithDesc(a.Name, "model "+a.Model))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// Sessions completes "last" and the ids of the sessions in the config's
// data_dir, newest first, each with its agent and date.
func (s Source) Sessions(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	cfg := s.config(cmd)
	if cfg == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ms, _ := session.List(cfg.Host.DataDir)
	out := []cobra.Completion{cobra.CompletionWithDesc("last", "the newest session")}
	for _, m := range ms {
		out = append(out, cobra.CompletionWithDesc(m.ID, m.Agent+", "+m.Created.Format("2006-01-02 15:04")))
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
}

// MCPServers completes the first argument with the config's mcp_server
// names.
func (s Source) MCPServers(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	if cfg := s.config(cmd); cfg != nil && len(args) == 0 {
		for _, m := range cfg.MCPServers {
			out = append(out, m.Name)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// Tools completes the tool names of the config's plugins, each with the
// first line of its description.
func (s Source) Tools(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, t := range s.tools(cmd) {
		out = append(out, cobra.CompletionWithDesc(t.Name, firstLine(t.Description)))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// PluginCall completes plugin call's NAME (a plugin block, else a .wasm
// file) and TOOL (a tool of that block, by the name its plugin gives it).
func (s Source) PluginCall(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	switch {
	case len(args) == 0:
		var out []cobra.Completion
		if cfg := s.config(cmd); cfg != nil {
			for _, p := range cfg.Plugins {
				out = append(out, cobra.CompletionWithDesc(p.Name, filepath.Base(p.Source)))
			}
		}
		sort.Strings(out)
		if len(out) == 0 {
			return WasmFiles(cmd, args, "")
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	case len(args) == 1 && !strings.HasSuffix(args[0], ".wasm"):
		var out []cobra.Completion
		for _, t := range s.tools(cmd) {
			if t.Plugin == args[0] {
				out = append(out, cobra.CompletionWithDesc(cmp.Or(t.PluginTool, t.Name), firstLine(t.Description)))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
