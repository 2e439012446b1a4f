package main

import (
	"fmt"
	"html/template"
	"io"
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
	Approvals []htmlApproval
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

// htmlApproval is one decision about a call that waited for a person.
type htmlApproval struct {
	Tool, CallID, Decision, By, Reason string
}

type htmlRun struct {
	Agent  string
	Stop   string
	Steps  int
	Tokens int
	Output string
	Errors []string
	MS     int64
}

type htmlPage struct {
	ID      string
	Agent   string
	Created string
	TotalMS int64
	Prompt  string
	Steps   []*htmlStep
	Runs    []htmlRun
}

// buildHTMLPage lays a session's events out as a timeline.
func buildHTMLPage(m session.Meta, evs []loop.Event) *htmlPage {
	p := &htmlPage{ID: m.ID, Agent: m.Agent, Created: m.Created.UTC().Format("2006-01-02 15:04:05 UTC")}
	if len(evs) == 0 {
		return p
	}
	t0, t1 := evs[0].Time, evs[len(evs)-1].Time
	type key struct {
		agent string
		depth int
	}
	open := map[key]*htmlStep{}
	last := map[key]*htmlStep{} // the latest step of each agent, to mark the final one
	calls := map[string]*htmlCall{}
	for _, ev := range evs {
		k := key{ev.Agent, ev.Depth}
		switch ev.Type {
		case loop.EventStepStart:
			s := &htmlStep{Agent: ev.Agent, Depth: ev.Depth, Step: ev.Step, Forced: ev.Final != nil && *ev.Final, start: ev.Time}
			open[k] = s
			last[k] = s
			p.Steps = append(p.Steps, s)
		case loop.EventMessage:
			if ev.Msg == nil {
				continue
			}
			s := open[k]
			switch {
			case ev.Msg.Role == loop.RoleUser && p.Prompt == "" && ev.Depth == 0:
				p.Prompt = ev.Msg.Content
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
		case loop.EventApprovalDecision:
			if s := open[k]; s != nil {
				s.Approvals = append(s.Approvals, htmlApproval{Tool: ev.Tool, CallID: ev.CallID, Decision: ev.Decision, By: ev.By, Reason: ev.Message})
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
			}
			delete(open, k)
		case loop.EventRunEnd:
			if s := last[k]; s != nil {
				s.Final = true
			}
			if r := ev.Result; r != nil {
				p.Runs = append(p.Runs, htmlRun{Agent: r.Agent, Stop: string(r.StopReason), Steps: r.Steps, Tokens: r.Usage.TotalTokens, Output: r.Output, Errors: r.Errors})
			}
		}
	}
	total := t1.Sub(t0)
	p.TotalMS = total.Milliseconds()
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
	for _, s := range p.Steps {
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
	}
	return p
}

// writeSessionHTML writes the page: one self-contained file, inline CSS,
// no script and nothing fetched. html/template escapes every text the
// model, tools and user wrote.
func writeSessionHTML(w io.Writer, m session.Meta, evs []loop.Event) error {
	return sessionTmpl.Execute(w, buildHTMLPage(m, evs))
}

var sessionTmpl = template.Must(template.New("session").Funcs(template.FuncMap{
	"pct":    func(f float64) string { return fmt.Sprintf("%.2f%%", f) },
	"indent": func(d int) string { return fmt.Sprintf("%dem", d*2) },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>agenthost session {{.ID}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.3em; }
table { border-collapse: collapse; width: 100%; }
th, td { border-bottom: 1px solid #ddd; padding: 4px 6px; vertical-align: top; text-align: left; }
td.axis { width: 45%; }
.track { position: relative; height: 14px; background: #f4f4f4; margin: 2px 0; }
.bar { position: absolute; top: 0; height: 14px; }
.model { background: #6a8fd8; }
.tool { background: #5cb85c; }
.tool.error { background: #d9534f; }
tr.final td:first-child { font-weight: bold; }
.approval { font-size: 0.9em; color: #555; }
.tag { font-size: 0.8em; padding: 0 4px; border-radius: 3px; background: #333; color: #fff; }
pre { white-space: pre-wrap; word-break: break-word; background: #fafafa; padding: 4px; margin: 2px 0; }
details summary { cursor: pointer; }
</style>
</head>
<body>
<h1>Session {{.ID}}</h1>
<p>Agent <b>{{.Agent}}</b>, created {{.Created}}, {{.TotalMS}} ms in all.</p>
{{if .Prompt}}<h2>Prompt</h2><pre class="prompt">{{.Prompt}}</pre>{{end}}
<h2>Timeline</h2>
<table class="timeline">
<thead><tr><th>Step</th><th>Model</th><th>Tokens</th><th>Finish</th><th class="axis">Time</th><th>Calls</th></tr></thead>
<tbody>
{{range .Steps}}<tr class="step{{if .Final}} final{{end}}" data-agent="{{.Agent}}" data-step="{{.Step}}">
<td style="padding-left: {{indent .Depth}}">{{.Agent}} #{{.Step}}{{if .Final}} <span class="tag">final</span>{{end}}{{if .Forced}} <span class="tag">no tools: limit reached</span>{{end}}</td>
<td class="model-ms">{{.ModelMS}} ms</td>
<td class="tokens">{{.Tokens}}</td>
<td>{{.Finish}}</td>
<td class="axis"><div class="track"><div class="bar model" style="left: {{pct .ModelL}}; width: {{pct .ModelW}}" title="model {{.ModelMS}} ms"></div></div>
{{range .Calls}}<div class="track"><div class="bar tool{{if .IsError}} error{{end}}" style="left: {{pct .Left}}; width: {{pct .Width}}" title="{{.Tool}} {{.MS}} ms"></div></div>
{{end}}</td>
<td>{{if .Text}}<details class="text"><summary>text</summary><pre>{{.Text}}</pre></details>{{end}}
{{range .Approvals}}<div class="approval" data-decision="{{.Decision}}">{{.Tool}}: <b>{{.Decision}}</b> by {{.By}}{{if .Reason}}: {{.Reason}}{{end}}</div>
{{end}}{{range .Calls}}<details class="call" data-tool="{{.Tool}}"><summary>{{.Tool}} {{.MS}} ms{{if .IsError}} (error){{end}}</summary>
<div>arguments</div><pre class="arguments">{{.Arguments}}</pre>
<div>result</div><pre class="result">{{.Result}}</pre></details>
{{end}}</td>
</tr>
{{end}}</tbody>
</table>
{{range .Runs}}<h2>Result of {{.Agent}}</h2>
<p class="stop">Stop reason: <b>{{.Stop}}</b>, {{.Steps}} steps, {{.Tokens}} tokens.</p>
{{range .Errors}}<p class="error">{{.}}</p>{{end}}
<pre class="output">{{.Output}}</pre>
{{end}}</body>
</html>
`))
