package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/internal/callview"
	"github.com/agenthost/agenthost/internal/shquote"
	"github.com/agenthost/agenthost/internal/termtext"
	"github.com/agenthost/agenthost/loop"
)

// approveFlags are --approve PATTERN (repeatable) and --yes of run and
// chat: calls they allow run without a question. They answer approval
// questions only; a doom loop under "ask" is always put to a person.
type approveFlags struct {
	patterns []string
	yes      bool
}

func addApproveFlags(fs *pflag.FlagSet) *approveFlags {
	af := &approveFlags{}
	fs.Func("approve", "run the calls of tools matching `pattern` (a name, or * ? [...]) without asking; repeatable", func(s string) error {
		if err := loop.ApprovePatternError(s); err != nil {
			return err
		}
		af.patterns = append(af.patterns, s)
		return nil
	})
	fs.BoolVar(&af.yes, "yes", false, "run every call that needs approval without asking")
	return af
}

// cliApprover answers the questions of run and chat: --approve and --yes
// first, then a person at the terminal; with neither, the call is refused
// with a reason saying how to allow it.
type cliApprover struct {
	flags *approveFlags
	tty   *ttyAsker // nil without a terminal
}

func (a *cliApprover) Decide(ctx context.Context, q loop.Question) loop.Decision {
	if q.Kind == loop.AskApproval && a.flags != nil {
		if a.flags.yes {
			return loop.Decision{Verdict: loop.Allow, By: loop.ByFlag, Reason: "--yes"}
		}
		for _, p := range a.flags.patterns {
			if loop.MatchApprovePattern(p, q.Call.Name) {
				return loop.Decision{Verdict: loop.Allow, By: loop.ByFlag, Reason: "--approve " + p}
			}
		}
	}
	if a.tty != nil {
		return a.tty.Decide(ctx, q)
	}
	if q.Kind == loop.AskDoomLoop {
		return loop.Decision{Verdict: loop.Deny, By: loop.ByNone, Reason: "no terminal to ask"}
	}
	return loop.Decision{Verdict: loop.Deny, By: loop.ByNone,
		Reason: fmt.Sprintf("no terminal to ask; the user can allow it with --approve %s (or --yes) on the command line", shquote.Quote(q.Call.Name))}
}

// ttyAsker asks a person at an interactive terminal.
type ttyAsker struct {
	in    *bufio.Reader
	out   io.Writer
	tty   *os.File // /dev/tty when open: its reads can be cut short
	close func() error
	// change is what a call would do to a file (host.FileChange): a
	// question shows it as a diff. nil: the arguments are shown.
	change func(loop.ToolCall) (callview.Change, bool)
}

// terminalAsker returns an asker when a person can answer: standard input is
// a terminal. Like ssh and sudo it talks to the controlling terminal
// (/dev/tty), so the question is seen even when stderr is redirected to a
// log; without one it falls back to stdin and a terminal stderr. It returns
// nil when nobody can answer.
func terminalAsker(e *env) *ttyAsker {
	if !e.stdinTTY {
		return nil
	}
	if f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0); err == nil {
		return &ttyAsker{in: bufio.NewReader(f), out: f, tty: f, close: f.Close}
	}
	if e.stderrTTY {
		return &ttyAsker{in: bufio.NewReader(e.stdin), out: e.stderr, close: func() error { return nil }}
	}
	return nil
}

// newApprover is the Approver of run and chat, and a function that
// releases the terminal it opened. Its questions show what a call of
// write_file or edit would do to the file as a diff (h.FileChange).
func newApprover(e *env, af *approveFlags, h *host.Host) (*cliApprover, func()) {
	a := &cliApprover{flags: af, tty: terminalAsker(e)}
	if a.tty == nil {
		return a, func() {}
	}
	a.tty.change = h.FileChange
	return a, func() { a.tty.close() }
}

// maxAnswer is the longest answer line read from the terminal; a reason is
// cut there.
const maxAnswer = 4 << 10

// Decide puts q to the person. An approval: y (yes), n (no, also an empty
// line, end of input or an abort), a (always: this tool, the rest of this
// run), r (no, then a line with the reason for the model). A doom loop: o
// (once), a (always), s (stop, the default).
func (a *ttyAsker) Decide(ctx context.Context, q loop.Question) loop.Decision {
	// The terminal shows the model's call: escaped, each argument on
	// lines of its own (internal/callview).
	agent, tool := termtext.Line(q.Agent), termtext.Line(q.Call.Name)
	width := columnsOf(a.out)
	if q.Kind == loop.AskDoomLoop {
		fmt.Fprintf(a.out, "\n%s is repeating itself: %s %d times in a row, with:\n%s[o] continue once  [a] always continue  [s] stop (default): ",
			agent, tool, q.Count, callview.Arguments(q.Call.Arguments, width))
		line, err := a.readLine(ctx)
		line = strings.ToLower(strings.TrimSpace(line))
		switch {
		case err != nil:
		case line == "o" || line == "once" || line == "c" || line == "continue":
			return loop.Decision{Verdict: loop.Allow, By: loop.ByTerminal}
		case line == "a" || line == "always":
			return loop.Decision{Verdict: loop.AllowAlways, By: loop.ByTerminal}
		}
		return loop.Decision{Verdict: loop.Deny, By: loop.ByTerminal}
	}
	fmt.Fprintf(a.out, "\n%s wants to run %s", agent, tool)
	if q.Depth > 0 {
		fmt.Fprintf(a.out, " (subagent, depth %d)", q.Depth)
	}
	var view string
	if ch, ok := a.fileChange(q.Call); ok {
		view = callview.Call(q.Call.Arguments, width, &ch)
	} else {
		view = callview.Arguments(q.Call.Arguments, width)
	}
	fmt.Fprintf(a.out, ":\n%s[y] yes  [n] no (default)  [a] always (%s, this run)  [r] no, with a reason: ", view, tool)
	line, err := a.readLine(ctx)
	if err != nil {
		return loop.Decision{Verdict: loop.Deny, By: loop.ByTerminal}
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return loop.Decision{Verdict: loop.Allow, By: loop.ByTerminal}
	case "a", "always":
		return loop.Decision{Verdict: loop.AllowAlways, By: loop.ByTerminal}
	case "r", "reason":
		fmt.Fprint(a.out, "reason (for the model): ")
		reason, _ := a.readLine(ctx)
		return loop.Decision{Verdict: loop.Deny, By: loop.ByTerminal, Reason: strings.TrimSpace(reason)}
	}
	return loop.Decision{Verdict: loop.Deny, By: loop.ByTerminal}
}

// fileChange is what c would do to a file, when a.change knows.
func (a *ttyAsker) fileChange(c loop.ToolCall) (callview.Change, bool) {
	if a.change == nil {
		return callview.Change{}, false
	}
	return a.change(c)
}

// errNoAnswer is a question left without an answer: the run was aborted,
// or the input ended.
var errNoAnswer = errors.New("no answer")

// readLine reads one line of the person's answer, at most maxAnswer bytes
// of it kept, while ctx lasts; end of input with nothing typed and an
// abort are errNoAnswer.
func (a *ttyAsker) readLine(ctx context.Context) (string, error) {
	type reply struct {
		line string
		err  error
	}
	ch := make(chan reply, 1)
	go func() {
		var b []byte
		for {
			part, isPrefix, err := a.in.ReadLine()
			if len(b) < maxAnswer {
				b = append(b, part[:min(len(part), maxAnswer-len(b))]...)
			}
			if err != nil || !isPrefix {
				ch <- reply{string(b), err}
				return
			}
		}
	}()
	var r reply
	select {
	case r = <-ch:
	case <-ctx.Done():
		// An aborted run stops anyway. The read is cut short so that no
		// reader is left behind to take a line meant for someone else
		// (the chat's next prompt); on stdin, which cannot be cut short,
		// it ends with the process.
		if a.tty != nil && a.tty.SetReadDeadline(time.Unix(1, 0)) == nil {
			<-ch
			a.tty.SetReadDeadline(time.Time{})
		}
		fmt.Fprintln(a.out)
		return "", errNoAnswer
	}
	if r.err != nil && (!errors.Is(r.err, io.EOF) || r.line == "") {
		return "", errNoAnswer
	}
	return r.line, nil
}
