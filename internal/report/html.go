// Package report renders a session as one self-contained HTML page, a
// timeline of its turns, steps and tool calls (agenthost sessions show
// --html), with the answers' Markdown rendered inert. It reads the
// session's events as internal/session stores them.
package report

import (
	"fmt"
	"html/template"
	"io"
	"sync"
	"time"

	"github.com/agenthost/agenthost/internal/session"
	"github.com/agenthost/agenthost/loop"
)

// htmlStep is one row of the timeline: a model request and the tool calls
// it asked for, placed on the run's time axis (Left and Width in percent).
type htmlStep struct {
	Agent string
	Depth int
	Step  int
	// Final marks the step that ended its run (the answer, or where a
	// limit stopped it); Forced a final request the loop made without
	// tools because a limit was reached.
	Final     bool
	Forced    bool
	ModelMS   int64
	ModelL    float64
	ModelW    float64
	Tokens    string
	Finish    string
	Text      string
	Reasoning string
	Calls     []*htmlCall
	// Approvals are the step's decisions about calls that waited for one.
	Approvals []*htmlApproval
	start     time.Time
	modelEnd  time.Time
}

type htmlCall struct {
	ID        string
	Tool      string
	Arguments string
	Result    string
	IsError   bool
	MS        int64
	Left      float64
	Width     float64
	start     time.Time
	end       time.Time
}

// htmlApproval is one decision about a call that waited for a person,
// and the wait, from the question to the decision, on the time axis.
type htmlApproval struct {
	Tool, CallID, Decision, By, Reason string
	WaitMS                             int64
	Left, Width                        float64
	asked, decided                     time.Time
}

type htmlRun struct {
	Agent  string
	Stop   string
	Steps  int
	Tokens int
	Output string
	// Answer is Output rendered from Markdown; "" when it is not rendered
	// (too long), and Output is shown as text.
	Answer template.HTML
	Errors []string
	MS     int64
	// Estimated: the loop estimated some token counts (a server sent
	// none).
	Estimated bool
}

// htmlTurn is one top-level run of the session: a chat's line, or a
// `run --session` call. Its bars are placed on its own time axis, so that
// the pauses between turns do not squeeze them.
type htmlTurn struct {
	N       int
	Prompt  string
	TotalMS int64
	Steps   []*htmlStep
	Runs    []htmlRun
	t0, t1  time.Time
}

type htmlPage struct {
	ID      string
	Agent   string
	Created string
	TotalMS int64
	Turns   []*htmlTurn
}

// buildHTMLPage lays a session's events out as a timeline.
func buildHTMLPage(m session.Meta, evs []loop.Event) *htmlPage {
	p := &htmlPage{ID: m.ID, Agent: m.Agent, Created: m.Created.UTC().Format("2006-01-02 15:04:05 UTC")}
	if len(evs) == 0 {
		return p
	}
	p.TotalMS = evs[len(evs)-1].Time.Sub(evs[0].Time).Milliseconds()
	var turn *htmlTurn
	type key struct {
		agent string
		depth int
	}
	open := map[key]*htmlStep{}
	last := map[key]*htmlStep{} // the latest step of each agent, to mark the final one
	calls := map[string]*htmlCall{}
	asked := map[string]time.Time{} // approval questions by call id
	for _, ev := range evs {
		k := key{ev.Agent, ev.Depth}
		if turn == nil || ev.Type == loop.EventRunStart && ev.Depth == 0 {
			turn = &htmlTurn{N: len(p.Turns) + 1, t0: ev.Time}
			p.Turns = append(p.Turns, turn)
			clear(open)
			clear(last)
		}
		turn.t1 = ev.Time
		switch ev.Type {
		case loop.EventStepStart:
			s := &htmlStep{Agent: ev.Agent, Depth: ev.Depth, Step: ev.Step, Forced: ev.Final != nil && *ev.Final, start: ev.Time}
			open[k] = s
			last[k] = s
			turn.Steps = append(turn.Steps, s)
		case loop.EventMessage:
			if ev.Msg == nil {
				continue
			}
			s := open[k]
			switch {
			case ev.Msg.Role == loop.RoleUser && turn.Prompt == "" && ev.Depth == 0:
				turn.Prompt = ev.Msg.Content
			case ev.Msg.Role == loop.RoleAssistant && s != nil && s.modelEnd.IsZero():
				s.modelEnd = ev.Time
				s.Text, s.Reasoning = ev.Msg.Content, ev.Msg.Reasoning
			case ev.Msg.Role == loop.RoleTool:
				if c := calls[ev.Msg.ToolCallID]; c != nil {
					c.Result, c.IsError = ev.Msg.Content, ev.Msg.IsError
				}
			}
		case loop.EventToolStart, loop.EventSubagentStart:
			s := open[k]
			if s == nil {
				continue
			}
			c := &htmlCall{ID: ev.CallID, Tool: ev.Tool, Arguments: ev.Arguments, start: ev.Time}
			if s.modelEnd.IsZero() {
				s.modelEnd = ev.Time
			}
			calls[ev.CallID] = c
			s.Calls = append(s.Calls, c)
		case loop.EventToolEnd, loop.EventSubagentEnd:
			if ev.Type == loop.EventSubagentEnd {
				if s := last[key{ev.Tool, ev.Depth + 1}]; s != nil {
					s.Final = true
				}
			}
			if c := calls[ev.CallID]; c != nil {
				c.end = ev.Time
				if ev.DurationMS != nil {
					c.MS = *ev.DurationMS
				}
			}
		case loop.EventApprovalRequest:
			asked[ev.CallID] = ev.Time
		case loop.EventApprovalDecision:
			if s := open[k]; s != nil {
				a := &htmlApproval{Tool: ev.Tool, CallID: ev.CallID, Decision: ev.Decision, By: ev.By, Reason: ev.Message, decided: ev.Time}
				if t, ok := asked[ev.CallID]; ok {
					a.asked = t
				}
				s.Approvals = append(s.Approvals, a)
			}
		case loop.EventStepEnd:
			s := open[k]
			if s == nil {
				continue
			}
			if s.modelEnd.IsZero() {
				s.modelEnd = ev.Time
			}
			s.Finish = ev.FinishReason
			if ev.Message != "" {
				s.Finish = ev.Message
			}
			if u := ev.Usage; u != nil {
				s.Tokens = fmt.Sprintf("%d in / %d out", u.PromptTokens, u.CompletionTokens)
				if u.Estimated {
					s.Tokens = fmt.Sprintf("~%d in / ~%d out (estimated)", u.PromptTokens, u.CompletionTokens)
				}
			}
			delete(open, k)
		case loop.EventRunEnd:
			if s := last[k]; s != nil {
				s.Final = true
			}
			if r := ev.Result; r != nil {
				run := htmlRun{Agent: r.Agent, Stop: string(r.StopReason), Steps: r.Steps, Tokens: r.Usage.TotalTokens, Estimated: r.Usage.Estimated, Output: r.Output, Errors: r.Errors}
				run.Answer, _ = markdownHTML(r.Output)
				turn.Runs = append(turn.Runs, run)
			}
		}
	}
	for _, turn := range p.Turns {
		turn.layout()
	}
	return p
}

// layout places the turn's steps and calls on its time axis.
func (turn *htmlTurn) layout() {
	t0 := turn.t0
	total := turn.t1.Sub(t0)
	turn.TotalMS = total.Milliseconds()
	pct := func(t time.Time) float64 {
		if total <= 0 {
			return 0
		}
		return 100 * float64(t.Sub(t0)) / float64(total)
	}
	width := func(a, b time.Time) float64 {
		if b.Before(a) {
			b = a
		}
		w := pct(b) - pct(a)
		if w < 0.5 {
			w = 0.5 // a visible sliver for calls shorter than the axis resolves
		}
		return w
	}
	for _, s := range turn.Steps {
		if s.modelEnd.IsZero() {
			s.modelEnd = s.start
		}
		s.ModelMS = s.modelEnd.Sub(s.start).Milliseconds()
		s.ModelL, s.ModelW = pct(s.start), width(s.start, s.modelEnd)
		for _, c := range s.Calls {
			if c.end.IsZero() {
				c.end = c.start
			}
			if c.MS == 0 {
				c.MS = c.end.Sub(c.start).Milliseconds()
			}
			c.Left, c.Width = pct(c.start), width(c.start, c.end)
		}
		for _, a := range s.Approvals {
			// A decision with no question before it, or made at once (a
			// rule, --yes), has no wait to show.
			if a.asked.IsZero() || a.decided.Sub(a.asked) < time.Millisecond {
				continue
			}
			a.WaitMS = a.decided.Sub(a.asked).Milliseconds()
			a.Left, a.Width = pct(a.asked), width(a.asked, a.decided)
		}
	}
}

// Duration is a duration for a person: "340 ms", "2.35 s", "12.3 s",
// "4 min 5 s".
func Duration(ms int64) string {
	switch {
	case ms < 1000:
		return fmt.Sprintf("%d ms", ms)
	case ms < 10_000:
		return fmt.Sprintf("%.2f s", float64(ms)/1000)
	case ms < 60_000:
		return fmt.Sprintf("%.1f s", float64(ms)/1000)
	default:
		s := (ms + 500) / 1000
		return fmt.Sprintf("%d min %d s", s/60, s%60)
	}
}

// WriteHTML writes the page: one self-contained file, inline CSS,
// no script and nothing fetched. html/template escapes every text the
// model, tools and user wrote.
func WriteHTML(w io.Writer, m session.Meta, evs []loop.Event) error {
	return sessionTmpl().Execute(w, buildHTMLPage(m, evs))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// sessionTmpl is the page's template, parsed at its first use: at package
// init it cost every command's start-up a quarter of a millisecond.
var sessionTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("session").Funcs(template.FuncMap{
		"pct":    func(f float64) string { return fmt.Sprintf("%.2f%%", f) },
		"indent": func(d int) string { return fmt.Sprintf("%dem", d*2) },
		"dur":    Duration,
		"plural": plural,
	}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>agenthost session {{.ID}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.3em; }
h2 { font-size: 1.15em; margin-top: 1.5em; }
h3 { font-size: 1em; }
section.turn { border-top: 2px solid #ccc; margin-top: 1.5em; }
table { border-collapse: collapse; width: 100%; }
th, td { border-bottom: 1px solid #ddd; padding: 4px 6px; vertical-align: top; text-align: left; }
td.axis { width: 45%; }
td.model-ms, td.tokens { white-space: nowrap; }
.track { position: relative; height: 14px; background: #f4f4f4; margin: 2px 0; }
.bar { position: absolute; top: 0; height: 14px; }
.model { background: #6a8fd8; }
.tool { background: #5cb85c; }
.tool.error { background: #d9534f; }
.wait { background: repeating-linear-gradient(45deg, #e8c36a, #e8c36a 4px, #f6e3b4 4px, #f6e3b4 8px); }
.legend { font-size: 0.9em; color: #444; }
.legend .key { display: inline-block; margin-right: 1.2em; }
.legend .swatch { position: static; display: inline-block; width: 1.6em; height: 0.9em; vertical-align: middle; margin-right: 0.3em; }
tr.final td:first-child { font-weight: bold; }
.approval { font-size: 0.9em; color: #555; }
.tag { font-size: 0.8em; padding: 0 4px; border-radius: 3px; background: #333; color: #fff; }
pre { white-space: pre-wrap; word-break: break-word; background: #fafafa; padding: 4px; margin: 2px 0; }
.answer { border-left: 3px solid #6a8fd8; padding: 0 0.8em; }
.answer pre { background: #f4f4f4; }
.answer code { background: #f4f4f4; padding: 0 2px; }
.answer table td, .answer table th { border: 1px solid #ddd; }
.answer .url { color: #555; font-family: monospace; word-break: break-all; }
details summary { cursor: pointer; }
</style>
</head>
<body>
<h1>Session {{.ID}}</h1>
<p>Agent <b>{{.Agent}}</b>, created {{.Created}}, {{dur .TotalMS}} in all{{if gt (len .Turns) 1}}, {{len .Turns}} turns{{end}}.</p>
<p class="legend">Time axis of each turn, from its start to its end:
<span class="key"><span class="swatch bar model"></span>model request</span>
<span class="key"><span class="swatch bar tool"></span>tool call</span>
<span class="key"><span class="swatch bar tool error"></span>tool call that failed</span>
<span class="key"><span class="swatch bar wait"></span>waiting for a person's approval</span></p>
{{$many := gt (len .Turns) 1}}{{range .Turns}}<section class="turn" data-turn="{{.N}}">
{{if $many}}<h2>Turn {{.N}} <span class="turn-ms">({{dur .TotalMS}})</span></h2>{{end}}
{{if .Prompt}}<h3>Prompt</h3><pre class="prompt">{{.Prompt}}</pre>{{end}}
<h3>Timeline</h3>
<table class="timeline">
<thead><tr><th>Step</th><th>Model</th><th>Tokens</th><th>Finish</th><th class="axis">Time</th><th>Calls</th></tr></thead>
<tbody>
{{range .Steps}}<tr class="step{{if .Final}} final{{end}}" data-agent="{{.Agent}}" data-step="{{.Step}}">
<td style="padding-left: {{indent .Depth}}">{{.Agent}} #{{.Step}}{{if .Final}} <span class="tag">final</span>{{end}}{{if .Forced}} <span class="tag">no tools: limit reached</span>{{end}}</td>
<td class="model-ms">{{dur .ModelMS}}</td>
<td class="tokens">{{.Tokens}}</td>
<td>{{.Finish}}</td>
<td class="axis"><div class="track"><div class="bar model" style="left: {{pct .ModelL}}; width: {{pct .ModelW}}" title="model {{dur .ModelMS}}"></div></div>
{{range .Approvals}}{{if .Width}}<div class="track"><div class="bar wait" style="left: {{pct .Left}}; width: {{pct .Width}}" title="{{.Tool}} waited {{dur .WaitMS}} for approval"></div></div>
{{end}}{{end}}{{range .Calls}}<div class="track"><div class="bar tool{{if .IsError}} error{{end}}" style="left: {{pct .Left}}; width: {{pct .Width}}" title="{{.Tool}} {{dur .MS}}"></div></div>
{{end}}</td>
<td>{{if .Text}}<details class="text"><summary>text</summary><pre>{{.Text}}</pre></details>{{end}}
{{range .Approvals}}<div class="approval" data-decision="{{.Decision}}">{{.Tool}}: <b>{{.Decision}}</b> by {{.By}}{{if .Width}} after {{dur .WaitMS}}{{end}}{{if .Reason}}: {{.Reason}}{{end}}</div>
{{end}}{{range .Calls}}<details class="call" data-tool="{{.Tool}}"><summary>{{.Tool}} {{dur .MS}}{{if .IsError}} (error){{end}}</summary>
<div>arguments</div><pre class="arguments">{{.Arguments}}</pre>
<div>result</div><pre class="result">{{.Result}}</pre></details>
{{end}}</td>
</tr>
{{end}}</tbody>
</table>
{{range .Runs}}<h3>Result of {{.Agent}}</h3>
<p class="stop">Stop reason: <b>{{.Stop}}</b>, {{.Steps}} {{plural .Steps "step" "steps"}}, {{if .Estimated}}~{{.Tokens}} tokens (estimated){{else}}{{.Tokens}} tokens{{end}}.</p>
{{range .Errors}}<p class="error">{{.}}</p>{{end}}
{{if .Answer}}<div class="answer">{{.Answer}}</div>
<details class="source"><summary>Markdown source</summary><pre class="output">{{.Output}}</pre></details>
{{else if .Output}}<pre class="output">{{.Output}}</pre>
{{end}}{{end}}</section>
{{end}}</body>
</html>
`))
})
