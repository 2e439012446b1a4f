package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/agenthost/agenthost/internal/session"
	"github.com/agenthost/agenthost/internal/termtext"
	"github.com/agenthost/agenthost/internal/textcut"
	"github.com/agenthost/agenthost/loop"
)

// The text forms of sessions: `sessions list` (a table, or JSON) and
// `sessions show` (a transcript). Everything in a session may come from
// the model or a tool: with escape (stdout is a terminal) it is escaped.

func text(s string, escape bool) string {
	if escape {
		return termtext.Escape(s)
	}
	return s
}

// SummaryText is a session's summary (session.Summarize) as `sessions
// list` shows it: the last run's stop reason and steps ("unfinished" and
// "-" when that run has no run.end: it is still running, or its process
// was killed), the first prompt on one line and cut to 60 runes, the
// tokens of the finished runs with a "~" in front when a figure was
// estimated, their cost in USD or "-" when any run's cost is unknown (no
// price); tokens and cost are "-" without a finished run.
type SummaryText struct {
	Stop, Steps, Prompt, Tokens, Cost string
}

// Texts is s as `sessions list` shows it.
func Texts(s session.Summary) SummaryText {
	t := SummaryText{Stop: "unfinished", Steps: "-", Tokens: "-", Cost: "-"}
	if s.Finished {
		t.Stop, t.Steps = string(s.Stop), fmt.Sprintf("%d/%d", s.Steps, s.StepsMax)
	}
	t.Prompt = textcut.Line(s.Prompt, 61)
	if s.Runs > 0 {
		t.Tokens = fmt.Sprint(s.Usage.TotalTokens)
		if s.Usage.Estimated {
			t.Tokens = "~" + t.Tokens
		}
		if s.CostKnown {
			t.Cost = "$" + loop.USD(s.Cost)
		}
	}
	return t
}

// Usage is a session's turns (runs), tokens (the prompt's and the
// completions' too) and cost, as the chat's /usage prints them: "3 turns,
// tokens 1285 (1000 prompt, 285 completion), cost $0.0016"; summed over
// the finished runs as `sessions list` sums them.
func Usage(s session.Summary) string {
	turns, u, t := s.Runs, s.Usage, Texts(s)
	split := ""
	if turns > 0 {
		est := ""
		if u.Estimated {
			est = "~"
		}
		split = fmt.Sprintf(" (%s%d prompt, %s%d completion)", est, u.PromptTokens, est, u.CompletionTokens)
	}
	return fmt.Sprintf("%d %s, tokens %s%s, cost %s", turns, plural(turns, "turn", "turns"), t.Tokens, split, t.Cost)
}

// WriteTable writes the table of `sessions list`: a line per session of
// ms, sums[i] being the summary of ms[i].
func WriteTable(w io.Writer, ms []session.Meta, sums []session.Summary, escape bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tCREATED\tSTOP\tSTEPS\tTOKENS\tCOST\tPROMPT")
	for i, m := range ms {
		t := Texts(sums[i])
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", text(m.ID, escape), text(m.Agent, escape), m.Created.Format("2006-01-02 15:04:05"), t.Stop, t.Steps, t.Tokens, t.Cost, text(t.Prompt, escape))
	}
	tw.Flush()
}

// ListJSON is one session of `sessions list --json`.
type ListJSON struct {
	session.Meta
	StopReason string     `json:"stop_reason"` // of its last run; "unfinished" while none ended
	Runs       int        `json:"runs"`
	Usage      loop.Usage `json:"usage"`
	Cost       *float64   `json:"cost"` // USD; null when a run's cost is unknown
	Prompt     string     `json:"prompt"`
}

// List is what `sessions list --json` prints: ms with their summaries
// (sums[i] is ms[i]'s), never null.
func List(ms []session.Meta, sums []session.Summary) []ListJSON {
	out := []ListJSON{}
	for i, m := range ms {
		sum := sums[i]
		s := ListJSON{Meta: m, StopReason: "unfinished", Runs: sum.Runs, Usage: sum.Usage, Prompt: sum.Prompt}
		if sum.Finished {
			s.StopReason = string(sum.Stop)
		}
		if sum.CostKnown && sum.Runs > 0 {
			s.Cost = &sum.Cost
		}
		out = append(out, s)
	}
	return out
}

// WriteTranscript writes the transcript of `sessions show`: every message
// of evs, then the last run's stop reason and steps.
func WriteTranscript(w io.Writer, evs []loop.Event, escape bool) {
	for _, ev := range evs {
		if ev.Type != loop.EventMessage || ev.Msg == nil {
			continue
		}
		writeMessage(w, ev, escape)
	}
	t := Texts(session.Summarize(evs))
	fmt.Fprintf(w, "-- stop: %s, steps %s\n", t.Stop, t.Steps)
}

// writeMessage writes one message of a transcript.
func writeMessage(w io.Writer, ev loop.Event, escape bool) {
	m := ev.Msg
	indent := strings.Repeat("  ", ev.Depth)
	who := text(string(m.Role), escape)
	if ev.Depth > 0 {
		who = text(ev.Agent, escape) + "/" + who
	}
	switch m.Role {
	case loop.RoleSystem:
		fmt.Fprintf(w, "%s[%s] %d chars\n", indent, who, len(m.Content))
		return
	case loop.RoleTool:
		status := ""
		if m.IsError {
			status = " error"
		}
		fmt.Fprintf(w, "%s[%s %s %s%s] %s\n", indent, who, text(m.Name, escape), text(m.ToolCallID, escape), status, text(textcut.Clip(m.Content, 400), escape))
		return
	}
	if m.Content != "" {
		fmt.Fprintf(w, "%s[%s] %s\n", indent, who, text(m.Content, escape))
	}
	for _, c := range m.ToolCalls {
		fmt.Fprintf(w, "%s[%s call %s] %s(%s)\n", indent, who, text(c.ID, escape), text(c.Name, escape), text(textcut.Clip(c.Arguments, 400), escape))
	}
}
