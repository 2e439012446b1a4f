package provider

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/agenthost/agenthost/internal/jsonscan"
	"github.com/agenthost/agenthost/loop"
)

// chunk is one streamed chat-completion chunk, typed loosely enough for
// every server in docs/providers.md: index as a pointer (missing ≠ 0),
// arguments as raw JSON (a string or an object), both reasoning fields,
// extra_content, a top-level error, vendor usage. go-openai's own
// ChatCompletionStreamResponse would reject or lose several of these.
type chunk struct {
	Choices []choice `json:"choices"`
	Usage   *usage   `json:"usage"`
	XGroq   *struct {
		Usage *usage `json:"usage"`
	} `json:"x_groq"`
	Error json.RawMessage `json:"error"`
}

type choice struct {
	Delta *delta `json:"delta"`
	// Message is what a server ignoring "stream": true sends instead.
	Message      *delta `json:"message"`
	FinishReason string `json:"finish_reason"`
}

type delta struct {
	Content          content     `json:"content"`
	ReasoningContent content     `json:"reasoning_content"`
	Reasoning        content     `json:"reasoning"`
	ToolCalls        []toolDelta `json:"tool_calls"`
}

type toolDelta struct {
	Index    index      `json:"index"`
	ID       flexString `json:"id"`
	Type     flexString `json:"type"`
	Function struct {
		Name      flexString      `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
	ExtraContent json.RawMessage `json:"extra_content"`
}

// The types below never fail to decode: one odd field must not cost the
// whole chunk (and with it a fragment of text or of a tool call).

// content is text that servers send as a string, null, or a list of parts:
// {"type":"text","text":...} and Mistral's {"type":"thinking","thinking":
// [parts]}, whose text is reasoning.
type content struct{ Text, Thinking string }

func (c *content) UnmarshalJSON(b []byte) error {
	if s, ok := jsonscan.PlainString(b); ok {
		c.Text = s
		return nil
	}
	var s string
	if json.Unmarshal(b, &s) == nil {
		c.Text = s
		return nil
	}
	var parts []json.RawMessage
	if json.Unmarshal(b, &parts) != nil {
		parts = []json.RawMessage{b} // a lone part, or something else
	}
	for _, raw := range parts {
		var part struct {
			Type     string          `json:"type"`
			Text     *string         `json:"text"`
			Thinking json.RawMessage `json:"thinking"`
		}
		if json.Unmarshal(raw, &part) != nil {
			if json.Unmarshal(raw, &s) == nil {
				c.Text += s
			}
			continue
		}
		switch {
		case len(part.Thinking) > 0:
			var inner content
			inner.UnmarshalJSON(part.Thinking)
			c.Thinking += inner.Text + inner.Thinking
		case part.Text != nil && (part.Type == "thinking" || part.Type == "reasoning"):
			c.Thinking += *part.Text
		case part.Text != nil:
			c.Text += *part.Text
		}
	}
	return nil
}

// index is a tool call's index: a number, a numeric string, or absent.
type index struct {
	set bool
	n   int
}

func (i *index) UnmarshalJSON(b []byte) error {
	var f float64
	if json.Unmarshal(b, &f) == nil && f == math.Trunc(f) && math.Abs(f) < 1<<31 {
		*i = index{set: true, n: int(f)}
		return nil
	}
	var s string
	if json.Unmarshal(b, &s) == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
			*i = index{set: true, n: n}
		}
	}
	return nil
}

// flexString is a string that some servers send as a number (ids "0").
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	if s, ok := jsonscan.PlainString(b); ok {
		*f = flexString(s)
		return nil
	}
	var s string
	if json.Unmarshal(b, &s) == nil {
		*f = flexString(s)
		return nil
	}
	if t := bytes.TrimSpace(b); len(t) > 0 && (t[0] == '-' || (t[0] >= '0' && t[0] <= '9')) {
		*f = flexString(t)
	}
	return nil
}

// usage takes numbers in any form (12, 12.0, "12"); unknown fields are
// ignored.
type usage struct {
	PromptTokens     float64
	CompletionTokens float64
	TotalTokens      float64
	// CachedTokens is prompt_tokens_details.cached_tokens (OpenAI), or
	// prompt_cache_hit_tokens (DeepSeek).
	CachedTokens float64
}

func (u *usage) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	num := func(k string) float64 {
		var f float64
		if json.Unmarshal(m[k], &f) == nil {
			return f
		}
		var s string
		if json.Unmarshal(m[k], &s) == nil {
			f, _ = strconv.ParseFloat(s, 64)
		}
		return f
	}
	*u = usage{num("prompt_tokens"), num("completion_tokens"), num("total_tokens"), num("prompt_cache_hit_tokens")}
	var details map[string]json.RawMessage
	if json.Unmarshal(m["prompt_tokens_details"], &details) == nil && details != nil {
		m = details
		if c := num("cached_tokens"); c > 0 {
			u.CachedTokens = c
		}
	}
	return nil
}

func (u *usage) loop() (loop.Usage, bool) {
	if u == nil || (u.PromptTokens == 0 && u.CompletionTokens == 0 && u.TotalTokens == 0) {
		return loop.Usage{}, false
	}
	out := loop.Usage{
		PromptTokens:     tokenCount(u.PromptTokens),
		CompletionTokens: tokenCount(u.CompletionTokens),
		TotalTokens:      tokenCount(u.TotalTokens),
		CachedTokens:     tokenCount(u.CachedTokens),
	}
	out.CachedTokens = min(out.CachedTokens, out.PromptTokens)
	if out.TotalTokens == 0 {
		out.TotalTokens = out.PromptTokens + out.CompletionTokens
	}
	return out, true
}

// tokenCount converts a reported count, clamped to [0, 2³¹−1] (a hostile
// server may send anything).
func tokenCount(f float64) int {
	switch {
	case !(f > 0): // negative, zero or NaN
		return 0
	case f > math.MaxInt32:
		return math.MaxInt32
	}
	return int(f)
}

// callAcc accumulates one tool call.
type callAcc struct {
	id, name string
	args     []byte
	extra    map[string]any
}

// complete reports whether the arguments so far are a whole JSON value.
func (c *callAcc) complete() bool { return len(c.args) > 0 && json.Valid(c.args) }

// accumulator applies chunks following the accumulation rule of
// docs/providers.md. We ask
// for one choice (n unset); every choice a server sends is merged into it.
type accumulator struct {
	text       strings.Builder
	reasoning  strings.Builder
	calls      []*callAcc
	byIndex    map[int]int // wire index → position in calls
	last       int         // position of the call the last delta touched; -1 none
	finish     string
	usage      loop.Usage
	toolDeltas bool // at least one tool-call delta arrived
	badChunks  int  // chunks that were not JSON we could read
}

func newAccumulator() *accumulator { return &accumulator{last: -1} }

// add applies one chunk. It returns the chunk's error object, if it carried
// one, after applying the chunk's fragments.
func (a *accumulator) add(c *chunk, onText func(string)) (errInfo, bool) {
	if u, ok := c.Usage.loop(); ok {
		a.usage = u // cumulative on some servers: the last one wins
	}
	if c.XGroq != nil {
		if u, ok := c.XGroq.Usage.loop(); ok {
			a.usage = u
		}
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		d := ch.Delta
		if d == nil {
			d = ch.Message
		}
		if d != nil {
			if t := d.Content.Text; t != "" {
				a.text.WriteString(t)
				if onText != nil {
					onText(t)
				}
			}
			// Servers in transition send both fields with the same text.
			if r := d.ReasoningContent.Text + d.ReasoningContent.Thinking; r != "" {
				a.reasoning.WriteString(r)
			} else if r := d.Reasoning.Text + d.Reasoning.Thinking; r != "" {
				a.reasoning.WriteString(r)
			}
			a.reasoning.WriteString(d.Content.Thinking)
			for j := range d.ToolCalls {
				a.addCall(&d.ToolCalls[j])
			}
		}
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
		}
	}
	if len(c.Error) > 0 && !isNull(c.Error) {
		info, ok := parseErrorValue(c.Error, 2)
		if !ok {
			info.Message = "error in stream: " + bodyText(c.Error)
		}
		return info, true
	}
	return errInfo{}, false
}

func (a *accumulator) open() int {
	a.calls = append(a.calls, &callAcc{})
	return len(a.calls) - 1
}

func (a *accumulator) addCall(td *toolDelta) {
	a.toolDeltas = true
	args := argumentText(td.Function.Arguments)
	var pos int
	if td.Index.set {
		idx := max(td.Index.n, 0) // gateways send −1
		p, ok := a.byIndex[idx]
		if !ok || a.startsNewCall(a.calls[p], td, args) {
			p = a.open()
			if a.byIndex == nil {
				a.byIndex = make(map[int]int)
			}
			a.byIndex[idx] = p
		}
		pos = p
	} else {
		pos = a.last
		if pos < 0 || a.startsNewCall(a.calls[pos], td, args) {
			pos = a.open()
		}
	}
	a.last = pos
	c := a.calls[pos]
	if c.id == "" {
		c.id = string(td.ID)
	}
	if c.name == "" {
		c.name = string(td.Function.Name)
	}
	c.args = append(c.args, args...)
	if len(td.ExtraContent) > 0 {
		var extra map[string]any
		if json.Unmarshal(td.ExtraContent, &extra) == nil && len(extra) > 0 {
			if c.extra == nil {
				c.extra = extra
			} else {
				mergeObject(c.extra, extra)
			}
		}
	}
}

// argumentText is the text an "arguments" value adds: a string fragment
// unquoted, an object (llama.cpp has sent one) compacted, null or absent
// nothing.
func argumentText(raw json.RawMessage) []byte {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || isNull(raw):
		return nil
	case raw[0] == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil
		}
		return []byte(s)
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return raw
	}
	return buf.Bytes()
}

// startsNewCall decides whether a delta that lands on call c (same index,
// or no index at all) begins a different call (docs/providers.md: a new non-empty
// id and a non-empty name). A fragment carries no name; a call's name never
// changes. With the same name repeated, a new call can only begin once c's
// arguments are a whole JSON value: before that (no arguments yet, or
// mid-arguments) the delta continues c, which is how servers that change
// the id on every delta are read as one call. After it, a different id, or
// fresh arguments when there are no ids to compare, mark a new call.
func (a *accumulator) startsNewCall(c *callAcc, td *toolDelta, args []byte) bool {
	name := string(td.Function.Name)
	switch {
	case name == "" || c.name == "":
		return false
	case name != c.name:
		return true
	case !c.complete():
		return false
	case td.ID != "" && c.id != "":
		return string(td.ID) != c.id
	default:
		return len(args) > 0
	}
}

// mergeObject merges src into dst, recursing into objects both hold.
func mergeObject(dst, src map[string]any) {
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				mergeObject(dv, sv)
				continue
			}
		}
		dst[k] = v
	}
}

// response builds the loop's response. used holds the call ids already in
// the run's history: a call keeps the provider's id when it is sane and not
// used yet, otherwise it gets a fresh id (freshID) counting on from next.
func (a *accumulator) response(used *idSet, next int) loop.Response {
	resp := loop.Response{
		Message: loop.Message{
			Role:      loop.RoleAssistant,
			Content:   a.text.String(),
			Reasoning: a.reasoning.String(),
		},
		FinishReason: a.finish,
		Usage:        a.usage,
		Truncated:    a.finish == "length",
	}
	for _, c := range a.calls {
		if c.name == "" && len(c.args) == 0 {
			continue // a slot opened by a delta that carried nothing
		}
		call := loop.ToolCall{Name: c.name, Arguments: string(c.args)}
		if len(c.args) == 0 {
			call.Arguments = "{}"
		} else if !json.Valid(c.args) {
			resp.Truncated = true
		}
		if len(c.extra) > 0 {
			call.Extra, _ = json.Marshal(c.extra) // decoded from JSON: cannot fail
		}
		call.ID = c.id
		if !saneID(call.ID) || used.has(call.ID) {
			call.ID, next = freshID(used.has, next)
		}
		used.add(call.ID)
		resp.Message.ToolCalls = append(resp.Message.ToolCalls, call)
	}
	if a.badChunks > 0 && len(resp.Message.ToolCalls) > 0 {
		resp.Truncated = true // a lost fragment may have belonged to a call
	}
	return resp
}
