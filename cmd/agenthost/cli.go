package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
)

// Exit codes (docs/cli.md, "Exit codes").
const (
	exitOK      = 0
	exitError   = 1 // provider_error, error
	exitUsage   = 2 // usage or config error
	exitLimit   = 3 // max_steps, budget, token_limit, cost_limit, doom_loop after the final summary
	exitAborted = 130
)

// env is what a command sees of the process: streams, environment and
// whether stdout/stderr are terminals. Tests build it by hand.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	lookupEnv      func(string) (string, bool)
	stdinTTY       bool
	stdoutTTY      bool
	stderrTTY      bool
	// con, once guardLines made it, is what stdout and stderr write
	// through (console.go).
	con *console
}

// Main runs the command line of the process and returns the exit code. A
// first SIGINT or SIGTERM cancels the run's context; a second one exits at
// once with 130.
func Main() int {
	// Durations in logs carry their unit ("delay":"1.19s"), not a bare
	// number of milliseconds.
	zerolog.DurationFieldFormat = zerolog.DurationFormatString
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		cancel()
		<-sigs
		os.Exit(exitAborted)
	}()
	e := &env{
		stdin:     os.Stdin,
		stdout:    os.Stdout,
		stderr:    os.Stderr,
		getenv:    os.Getenv,
		lookupEnv: os.LookupEnv,
		stdinTTY:  isTerminal(os.Stdin),
		stdoutTTY: isTerminal(os.Stdout),
		stderrTTY: isTerminal(os.Stderr),
	}
	stop := startProfile(os.Getenv, os.Stderr)
	defer stop()
	return run(ctx, os.Args[1:], e)
}

// isTerminal reports whether f is a terminal (a Cygwin or MSYS one too).
func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// version is the module version agenthost was built as (go install
// ...@vX.Y.Z), or "devel".
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

const usage = `agenthost runs LLM agents declared in HCL, with sandboxed WebAssembly tools.

Usage:
  agenthost run      [-c FILE] [-a AGENT] [--json] [--events] [--session ID]
                     [--record FILE] [--replay FILE] [--log-level L] [PROMPT | -]
                     [--temporal HOST:PORT [--namespace NS] [--task-queue Q]]
  agenthost chat     [-c FILE] [-a AGENT] [--session ID] [--log-level L]
  agenthost validate [-c FILE]
  agenthost tools    [-c FILE] [-a AGENT] [--json]
  agenthost doctor   [-c FILE] [-a AGENT] [--json]
  agenthost plugin inspect [--json] FILE.wasm | builtin:NAME
  agenthost sessions [-c FILE] [list | show [--html] ID]
  agenthost test     [-v] [-run TEXT] [-update] [-timeout D] [PATH...]
  agenthost mcp serve [-c FILE] [-a AGENT] [--tools] [--agents] [--http ADDR]
                      [--token-env VAR] [--max-conns N] [--max-sessions N]
                      [--session-timeout D] [--read-timeout D] [--log-level L]
                      [--log-file FILE]
  agenthost worker   [-c FILE] --temporal HOST:PORT [--namespace NS] [--task-queue Q]
                     [--concurrency N] [--heartbeat D] [--log-level L]
  agenthost runs     [-c FILE] --temporal HOST:PORT [--json] [list | show ID | cancel ID]
  agenthost init
  agenthost version

The config is -c FILE, else $AGENTHOST_CONFIG, else ./agents.hcl.
Exit codes: 0 completed, 1 provider or internal error, 2 usage or config
error, 3 stopped by a limit (max_steps, budget, token_limit, cost_limit,
doom_loop), 130 aborted.
`

func run(ctx context.Context, args []string, e *env) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usage)
		return exitUsage
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "run":
		return cmdRun(ctx, rest, e)
	case "chat":
		return cmdChat(ctx, rest, e)
	case "validate":
		return cmdValidate(ctx, rest, e)
	case "tools":
		return cmdTools(ctx, rest, e)
	case "plugin":
		return cmdPlugin(ctx, rest, e)
	case "sessions":
		return cmdSessions(ctx, rest, e)
	case "test":
		return cmdTest(ctx, rest, e)
	case "init":
		return cmdInit(ctx, rest, e)
	case "mcp":
		return cmdMCP(ctx, rest, e)
	case "doctor":
		return cmdDoctor(ctx, rest, e)
	case "worker":
		return cmdWorker(ctx, rest, e)
	case "runs":
		return cmdRuns(ctx, rest, e)
	case "version", "--version", "-version":
		fmt.Fprintf(e.stdout, "agenthost %s\n", version())
		return exitOK
	case "help", "-h", "-help", "--help":
		fmt.Fprint(e.stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(e.stderr, "agenthost: unknown command %q\n\n%s", cmd, usage)
		return exitUsage
	}
}

// newFlags makes a flag set that reports errors to stderr and never exits.
func newFlags(name string, e *env) *flag.FlagSet {
	fs := flag.NewFlagSet("agenthost "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	return fs
}

// parseFlags parses flags, allowing them after positional arguments too
// (agenthost run "task" --json). It returns the positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// usageErr prints a usage error and returns the usage exit code.
func usageErr(e *env, format string, a ...any) int {
	fmt.Fprintf(e.stderr, "agenthost: "+format+"\n", a...)
	return exitUsage
}

// flagExit is the exit code after a flag error: 0 when -h was asked.
func flagExit(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return exitUsage
}
