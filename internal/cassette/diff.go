package cassette

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/internal/textcut"
	"github.com/agenthost/agenthost/loop"
)

// Caps that keep a miss message readable.
const (
	diffLines   = 8    // changed lines shown per side
	lineWidth   = 160  // runes per shown line
	messageSize = 4000 // bytes of the whole message
)

// missMessage explains a miss: the cassette, the request, and how it differs
// from the nearest recorded request, whose model it returns too ("" when
// the cassette is empty).
func (p *Player) missMessage(got Request) (string, string) {
	var b strings.Builder
	fmt.Fprintf(&b, "cassette miss: %s holds no response for this request (model %q, %d messages, key %.12s)",
		p.path, got.Model, len(got.Messages), got.Key())
	near, common := p.nearest(got)
	if near == nil {
		b.WriteString("\nthe cassette holds no entries; record it again with --record")
		return b.String(), ""
	}
	want := near.Request
	fmt.Fprintf(&b, "\nnearest recorded request: entry at line %d, %d of %d messages in common", near.line, common, len(got.Messages))
	if want.Model != got.Model {
		fmt.Fprintf(&b, "\nmodel differs: recorded %q, got %q", want.Model, got.Model)
	}
	switch {
	case common < len(want.Messages) && common < len(got.Messages):
		w, g := want.Messages[common], got.Messages[common]
		if w.Role != g.Role {
			fmt.Fprintf(&b, "\nmessage %d differs: recorded role %s, got role %s:", common+1, w.Role, g.Role)
		} else {
			fmt.Fprintf(&b, "\nmessage %d (%s) differs:", common+1, g.Role)
		}
		b.WriteString(lineDiff(messageLines(w), messageLines(g)))
	case common < len(got.Messages):
		g := got.Messages[common]
		fmt.Fprintf(&b, "\nmessage %d (%s) is new: the recorded request has %d messages:", common+1, g.Role, len(want.Messages))
		b.WriteString(lineDiff(nil, messageLines(g)))
	case common < len(want.Messages):
		fmt.Fprintf(&b, "\nthe recorded request has %d messages, this one %d; recorded message %d (%s) is missing",
			len(want.Messages), len(got.Messages), common+1, want.Messages[common].Role)
	}
	if d := toolsDiff(want.Tools, got.Tools); d != "" {
		b.WriteString("\n" + d)
	}
	if want.ToolChoice != got.ToolChoice {
		fmt.Fprintf(&b, "\ntool_choice differs: recorded %q, got %q", want.ToolChoice, got.ToolChoice)
	}
	s := b.String()
	if len(s) > messageSize {
		s = textcut.Prefix(s, messageSize) + "\n[...]"
	}
	return s, want.Model
}

// nearest is the recorded entry with the most messages in common with got as
// a prefix; ties go to the same model, then the same tools, the same tool
// choice, the closest number of messages, and the earliest entry.
func (p *Player) nearest(got Request) (*Entry, int) {
	gotMsgs := encodeMessages(got.Messages)
	gotTools := string(Request{Tools: got.Tools}.encode())
	var best *Entry
	bestScore := [5]int{-1}
	bestCommon := 0
	for i := range p.entries {
		e := &p.entries[i]
		want := encodeMessages(e.Request.Messages)
		common := 0
		for common < len(want) && common < len(gotMsgs) && bytes.Equal(want[common], gotMsgs[common]) {
			common++
		}
		score := [5]int{common, 0, 0, 0, -abs(len(want) - len(gotMsgs))}
		if e.Request.Model == got.Model {
			score[1] = 1
		}
		if string(Request{Tools: e.Request.Tools}.encode()) == gotTools {
			score[2] = 1
		}
		if e.Request.ToolChoice == got.ToolChoice {
			score[3] = 1
		}
		if better(score, bestScore) {
			best, bestScore, bestCommon = e, score, common
		}
	}
	return best, bestCommon
}

func better(a, b [5]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] > b[i]
		}
	}
	return false
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func encodeMessages(msgs []loop.Message) [][]byte {
	out := make([][]byte, len(msgs))
	for i, m := range msgs {
		out[i] = Request{Messages: []loop.Message{m}}.encode()
	}
	return out
}

// messageLines renders a message as lines for a diff.
func messageLines(m loop.Message) []string {
	var out []string
	if m.Content != "" {
		out = append(out, strings.Split(m.Content, "\n")...)
	}
	if m.Reasoning != "" {
		for _, l := range strings.Split(m.Reasoning, "\n") {
			out = append(out, "reasoning: "+l)
		}
	}
	for _, tc := range m.ToolCalls {
		out = append(out, fmt.Sprintf("tool call %s: %s %s", tc.ID, tc.Name, tc.Arguments))
	}
	if m.ToolCallID != "" {
		out = append(out, "tool_call_id: "+m.ToolCallID)
	}
	if m.Name != "" {
		out = append(out, "name: "+m.Name)
	}
	if m.IsError {
		out = append(out, "is_error: true")
	}
	if len(out) == 0 {
		out = []string{"(empty)"}
	}
	return out
}

// lineDiff shows the lines between the common prefix and suffix of want
// and got: "-" recorded, "+" got, with one line of context before.
func lineDiff(want, got []string) string {
	pre := 0
	for pre < len(want) && pre < len(got) && want[pre] == got[pre] {
		pre++
	}
	suf := 0
	for suf < len(want)-pre && suf < len(got)-pre && want[len(want)-1-suf] == got[len(got)-1-suf] {
		suf++
	}
	var b strings.Builder
	if pre > 0 {
		b.WriteString("\n    " + clip(want[pre-1]))
	}
	side := func(mark string, lines []string) {
		for i, l := range lines {
			if i == diffLines {
				fmt.Fprintf(&b, "\n  %s [%d more lines]", mark, len(lines)-i)
				break
			}
			b.WriteString("\n  " + mark + " " + clip(l))
		}
	}
	side("-", want[pre:len(want)-suf])
	side("+", got[pre:len(got)-suf])
	return b.String()
}

// toolsDiff describes how the offered tools differ; "" when they do not.
func toolsDiff(want, got []loop.ToolSpec) string {
	names := func(ts []loop.ToolSpec) []string {
		out := make([]string, len(ts))
		for i, t := range ts {
			out[i] = t.Name
		}
		return out
	}
	wn, gn := names(want), names(got)
	if strings.Join(wn, ",") != strings.Join(gn, ",") {
		return fmt.Sprintf("tools differ: recorded [%s], got [%s]", strings.Join(wn, ","), strings.Join(gn, ","))
	}
	var diffs []string
	for i := range want {
		w, g := want[i], got[i]
		if w.Description != g.Description {
			diffs = append(diffs, fmt.Sprintf("tool %s: description differs: recorded %q, got %q", w.Name, clip(w.Description), clip(g.Description)))
		}
		if !bytes.Equal(canonicalJSON(w.InputSchema), canonicalJSON(g.InputSchema)) {
			diffs = append(diffs, fmt.Sprintf("tool %s: input_schema differs: recorded %s, got %s", w.Name,
				clip(string(canonicalJSON(w.InputSchema))), clip(string(canonicalJSON(g.InputSchema)))))
		}
	}
	return strings.Join(diffs, "\n")
}

// clip caps a line at lineWidth runes, "…" included.
func clip(s string) string { return textcut.Runes(s, lineWidth+1) }
