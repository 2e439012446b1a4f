package term

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/agenthost/agenthost/internal/termtext"
	"github.com/agenthost/agenthost/internal/textcut"
	"github.com/agenthost/agenthost/loop"
)

// Output renders a run to the terminal, as --json (JSON), or as --events
// (Events).
//
// The top-level agent's text goes to stdout. On a terminal it streams as it
// arrives, with control characters escaped (termtext); when a request that
// already showed text is retried, a marker line says so before the answer
// starts again. Otherwise (a pipe, a file) stdout is exact and holds each
// response's text only once the response is kept: the text of a request is
// buffered and printed when its assistant message is appended, with the
// newline that ends it in the same write (stdout piped to another program
// and stderr on a terminal are two ways to the screen, so the newline
// cannot wait), and dropped when the request is retried or fails, so a
// retried stream never prints twice. Whatever ends the answer, its last
// line is ended before anything else is printed (console).
type Output struct {
	// Con is what the run writes through: stdout and stderr.
	Con      *Console
	JSON     bool
	Events   bool
	Progress bool // the progress display on stderr
	Live     bool // stdout is a terminal: stream text as it arrives
	ErrTTY   bool // stderr is a terminal: errors are escaped
	// Hint, when set, says what to do about the error that stopped a run;
	// "" when nothing is known.
	Hint func(*loop.Result) string
	// KeyArg, when set, picks the argument that says what a tool call is
	// about; the progress line shows it after the tool.
	KeyArg func(tool, args string) string
	// MD, when set, renders the answer's Markdown (on a terminal); Spin
	// updates the spinner's label. GoLive sets both, and KeyArg.
	MD    *MarkdownStream
	Spin  bool
	Color bool // the progress display is in colour
	// Schema, when set, says whether an agent has an output_schema. When
	// the top-level agent has one and stdout is not a terminal, stdout
	// holds only the validated JSON value, on one line (nothing when the
	// answer is invalid): the text of every step, a rejected answer among
	// them, stays off it.
	Schema func(agent string) bool

	jsonOnly bool // stdout holds only the validated value (Schema)

	mu       sync.Mutex
	callArg  map[string]string // key argument of each call in flight, by call id
	pending  strings.Builder   // not live: text of the request in flight
	partial  bool              // live: text of the request in flight is on the screen
	streamed strings.Builder   // top-level text printed since the last step started
	evBuf    []byte            // reused by writeEvent
	// replaying is set on a terminal when a request whose text was shown
	// is retried: the retried stream's text (again) is held while it
	// repeats what the screen shows (replay), and only what is new is
	// printed.
	replaying bool
	replay    string
	again     strings.Builder
}

// streamRetried is printed on a terminal when a retried request answers
// differently from the text already shown: its answer starts again below.
const streamRetried = "[agenthost] stream interrupted; the answer starts again\n"

// GoLive makes o the display of a person at a terminal, the same for run
// and chat: a tool's progress line names its key argument (keys), the
// answer's Markdown is drawn when stdout is a terminal (in colour when
// color, that is without $NO_COLOR), and while stderr is a terminal a
// spinner shows that the run is alive and what it awaits. It returns the
// approver to use, which keeps the spinner off while it asks, and stop,
// which clears the spinner; the caller stops it before Finish. As --json
// or --events o is left as it is: their output is for programs.
func (o *Output) GoLive(keys KeyArgs, color bool, a loop.Approver) (loop.Approver, func()) {
	if o.JSON || o.Events {
		return a, func() {}
	}
	o.KeyArg = keys.Of
	if o.Live {
		o.MD = NewMarkdownStream(o.Con, color)
	}
	if !o.ErrTTY {
		return a, func() {}
	}
	o.Spin = true
	held := loop.ApproverFunc(func(ctx context.Context, q loop.Question) loop.Decision {
		defer o.Con.HoldSpinner()()
		return a.Decide(ctx, q)
	})
	return held, o.Con.StartSpinner()
}

// Text is the text of agent's response at depth, as it streams.
func (o *Output) Text(agent string, depth int, s string) {
	if depth != 0 || o.JSON || o.Events || s == "" {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.jsonOnly {
		return
	}
	if !o.Live {
		o.pending.WriteString(s)
		return
	}
	if o.replaying {
		o.again.WriteString(s)
		a := o.again.String()
		switch {
		case strings.HasPrefix(o.replay, a):
			return // still the text on the screen
		case strings.HasPrefix(a, o.replay):
			s = a[len(o.replay):] // it goes on where the screen stops
			if cut := o.replay[strings.LastIndexByte(o.replay, '\n')+1:]; cut != "" && !o.Con.LineOpen() {
				// A line (the retry's progress) was written below the
				// cut line: it is shown again whole.
				o.showAgain(cut)
			}
		default:
			o.restart()
			s = a
		}
		o.replaying = false
	}
	if o.MD != nil {
		o.streamed.WriteString(s)
		o.MD.Write(s)
		o.partial = true
		return
	}
	o.print(s)
	o.partial = true
}

// showAgain writes the cut line of a retried stream again, below what
// was written under it; as Markdown the line is streamed anew.
func (o *Output) showAgain(cut string) {
	if o.MD == nil {
		o.Con.Stream(cut)
		return
	}
	o.MD.DropPart()
	o.MD.Write(cut)
}

// mdFlush ends the response's Markdown: a line left open is drawn
// rendered.
func (o *Output) mdFlush() {
	if o.MD != nil {
		o.MD.Flush()
	}
}

// restart marks on stdout that the answer starts again: the retried
// request's text differs from what is on the screen.
func (o *Output) restart() {
	if o.MD != nil {
		o.MD.Reset()
	}
	o.endLine()
	io.WriteString(o.Con.Out(), streamRetried)
	o.streamed.Reset()
}

// print writes model text to stdout, escaped on a terminal. Not on a
// terminal, s is a whole response's text: it is written with the newline
// that ends it.
func (o *Output) print(s string) {
	o.streamed.WriteString(s)
	if o.MD != nil {
		if !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		o.MD.Write(s)
		return
	}
	if !o.Live && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	o.Con.Stream(s)
}

// endLine ends the text on stdout with a newline if it has none.
func (o *Output) endLine() { o.Con.EndLine() }

// Event shows ev.
func (o *Output) Event(ev loop.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if ev.Depth == 0 && !o.JSON && !o.Events {
		switch ev.Type {
		case loop.EventRunStart:
			o.jsonOnly = !o.Live && o.Schema != nil && o.Schema(ev.Agent)
		case loop.EventStepStart:
			o.mdFlush()
			o.endLine()
			o.streamed.Reset()
			o.pending.Reset()
			o.partial = false
			o.replaying = false
		case loop.EventRetry:
			o.pending.Reset()
			if o.partial {
				// The retried stream usually repeats the text shown: it
				// is held until it says something new. As Markdown, the
				// drawing goes on from the state the shown text left.
				o.replaying, o.replay = true, o.streamed.String()
				o.partial = false
			} else if o.MD != nil {
				o.MD.Reset()
			}
			o.again.Reset()
		case loop.EventMessage:
			if ev.Msg != nil && ev.Msg.Role == loop.RoleAssistant {
				if o.replaying {
					// The kept answer is shorter than the text shown, or
					// the same: its cut line is on the screen as it is.
					o.replaying = false
					if o.again.String() != o.replay {
						o.restart()
						o.print(o.again.String())
					} else if o.MD != nil && !o.Con.LineOpen() {
						o.MD.DropPart()
					}
				}
				if o.pending.Len() > 0 {
					o.print(o.pending.String())
					o.pending.Reset()
				}
				o.mdFlush()
				o.Con.Flush()
				o.partial = false
			}
		case loop.EventStepEnd:
			o.pending.Reset() // a request that failed: its text is not kept
			o.mdFlush()       // on a terminal what came of it stays, as when streamed
			o.partial = false
		}
	}
	switch ev.Type {
	case loop.EventToolStart:
		if o.KeyArg != nil {
			if o.callArg == nil {
				o.callArg = map[string]string{}
			}
			o.callArg[ev.CallID] = o.KeyArg(ev.Tool, ev.Arguments)
		}
		if o.Spin {
			o.Con.SetSpinLabel(textcut.Runes(strings.TrimSpace("running "+termtext.Escape(ev.Tool)+" "+o.callArg[ev.CallID]), SpinLabelMax))
		}
	case loop.EventStepStart:
		if o.Spin {
			o.Con.SetSpinLabel("thinking")
		}
	}
	if o.Events && ev.Type != loop.EventMessage {
		o.evBuf = writeEvent(o.Con.Out(), o.evBuf, ev)
	}
	if o.Progress {
		ProgressLine(o.Con.Err(), ev, o.callArg[ev.CallID], o.Color)
	}
	if ev.Type == loop.EventToolEnd {
		delete(o.callArg, ev.CallID)
	}
}

// Finish prints the end of the run.
func (o *Output) Finish(res *loop.Result) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case o.JSON:
		writeResult(o.Con.Out(), res)
	case o.Events:
		// run.end was printed as an event.
	default:
		if o.jsonOnly && res.OutputJSON != nil {
			o.print(string(res.OutputJSON))
		}
		// The final text is normally streamed already; a host-written
		// sentinel, or text from a replay, is printed here.
		if !o.jsonOnly && res.Output != "" && strings.TrimSpace(o.streamed.String()) != strings.TrimSpace(res.Output) {
			o.endLine()
			o.print(res.Output)
		}
		open := o.Con.LineOpen()
		o.endLine()
		if res.StopReason == loop.StopAborted && o.Progress && !open {
			// Ctrl-C: the terminal echoed ^C where the cursor was, at the
			// start of a line; the last lines start on the next.
			fmt.Fprintln(o.Con.Err())
		}
		for _, err := range res.Errors {
			// Provider messages quote the server: escaped on a terminal.
			fmt.Fprintf(o.Con.Err(), "agenthost: %s\n", o.errText(err))
		}
		if o.Hint != nil {
			if h := o.Hint(res); h != "" {
				fmt.Fprintf(o.Con.Err(), "agenthost: %s\n", o.errText(h))
			}
		}
		switch {
		case res.StopReason != loop.StopCompleted:
			fmt.Fprintf(o.Con.Err(), "agenthost: stopped: %s after %d of %d steps, %s%s (session %s)\n",
				res.StopReason, res.Steps, res.StepsMax, ToolCalls(res.ToolCalls), SpendText(res), res.Session)
		case o.Progress:
			fmt.Fprintf(o.Con.Err(), "agenthost: done: %d %s, %s%s (session %s)\n",
				res.Steps, Plural(res.Steps, "step", "steps"), ToolCalls(res.ToolCalls), SpendText(res), res.Session)
		}
	}
}

// errText is s for stderr: escaped when stderr is a terminal.
func (o *Output) errText(s string) string {
	if o.ErrTTY {
		return termtext.Escape(s)
	}
	return s
}

// SpendText is the tokens and cost of a run for the terminal's last line:
// ", 1285 tokens, $0.0016"; the tokens are marked "estimated" when a server
// reported none, and the cost is left out when unknown.
func SpendText(res *loop.Result) string {
	s := fmt.Sprintf(", %d %s", res.Usage.TotalTokens, Plural(res.Usage.TotalTokens, "token", "tokens"))
	if res.Usage.Estimated {
		s += " (estimated)"
	}
	if res.Cost != nil {
		s += ", $" + loop.USD(*res.Cost)
	}
	return s
}

// ToolCalls is "1 tool call", "2 tool calls".
func ToolCalls(n int) string {
	return fmt.Sprintf("%d %s", n, Plural(n, "tool call", "tool calls"))
}

// Plural is one, or many when n is not 1.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// writeEvent writes one --events line: the event's wire form (see
// loop/wire.go), the same JSON a session stores. It encodes into buf and
// returns it, for the next event.
func writeEvent(w io.Writer, buf []byte, ev loop.Event) []byte {
	b, err := ev.AppendJSON(buf[:0])
	if err != nil {
		return buf
	}
	b = append(b, '\n')
	w.Write(b)
	if cap(b) > 64<<10 {
		return nil // grown by a very long event: not kept
	}
	return b
}

// writeResult writes the --json object: the result, indented, with errors
// [] when there are none.
func writeResult(w io.Writer, res *loop.Result) {
	r := *res
	if r.Errors == nil {
		r.Errors = []string{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(r)
}
