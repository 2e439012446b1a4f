package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/internal/session"
)

// newVersionCmd is `agenthost version`.
func newVersionCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date",
	}
	return c.noArgs(cmd, cmdVersion)
}

// newManCmd is `agenthost man DIR`.
func newManCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "man DIR",
		Short: "Write the man pages to DIR",
		Long: `Write a man page for agenthost and each of its commands to DIR (section 1). The
pages of this version are in docs/man.`,
		Example: "  agenthost man /usr/local/share/man/man1",
	}
	return c.action(cmd, c.cmdMan)
}

// cmdVersion prints the module version, and the commit and its date when
// the build recorded them.
func cmdVersion(_ context.Context, e *env) int {
	fmt.Fprintf(e.stdout, "agenthost %s\n", version())
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, at, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = ", with uncommitted changes"
				}
			}
		}
		if rev != "" {
			fmt.Fprintf(e.stdout, "commit %s (%s%s)\n", rev, at, modified)
		}
		fmt.Fprintf(e.stdout, "built with %s for %s/%s\n", bi.GoVersion, runtime.GOOS, runtime.GOARCH)
	}
	return exitOK
}

// cmdMan writes the man pages.
func (c *cli) cmdMan(_ context.Context, args []string, e *env) int {
	if len(args) != 1 {
		return usageErr(e, "usage: agenthost man DIR")
	}
	if err := os.MkdirAll(args[0], 0o755); err != nil {
		fmt.Fprintf(e.stderr, "agenthost: man: %v\n", err)
		return exitError
	}
	// A fixed date: the pages change with the commands, not the day.
	date := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	root := (&cli{ctx: c.ctx, e: e}).tree()
	hdr := &doc.GenManHeader{Title: "AGENTHOST", Section: "1", Source: "agenthost", Manual: "agenthost manual", Date: &date}
	if err := doc.GenManTree(root, hdr, args[0]); err != nil {
		fmt.Fprintf(e.stderr, "agenthost: man: %v\n", err)
		return exitError
	}
	return exitOK
}

// noFiles completes nothing (a prompt, no arguments).
func noFiles(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// wasmFiles completes .wasm files.
func wasmFiles(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return []cobra.Completion{"wasm"}, cobra.ShellCompDirectiveFilterFileExt
}

// addCompletions completes the values of the flags that name something of
// the config: agents, sessions, tools.
func (c *cli) addCompletions(cmd *cobra.Command) {
	fl := cmd.LocalFlags()
	if fl.Lookup("config") != nil {
		_ = cmd.RegisterFlagCompletionFunc("config", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return []cobra.Completion{"hcl"}, cobra.ShellCompDirectiveFilterFileExt
		})
	}
	if fl.Lookup("agent") != nil {
		_ = cmd.RegisterFlagCompletionFunc("agent", c.completeAgents)
	}
	if fl.Lookup("session") != nil {
		_ = cmd.RegisterFlagCompletionFunc("session", c.completeSessions)
	}
	if fl.Lookup("approve") != nil {
		_ = cmd.RegisterFlagCompletionFunc("approve", c.completeTools)
	}
	if fl.Lookup("log-level") != nil {
		_ = cmd.RegisterFlagCompletionFunc("log-level", cobra.FixedCompletions([]cobra.Completion{"debug", "info", "warn", "error"}, cobra.ShellCompDirectiveNoFileComp))
	}
}

// completionConfig loads the config the command line names, for
// completion: nil when it does not load.
func (c *cli) completionConfig(cmd *cobra.Command) *config.Config {
	flagValue := ""
	if f := cmd.Flags().Lookup("config"); f != nil {
		flagValue = f.Value.String()
	}
	path := configPath(flagValue, c.e)
	cfg, _, diags := config.LoadFiles(path, config.Options{LookupEnv: c.e.lookupEnv})
	if diags.HasErrors() {
		return nil
	}
	return cfg
}

func (c *cli) completeAgents(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	cfg := c.completionConfig(cmd)
	if cfg == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, a := range cfg.Agents {
		out = append(out, cobra.CompletionWithDesc(a.Name, "model "+a.Model))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

func (c *cli) completeSessions(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	cfg := c.completionConfig(cmd)
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

func (c *cli) completeMCPServers(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	cfg := c.completionConfig(cmd)
	if cfg == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, s := range cfg.MCPServers {
		out = append(out, s.Name)
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeTools completes the tool names of the config's plugins: it
// loads them (from the compilation cache, usually), within 5 seconds.
func (c *cli) completeTools(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	var out []cobra.Completion
	for _, t := range c.completionTools(cmd) {
		out = append(out, cobra.CompletionWithDesc(t.Name, firstLine(t.Description)))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completionTools are the tools of the config the command line names.
func (c *cli) completionTools(cmd *cobra.Command) []host.Tool {
	flagValue := ""
	if f := cmd.Flags().Lookup("config"); f != nil {
		flagValue = f.Value.String()
	}
	path := configPath(flagValue, c.e)
	ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
	defer cancel()
	qe := *c.e
	qe.stdout, qe.stderr = io.Discard, io.Discard
	h, code := loadHost(ctx, path, hostOptions(&qe), &qe)
	if code != exitOK {
		return nil
	}
	defer h.Close(ctx)
	return h.Tools()
}

// completePluginCall completes plugin call's NAME (a plugin block, or a
// .wasm file) and TOOL.
func (c *cli) completePluginCall(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	switch len(args) {
	case 0:
		var out []cobra.Completion
		if cfg := c.completionConfig(cmd); cfg != nil {
			for _, p := range cfg.Plugins {
				out = append(out, cobra.CompletionWithDesc(p.Name, filepath.Base(p.Source)))
			}
		}
		sort.Strings(out)
		if len(out) == 0 {
			return []cobra.Completion{"wasm"}, cobra.ShellCompDirectiveFilterFileExt
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	case 1:
		if strings.HasSuffix(args[0], ".wasm") {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, t := range c.completionTools(cmd) {
			if t.Plugin == args[0] {
				name := t.Name
				if t.PluginTool != "" {
					name = t.PluginTool
				}
				out = append(out, cobra.CompletionWithDesc(name, firstLine(t.Description)))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}
