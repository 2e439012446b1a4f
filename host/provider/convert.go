package provider

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/sashabaranov/go-openai"

	"github.com/agenthost/agenthost/loop"
)

// This file converts the loop's provider-neutral request to the wire, and
// holds the tool-call id rules both directions share.

// saneID reports whether a provider's tool-call id can be kept as is:
// non-empty, at most 128 bytes, printable ASCII without spaces (ids such as
// "call_abc", "toolu_01", "functions.get_weather:0" all pass).
func saneID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

// freshID returns the first "call<n>" (n ≥ next, five digits at least) not
// in used, and the n to continue from. "call00001" is 9 alphanumerics: the
// one form Mistral accepts, and any other server too.
func freshID(used func(string) bool, next int) (string, int) {
	for {
		id := fmt.Sprintf("call%05d", next)
		next++
		if !used(id) {
			return id, next
		}
	}
}

// idSet is a set of tool-call ids: base, which it never changes (it may be
// a prefix-cache entry's), and the ids added to it.
type idSet struct {
	base  map[string]bool
	added map[string]bool
}

func (s *idSet) has(id string) bool { return s.base[id] || s.added[id] }

func (s *idSet) add(id string) {
	if s.added == nil {
		s.added = make(map[string]bool)
	}
	s.added[id] = true
}

// newIDsUnique reports whether the tool-call ids of msgs are sane, unique,
// and not in base.
func newIDsUnique(msgs []loop.Message, base map[string]bool) bool {
	var ids []string
	for i := range msgs {
		for _, c := range msgs[i].ToolCalls {
			if !saneID(c.ID) || base[c.ID] || slices.Contains(ids, c.ID) {
				return false
			}
			ids = append(ids, c.ID)
		}
	}
	return true
}

// historyIDs returns the tool-call ids of the history and how many calls it
// holds (where generated ids continue counting).
func historyIDs(msgs []loop.Message) (map[string]bool, int) {
	n := 0
	for i := range msgs {
		n += len(msgs[i].ToolCalls)
	}
	used := make(map[string]bool, n)
	n = 0
	for i := range msgs {
		for _, c := range msgs[i].ToolCalls {
			used[c.ID] = true
			n++
		}
	}
	return used, n
}

// bodyPatch is what go-openai's request types cannot say, added to the JSON
// body it produced: a temperature of 0 (dropped by omitempty), and the
// messages, which we encode ourselves (encode.go): with extra_content on
// tool calls (Gemini's thought signatures) and "content": "" where a message
// has empty text (some servers require the key).
type bodyPatch struct {
	temperature *float64
	messages    []byte // a JSON array, spliced for "messages":null; nil: none
	// prefix holds messages' buffer when it came from the prefix cache:
	// it goes back to the cache once the body is sent.
	prefix *encodedPrefix
}

func (b *bodyPatch) empty() bool {
	return b.temperature == nil && b.messages == nil
}

func (b *bodyPatch) apply(body []byte) ([][]byte, error) {
	if b.temperature != nil {
		// The body here has no messages yet: small, cheap to re-encode.
		var top map[string]json.RawMessage
		if err := json.Unmarshal(body, &top); err != nil {
			return nil, fmt.Errorf("patch request body: %w", err)
		}
		t, err := json.Marshal(*b.temperature)
		if err != nil {
			return nil, fmt.Errorf("temperature %v: %w", *b.temperature, err)
		}
		top["temperature"] = t
		if body, err = json.Marshal(top); err != nil {
			return nil, fmt.Errorf("patch request body: %w", err)
		}
	}
	if b.messages != nil {
		parts, ok := spliceMessages(body, b.messages)
		if !ok {
			return nil, fmt.Errorf("patch request body: no \"messages\" key in go-openai's body")
		}
		return parts, nil
	}
	return [][]byte{body}, nil
}

// reasoningModel reports model names for which go-openai (and OpenAI)
// insist on max_completion_tokens instead of max_tokens.
func reasoningModel(model string) bool {
	for _, p := range []string{"o1", "o3", "o4", "gpt-5", "gpt-6"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

// emptySchema is sent for a tool without an input schema.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// buildRequest converts the loop's request. Tool-call ids go out as the loop
// knows them when they are sane and unique in the request; otherwise each
// call gets a fresh wire id, and the tool message that answers it (the first
// one after it with the loop's id) is given the same.
//
// It also returns the history's tool-call ids and their number, which the
// response needs for ids it has to make up; the caller must not change the
// set (it may be the prefix-cache entry's).
func (p *Provider) buildRequest(req loop.Request) (openai.ChatCompletionRequest, bodyPatch, map[string]bool, int, error) {
	out := openai.ChatCompletionRequest{
		Model:         p.modelID,
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
	patch := bodyPatch{temperature: p.temperature}
	if p.maxTokens > 0 {
		if reasoningModel(p.modelID) {
			out.MaxCompletionTokens = p.maxTokens
		} else {
			out.MaxTokens = p.maxTokens
		}
	}
	if len(req.Tools) > 0 {
		out.Tools = make([]openai.Tool, 0, len(req.Tools))
		for _, t := range req.Tools {
			schema := t.InputSchema
			if len(schema) == 0 {
				schema = emptySchema
			} else if !json.Valid(schema) {
				return out, patch, nil, 0, fmt.Errorf("tool %q: input schema is not valid JSON", t.Name)
			}
			out.Tools = append(out.Tools, openai.Tool{
				Type: openai.ToolTypeFunction,
				Function: &openai.FunctionDefinition{
					Name:        t.Name,
					Description: t.Description,
					Parameters:  schema,
				},
			})
		}
		if req.ToolChoice != loop.ToolChoiceAuto {
			out.ToolChoice = req.ToolChoice // "none" (the final step), or "required"
		}
	}
	if rf := req.ResponseFormat; rf != nil {
		out.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatType(rf.Type)}
		if rf.Type == string(loop.OutputJSONSchema) {
			if !json.Valid(rf.Schema) {
				return out, patch, nil, 0, fmt.Errorf("output schema of %q is not valid JSON", rf.Name)
			}
			// Not strict: OpenAI's strict mode accepts only a subset of
			// JSON Schema, and the host validates the answer itself.
			out.ResponseFormat.JSONSchema = &openai.ChatCompletionResponseFormatJSONSchema{Name: rf.Name, Schema: rf.Schema}
		}
	}

	// When every id is sane and none repeats (the usual history), each goes
	// out as it is and the bookkeeping below would map every id to itself.
	// With every id going out as it is, a message's JSON is its own: the
	// encoding of the history's start may be cached (prefix.go). An entry
	// is only made for such a history, and keeps its ids: then only the
	// messages added since need checking.
	var all map[string]bool
	var n int
	identity := false
	pre := p.prefixes.take(req.Messages)
	if pre != nil {
		if identity = newIDsUnique(req.Messages[len(pre.msgs):], pre.ids); !identity {
			p.prefixes.put(pre)
			pre = nil
		}
	}
	if pre == nil {
		all, n = historyIDs(req.Messages)
		identity = len(all) == n
		for id := range all {
			if !identity {
				break
			}
			identity = saneID(id)
		}
	}
	var sent map[string]bool        // wire ids given out so far
	var pending map[string][]string // loop id → wire ids awaiting a tool message
	if !identity {
		sent = make(map[string]bool, len(all))
		pending = make(map[string][]string)
	}
	next := 1
	todo := req.Messages
	if pre != nil {
		todo = req.Messages[len(pre.msgs):]
	}
	msgs := make([]wireMessage, 0, len(todo))
	size := 2
	for _, m := range todo {
		om := wireMessage{role: string(m.Role), content: m.Content}
		size += 32 + len(m.Content)
		switch m.Role {
		case loop.RoleAssistant:
			if len(m.ToolCalls) > 0 {
				// DeepSeek's thinking mode needs the reasoning of a tool turn
				// back; its older reasoner rejected it anywhere else.
				om.reasoning = m.Reasoning
				size += len(m.Reasoning)
				om.toolCalls = make([]wireCall, 0, len(m.ToolCalls))
			}
			for _, c := range m.ToolCalls {
				wire := c.ID
				if !identity {
					if !saneID(wire) || sent[wire] {
						wire, next = freshID(func(id string) bool { return all[id] || sent[id] }, next)
					}
					sent[wire] = true
					pending[c.ID] = append(pending[c.ID], wire)
				}
				args := c.Arguments
				if strings.TrimSpace(args) == "" {
					args = "{}"
				}
				wc := wireCall{id: wire, name: c.Name, args: args}
				if len(c.Extra) > 0 && json.Valid(c.Extra) {
					wc.extra = c.Extra
				}
				size += 80 + len(wire) + len(c.Name) + len(args) + len(wc.extra)
				om.toolCalls = append(om.toolCalls, wc)
			}
		case loop.RoleTool:
			if identity {
				om.toolCallID = m.ToolCallID
			} else if q := pending[m.ToolCallID]; len(q) > 0 {
				om.toolCallID = q[0]
				pending[m.ToolCallID] = q[1:]
			} else {
				om.toolCallID = m.ToolCallID // answers nothing we know: leave it to the server
			}
			size += len(om.toolCallID)
		}
		msgs = append(msgs, om)
	}
	switch {
	case !identity:
		// Escapes make the text longer; an eighth more avoids most regrowth.
		patch.messages = appendMessages(make([]byte, 0, size+size/8), msgs)
	default:
		if pre == nil {
			pre = &encodedPrefix{enc: append(make([]byte, 0, size+size/8), '['), ids: all}
		}
		patch.messages = pre.extend(todo, msgs)
		patch.prefix = pre
		all, n = pre.ids, len(pre.ids)
	}
	return out, patch, all, n, nil
}
