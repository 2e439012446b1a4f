package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/agenthost/agenthost/cmd/agenthost/internal/prompt"
	"github.com/agenthost/agenthost/cmd/agenthost/internal/term"
	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/host/doctor"
	"github.com/agenthost/agenthost/internal/session"
	"github.com/agenthost/agenthost/internal/shquote"
	"github.com/agenthost/agenthost/loop"
)

// newRunCmd is `agenthost run`: it declares the flags; the run reads the
// prompt, builds the host, runs the agent with host.Run, renders the run
// (term.Output) and maps its end to the exit code.
func newRunCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run [PROMPT | -]",
		Short: "Run an agent once on a prompt",
		Long: `Run an agent on a prompt: the arguments joined by spaces (stdin with -, FILE's text with
@FILE as the only argument, @@ for a literal leading @), then the text of -f FILE, then piped
stdin when it is not a terminal, each after a blank line (at most 16 MiB).
The answer streams to stdout; progress and logs go to stderr. On a terminal, as in chat, the
answer's Markdown is drawn, tool calls show their key argument and a spinner shows that the
run is alive. --json prints one object with
the result at the end, --events one JSON line per event. --session ID continues a session
(an id, a unique prefix of one, or "last").`,
		Example: `  agenthost run "List the files in the workspace"
  agenthost run -a explore --json "What does main.go do?"
  git diff | agenthost run "Review this diff"
  agenthost run -f task.md
  agenthost run --session last "And now in French"`,
		ValidArgsFunction: noFiles,
	}
	fs := cmd.Flags()
	cfgFlag := configFlag(fs)
	agentFlag := agentFlag(fs, "`agent` to run (default: the one with default = true, or the only one)")
	asJSON := jsonFlag(fs, "print one JSON object with the result at the end")
	events := fs.Bool("events", false, "print every event as a JSON line")
	sessionID := sessionFlag(fs)
	model := modelFlag(fs)
	promptFile := fs.StringP("file", "f", "", "read the prompt from `file` (after the arguments, before piped stdin; at most 16 MiB)")
	record := fs.String("record", "", "record model requests and responses to this cassette `file`")
	replay := fs.String("replay", "", "serve model responses from this cassette `file` (no network)")
	logLevel := logLevelFlag(fs, "", "log `level`: debug, info, warn, error (default warn on a terminal, info otherwise)")
	af := addApproveFlags(fs)
	tf := temporalFlags(fs)
	return c.action(cmd, func(ctx context.Context, pos []string, e *env) int {
		if *asJSON && *events {
			return usageErr(e, "--json and --events cannot be used together")
		}
		if *record != "" && *replay != "" {
			return usageErr(e, "--record and --replay cannot be used together")
		}
		prompt, code := readPrompt(pos, *promptFile, e)
		if code != exitOK {
			return code
		}
		e.guardLines()
		logger, code := newLogger(*logLevel, e, showsProgress(e, *asJSON, *events))
		if code != exitOK {
			return code
		}
		ctx = logger.WithContext(ctx)

		path := configPath(*cfgFlag, e)
		if *tf.address != "" {
			switch {
			case *record != "" || *replay != "":
				return usageErr(e, "--record and --replay cannot be used with --temporal: the model requests are made by the workers")
			case *model != "":
				return usageErr(e, "-m/--model cannot be used with --temporal: the workers run the agent with the model of their agents.hcl")
			}
			e.startup.end() // it follows the run as long as it lasts
			return runTemporal(ctx, path, tf, temporalRun{agent: *agentFlag, prompt: prompt, session: *sessionID, json: *asJSON, events: *events, approve: af}, e)
		}
		opts := mcpUsers(hostOptions(e), e)
		opts.Record, opts.Replay = *record, *replay
		h, code := loadHost(ctx, path, opts, e)
		if code != exitOK {
			return code
		}
		defer h.Close(context.WithoutCancel(ctx))
		if code := resolveSession(h.Config.Host.DataDir, sessionID, e); code != exitOK {
			return code
		}
		if code := checkModel(ctx, h.Config, *agentFlag, *model, path, *replay != "", e); code != exitOK {
			return code
		}

		out := newOutput(e, *asJSON, *events)
		out.Hint = func(res *loop.Result) string { return doctor.FailureHint(h.Config, res, e.getenv) }
		out.Schema = hasSchema(h.Config)
		// What the load touched of the executable leaves the resident set
		// before the run; processors and memory follow the run (process.go).
		trimExecutable()
		policy := newRunPolicy(e.startup.end)
		req := host.RunRequest{Agent: *agentFlag, Model: *model, Prompt: prompt, Session: *sessionID, Sink: policy.sink(out.Event), OnText: out.Text}
		approver, release := newApprover(e, af, h)
		defer release()
		var stop func()
		req.Approver, stop = out.GoLive(keyArgs(h), e.getenv("NO_COLOR") == "", approver)
		res, err := h.Run(ctx, req)
		stop()
		if err != nil {
			return runError(e, err, path)
		}
		out.Finish(res)
		return exitCode(res.StopReason)
	})
}

// runError reports a run that host.Run refused, and returns the exit code:
// usage errors (an unknown agent, a session that cannot be continued) exit 2.
func runError(e *env, err error, path string) int {
	var (
		ue *host.UsageError
		ua *host.UnknownAgentError
		sa *host.SessionAgentError
	)
	switch {
	case errors.As(err, &ua):
		return usageErr(e, "no agent %q in %s; agents: %s", ua.Name, path, strings.Join(ua.Agents, ", "))
	case errors.As(err, &sa):
		return usageErr(e, "--session %s belongs to agent %q, not %q: pass -a %s", sa.Session, sa.Agent, sa.Asked, shquote.Quote(sa.Agent))
	case errors.As(err, &ue) && ue.Session != "" && errors.Is(err, session.ErrBusy):
		return usageErr(e, "--session %s: %v", ue.Session, ue.Err)
	case errors.As(err, &ue) && ue.Session != "":
		return usageErr(e, "--session %s: %v (list sessions with 'agenthost sessions list')", ue.Session, ue.Err)
	case errors.As(err, &ue):
		return usageErr(e, "%v", ue.Err)
	}
	fmt.Fprintf(e.stderr, "agenthost: %v\n", err)
	return exitError
}

// checkModel refuses a -m that names no model the agent can use
// (doctor.CheckRunModel) with a usage error; "" is the agent's own. A
// replay asks no provider: its cassette answers.
func checkModel(ctx context.Context, cfg *config.Config, agent, model, path string, replay bool, e *env) int {
	if replay {
		return exitOK
	}
	warn, err := doctor.CheckRunModel(ctx, cfg, agent, model)
	if err != nil {
		return runError(e, err, path)
	}
	if warn != "" {
		fmt.Fprintf(e.stderr, "agenthost: %s\n", errText(e, warn))
	}
	return exitOK
}

// exitCode maps a stop reason to the process exit code (docs/cli.md, "Exit
// codes"), one per class of loop's stops table.
func exitCode(r loop.StopReason) int {
	switch r.ExitClass() {
	case loop.ExitCompleted:
		return exitOK
	case loop.ExitLimit:
		return exitLimit
	case loop.ExitAborted:
		return exitAborted
	}
	return exitError
}

// readPrompt makes the prompt of run (prompt.Build); a prompt that cannot
// be made of what was given is a usage error.
func readPrompt(pos []string, file string, e *env) (string, int) {
	p, err := prompt.Build(pos, file, e.stdin, e.stdinTTY)
	var ue *prompt.UsageError
	switch {
	case errors.As(err, &ue):
		return "", usageErr(e, "%v", err)
	case err != nil:
		fmt.Fprintf(e.stderr, "agenthost: %v\n", err)
		return "", exitError
	}
	return p, exitOK
}

// newLogger makes the logger of a command on stderr (term.NewLogger).
func newLogger(level string, e *env, progress bool) (zerolog.Logger, int) {
	l, err := term.NewLogger(e.stderr, level, e.stderrTTY, useColor(e), progress)
	if err != nil {
		return l, usageErr(e, "%v", err)
	}
	return l, exitOK
}
