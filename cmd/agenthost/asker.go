package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

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

func addApproveFlags(fs *flag.FlagSet) *approveFlags {
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
		Reason: fmt.Sprintf("no terminal to ask; the user can allow it with --approve %s (or --yes) on the command line", q.Call.Name)}
}

// ttyAsker asks a person at an interactive terminal.
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
// releases the terminal it opened.
func newApprover(e *env, af *approveFlags) (*cliApprover, func()) {
	a := &cliApprover{flags: af, tty: terminalAsker(e)}
	if a.tty == nil {
		return a, func() {}
	}
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
	// The terminal shows the model's call: escaped.
	agent, tool := termtext.Escape(q.Agent), termtext.Escape(q.Call.Name)
	if q.Kind == loop.AskDoomLoop {
		fmt.Fprintf(a.out, "\n%s is repeating itself: %s(%s) %d times in a row.\n[o] continue once  [a] always continue  [s] stop (default): ",
			agent, tool, termtext.Escape(clip(q.Call.Arguments, 200)), q.Count)
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
	fmt.Fprintf(a.out, ":\n%s[y] yes  [n] no (default)  [a] always (%s, this run)  [r] no, with a reason: ", foldArguments(q.Call.Arguments), tool)
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

// Bounds of the arguments shown in a question.
const (
	foldValue = 300 // bytes of one value shown, the rest folded
	foldKeys  = 20  // top-level keys shown
)

// foldArguments shows a call's arguments for a person: one line per
// top-level key of a JSON object ("  key: value"), each value escaped and
// cut at foldValue bytes with the size of the rest; arguments that are not
// an object are shown as one escaped, cut value.
func foldArguments(args string) string {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &obj); err != nil || obj == nil {
		return "  " + foldOne(args) + "\n"
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	for i, k := range keys {
		if i == foldKeys {
			fmt.Fprintf(&sb, "  … %d more keys\n", len(keys)-foldKeys)
			break
		}
		v := obj[k]
		var s string
		if json.Unmarshal(v, &s) != nil {
			var c bytes.Buffer
			if json.Compact(&c, v) == nil {
				v = c.Bytes()
			}
			s = string(v)
		}
		fmt.Fprintf(&sb, "  %s: %s\n", termtext.Escape(clip(k, 80)), foldOne(s))
	}
	if len(keys) == 0 {
		sb.WriteString("  (no arguments)\n")
	}
	return sb.String()
}

// foldOne escapes s for the terminal, cut at foldValue bytes.
func foldOne(s string) string {
	if len(s) <= foldValue {
		return termtext.Escape(s)
	}
	n := foldValue
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return termtext.Escape(s[:n]) + fmt.Sprintf("… (%d more bytes)", len(s)-n)
}
