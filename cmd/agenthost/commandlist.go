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

// leaves are the commands, in the order help lists them.
func (c *cli) leaves() []leafSpec {
	return []leafSpec{
		{
			use:   "run [PROMPT | -]",
			short: "Run an agent once on a prompt",
			long: `Run an agent on a prompt: the arguments joined by spaces, or stdin with - (at most 16 MiB).
The answer streams to stdout; progress and logs go to stderr. --json prints one object with
the result at the end, --events one JSON line per event. --session ID continues a session
(an id, a unique prefix of one, or "last").`,
			example: `  agenthost run "List the files in the workspace"
  agenthost run -a explore --json "What does main.go do?"
  git diff | agenthost run -
  agenthost run --session last "And now in French"`,
			run:      cmdRun,
			describe: describing(cmdRun),
			complete: noFiles,
		},
		{
			use:   "chat",
			short: "Talk to an agent on a terminal, one turn per line",
			long: `Talk to an agent on a terminal: each line you enter is one run that continues the same
session. Ctrl-C stops a turn; Ctrl-D or Ctrl-C at an empty prompt leaves. /help lists the
chat's commands.`,
			example: `  agenthost chat
  agenthost chat -a explore --session last`,
			run:      cmdChat,
			describe: describing(cmdChat),
			complete: noFiles,
		},
		{
			use:   "validate",
			short: "Check the config and load its plugins, without a model",
			long: `Check the config: it is parsed, every plugin loaded and compiled, and a summary of the
agents printed. Exit 2 when something is wrong, with where and what to do.`,
			example: `  agenthost validate
  agenthost validate -c other/agents.hcl --json`,
			run:      cmdValidate,
			describe: describing(cmdValidate),
			complete: noFiles,
		},
		{
			use:      "tools",
			short:    "List the tools the plugins give (all, or one agent's)",
			example:  "  agenthost tools\n  agenthost tools -a main --json",
			run:      cmdTools,
			describe: describing(cmdTools),
			complete: noFiles,
		},
		{
			use:   "doctor",
			short: "Check the providers, models and plugins the agents need",
			long: `Check what the agents (or -a AGENT and its subagents) need before a run: for each model,
its server (dns, tcp, tls), the key, the model, a completion, streaming and a tool call; for
each plugin, that it loads and what it is granted. Exit 1 when a check failed.`,
			example:  "  agenthost doctor\n  agenthost doctor -a main --json",
			run:      cmdDoctor,
			describe: describing(cmdDoctor),
			complete: noFiles,
		},
		{
			parent: "plugin", parentShort: "Inspect plugins and call their tools",
			use:      "inspect FILE.wasm | builtin:NAME",
			short:    "Show what a plugin is: its kind, imports, tools and the grants it asks for",
			example:  "  agenthost plugin inspect plugins/echo.wasm\n  agenthost plugin inspect --json builtin:fs",
			run:      with(cmdPlugin, "inspect"),
			describe: describing(cmdPlugin, "inspect"),
			complete: wasmFiles,
		},
		{
			parent: "plugin",
			use:    "call FILE.wasm|NAME TOOL [ARGS-JSON]",
			short:  "Call one tool of a plugin, without a model",
			long: `Call one tool of a plugin with the given arguments (a JSON object, default {}) and print
its result, without a model: to develop and debug a plugin. NAME is a plugin block of the
config, run with the block's grants and mounts; FILE.wasm is a module run with the default
grants (no mounts, no network, no clock, random or environment). The result is printed as
the model would read it; --json prints {"content": ..., "is_error": ...}.

Exit codes: 0 the tool returned a result, 1 the tool returned an error or trapped, 2 usage,
config or load error (a plugin or tool that does not exist, arguments that are not a JSON
object).`,
			example: `  agenthost plugin call echo echo '{"text": "hi"}'
  agenthost plugin call ./build/mytool.wasm count '{"path": "notes.md"}' --json`,
			run:      cmdPluginCall,
			describe: describing(cmdPluginCall),
			complete: c.completePluginCall,
		},
		{
			use:   "sessions",
			short: "List, show and remove the sessions of the data_dir",
			long: `Every run is a session under data_dir/sessions. Without a command, sessions lists them,
newest first. A session ID may be the whole id, a prefix that only one session has, or
"last" (the newest).`,
			example:  "  agenthost sessions\n  agenthost sessions show last\n  agenthost sessions prune --older-than 30d",
			run:      cmdSessions,
			describe: describing(cmdSessions),
			complete: noFiles,
		},
		{
			parent:   "sessions",
			use:      "list",
			short:    "List the sessions, newest first",
			example:  "  agenthost sessions list --json",
			run:      with(cmdSessions, "list"),
			describe: describing(cmdSessions),
			complete: noFiles,
		},
		{
			parent:   "sessions",
			use:      "show ID",
			short:    "Print a session's transcript (or, with --html, a timeline page)",
			example:  "  agenthost sessions show last\n  agenthost sessions show --html 20261127-0501 > run.html",
			run:      with(cmdSessions, "show"),
			describe: describing(cmdSessions),
			complete: c.completeSessions,
		},
		{
			parent:   "sessions",
			use:      "rm ID...",
			short:    "Remove sessions",
			long:     "Remove the sessions named (ids, unique prefixes, or last). A session a run holds is refused.",
			example:  "  agenthost sessions rm last",
			run:      with(cmdSessions, "rm"),
			describe: describing(cmdSessions),
			complete: c.completeSessions,
		},
		{
			parent: "sessions",
			use:    "prune --older-than DURATION",
			short:  "Remove the sessions created longer ago than a duration",
			long: `Remove every session created longer ago than --older-than (such as 720h, 30d or 2w). A
session a run holds is kept.`,
			example:  "  agenthost sessions prune --older-than 30d",
			run:      with(cmdSessions, "prune"),
			describe: describing(cmdSessions),
			complete: noFiles,
		},
		{
			use:   "test [PATH...]",
			short: "Run scenario tests (txtar files) against agenthost",
			long: `Run the scenarios of the .txtar files in PATH (files or directories; default
testdata/agenthost): each runs commands in a fresh directory and checks their output.`,
			example:  "  agenthost test\n  agenthost test -v -run tool testdata/agenthost",
			run:      cmdTest,
			describe: describing(cmdTest),
		},
		{
			parent: "mcp", parentShort: "Serve agents and tools over MCP, and use MCP servers",
			use:   "serve",
			short: "Serve plugin tools (--tools) or agents (--agents) to MCP clients",
			long: `Serve plugin tools (--tools, the default) or agents (--agents) to MCP clients, over stdio
or streamable HTTP (--http ADDR).`,
			example:  "  agenthost mcp serve\n  agenthost mcp serve --agents --http 127.0.0.1:8080",
			run:      cmdMCPServe,
			describe: describing(cmdMCPServe),
			complete: noFiles,
		},
		{
			parent:   "mcp",
			use:      "call NAME TOOL [ARGS-JSON]",
			short:    "Call one tool of an mcp_server block by hand",
			example:  `  agenthost mcp call github search_issues '{"query": "bug"}'`,
			run:      cmdMCPCall,
			describe: describing(cmdMCPCall),
			complete: c.completeMCPServers,
		},
		{
			parent:   "mcp",
			use:      "login NAME",
			short:    "Log in to an mcp_server with OAuth",
			example:  "  agenthost mcp login github",
			run:      cmdMCPLogin,
			describe: describing(cmdMCPLogin),
			complete: c.completeMCPServers,
		},
		{
			parent:   "mcp",
			use:      "logout NAME",
			short:    "Forget the OAuth tokens of an mcp_server",
			example:  "  agenthost mcp logout github",
			run:      cmdMCPLogout,
			describe: describing(cmdMCPLogout),
			complete: c.completeMCPServers,
		},
		{
			use:   "worker",
			short: "Serve durable runs of a Temporal server",
			long: `Serve the durable runs (run --temporal) of a Temporal task queue until interrupted. Every
worker needs the same agents.hcl and plugin files.`,
			example:  "  agenthost worker --temporal localhost:7233",
			run:      cmdWorker,
			describe: describing(cmdWorker),
			complete: noFiles,
		},
		{
			use:      "runs [list | show ID | cancel ID | approve ID [CALL] | deny ID [CALL]]",
			short:    "Manage the durable runs of a Temporal server",
			example:  "  agenthost runs --temporal localhost:7233\n  agenthost runs approve RUN-ID --always",
			run:      cmdRuns,
			describe: describing(cmdRuns),
			complete: noFiles,
		},
		{
			use:   "init",
			short: "Write a starter agents.hcl, prompts/ and workspace/ here",
			example: `  agenthost init
  export AGENTHOST_MODEL=qwen3:8b
  agenthost doctor`,
			run:      cmdInit,
			describe: describing(cmdInit),
			complete: noFiles,
		},
		{
			use:      "version",
			short:    "Print the version, commit and build date",
			run:      cmdVersion,
			complete: noFiles,
		},
		{
			use:   "man DIR",
			short: "Write the man pages to DIR",
			long: `Write a man page for agenthost and each of its commands to DIR (section 1). The
pages of this version are in docs/man.`,
			example: "  agenthost man /usr/local/share/man/man1",
			run:     c.cmdMan,
		},
	}
}

// cmdVersion prints the module version, and the commit and its date when
// the build recorded them.
func cmdVersion(_ context.Context, args []string, e *env) int {
	if len(args) > 0 {
		return usageErr(e, "version takes no arguments (got %q)", args)
	}
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
	fl := cmd.Flags()
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
