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

	"github.com/agenthost/agenthost/internal/termtext"
	"github.com/agenthost/agenthost/loop"
)

// ttyAsker asks about doom loops on an interactive terminal.
type ttyAsker struct {
	in    *bufio.Reader
	out   io.Writer
	tty   *os.File // /dev/tty when open: its reads can be cut short
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
		return &ttyAsker{in: bufio.NewReader(f), out: f, tty: f, close: f.Close}
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
	line, err := a.readLine(ctx)
	if err != nil {
		return loop.AnswerStop
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "o", "once", "c", "continue":
		return loop.AnswerOnce
	case "a", "always":
		return loop.AnswerAlways
	default:
		return loop.AnswerStop
	}
}

// errNoAnswer is a question left without an answer: the run was aborted,
// or the input ended.
var errNoAnswer = errors.New("no answer")

// readLine reads one line of the person's answer, while ctx lasts; end of
// input with nothing typed and an abort are errNoAnswer.
func (a *ttyAsker) readLine(ctx context.Context) (string, error) {
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
