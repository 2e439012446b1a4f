package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/internal/toolname"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

//go:generate sh -c "rm -f ../../docs/man/*.1 && go run . man ../../docs/man"
//go:generate sh -c "mkdir -p ../../docs/completion && go run . completion bash > ../../docs/completion/agenthost.bash"
//go:generate sh -c "go run . completion zsh > ../../docs/completion/agenthost.zsh"
//go:generate sh -c "go run . completion fish > ../../docs/completion/agenthost.fish"

// The command line is a cobra command tree: it gives every command its
// --help (on stdout), `help CMD`, suggestions for a mistyped command or
// flag, shell completion and the man pages, all from one description.
//
// Each command builds its own *cobra.Command next to its logic
// (newRunCmd in run.go, newSessionsCmd in sessions.go, ...), declaring
// its flags with pflag (the shared ones through flags.go); cobra parses
// the command line once, and help, completion and the man pages list
// exactly the flags that parse. The groups (sessions, runs, plugin, mcp)
// are commands with subcommands, each with its own flags.

// cli is one execution of the command line.
type cli struct {
	ctx  context.Context
	e    *env
	code int
}

// run executes the command line args and returns the exit code.
func run(ctx context.Context, args []string, e *env) int {
	c := &cli{ctx: ctx, e: e}
	root := c.tree()
	if len(args) == 0 {
		root.SetOut(e.stderr)
		root.InitDefaultHelpFlag() // the usage --help prints
		_ = root.Help()
		return exitUsage
	}
	root.SetArgs(goStyleArgs(root, args))
	root.SetContext(ctx)
	if _, err := root.ExecuteC(); err != nil {
		fmt.Fprintf(e.stderr, "agenthost: %v\n", err)
		return exitUsage
	}
	return c.code
}

// tree builds the command tree, in the order help lists the commands.
func (c *cli) tree() *cobra.Command {
	root := &cobra.Command{
		Use:   "agenthost",
		Short: "Run LLM agents declared in HCL, with sandboxed WebAssembly tools",
		Long: `agenthost runs LLM agents declared in HCL (agents.hcl), with every tool a sandboxed
WebAssembly module.

The config is -c FILE, else $AGENTHOST_CONFIG, else agents.hcl in the current directory or
the nearest parent directory that has one.

Exit codes: 0 completed, 1 provider or internal error, 2 usage or config error, 3 stopped by
a limit (max_steps, budget, token_limit, cost_limit, doom_loop), 130 aborted.`,
		Example: `  agenthost init
  export AGENTHOST_MODEL=qwen3:8b
  agenthost doctor
  agenthost run "Summarise notes.md in three bullet points"
  agenthost help run`,
		SilenceErrors:              true,
		SuggestionsMinimumDistance: 2,
		SilenceUsage:               true,
		DisableAutoGenTag:          true,
		// Without a command: the usage, exit 2 (run handles it).
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return unknownCommand(cmd, args)
		},
	}
	root.CompletionOptions.HiddenDefaultCmd = false
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(
		newRunCmd(c),
		newChatCmd(c),
		newValidateCmd(c),
		newToolsCmd(c),
		newModelsCmd(c),
		newDoctorCmd(c),
		newPluginCmd(c),
		newSessionsCmd(c),
		newTestCmd(c),
		newMCPCmd(c),
		newWorkerCmd(c),
		newRunsCmd(c),
		newInitCmd(c),
		newVersionCmd(c),
		newManCmd(c),
	)
	root.SetGlobalNormalizationFunc(normalizeFlag)
	// Before strictBuiltins: the completion command keeps the writer it
	// is made with.
	root.SetOut(c.e.stdout)
	root.SetErr(c.e.stderr)
	strictBuiltins(root)
	return root
}

// strictBuiltins adds cobra's help and completion commands now (cobra adds
// them when it executes), so that every command list has them, and makes
// them refuse an unknown command as a group does (unknownCommand): cobra's
// help shows the root's help for "help rnu", and its completion its own
// help for "completion bsh", both exiting 0.
func strictBuiltins(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, sub := range root.Commands() {
		switch sub.Name() {
		case "help":
			help := sub.Run
			sub.Run = nil
			sub.RunE = func(cmd *cobra.Command, args []string) error {
				if target, rest, err := cmd.Root().Find(args); err == nil && len(rest) > 0 && target.HasAvailableSubCommands() {
					return unknownCommand(target, rest)
				}
				help(cmd, args)
				return nil
			}
		case "completion":
			sub.SuggestionsMinimumDistance = 2
			sub.Args = cobra.ArbitraryArgs
			sub.RunE = unknownCommand
		}
	}
}

// action makes cmd run f with its positional arguments (the flags parsed
// into the variables cmd declared); f's result is the exit code. It
// completes the flags that name something of the config, so it is called
// once cmd's flags are declared.
func (c *cli) action(cmd *cobra.Command, f func(ctx context.Context, pos []string, e *env) int) *cobra.Command {
	if cmd.Long == "" {
		cmd.Long = cmd.Short + "."
	}
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(_ *cobra.Command, pos []string) error {
		if !keepsStartup(cmd.CommandPath()) {
			c.e.startup.end()
		}
		done, err := c.startJQ(cmd)
		if err != nil {
			c.code = usageErr(c.e, "%v", err)
			return nil
		}
		c.code = f(c.ctx, pos, c.e)
		if done != nil {
			c.code = done(c.code)
		}
		return nil
	}
	c.complete().Flags(cmd)
	return cmd
}

// noArgs is action for a command that takes no arguments: given some,
// it is a usage error ("tools takes no arguments (got [...])"), and the
// shell completes none.
func (c *cli) noArgs(cmd *cobra.Command, f func(ctx context.Context, e *env) int) *cobra.Command {
	cmd.ValidArgsFunction = noFiles
	return c.action(cmd, func(ctx context.Context, pos []string, e *env) int {
		if len(pos) > 0 {
			return usageErr(e, "%s takes no arguments (got %q)", strings.TrimPrefix(cmd.CommandPath(), "agenthost "), pos)
		}
		return f(ctx, e)
	})
}

// group is a command that only holds others (mcp, plugin): without a
// command it prints its usage and exits 2.
func group(name, short string, subs ...*cobra.Command) *cobra.Command {
	g := &cobra.Command{
		Use:                        name,
		Short:                      short,
		SuggestionsMinimumDistance: 2,
		Args:                       cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return unknownCommand(cmd, args)
		},
	}
	g.AddCommand(subs...)
	return g
}

// listGroup gives g, a group (agenthost sessions, agenthost runs), its
// command list (short and example its help's), which g also runs when it
// is given no command; both take --json, and list(fs, asJSON) makes what
// they run, declaring on fs the flags of its own both take. An unknown
// command is refused.
func (c *cli) listGroup(g *cobra.Command, short, example string, list func(fs *pflag.FlagSet, asJSON *bool) func(ctx context.Context, pos []string, e *env) int) {
	listCmd := plainCmd("list", short, example)
	c.action(listCmd, list(listCmd.Flags(), jsonFlag(listCmd.Flags(), "print JSON")))
	run := list(g.Flags(), jsonFlag(g.Flags(), "print JSON (as "+g.Name()+" list --json)"))
	c.action(g, run)
	g.SuggestionsMinimumDistance = 2
	g.RunE = func(cmd *cobra.Command, pos []string) error {
		if len(pos) > 0 {
			return unknownCommand(cmd, pos)
		}
		c.code = run(c.ctx, pos, c.e)
		return nil
	}
	g.AddCommand(listCmd)
}

// plainCmd is a command whose arguments (an id, or none) the shell does
// not complete: the commands of runs, a group's list.
func plainCmd(use, short, example string) *cobra.Command {
	return &cobra.Command{Use: use, Short: short, Example: example, ValidArgsFunction: noFiles}
}

// unknownCommand is the error of a group run without one of its commands.
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		cmd.SetOut(cmd.ErrOrStderr())
		_ = cmd.Usage()
		return fmt.Errorf("%s needs a command (see '%s --help')", cmd.Name(), cmd.CommandPath())
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", s[0])
	}
	return fmt.Errorf("%s (see '%s --help')", msg, cmd.CommandPath())
}

// flagError adds a suggestion to an unknown flag.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	var name string
	switch {
	case strings.HasPrefix(msg, "unknown flag: --"):
		name = strings.TrimPrefix(msg, "unknown flag: --")
	case strings.HasPrefix(msg, "unknown shorthand flag: "):
		if _, rest, ok := strings.Cut(msg, " in -"); ok {
			name = rest
		}
	}
	if name != "" {
		best, bestD := "", 3
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			// A suggestion keeps some of what was typed: -v is not --jq.
			if d := toolname.Distance(name, f.Name); d < bestD && d < len(name) && len(f.Name) > 1 {
				best, bestD = f.Name, d
			}
		})
		if best != "" {
			msg += fmt.Sprintf("; did you mean --%s?", best)
		}
	}
	if cmd.HasParent() {
		msg = strings.TrimPrefix(cmd.CommandPath(), "agenthost ") + ": " + msg
	}
	return fmt.Errorf("%s (see '%s --help')", msg, cmd.CommandPath())
}

// goStyleArgs rewrites the single-dash long flags the commands have always
// taken (-json, -run TEXT, -help) into the double-dash form cobra parses.
// A single dash before one letter stays a shorthand; "--" ends the flags.
// It is the one rewriting of the command line before cobra parses it.
func goStyleArgs(root *cobra.Command, args []string) []string {
	if len(args) > 0 {
		switch args[0] {
		case "--version", "-version":
			return append([]string{"version"}, args[1:]...)
		case "-help":
			return append([]string{"--help"}, args[1:]...)
		case cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
			return args
		}
	}
	// A rewritten flag can let cobra find a deeper command (runs
	// -temporal ADDR show ID), whose flags are then rewritten too.
	var last *cobra.Command
	for range 4 {
		cmd, _, err := root.Find(args)
		if err != nil || cmd == last || cmd.DisableFlagParsing {
			return args
		}
		last = cmd
		args = goStyleFor(cmd, args)
	}
	return args
}

// goStyleFor rewrites -NAME into --NAME where NAME is a flag of cmd (its
// own or one it inherits) or help.
func goStyleFor(cmd *cobra.Command, args []string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' {
			name, _, _ := strings.Cut(a[1:], "=")
			if len(name) > 1 && (cmd.Flags().Lookup(name) != nil || cmd.InheritedFlags().Lookup(name) != nil || name == "help") {
				a = "-" + a
			}
		}
		out = append(out, a)
	}
	return out
}
