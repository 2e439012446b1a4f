package main

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/agenthost/agenthost/cmd/agenthost/internal/term"
	"github.com/agenthost/agenthost/internal/termtext"
	"github.com/agenthost/agenthost/internal/textcut"
	"github.com/agenthost/agenthost/loop"
)

// output renders a run to the terminal, as --json, or as --events.
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
type output struct {
	e        *env
	con      *term.Console
	json     bool
	events   bool
	progress bool
	live     bool // stdout is a terminal: stream text as it arrives
	// hint, when set, says what to do about the error that stopped a run
	// (failureHint); "" when nothing is known.
	hint func(*loop.Result) string
	// keyArg, when set, picks the argument that says what a tool call is
	// about (chatKeyArgs); the progress line shows it after the tool.
	keyArg func(tool, args string) string
	// md, when set, renders the answer's Markdown (the chat on a
	// terminal); spin updates the chat's spinner.
	md    *term.MarkdownStream
	spin  bool
	color bool // the progress display is in colour

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

func newOutput(e *env, asJSON, events bool) *output {
	o := &output{e: e, con: e.guardLines(), json: asJSON, events: events, progress: showsProgress(e, asJSON, events), live: e.stdoutTTY}
	o.color = o.progress && useColor(e)
	return o
}

// showsProgress tells whether a run shows the progress display on stderr:
// on a terminal, unless stdout is --json or --events.
func showsProgress(e *env, asJSON, events bool) bool {
	return e.stderrTTY && !events && !asJSON
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
	if o.replaying {
		o.again.WriteString(s)
		a := o.again.String()
		switch {
		case strings.HasPrefix(o.replay, a):
			return // still the text on the screen
		case strings.HasPrefix(a, o.replay):
			s = a[len(o.replay):] // it goes on where the screen stops
			if cut := o.replay[strings.LastIndexByte(o.replay, '\n')+1:]; cut != "" && !o.con.LineOpen() {
				// A line (the retry's progress) was written below the
				// cut line: it is shown again whole.
				o.con.Stream(cut)
			}
		default:
			o.restart()
			s = a
		}
		o.replaying = false
	}
	if o.md != nil {
		o.streamed.WriteString(s)
		o.md.Write(s)
		o.partial = true
		return
	}
	o.print(s)
	o.partial = true
}

// mdFlush ends the response's Markdown: a line left open is drawn
// rendered.
func (o *output) mdFlush() {
	if o.md != nil {
		o.md.Flush()
	}
}

// restart marks on stdout that the answer starts again: the retried
// request's text differs from what is on the screen.
func (o *output) restart() {
	o.endLine()
	io.WriteString(o.e.stdout, streamRetried)
	o.streamed.Reset()
}

// print writes model text to stdout, escaped on a terminal. Not on a
// terminal, s is a whole response's text: it is written with the newline
// that ends it.
func (o *output) print(s string) {
	o.streamed.WriteString(s)
	if o.md != nil {
		if !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		o.md.Write(s)
		return
	}
	if !o.live && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	o.con.Stream(s)
}

// endLine ends the text on stdout with a newline if it has none.
func (o *output) endLine() { o.con.EndLine() }

func (o *output) event(ev loop.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if ev.Depth == 0 && !o.json && !o.events {
		switch ev.Type {
		case loop.EventStepStart:
			o.mdFlush()
			o.endLine()
			o.streamed.Reset()
			o.pending.Reset()
			o.partial = false
			o.replaying = false
		case loop.EventRetry:
			o.pending.Reset()
			if o.md != nil {
				o.md.Reset()
			}
			if o.partial {
				if o.md != nil {
					// Rendered lines are not the text streamed: the
					// answer starts again below them.
					o.restart()
				} else {
					// The retried stream usually repeats the text
					// shown: it is held until it says something new.
					o.replaying, o.replay = true, o.streamed.String()
				}
				o.partial = false
			}
			o.again.Reset()
		case loop.EventMessage:
			if ev.Msg != nil && ev.Msg.Role == loop.RoleAssistant {
				if o.replaying {
					// The kept answer is shorter than the text shown.
					o.replaying = false
					if o.again.String() != o.replay {
						o.restart()
						o.print(o.again.String())
					}
				}
				if o.pending.Len() > 0 {
					o.print(o.pending.String())
					o.pending.Reset()
				}
				o.mdFlush()
				o.con.Flush()
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
		if o.keyArg != nil {
			if o.callArg == nil {
				o.callArg = map[string]string{}
			}
			o.callArg[ev.CallID] = o.keyArg(ev.Tool, ev.Arguments)
		}
		if o.spin {
			o.con.SetSpinLabel(textcut.Runes(strings.TrimSpace("running "+termtext.Escape(ev.Tool)+" "+o.callArg[ev.CallID]), term.SpinLabelMax))
		}
	case loop.EventStepStart:
		if o.spin {
			o.con.SetSpinLabel("thinking")
		}
	}
	if o.events && ev.Type != loop.EventMessage {
		o.evBuf = writeEvent(o.e.stdout, o.evBuf, ev)
	}
	if o.progress {
		term.ProgressLine(o.e.stderr, ev, o.callArg[ev.CallID], o.color)
	}
	if ev.Type == loop.EventToolEnd {
		delete(o.callArg, ev.CallID)
	}
}

// finish prints the end of the run.
func (o *output) finish(res *loop.Result) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case o.json:
		writeResult(o.e.stdout, res)
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
		if o.hint != nil {
			if h := o.hint(res); h != "" {
				fmt.Fprintf(o.e.stderr, "agenthost: %s\n", errText(o.e, h))
			}
		}
		switch {
		case res.StopReason != loop.StopCompleted:
			fmt.Fprintf(o.e.stderr, "agenthost: stopped: %s after %d of %d steps, %s%s (session %s)\n",
				res.StopReason, res.Steps, res.StepsMax, toolCalls(res.ToolCalls), spendText(res), res.Session)
		case o.progress:
			fmt.Fprintf(o.e.stderr, "agenthost: done: %d %s, %s%s (session %s)\n",
				res.Steps, plural(res.Steps, "step", "steps"), toolCalls(res.ToolCalls), spendText(res), res.Session)
		}
	}
}

// spendText is the tokens and cost of a run for the terminal's last line:
// ", 1285 tokens, $0.0016"; the tokens are marked "estimated" when a server
// reported none, and the cost is left out when unknown.
func spendText(res *loop.Result) string {
	s := fmt.Sprintf(", %d %s", res.Usage.TotalTokens, plural(res.Usage.TotalTokens, "token", "tokens"))
	if res.Usage.Estimated {
		s += " (estimated)"
	}
	if res.Cost != nil {
		s += ", $" + loop.USD(*res.Cost)
	}
	return s
}

// toolCalls is "1 tool call", "2 tool calls".
func toolCalls(n int) string {
	return fmt.Sprintf("%d %s", n, plural(n, "tool call", "tool calls"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
