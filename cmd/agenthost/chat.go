package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"
	xterm "golang.org/x/term"

	"github.com/agenthost/agenthost/cmd/agenthost/internal/term"
	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/host/doctor"
	"github.com/agenthost/agenthost/internal/report"
	"github.com/agenthost/agenthost/internal/session"
	"github.com/agenthost/agenthost/internal/shquote"
	"github.com/agenthost/agenthost/internal/termtext"
	"github.com/agenthost/agenthost/loop"
)

// chatPrompt is the prompt of `agenthost chat`'s input line.
const chatPrompt = "> "

// chatHelp lists the chat's commands.
const chatHelp = `commands:
  /new      start a new session (the next line is its first turn)
  /clear    clear the screen and start a new session
  /session  print the session's id
  /tools    list the agent's tools and subagents
  /usage    print the session's turns, tokens (prompt and completion) and cost
  /exit     leave (so do Ctrl-D and Ctrl-C at an empty prompt)
Up and Down recall earlier lines, of this chat and of earlier ones; a pasted
text is one message (its line breaks show as ⏎; up to 65536 characters); Enter
sends.
`

// newChatCmd is `agenthost chat`: an interactive loop on a terminal. Each line
// is one run (host.Run) continuing the same session, rendered as `run`
// renders it (term.Output); every limit applies per turn, as for
// `run --session`. The input line is read with golang.org/x/term's
// Terminal (line editing, history) on the controlling terminal; during a
// turn the terminal is back in its normal mode, so Ctrl-C is a SIGINT and
// stops that turn only.
func newChatCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Talk to an agent on a terminal, one turn per line",
		Long: `Talk to an agent on a terminal: each line you enter is one run that continues the same
session. Ctrl-C stops a turn; Ctrl-D or Ctrl-C at an empty prompt leaves. /help lists the
chat's commands.`,
		Example: `  agenthost chat
  agenthost chat -a explore --session last`,
		ValidArgsFunction: noFiles,
	}
	fs := cmd.Flags()
	cfgFlag := configFlag(fs)
	agentFlag := agentFlag(fs, "`agent` to talk to (default: the one with default = true, or the only one)")
	sessionFlag := sessionFlag(fs)
	model := modelFlag(fs)
	logLevel := logLevelFlag(fs, "", "log `level`: debug, info, warn, error (default warn on a terminal, info otherwise)")
	af := addApproveFlags(fs)
	return c.action(cmd, func(ctx context.Context, pos []string, e *env) int {
		if len(pos) > 0 {
			return usageErr(e, "chat takes no arguments (got %q): type the prompts at its prompt, or use agenthost run PROMPT", pos)
		}
		in, ok := e.stdin.(*os.File)
		if !e.stdinTTY || !ok || !xterm.IsTerminal(int(in.Fd())) {
			return usageErr(e, "chat needs a terminal on stdin; from a script or a pipe use agenthost run [--session ID] PROMPT, once per turn")
		}
		e.guardLines()
		logger, code := newLogger(*logLevel, e, showsProgress(e, false, false))
		if code != exitOK {
			return code
		}
		ctx = logger.WithContext(ctx)
		path := configPath(*cfgFlag, e)
		h, code := loadHost(ctx, path, mcpUsers(hostOptions(e), e), e)
		if code != exitOK {
			return code
		}
		defer h.Close(context.WithoutCancel(ctx))
		if code := resolveSession(h.Config.Host.DataDir, sessionFlag, e); code != exitOK {
			return code
		}
		if code := checkModel(ctx, h.Config, *agentFlag, *model, path, false, e); code != exitOK {
			return code
		}

		// The input line is read on the controlling terminal, like the
		// doom-loop question (term.Asker); stdin when there is none.
		tty := in
		if f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0); err == nil {
			tty = f
			defer f.Close()
		}
		c := &chat{e: e, h: h, path: path, agent: *agentFlag, model: *model, session: *sessionFlag, tty: tty, approve: af, policy: newRunPolicy(nil)}
		c.keyArgs = keyArgs(h)
		c.line = term.NewLineEditor(tty, chatPrompt)
		hist, err := term.OpenHistory(e.getenv)
		if err != nil {
			fmt.Fprintf(e.stderr, "agenthost chat: the input history is kept for this chat only: %s\n", errText(e, err.Error()))
		}
		defer hist.Close()
		c.line.SetHistory(hist)
		return c.loop(ctx)
	})
}

// chat is the state of one `agenthost chat`.
type chat struct {
	e       *env
	h       *host.Host
	path    string
	agent   string
	model   string // -m: the agent's model for every turn; "" its own
	session string // "" until the first turn of a new session
	tty     *os.File
	line    *term.LineEditor
	approve *approveFlags
	policy  *runPolicy // processors and memory for each turn's run (process.go)
	keyArgs term.KeyArgs
}

func (c *chat) loop(ctx context.Context) int {
	// Ctrl-C stops the turn in flight, not the process: the first-signal
	// handler of Main (which cancels everything) gives SIGINT up to the
	// chat. SIGTERM still cancels ctx, which ends the chat.
	signal.Reset(os.Interrupt)
	ints := make(chan os.Signal, 1)
	signal.Notify(ints, os.Interrupt)
	defer signal.Stop(ints)

	if c.session != "" {
		fmt.Fprintf(c.e.stderr, "agenthost chat: session %s; /exit or Ctrl-D leaves, /help lists the commands\n", outText(c.e, c.session))
	} else {
		fmt.Fprintf(c.e.stderr, "agenthost chat: new session; /exit or Ctrl-D leaves, /help lists the commands\n")
	}
	code := exitOK
	for ctx.Err() == nil {
		text, err := c.line.ReadLine(ctx)
		if err != nil {
			fmt.Fprintln(c.tty) // io.EOF: Ctrl-D or Ctrl-C at the prompt
			break
		}
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		if strings.HasPrefix(text, "/") {
			if !c.command(text) {
				break
			}
			continue
		}
		if code = c.turn(ctx, text, ints); code == exitUsage {
			break // the session or the agent cannot be used: say so and leave
		}
		code = exitOK
	}
	if c.session != "" {
		fmt.Fprintf(c.e.stderr, "agenthost chat: session %s (continue it with agenthost chat --session %s)\n", outText(c.e, c.session), outText(c.e, shquote.Quote(c.session)))
	}
	return code
}

// command runs a chat command; it returns false to leave.
func (c *chat) command(text string) bool {
	w := c.e.stderr
	switch strings.Fields(text)[0] {
	case "/exit", "/quit":
		return false
	case "/new":
		if c.session != "" {
			fmt.Fprintf(w, "left session %s; the next line starts a new one\n", outText(c.e, c.session))
		}
		c.session = ""
	case "/clear":
		// The chat's screen is its terminal: home, clear the screen and
		// the scrollback.
		io.WriteString(c.tty, "\x1b[H\x1b[2J\x1b[3J")
		if c.session != "" {
			fmt.Fprintf(w, "left session %s; the next line starts a new one\n", outText(c.e, c.session))
		}
		c.session = ""
	case "/session":
		if c.session == "" {
			fmt.Fprintln(w, "no session yet: the next line starts one")
		} else {
			fmt.Fprintf(c.e.stdout, "%s\n", outText(c.e, c.session))
		}
	case "/tools":
		c.tools()
	case "/usage":
		c.usage()
	case "/help", "/?":
		fmt.Fprint(w, chatHelp)
	default:
		fmt.Fprintf(w, "unknown command %s\n%s", termtext.Escape(text), chatHelp)
	}
	return true
}

// tools prints the names and descriptions of the agent's tools.
func (c *chat) tools() {
	name := c.agent
	if name == "" {
		a, err := c.h.Config.DefaultAgent()
		if err != nil {
			fmt.Fprintf(c.e.stderr, "agenthost: %v\n", err)
			return
		}
		name = a.Name
	}
	a := c.h.Config.Agent(name)
	if a == nil {
		fmt.Fprintf(c.e.stderr, "agenthost: no agent %q in %s\n", name, c.path)
		return
	}
	names, desc := c.h.AgentTools(a)
	term.WriteTools(c.e.stdout, name, names, desc, c.e.stdoutTTY)
}

// usage prints the session's turns, tokens and cost so far, summed over
// its finished runs the way `sessions list` does.
func (c *chat) usage() {
	if c.session == "" {
		fmt.Fprintln(c.e.stdout, "no session yet: 0 turns, tokens -, cost -")
		return
	}
	_, evs, err := session.Events(c.h.Config.Host.DataDir, c.session)
	if err != nil {
		fmt.Fprintf(c.e.stderr, "agenthost: session %s: %v\n", outText(c.e, c.session), err)
		return
	}
	fmt.Fprintf(c.e.stdout, "session %s: %s\n", outText(c.e, c.session), report.Usage(session.Summarize(evs)))
}

// turn runs one line as a run of the session. A SIGINT during the turn
// cancels only the turn: the loop records an aborted run and the session
// stays usable. It returns exitUsage when the run was refused.
func (c *chat) turn(ctx context.Context, prompt string, ints <-chan os.Signal) int {
	select { // a Ctrl-C from before this turn does not stop it
	case <-ints:
	default:
	}
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ints:
			cancel()
		case <-done:
		}
	}()
	out := newOutput(c.e, false, false)
	out.Hint = func(res *loop.Result) string { return doctor.FailureHint(c.h.Config, res, c.e.getenv) }
	req := host.RunRequest{Agent: c.agent, Model: c.model, Prompt: prompt, Session: c.session, Sink: c.policy.sink(out.Event), OnText: out.Text}
	approver, release := newApprover(c.e, c.approve, c.h)
	defer release()
	var stop func()
	req.Approver, stop = out.GoLive(c.keyArgs, c.e.getenv("NO_COLOR") == "", approver)
	res, err := c.h.Run(tctx, req)
	stop()
	return c.turnEnd(out, res, err)
}

// turnEnd prints how a turn ended.
func (c *chat) turnEnd(out *term.Output, res *loop.Result, err error) int {
	if err != nil {
		code := runError(c.e, err, c.path)
		var ue *host.UsageError
		if errors.As(err, &ue) && errors.Is(err, session.ErrBusy) {
			return exitOK // another run holds the session: the user may try again
		}
		return code
	}
	out.Finish(res)
	if c.session == "" && res.Session != "" {
		c.session = res.Session
		fmt.Fprintf(c.e.stderr, "agenthost chat: session %s\n", outText(c.e, c.session))
	}
	return exitOK
}
