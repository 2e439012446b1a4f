package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/cmd/agenthost/internal/term"
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
	// through (term.Console).
	con *term.Console
	// startup holds off collections until start-up ends (startgc.go); nil
	// in tests.
	startup *startupGC
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
		startup:   deferStartupGC(os.Getenv),
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

// usageErr prints a usage error and returns the usage exit code.
func usageErr(e *env, format string, a ...any) int {
	fmt.Fprintf(e.stderr, "agenthost: "+format+"\n", a...)
	return exitUsage
}
