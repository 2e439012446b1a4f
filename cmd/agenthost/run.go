package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/internal/session"
	"github.com/agenthost/agenthost/internal/termtext"
	"github.com/agenthost/agenthost/loop"
)

func cmdRun(ctx context.Context, args []string, e *env) int {
	fs := newFlags("run", e)
	cfgFlag := fs.String("c", "", "config `file` (default $AGENTHOST_CONFIG or ./agents.hcl)")
	agentFlag := fs.String("a", "", "`agent` to run (default: the one with default = true, or the only one)")
	asJSON := fs.Bool("json", false, "print one JSON object with the result at the end")
	events := fs.Bool("events", false, "print every event as a JSON line")
	sessionID := fs.String("session", "", "continue the session with this `id`")
	record := fs.String("record", "", "record model requests and responses to this cassette `file`")
	replay := fs.String("replay", "", "serve model responses from this cassette `file` (no network)")
	logLevel := fs.String("log-level", "", "log `level`: debug, info, warn, error (default warn on a terminal, info otherwise)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if *asJSON && *events {
		return usageErr(e, "--json and --events cannot be used together")
	}
	if *record != "" && *replay != "" {
		return usageErr(e, "--record and --replay cannot be used together")
	}
	prompt, code := readPrompt(pos, e)
	if code != exitOK {
		return code
	}
	logger, code := newLogger(*logLevel, e)
	if code != exitOK {
		return code
	}
	ctx = logger.WithContext(ctx)

	path := configPath(*cfgFlag, e)
	opts := hostOptions(e)
	opts.Record, opts.Replay = *record, *replay
	h, code := loadHost(ctx, path, opts, e)
	if code != exitOK {
		return code
	}
	defer h.Close(context.WithoutCancel(ctx))

	out := newOutput(e, *asJSON, *events)
	req := host.RunRequest{Agent: *agentFlag, Prompt: prompt, Session: *sessionID, Sink: loop.SinkFunc(out.event), OnText: out.text}
	if a := terminalAsker(e); a != nil {
		req.Asker = a
		defer a.close()
	}
	res, err := h.Run(ctx, req)
	if err != nil {
		return runError(e, err, path)
	}
	out.finish(res)
	return exitCode(res.StopReason)
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
		return usageErr(e, "--session %s belongs to agent %q, not %q: pass -a %s", sa.Session, sa.Agent, sa.Asked, sa.Agent)
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

// exitCode maps a stop reason to the process exit code (DESIGN §6).
func exitCode(r loop.StopReason) int {
	switch r {
	case loop.StopCompleted:
		return exitOK
	case loop.StopMaxSteps, loop.StopBudget, loop.StopDoomLoop:
		return exitLimit
	case loop.StopAborted:
		return exitAborted
	default:
		return exitError
	}
}

// maxStdinPrompt is the most `run -` reads from stdin: 16 MiB. A bigger
// prompt is refused, never cut.
const maxStdinPrompt = 16 << 20

// readPrompt takes the prompt from the arguments, or from stdin with "-".
func readPrompt(pos []string, e *env) (string, int) {
	if len(pos) == 1 && pos[0] == "-" {
		b, err := io.ReadAll(io.LimitReader(e.stdin, maxStdinPrompt+1))
		if err != nil {
			fmt.Fprintf(e.stderr, "agenthost: reading the prompt from stdin: %v\n", err)
			return "", exitError
		}
		if len(b) > maxStdinPrompt {
			return "", usageErr(e, "run: the prompt on stdin is more than %d MiB, the most 'run -' reads; nothing was run: put the material in a file under a mount and name it in the prompt", maxStdinPrompt>>20)
		}
		p := strings.TrimSpace(string(b))
		if p == "" {
			return "", usageErr(e, "run: the prompt read from stdin is empty")
		}
		return p, exitOK
	}
	p := strings.TrimSpace(strings.Join(pos, " "))
	if p == "" {
		return "", usageErr(e, "run needs a prompt: agenthost run \"your task\" (or - to read it from stdin)")
	}
	return p, exitOK
}

// newLogger makes the zerolog logger on stderr: human format on a terminal,
// JSON lines otherwise.
func newLogger(level string, e *env) (zerolog.Logger, int) {
	if level == "" {
		level = "info"
		if e.stderrTTY {
			level = "warn" // the progress display says what info logs would
		}
	}
	lvl, err := zerolog.ParseLevel(level)
	if err != nil || level == "" {
		return zerolog.Nop(), usageErr(e, "--log-level %q: use debug, info, warn or error", level)
	}
	var w io.Writer = e.stderr
	if e.stderrTTY {
		w = zerolog.ConsoleWriter{Out: e.stderr, NoColor: !useColor(e), TimeFormat: time.TimeOnly, FormatPrepare: escapeLogEvent}
	}
	return zerolog.New(w).Level(lvl).With().Timestamp().Logger(), exitOK
}

// output renders a run to the terminal, as --json, or as --events.
//
// The top-level agent's text goes to stdout. On a terminal it streams as it
// arrives, with control characters escaped (termtext); when a request that
// already showed text is retried, a marker line says so before the answer
// starts again. Otherwise (a pipe, a file) stdout is exact and holds each
// response's text only once the response is kept: the text of a request is
// buffered and printed when its assistant message is appended, and dropped
// when the request is retried or fails, so a retried stream never prints
// twice.
type output struct {
	e        *env
	json     bool
	events   bool
	progress bool
	live     bool             // stdout is a terminal: stream text as it arrives
	term     *termtext.Writer // live: stdout, escaped

	mu       sync.Mutex
	pending  strings.Builder // not live: text of the request in flight
	partial  bool            // live: text of the request in flight is on the screen
	streamed strings.Builder // top-level text printed since the last step started
	lastNL   bool            // whether stdout ends with a newline
	wrote    bool
}

// streamRetried is printed on a terminal when a request whose text was
// already shown is retried: the answer starts again below it.
const streamRetried = "[agenthost] stream interrupted; retrying\n"

func newOutput(e *env, asJSON, events bool) *output {
	o := &output{e: e, json: asJSON, events: events, progress: e.stderrTTY && !events && !asJSON, live: e.stdoutTTY}
	if o.live {
		o.term = termtext.NewWriter(e.stdout)
	}
	return o
}

func (o *output) text(agent string, depth int, s string) {
	if depth != 0 || o.json || o.events || s == "" {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.live {
		o.pending.WriteString(s)
		return
	}
	o.print(s)
	o.partial = true
}

// print writes model text to stdout, escaped on a terminal.
func (o *output) print(s string) {
	if o.live {
		o.term.WriteString(s)
	} else {
		io.WriteString(o.e.stdout, s)
	}
	o.streamed.WriteString(s)
	o.wrote = true
	o.lastNL = strings.HasSuffix(s, "\n")
}

// endLine ends the text on stdout with a newline if it has none.
func (o *output) endLine() {
	if o.term != nil {
		o.term.Flush() // a lone \r or a cut UTF-8 sequence, escaped
	}
	if o.wrote && !o.lastNL {
		io.WriteString(o.e.stdout, "\n")
		o.lastNL = true
	}
}

func (o *output) event(ev loop.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if ev.Depth == 0 && !o.json && !o.events {
		switch ev.Type {
		case loop.EventStepStart:
			o.endLine()
			o.streamed.Reset()
			o.pending.Reset()
			o.partial = false
		case loop.EventRetry:
			o.pending.Reset()
			if o.partial {
				o.endLine()
				io.WriteString(o.e.stdout, streamRetried)
				o.streamed.Reset()
				o.partial = false
			}
		case loop.EventMessage:
			if ev.Msg != nil && ev.Msg.Role == loop.RoleAssistant {
				if o.pending.Len() > 0 {
					o.print(o.pending.String())
					o.pending.Reset()
				}
				if o.term != nil {
					o.term.Flush()
				}
				o.partial = false
			}
		case loop.EventStepEnd:
			o.pending.Reset() // a request that failed: its text is not kept
			o.partial = false
		}
	}
	if o.events && ev.Type != loop.EventMessage {
		writeJSONLine(o.e.stdout, eventJSON(ev))
	}
	if o.progress {
		o.progressLine(ev)
	}
}

// progressLine prints a short human line on stderr for the events a person
// watching a terminal cares about. Names and messages may come from the
// model or a plugin: they are escaped (the display is for a terminal only).
func (o *output) progressLine(ev loop.Event) {
	w := o.e.stderr
	indent := strings.Repeat("  ", ev.Depth)
	ev.Agent, ev.Tool, ev.Message = termtext.Escape(ev.Agent), termtext.Escape(ev.Tool), termtext.Escape(ev.Message)
	switch ev.Type {
	case loop.EventStepStart:
		final := ""
		if ev.Final != nil && *ev.Final {
			final = " (final: tools off, asking for a summary)"
		}
		fmt.Fprintf(w, "%s· %s step %d/%d%s\n", indent, ev.Agent, ev.Step, ev.StepsMax, final)
		if left := ev.StepsMax - ev.Step; left > 0 && left <= max((ev.StepsMax+4)/5, 2) {
			fmt.Fprintf(w, "%s  %d %s left\n", indent, left, plural(left, "step", "steps"))
		}
	case loop.EventToolEnd:
		status := "ok"
		if ev.IsError != nil && *ev.IsError {
			status = "error"
		}
		var ms int64
		if ev.DurationMS != nil {
			ms = *ev.DurationMS
		}
		fmt.Fprintf(w, "%s  ↳ %s %s (%d ms)\n", indent, ev.Tool, status, ms)
	case loop.EventToolDropped:
		fmt.Fprintf(w, "%s  ↳ %s dropped: %s\n", indent, ev.Tool, ev.Message)
	case loop.EventRetry:
		var d time.Duration
		if ev.DelayMS != nil {
			d = time.Duration(*ev.DelayMS) * time.Millisecond
		}
		fmt.Fprintf(w, "%s  retry %d in %s: %s\n", indent, ev.Attempt, d, ev.Message)
	case loop.EventDoomLoop, loop.EventBudgetExhausted, loop.EventCompaction:
		fmt.Fprintf(w, "%s  %s: %s\n", indent, ev.Type, ev.Message)
	}
}

// finish prints the end of the run.
func (o *output) finish(res *loop.Result) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if res.Errors == nil {
		res.Errors = []string{}
	}
	switch {
	case o.json:
		enc := json.NewEncoder(o.e.stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(res)
	case o.events:
		// run.end was printed as an event.
	default:
		// The final text is normally streamed already; a host-written
		// sentinel, or text from a replay, is printed here.
		if res.Output != "" && strings.TrimSpace(o.streamed.String()) != strings.TrimSpace(res.Output) {
			o.endLine()
			o.print(res.Output)
		}
		o.endLine()
		for _, err := range res.Errors {
			// Provider messages quote the server: escaped on a terminal.
			fmt.Fprintf(o.e.stderr, "agenthost: %s\n", errText(o.e, err))
		}
		if res.StopReason != loop.StopCompleted {
			fmt.Fprintf(o.e.stderr, "agenthost: stopped: %s after %d of %d steps, %d tool calls (session %s)\n",
				res.StopReason, res.Steps, res.StepsMax, res.ToolCalls, res.Session)
		}
	}
}

// eventJSON flattens an event for --events: run.end and subagent.end carry
// the result's fields at the top level, like --json, after the common ones.
//
// The fields DESIGN §6 names for an event type are always present, even when
// zero: step.start's tools_offered is [] on a final step, and retry's status
// is 0 for a network error.
func eventJSON(ev loop.Event) any {
	switch ev.Type {
	case loop.EventStepStart:
		offered := ev.Offered
		if offered == nil {
			offered = []string{}
		}
		return struct {
			loop.Event
			Offered []string `json:"tools_offered"`
		}{ev, offered}
	case loop.EventRetry:
		return struct {
			Type     string    `json:"type"`
			Time     time.Time `json:"time"`
			Agent    string    `json:"agent"`
			Depth    int       `json:"depth"`
			Step     int       `json:"step,omitempty"`
			StepsMax int       `json:"steps_max,omitempty"`
			Attempt  int       `json:"attempt"`
			DelayMS  *int64    `json:"delay_ms"`
			Status   int       `json:"status"`
			Message  string    `json:"message,omitempty"`
		}{ev.Type, ev.Time, ev.Agent, ev.Depth, ev.Step, ev.StepsMax, ev.Attempt, ev.DelayMS, ev.Status, ev.Message}
	}
	if ev.Result == nil {
		return ev
	}
	res := *ev.Result
	if res.Errors == nil {
		res.Errors = []string{}
	}
	return struct {
		Type  string    `json:"type"`
		Time  time.Time `json:"time"`
		Agent string    `json:"agent"`
		Depth int       `json:"depth"`
		loop.Result
	}{ev.Type, ev.Time, ev.Agent, ev.Depth, res}
}

func writeJSONLine(w io.Writer, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	w.Write(append(b, '\n'))
}

// ttyAsker asks about doom loops on an interactive terminal.
type ttyAsker struct {
	in    *bufio.Reader
	out   io.Writer
	close func() error
}

// terminalAsker returns an asker when a person can answer: standard input is
// a terminal. Like ssh and sudo it talks to the controlling terminal
// (/dev/tty), so the question is seen even when stderr is redirected to a
// log; without one it falls back to stdin and a terminal stderr. It returns
// nil when nobody can answer (ask then acts as stop).
func terminalAsker(e *env) *ttyAsker {
	if !e.stdinTTY {
		return nil
	}
	if f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0); err == nil {
		return &ttyAsker{in: bufio.NewReader(f), out: f, close: f.Close}
	}
	if e.stderrTTY {
		return &ttyAsker{in: bufio.NewReader(e.stdin), out: e.stderr, close: func() error { return nil }}
	}
	return nil
}

// AskDoomLoop prints the question and reads one line: o (once), a (always)
// or s (stop, also the answer to an empty line, end of input or an abort).
func (a *ttyAsker) AskDoomLoop(ctx context.Context, agent string, call loop.ToolCall, count int) loop.Answer {
	args := clip(call.Arguments, 200)
	// The terminal shows the model's call: escaped.
	fmt.Fprintf(a.out, "\n%s is repeating itself: %s(%s) %d times in a row.\n[o] continue once  [a] always continue  [s] stop (default): ",
		termtext.Escape(agent), termtext.Escape(call.Name), termtext.Escape(args), count)
	type reply struct {
		line string
		err  error
	}
	ch := make(chan reply, 1)
	go func() {
		line, err := a.in.ReadString('\n')
		ch <- reply{line, err}
	}()
	var r reply
	select {
	case r = <-ch:
	case <-ctx.Done():
		// The reading goroutine ends with the process; an aborted run
		// stops anyway.
		fmt.Fprintln(a.out)
		return loop.AnswerStop
	}
	if r.err != nil && !errors.Is(r.err, io.EOF) {
		return loop.AnswerStop
	}
	switch strings.ToLower(strings.TrimSpace(r.line)) {
	case "o", "once", "c", "continue":
		return loop.AnswerOnce
	case "a", "always":
		return loop.AnswerAlways
	default:
		return loop.AnswerStop
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
