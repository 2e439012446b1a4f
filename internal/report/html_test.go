package report

import (
	"context"
	"encoding/xml"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/internal/session"
	"github.com/agenthost/agenthost/loop"
)

// node is a parsed HTML element: its name, attributes, text and children.
type node struct {
	name  string
	attr  map[string]string
	text  string
	kids  []*node
	outer *node
}

// parseHTML parses the page with encoding/xml in its HTML mode (void
// elements closed, HTML entities) and fails on any unbalanced tag.
func parseHTML(t *testing.T, page string) *node {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(page))
	d.Strict = false
	d.AutoClose = xml.HTMLAutoClose
	d.Entity = xml.HTMLEntity
	root := &node{name: "#root"}
	cur := root
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("HTML does not parse: %v\n%s", err, page)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			n := &node{name: tok.Name.Local, attr: map[string]string{}, outer: cur}
			for _, a := range tok.Attr {
				n.attr[a.Name.Local] = a.Value
			}
			cur.kids = append(cur.kids, n)
			cur = n
		case xml.EndElement:
			if cur.name != tok.Name.Local {
				t.Fatalf("</%s> closes <%s>", tok.Name.Local, cur.name)
			}
			cur = cur.outer
		case xml.CharData:
			cur.text += string(tok)
		}
	}
	if cur != root {
		t.Fatalf("<%s> left open", cur.name)
	}
	return root
}

// find returns every element under n with this name whose class attribute
// has class ("" matches any).
func (n *node) find(name, class string) []*node {
	var out []*node
	for _, k := range n.kids {
		if (name == "" || k.name == name) && (class == "" || hasClass(k, class)) {
			out = append(out, k)
		}
		out = append(out, k.find(name, class)...)
	}
	return out
}

func hasClass(n *node, c string) bool {
	for _, f := range strings.Fields(n.attr["class"]) {
		if f == c {
			return true
		}
	}
	return false
}

// allText is the text of n and its descendants.
func (n *node) allText() string {
	s := n.text
	for _, k := range n.kids {
		s += k.allText()
	}
	return s
}

// hostileHTML is tool output that must stay text in the report.
const hostileHTML = `<script>alert(1)</script><img src="http://evil.example/x.png">`

// twoStepEvents is a session of two steps: two read_file calls (one an
// error, one returning hostileHTML), then a final text step.
func twoStepEvents() (time.Time, []loop.Event) {
	t0 := time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ev := func(ms int, e loop.Event) loop.Event {
		e.Time, e.Agent = at(ms), "main"
		return e
	}
	msg := func(ms int, m loop.Message) loop.Event { return ev(ms, loop.Event{Type: loop.EventMessage, Msg: &m}) }
	hostile := hostileHTML
	return t0, []loop.Event{
		ev(0, loop.Event{Type: loop.EventRunStart}),
		msg(0, loop.Message{Role: loop.RoleUser, Content: "Read a.txt & b.txt"}),
		ev(1, loop.Event{Type: loop.EventStepStart, Step: 1, Final: loop.Bool(false)}),
		msg(400, loop.Message{Role: loop.RoleAssistant, ToolCalls: []loop.ToolCall{{ID: "c1", Name: "read_file"}, {ID: "c2", Name: "read_file"}}}),
		ev(401, loop.Event{Type: loop.EventToolStart, Step: 1, CallID: "c1", Tool: "read_file", Arguments: `{"path":"a.txt"}`}),
		ev(401, loop.Event{Type: loop.EventToolStart, Step: 1, CallID: "c2", Tool: "read_file", Arguments: `{"path":"b.txt"}`}),
		ev(450, loop.Event{Type: loop.EventToolEnd, Step: 1, CallID: "c1", Tool: "read_file", IsError: loop.Bool(false), DurationMS: loop.Int64(49)}),
		msg(450, loop.Message{Role: loop.RoleTool, ToolCallID: "c1", Name: "read_file", Content: hostile}),
		ev(600, loop.Event{Type: loop.EventToolEnd, Step: 1, CallID: "c2", Tool: "read_file", IsError: loop.Bool(true), DurationMS: loop.Int64(199)}),
		msg(600, loop.Message{Role: loop.RoleTool, ToolCallID: "c2", Name: "read_file", Content: "no such file", IsError: true}),
		ev(600, loop.Event{Type: loop.EventStepEnd, Step: 1, FinishReason: "tool_calls", Usage: &loop.Usage{PromptTokens: 120, CompletionTokens: 30}}),
		ev(601, loop.Event{Type: loop.EventStepStart, Step: 2, Final: loop.Bool(true)}),
		msg(1000, loop.Message{Role: loop.RoleAssistant, Content: "a says hi"}),
		ev(1000, loop.Event{Type: loop.EventStepEnd, Step: 2, FinishReason: "stop", Usage: &loop.Usage{PromptTokens: 200, CompletionTokens: 5}}),
		ev(1000, loop.Event{Type: loop.EventRunEnd, Result: &loop.Result{Agent: "main", StopReason: loop.StopMaxSteps, Steps: 2, Output: "a says hi", Usage: loop.Usage{TotalTokens: 355}}}),
	}
}

func TestSessionHTML(t *testing.T) {
	t0, evs := twoStepEvents()
	hostile := hostileHTML
	var sb strings.Builder
	if err := WriteHTML(&sb, session.Meta{ID: "s1", Agent: "main", Created: t0}, evs); err != nil {
		t.Fatal(err)
	}
	page := sb.String()
	doc := parseHTML(t, page)

	// self-contained: nothing fetched, no script, the hostile text escaped
	if len(doc.find("script", "")) > 0 || len(doc.find("img", "")) > 0 || len(doc.find("link", "")) > 0 {
		t.Errorf("page has a script, img or link element:\n%s", page)
	}
	if regexp.MustCompile(`(?i)<script|url\(|@import`).MatchString(page) {
		t.Errorf("page has a script or refers to something outside it:\n%s", page)
	}
	for _, n := range doc.find("", "") {
		for _, a := range []string{"src", "href", "action", "srcset", "data"} {
			if _, ok := n.attr[a]; ok {
				t.Errorf("<%s> has %s=%q", n.name, a, n.attr[a])
			}
		}
	}

	rows := doc.find("tr", "step")
	if len(rows) != 2 {
		t.Fatalf("%d step rows, want 2:\n%s", len(rows), page)
	}
	if hasClass(rows[0], "final") || !hasClass(rows[1], "final") {
		t.Errorf("final marking: row 1 %q, row 2 %q", rows[0].attr["class"], rows[1].attr["class"])
	}
	if got := rows[0].find("td", "model-ms")[0].allText(); got != "399 ms" {
		t.Errorf("step 1 model time %q, want 399 ms", got)
	}
	if got := rows[0].find("td", "tokens")[0].allText(); got != "120 in / 30 out" {
		t.Errorf("step 1 tokens %q", got)
	}
	// bars: one model bar per row, one tool bar per call, placed on the axis
	bars := rows[0].find("div", "bar")
	if len(bars) != 3 || !hasClass(bars[0], "model") || !hasClass(bars[1], "tool") || !hasClass(bars[2], "error") {
		t.Fatalf("step 1 bars: %d %v", len(bars), bars)
	}
	style := regexp.MustCompile(`^left: ([0-9.]+)%; width: ([0-9.]+)%$`)
	for i, want := range []string{"0.10", "40.10", "40.10"} {
		m := style.FindStringSubmatch(bars[i].attr["style"])
		if m == nil || m[1] != want {
			t.Errorf("bar %d style %q, want left %s%%", i, bars[i].attr["style"], want)
		}
	}
	if m := style.FindStringSubmatch(bars[2].attr["style"]); m == nil || m[2] != "19.90" {
		t.Errorf("failed call's bar %q, want width 19.90%%", bars[2].attr["style"])
	}
	// calls folded, with arguments and results as text
	calls := rows[0].find("details", "call")
	if len(calls) != 2 {
		t.Fatalf("%d folded calls, want 2", len(calls))
	}
	if s := calls[0].find("summary", "")[0].allText(); s != "read_file 49 ms" {
		t.Errorf("call summary %q", s)
	}
	if a := calls[0].find("pre", "arguments")[0].allText(); a != `{"path":"a.txt"}` {
		t.Errorf("arguments %q", a)
	}
	if r := calls[0].find("pre", "result")[0].allText(); r != hostile {
		t.Errorf("result %q, want the hostile text as text", r)
	}
	if s := calls[1].find("summary", "")[0].allText(); s != "read_file 199 ms (error)" {
		t.Errorf("failed call summary %q", s)
	}
	if got := doc.find("p", "stop")[0].allText(); !strings.Contains(got, "max_steps") || !strings.Contains(got, "355 tokens") {
		t.Errorf("stop line %q", got)
	}
	if got := doc.find("pre", "output")[0].allText(); got != "a says hi" {
		t.Errorf("output %q", got)
	}
	if got := doc.find("pre", "prompt")[0].allText(); got != "Read a.txt & b.txt" {
		t.Errorf("prompt %q", got)
	}
	var tags []string
	for _, sp := range rows[1].find("span", "tag") {
		tags = append(tags, sp.allText())
	}
	if strings.Join(tags, "|") != "final|no tools: limit reached" {
		t.Errorf("final row's tags %q", tags)
	}
	if tags := rows[0].find("span", "tag"); len(tags) != 0 {
		t.Errorf("first row has tags")
	}
}

// A subagent's steps are rows of their own, indented, and its last step
// is marked final when its subagent.end arrives; the parent's call to it
// is a bar like a tool's.
func TestSessionHTMLSubagent(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC)
	ev := func(ms int, agent string, depth int, e loop.Event) loop.Event {
		e.Time, e.Agent, e.Depth = t0.Add(time.Duration(ms)*time.Millisecond), agent, depth
		return e
	}
	evs := []loop.Event{
		ev(0, "main", 0, loop.Event{Type: loop.EventRunStart}),
		ev(0, "main", 0, loop.Event{Type: loop.EventStepStart, Step: 1}),
		ev(100, "main", 0, loop.Event{Type: loop.EventSubagentStart, Step: 1, CallID: "c1", Tool: "helper", Arguments: `{"prompt":"go"}`}),
		ev(100, "helper", 1, loop.Event{Type: loop.EventStepStart, Step: 1}),
		ev(150, "helper", 1, loop.Event{Type: loop.EventStepEnd, Step: 1, FinishReason: "tool_calls"}),
		ev(150, "helper", 1, loop.Event{Type: loop.EventStepStart, Step: 2}),
		ev(200, "helper", 1, loop.Event{Type: loop.EventStepEnd, Step: 2, FinishReason: "stop"}),
		ev(200, "main", 0, loop.Event{Type: loop.EventSubagentEnd, Step: 1, CallID: "c1", Tool: "helper", DurationMS: loop.Int64(100)}),
		ev(200, "main", 0, loop.Event{Type: loop.EventStepEnd, Step: 1}),
		ev(200, "main", 0, loop.Event{Type: loop.EventStepStart, Step: 2}),
		ev(300, "main", 0, loop.Event{Type: loop.EventStepEnd, Step: 2, FinishReason: "stop"}),
		ev(300, "main", 0, loop.Event{Type: loop.EventRunEnd, Result: &loop.Result{Agent: "main", StopReason: loop.StopCompleted, Steps: 2}}),
	}
	var sb strings.Builder
	if err := WriteHTML(&sb, session.Meta{ID: "s2", Agent: "main", Created: t0}, evs); err != nil {
		t.Fatal(err)
	}
	doc := parseHTML(t, sb.String())
	var got []string
	for _, r := range doc.find("tr", "step") {
		got = append(got, r.attr["data-agent"]+"#"+r.attr["data-step"]+map[bool]string{true: " final"}[hasClass(r, "final")]+" "+r.find("td", "")[0].attr["style"])
	}
	want := []string{
		"main#1 padding-left: 0em", "helper#1 padding-left: 2em", "helper#2 final padding-left: 2em", "main#2 final padding-left: 0em",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	calls := doc.find("details", "call")
	if len(calls) != 1 || calls[0].attr["data-tool"] != "helper" || calls[0].find("summary", "")[0].allText() != "helper 100 ms" {
		t.Errorf("subagent call not shown as a call: %d", len(calls))
	}
}

// With Debian's chromium installed, the page renders headless, offline,
// to a non-empty PNG; without it the test is skipped.
func TestSessionHTMLScreenshot(t *testing.T) {
	var bin string
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Skip("no chromium on PATH")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "run.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	t0, evs := twoStepEvents()
	evs = append(evs, secondTurn(t0)...)
	err = WriteHTML(f, session.Meta{ID: "s3", Agent: "main", Created: t0}, evs)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	png := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--window-size=1200,1600", "--screenshot="+png, "file://"+page)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	b, err := os.ReadFile(png)
	if err != nil || len(b) < 1000 || string(b[1:4]) != "PNG" {
		t.Fatalf("screenshot: %d bytes, %v", len(b), err)
	}
	if d := os.Getenv("AGENTHOST_SCREENSHOT_DIR"); d != "" {
		os.WriteFile(filepath.Join(d, "session.png"), b, 0o644) // to look at by hand
	}
	// The DOM the browser built: three step rows in two turns, the
	// second and third final, both calls folded, the answer's Markdown
	// as elements, and the hostile tool output and the answer's HTML
	// still text, not elements.
	dump := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir="+filepath.Join(dir, "profile2"),
		"--dump-dom", "file://"+page)
	out, err := dump.Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	doc := parseHTML(t, string(out))
	rows := doc.find("tr", "step")
	if len(rows) != 3 || !strings.Contains(rows[1].attr["class"], "final") || !strings.Contains(rows[2].attr["class"], "final") {
		t.Fatalf("rendered DOM has %d step rows (want 3, the second and third final):\n%s", len(rows), out)
	}
	if turns := doc.find("section", "turn"); len(turns) != 2 {
		t.Errorf("rendered DOM has %d turns, want 2", len(turns))
	}
	if ans := doc.find("div", "answer"); len(ans) != 2 || len(ans[1].find("h1", "")) != 1 || len(ans[1].find("li", "")) != 4 {
		t.Errorf("rendered DOM lacks the second answer's heading and list items:\n%s", out)
	}
	if calls := doc.find("details", "call"); len(calls) != 2 || calls[0].attr["data-tool"] != "read_file" {
		t.Errorf("rendered DOM has %d folded calls, want 2 read_file", len(calls))
	}
	if len(doc.find("script", "")) > 0 || len(doc.find("img", "")) > 0 || len(doc.find("a", "")) > 0 {
		t.Errorf("the browser made elements of the tool output or the answer:\n%s", out)
	}
}

// TestSessionHTMLApproval: the decisions about calls that waited for
// approval are shown in their step, who decided and the reason, escaped.
func TestSessionHTMLApproval(t *testing.T) {
	t0, evs := twoStepEvents()
	var out []loop.Event
	for _, ev := range evs {
		out = append(out, ev)
		if ev.Type == loop.EventStepStart && ev.Step == 1 {
			at := ev.Time.Add(time.Millisecond)
			out = append(out,
				loop.Event{Type: loop.EventApprovalRequest, Time: at, Agent: ev.Agent, Step: 1, CallID: "c9", Tool: "write_file", Arguments: `{}`},
				loop.Event{Type: loop.EventApprovalDecision, Time: at, Agent: ev.Agent, Step: 1, CallID: "c9", Tool: "write_file", Decision: "deny", By: "terminal", Message: hostileHTML})
		}
	}
	var sb strings.Builder
	if err := WriteHTML(&sb, session.Meta{ID: "s1", Agent: "main", Created: t0}, out); err != nil {
		t.Fatal(err)
	}
	doc := parseHTML(t, sb.String())
	rows := doc.find("tr", "step")
	ap := rows[0].find("div", "approval")
	if len(ap) != 1 || ap[0].attr["data-decision"] != "deny" || !strings.Contains(ap[0].allText(), "write_file:  by terminal: "+hostileHTML) || ap[0].find("b", "")[0].allText() != "deny" {
		t.Fatalf("approvals of step 1: %d, %q", len(ap), ap[0].allText())
	}
	if len(rows[1].find("div", "approval")) != 0 {
		t.Errorf("step 2 shows an approval")
	}
}

// TestSessionHTMLWaitAndEstimates: the time a call waited for a person's
// decision is a labelled bar of its own on the axis, with how long it
// waited, and token counts the loop estimated (the server sent none) are
// marked as estimates, in the step and in the run's total.
func TestSessionHTMLWaitAndEstimates(t *testing.T) {
	t0, evs := twoStepEvents()
	var out []loop.Event
	for _, ev := range evs {
		switch {
		case ev.Type == loop.EventStepEnd && ev.Step == 2:
			ev.Usage = &loop.Usage{PromptTokens: 200, CompletionTokens: 5, Estimated: true}
		case ev.Type == loop.EventRunEnd:
			r := *ev.Result
			r.Usage = loop.Usage{TotalTokens: 355, Estimated: true}
			ev.Result = &r
		}
		out = append(out, ev)
		if ev.Type == loop.EventStepStart && ev.Step == 1 {
			at := ev.Time.Add(time.Millisecond)
			out = append(out,
				loop.Event{Type: loop.EventApprovalRequest, Time: at, Agent: ev.Agent, Step: 1, CallID: "c9", Tool: "write_file", Arguments: `{}`},
				loop.Event{Type: loop.EventApprovalDecision, Time: at.Add(300 * time.Millisecond), Agent: ev.Agent, Step: 1, CallID: "c9", Tool: "write_file", Decision: "approve", By: "terminal"})
		}
	}
	var sb strings.Builder
	if err := WriteHTML(&sb, session.Meta{ID: "s1", Agent: "main", Created: t0}, out); err != nil {
		t.Fatal(err)
	}
	doc := parseHTML(t, sb.String())
	rows := doc.find("tr", "step")
	wait := rows[0].find("div", "wait")
	if len(wait) != 1 || !strings.Contains(wait[0].attr["title"], "write_file waited 300 ms for approval") {
		t.Fatalf("step 1's wait bars: %d %v", len(wait), wait)
	}
	if ap := rows[0].find("div", "approval"); len(ap) != 1 || !strings.Contains(ap[0].allText(), "after 300 ms") {
		t.Errorf("the decision does not say how long it waited: %v", ap)
	}
	if len(doc.find("span", "wait")) == 0 {
		t.Error("the legend has no key for a wait")
	}
	if got := rows[0].find("td", "tokens")[0].allText(); got != "120 in / 30 out" {
		t.Errorf("reported tokens: %q", got)
	}
	if got := rows[1].find("td", "tokens")[0].allText(); !strings.Contains(got, "~200 in / ~5 out (estimated)") {
		t.Errorf("estimated tokens of step 2: %q", got)
	}
	if got := doc.find("p", "stop")[0].allText(); !strings.Contains(got, "~355 tokens (estimated)") {
		t.Errorf("the run's estimated total: %q", got)
	}
}

// mdAnswer is an answer in Markdown with everything the report renders
// and everything it must not turn into markup.
const mdAnswer = "# Findings\n\nThe file has **two** lines and *one* `code span`.\n\n" +
	"- first item\n- second item\n\n1. one\n2. two\n\n```go\nfmt.Println(\"<b>x</b>\")\n```\n\n" +
	"See [the docs](https://example.com/docs \"t\") and <https://example.com/auto>, " +
	"![a chart](http://evil.example/track.png) [click](javascript:alert(1)).\n\n" +
	"<script>alert(2)</script>\n\ninline <img src=x onerror=alert(3)> html\n"

// secondTurn is a later run of the same session (a chat's next line) that
// answers in Markdown.
func secondTurn(t0 time.Time) []loop.Event {
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ev := func(ms int, e loop.Event) loop.Event {
		e.Time, e.Agent = at(ms), "main"
		return e
	}
	user := loop.Message{Role: loop.RoleUser, Content: "Summarise, in Markdown"}
	answer := loop.Message{Role: loop.RoleAssistant, Content: mdAnswer}
	return []loop.Event{
		ev(60_000, loop.Event{Type: loop.EventRunStart}),
		ev(60_000, loop.Event{Type: loop.EventMessage, Msg: &user}),
		ev(60_000, loop.Event{Type: loop.EventStepStart, Step: 1}),
		ev(62_500, loop.Event{Type: loop.EventMessage, Msg: &answer}),
		ev(62_500, loop.Event{Type: loop.EventStepEnd, Step: 1, FinishReason: "stop", Usage: &loop.Usage{PromptTokens: 300, CompletionTokens: 80}}),
		ev(62_500, loop.Event{Type: loop.EventRunEnd, Result: &loop.Result{Agent: "main", StopReason: loop.StopCompleted, Steps: 1, Output: mdAnswer, Usage: loop.Usage{TotalTokens: 380}}}),
	}
}

// checkInert fails when the page has an element or attribute that runs,
// fetches or navigates.
func checkInert(t *testing.T, doc *node, page string) {
	t.Helper()
	for _, el := range []string{"script", "img", "link", "a", "iframe", "object", "embed", "form"} {
		if len(doc.find(el, "")) > 0 {
			t.Errorf("page has a <%s> element:\n%s", el, page)
		}
	}
	for _, n := range doc.find("", "") {
		for a := range n.attr {
			if strings.HasPrefix(a, "on") || a == "src" || a == "href" || a == "action" || a == "srcset" || a == "data" {
				t.Errorf("<%s> has %s=%q", n.name, a, n.attr[a])
			}
		}
	}
	if regexp.MustCompile(`(?i)<script|url\(|@import`).MatchString(page) {
		t.Errorf("page has a script or refers to something outside it:\n%s", page)
	}
}

// A session of two runs (two chat lines) is shown turn by turn, each with
// its prompt, its own time axis and its result; the answer's Markdown is
// rendered, and nothing in it becomes a script, an image or a link.
func TestSessionHTMLTurnsMarkdown(t *testing.T) {
	t0, evs := twoStepEvents()
	evs = append(evs, secondTurn(t0)...)
	var sb strings.Builder
	if err := WriteHTML(&sb, session.Meta{ID: "s4", Agent: "main", Created: t0}, evs); err != nil {
		t.Fatal(err)
	}
	page := sb.String()
	doc := parseHTML(t, page)
	checkInert(t, doc, page)

	turns := doc.find("section", "turn")
	if len(turns) != 2 {
		t.Fatalf("%d turns, want 2:\n%s", len(turns), page)
	}
	for i, want := range []string{"Read a.txt & b.txt", "Summarise, in Markdown"} {
		if got := turns[i].find("pre", "prompt")[0].allText(); got != want {
			t.Errorf("turn %d prompt %q, want %q", i+1, got, want)
		}
	}
	if got := turns[1].find("h2", "")[0].allText(); got != "Turn 2 (2.50 s)" {
		t.Errorf("turn 2 heading %q", got)
	}
	if n := len(turns[0].find("tr", "step")); n != 2 {
		t.Errorf("turn 1 has %d steps, want 2", n)
	}
	// the second turn's axis is its own: its only step spans all of it
	bars := turns[1].find("div", "bar")
	if len(bars) != 1 || bars[0].attr["style"] != "left: 0.00%; width: 100.00%" {
		t.Errorf("turn 2 bars: %v", bars)
	}
	if got := turns[1].find("td", "model-ms")[0].allText(); got != "2.50 s" {
		t.Errorf("turn 2 model time %q, want 2.50 s", got)
	}
	if got := doc.find("p", "")[0].allText(); !strings.Contains(got, "1 min 3 s in all, 2 turns") {
		t.Errorf("summary %q", got)
	}

	ans := turns[1].find("div", "answer")
	if len(ans) != 1 {
		t.Fatalf("turn 2 has %d rendered answers", len(ans))
	}
	a := ans[0]
	if h := a.find("h1", ""); len(h) != 1 || h[0].allText() != "Findings" {
		t.Errorf("heading: %v", h)
	}
	if s := a.find("strong", ""); len(s) != 1 || s[0].allText() != "two" {
		t.Errorf("strong: %v", s)
	}
	if e := a.find("em", ""); len(e) != 1 || e[0].allText() != "one" {
		t.Errorf("em: %v", e)
	}
	if li := a.find("li", ""); len(li) != 4 || len(a.find("ul", "")) != 1 || len(a.find("ol", "")) != 1 {
		t.Errorf("lists: %d items", len(li))
	}
	if c := a.find("pre", ""); len(c) < 1 || c[0].find("code", "")[0].allText() != "fmt.Println(\"<b>x</b>\")\n" {
		t.Errorf("code block: %v", c)
	}
	var urls []string
	for _, u := range a.find("span", "url") {
		urls = append(urls, u.allText())
	}
	if got := strings.Join(urls, " "); got != "https://example.com/docs https://example.com/auto http://evil.example/track.png javascript:alert(1)" {
		t.Errorf("addresses shown as text: %q", got)
	}
	if got := a.find("span", "image")[0].allText(); got != "[image: a chart]" {
		t.Errorf("image %q", got)
	}
	text := a.allText()
	for _, want := range []string{"<script>alert(2)</script>", "<img src=x onerror=alert(3)>"} {
		if !strings.Contains(text, want) {
			t.Errorf("raw HTML %q not shown as text in %q", want, text)
		}
	}
	// the Markdown source stays available, folded
	if got := turns[1].find("pre", "output")[0].allText(); got != mdAnswer {
		t.Errorf("source %q", got)
	}
	// the legend names each kind of bar
	leg := doc.find("p", "legend")
	if len(leg) != 1 || len(leg[0].find("span", "swatch")) != 4 || !strings.Contains(leg[0].allText(), "tool call that failed") || !strings.Contains(leg[0].allText(), "waiting for a person's approval") {
		t.Errorf("legend: %v", leg)
	}
	for _, sw := range leg[0].find("span", "swatch") {
		if !hasClass(sw, "bar") {
			t.Errorf("legend swatch %q is not drawn as a bar", sw.attr["class"])
		}
	}
}

// An answer past MarkdownMax is shown as text, not parsed.
func TestSessionHTMLLongAnswerNotRendered(t *testing.T) {
	t0, evs := twoStepEvents()
	long := "# big\n" + strings.Repeat("x", MarkdownMax)
	last := &evs[len(evs)-1]
	r := *last.Result
	r.Output = long
	last.Result = &r
	var sb strings.Builder
	if err := WriteHTML(&sb, session.Meta{ID: "s5", Agent: "main", Created: t0}, evs); err != nil {
		t.Fatal(err)
	}
	doc := parseHTML(t, sb.String())
	if len(doc.find("div", "answer")) != 0 || doc.find("pre", "output")[0].allText() != long {
		t.Errorf("a long answer is not shown as text")
	}
}

func TestDuration(t *testing.T) {
	for ms, want := range map[int64]string{0: "0 ms", 999: "999 ms", 1000: "1.00 s", 2345: "2.35 s", 12_345: "12.3 s", 59_949: "59.9 s", 65_400: "1 min 5 s", 3_600_000: "60 min 0 s"} {
		if got := Duration(ms); got != want {
			t.Errorf("Duration(%d) = %q, want %q", ms, got, want)
		}
	}
}
