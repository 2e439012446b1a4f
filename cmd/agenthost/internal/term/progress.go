package term

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agenthost/agenthost/internal/report"
	"github.com/agenthost/agenthost/internal/termtext"
	"github.com/agenthost/agenthost/loop"
)

// ProgressLine writes to w (stderr) a short human line for the events a
// person watching a terminal cares about; arg is the key argument of the
// event's call ("" when none), shown after the tool; color colours a
// call's status. Names and messages may come from the model or a plugin:
// they are escaped (the display is for a terminal only).
func ProgressLine(w io.Writer, ev loop.Event, arg string, color bool) {
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
			steps := "steps"
			if left == 1 {
				steps = "step"
			}
			fmt.Fprintf(w, "%s  %d %s left\n", indent, left, steps)
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
		if arg != "" {
			arg = " " + arg
		}
		if color {
			status = map[string]string{"ok": "\x1b[32mok\x1b[39m", "error": "\x1b[31merror\x1b[39m"}[status]
		}
		fmt.Fprintf(w, "%s  ↳ %s%s %s %s\n", indent, ev.Tool, arg, status, report.Duration(ms))
	case loop.EventToolDropped:
		fmt.Fprintf(w, "%s  ↳ %s dropped: %s\n", indent, ev.Tool, ev.Message)
	case loop.EventRetry:
		var d time.Duration
		if ev.DelayMS != nil {
			d = time.Duration(*ev.DelayMS) * time.Millisecond
		}
		fmt.Fprintf(w, "%s  retry %d in %s: %s\n", indent, ev.Attempt, d, ev.Message)
	case loop.EventApprovalDecision:
		verdict := map[string]string{"allow": "allowed", "always": "allowed for the rest of the run", "deny": "denied"}[ev.Decision]
		if verdict == "" {
			verdict = termtext.Escape(ev.Decision)
		}
		msg := ""
		if ev.Message != "" {
			msg = ": " + ev.Message
		}
		fmt.Fprintf(w, "%s  ↳ %s %s (%s)%s\n", indent, ev.Tool, verdict, termtext.Escape(ev.By), msg)
	case loop.EventApprovalDropped:
		call := "no call"
		if ev.CallID != "" {
			call = "call " + termtext.Escape(ev.CallID)
		}
		fmt.Fprintf(w, "%s  %s (%s for %s, by %s)\n", indent, ev.Message, termtext.Escape(ev.Decision), call, termtext.Escape(ev.By))
	case loop.EventDoomLoop, loop.EventBudgetExhausted, loop.EventCompaction:
		fmt.Fprintf(w, "%s  %s: %s\n", indent, ev.Type, ev.Message)
	}
}
