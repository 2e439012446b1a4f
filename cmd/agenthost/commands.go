package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
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
// Each command's flags are declared once, where its logic is, with the
// standard flag package (cmdRun, cmdTools, ...). The tree learns them by
// calling the command in describe mode (newFlags hands the flag set over
// and parseFlags stops before anything runs), so help, completion and the
// man pages list exactly the flags the command parses. Cobra checks the
// command line first (unknown commands and flags, with suggestions); the
// command then parses its own arguments as typed.

// longNames are the long names of the one-letter flags: -a is --agent.
// The commands parse the one-letter name (goNames).
var longNames = map[string]string{"a": "agent", "c": "config", "v": "verbose"}

// goNames rewrites the long names of one-letter flags (--agent X,
// --config=F) into the names the commands parse (-a X, -c=F).
func goNames(args []string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if strings.HasPrefix(a, "--") {
			name, value, hasValue := strings.Cut(a[2:], "=")
			for short, long := range longNames {
				if name == long {
					a = "-" + short
					if hasValue {
						a += "=" + value
					}
				}
			}
		}
		out = append(out, a)
	}
	return out
}

// describeArg is the argument list of a describe call: no command line can
// hold a NUL byte, so it is never a user's.
const describeArg = "\x00describe"

var errDescribe = errors.New("describe only")

// leafSpec is one runnable command of the tree.
type leafSpec struct {
	// parent is the command it belongs to ("" for the top level);
	// parentShort describes a parent that only groups commands (mcp).
	parent, parentShort       string
	use, short, long, example string
	// run runs the command with its arguments as typed, less the command's
	// own words (`sessions show`).
	run func(ctx context.Context, args []string, e *env) int
	// describe calls the command so that it declares its flags; nil for a
	// command without flags of its own.
	describe func(ctx context.Context, e *env) int
	// complete completes positional arguments.
	complete cobra.CompletionFunc
}

// cli is one execution of the command line.
type cli struct {
	ctx  context.Context
	e    *env
	raw  []string // the arguments of the command that runs, as typed
	code int
}

// run executes the command line args and returns the exit code.
func run(ctx context.Context, args []string, e *env) int {
	c := &cli{ctx: ctx, e: e}
	root := c.tree()
	if len(args) == 0 {
		root.SetOut(e.stderr)
		_ = root.Help()
		return exitUsage
	}
	args = goStyleArgs(root, args)
	if cmd, raw, err := root.Find(args); err == nil && cmd != root {
		c.raw = goNames(raw)
	}
	root.SetArgs(args)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetContext(ctx)
	if _, err := root.ExecuteC(); err != nil {
		fmt.Fprintf(e.stderr, "agenthost: %v\n", err)
		return exitUsage
	}
	return c.code
}

// tree builds the command tree.
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
	parents := map[string]*cobra.Command{"": root}
	for _, s := range c.leaves() {
		p := parents[s.parent]
		if p == nil {
			p = group(s.parent, s.parentShort)
			root.AddCommand(p)
			parents[s.parent] = p
		}
		cmd := c.add(p, s)
		if s.parent == "" {
			parents[cmd.Name()] = cmd
		}
	}
	return root
}

// add adds the command s under parent.
func (c *cli) add(parent *cobra.Command, s leafSpec) *cobra.Command {
	cmd := &cobra.Command{
		Use:               s.use,
		Short:             s.short,
		Long:              s.long,
		Example:           s.example,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: s.complete,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c.code = s.run(c.ctx, c.raw, c.e)
			return nil
		},
	}
	if s.long == "" {
		cmd.Long = s.short + "."
	}
	if s.describe != nil {
		if fs := describeFlags(c.ctx, c.e, s.describe); fs != nil {
			fs.VisitAll(func(f *flag.Flag) {
				pf := pflag.PFlagFromGoFlag(f)
				if long, ok := longNames[f.Name]; ok {
					// -a is also --agent; --a, as the flag package
					// took it, stays (hidden).
					old := *pf
					old.Shorthand, old.Hidden = "", true
					pf.Name = long
					cmd.Flags().AddFlag(&old)
					if long == "config" {
						pf.Usage = "config `file` (default: $AGENTHOST_CONFIG, else agents.hcl here or in the nearest parent directory that has one)"
					}
				}
				cmd.Flags().AddFlag(pf)
			})
		} else {
			// A command built without its flags (notemporal) says so itself.
			cmd.DisableFlagParsing = true
		}
	}
	c.addCompletions(cmd)
	parent.AddCommand(cmd)
	return cmd
}

// group is a command that only holds others (mcp, plugin): without a
// command it prints its usage and exits 2.
func group(name, short string) *cobra.Command {
	return &cobra.Command{
		Use:                        name,
		Short:                      short,
		SuggestionsMinimumDistance: 2,
		Args:                       cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return unknownCommand(cmd, args)
		},
	}
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

// describeFlags returns the flag set the command declares, or nil.
func describeFlags(ctx context.Context, e *env, describe func(context.Context, *env) int) *flag.FlagSet {
	var fs *flag.FlagSet
	de := *e
	de.stdout, de.stderr = io.Discard, io.Discard
	de.describe = &fs
	describe(ctx, &de)
	return fs
}

// describing wraps a command for describe: it is called with describeArg
// after the words prefix (the subcommand it dispatches on).
func describing(f func(context.Context, []string, *env) int, prefix ...string) func(context.Context, *env) int {
	return func(ctx context.Context, e *env) int {
		return f(ctx, append(append([]string{}, prefix...), describeArg), e)
	}
}

// with runs f with the words prefix before the arguments.
func with(f func(context.Context, []string, *env) int, prefix ...string) func(context.Context, []string, *env) int {
	return func(ctx context.Context, args []string, e *env) int {
		return f(ctx, append(append([]string{}, prefix...), args...), e)
	}
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
			if d := toolname.Distance(name, f.Name); d < bestD && len(f.Name) > 1 {
				best, bestD = f.Name, d
			}
		})
		if best != "" {
			msg += fmt.Sprintf("; did you mean --%s?", best)
		}
	}
	return fmt.Errorf("%s: %s (see '%s --help')", strings.TrimPrefix(cmd.CommandPath(), "agenthost "), msg, cmd.CommandPath())
}

// goStyleArgs rewrites the single-dash long flags the commands have always
// taken (-json, -run TEXT, -help) into the double-dash form cobra parses.
// A single dash before one letter stays a shorthand.
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
	cmd, _, err := root.Find(args)
	if err != nil || cmd.DisableFlagParsing {
		return args
	}
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' {
			name, _, _ := strings.Cut(a[1:], "=")
			if len(name) > 1 && (cmd.Flags().Lookup(name) != nil || name == "help") {
				a = "-" + a
			}
		}
		out = append(out, a)
	}
	return out
}
