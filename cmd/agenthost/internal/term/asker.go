package term

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/agenthost/agenthost/internal/callview"
	"github.com/agenthost/agenthost/internal/termtext"
	"github.com/agenthost/agenthost/loop"
)

// Asker asks a person at an interactive terminal: an approval, a doom
// loop, an MCP server's question (ReadLine).
type Asker struct {
	in *bufio.Reader
	// Out is where the questions are written.
	Out   io.Writer
	tty   *os.File // /dev/tty when open: its reads can be cut short
	close func() error
	// Change is what a call would do to a file (host.FileChange): a
	// question shows it as a diff. nil: the arguments are shown.
	Change func(loop.ToolCall) (callview.Change, bool)
}

// NewAsker asks on out and reads the answers from in.
func NewAsker(in io.Reader, out io.Writer) *Asker {
	return &Asker{in: bufio.NewReader(in), Out: out, close: func() error { return nil }}
}

// Close releases the terminal the asker opened.
func (a *Asker) Close() error { return a.close() }

// OpenAsker returns an asker when a person can answer: standard input is
// a terminal (stdinTTY). Like ssh and sudo it talks to the controlling terminal
// (/dev/tty), so the question is seen even when stderr is redirected to a
// log; without one it falls back to stdin and a terminal stderr. It returns
// nil when nobody can answer.
func OpenAsker(stdin io.Reader, stderr io.Writer, stdinTTY, stderrTTY bool) *Asker {
	if !stdinTTY {
		return nil
	}
	if f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0); err == nil {
		return &Asker{in: bufio.NewReader(f), Out: f, tty: f, close: f.Close}
	}
	if stderrTTY {
		return NewAsker(stdin, stderr)
	}
	return nil
}

// maxAnswer is the longest answer line read from the terminal; a reason is
// cut there.
const maxAnswer = 4 << 10

// Decide puts q to the person. An approval: y (yes), n (no, also an empty
// line, end of input or an abort), a (always: this tool, the rest of this
// run), r (no, then a line with the reason for the model; "r REASON" gives
// it on the same line); any other answer is asked again. A doom loop: o
// (once), a (always), s (stop, the default).
func (a *Asker) Decide(ctx context.Context, q loop.Question) loop.Decision {
	// The terminal shows the model's call: escaped, each argument on
	// lines of its own (internal/callview).
	agent, tool := termtext.Line(q.Agent), termtext.Line(q.Call.Name)
	width := ColumnsOf(a.Out)
	if q.Kind == loop.AskDoomLoop {
		fmt.Fprintf(a.Out, "\n%s is repeating itself: %s %d times in a row, with:\n%s[o] continue once  [a] always continue  [s] stop (default): ",
			agent, tool, q.Count, callview.Arguments(q.Call.Arguments, width))
		line, err := a.ReadLine(ctx)
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
	fmt.Fprintf(a.Out, "\n%s wants to run %s", agent, tool)
	if q.Depth > 0 {
		fmt.Fprintf(a.Out, " (subagent, depth %d)", q.Depth)
	}
	var view string
	if ch, ok := a.fileChange(q.Call); ok {
		view = callview.Call(q.Call.Arguments, width, &ch)
	} else {
		view = callview.Arguments(q.Call.Arguments, width)
	}
	fmt.Fprintf(a.Out, ":\n%s[y] yes  [n] no (default)  [a] always (%s, this run)  [r] no, with a reason: ", view, tool)
	for {
		line, err := a.ReadLine(ctx)
		if err != nil {
			return loop.Decision{Verdict: loop.Deny, By: loop.ByTerminal}
		}
		// The first word is the answer; after r, the rest of the line is
		// the reason, as if typed at the reason's own question.
		word, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		rest = strings.TrimSpace(rest)
		switch strings.ToLower(word) {
		case "y", "yes":
			if rest == "" {
				return loop.Decision{Verdict: loop.Allow, By: loop.ByTerminal}
			}
		case "a", "always":
			if rest == "" {
				return loop.Decision{Verdict: loop.AllowAlways, By: loop.ByTerminal}
			}
		case "", "n", "no":
			if rest == "" {
				return loop.Decision{Verdict: loop.Deny, By: loop.ByTerminal}
			}
		case "r", "reason":
			if rest == "" {
				fmt.Fprint(a.Out, "reason (for the model): ")
				reason, _ := a.ReadLine(ctx)
				rest = strings.TrimSpace(reason)
			}
			return loop.Decision{Verdict: loop.Deny, By: loop.ByTerminal, Reason: rest}
		}
		// Anything else is asked again: a typo must not decide.
		fmt.Fprintf(a.Out, "%s? answer y (yes), n (no, also an empty line), a (always) or r (no, with a reason; r REASON on one line): ", termtext.Line(strings.TrimSpace(line)))
	}
}

// fileChange is what c would do to a file, when a.Change knows.
func (a *Asker) fileChange(c loop.ToolCall) (callview.Change, bool) {
	if a.Change == nil {
		return callview.Change{}, false
	}
	return a.Change(c)
}

// ErrNoAnswer is a question left without an answer: the run was aborted,
// or the input ended.
var ErrNoAnswer = errors.New("no answer")

// ReadLine reads one line of the person's answer, at most maxAnswer bytes
// of it kept, while ctx lasts; end of input with nothing typed and an
// abort are ErrNoAnswer.
func (a *Asker) ReadLine(ctx context.Context) (string, error) {
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
		fmt.Fprintln(a.Out)
		return "", ErrNoAnswer
	}
	if r.err != nil && (!errors.Is(r.err, io.EOF) || r.line == "") {
		return "", ErrNoAnswer
	}
	return r.line, nil
}
