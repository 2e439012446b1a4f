package provider

import (
	"encoding/json"
	"fmt"
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
func freshID(used map[string]bool, next int) (string, int) {
	for {
		id := fmt.Sprintf("call%05d", next)
		next++
		if !used[id] {
			return id, next
		}
	}
}

// historyIDs returns the tool-call ids of the history and how many calls it
// holds (where generated ids continue counting).
func historyIDs(msgs []loop.Message) (map[string]bool, int) {
	used := make(map[string]bool)
	n := 0
	for i := range msgs {
		for _, c := range msgs[i].ToolCalls {
			used[c.ID] = true
			n++
		}
	}
	return used, n
}

// bodyPatch is what go-openai's request types cannot say, added to the JSON
// body it produced: a temperature of 0 (dropped by omitempty), extra_content
// on tool calls (Gemini's thought signatures), and "content": "" where a
// message has empty text (some servers require the key).
type bodyPatch struct {
	temperature  *float64
	extras       map[string]json.RawMessage // by wire tool-call id
	emptyContent []int                      // message positions
}

func (b *bodyPatch) empty() bool {
	return b.temperature == nil && len(b.extras) == 0 && len(b.emptyContent) == 0
}

func (b *bodyPatch) apply(body []byte) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, fmt.Errorf("patch request body: %w", err)
	}
	if b.temperature != nil {
		t, err := json.Marshal(*b.temperature)
		if err != nil {
			return nil, fmt.Errorf("temperature %v: %w", *b.temperature, err)
		}
		top["temperature"] = t
	}
	if len(b.extras) > 0 || len(b.emptyContent) > 0 {
		var msgs []map[string]json.RawMessage
		if err := json.Unmarshal(top["messages"], &msgs); err != nil {
			return nil, fmt.Errorf("patch request messages: %w", err)
		}
		for _, i := range b.emptyContent {
			if i < len(msgs) {
				msgs[i]["content"] = json.RawMessage(`""`)
			}
		}
		if len(b.extras) > 0 {
			for _, m := range msgs {
				if err := patchCalls(m, b.extras); err != nil {
					return nil, err
				}
			}
		}
		raw, err := json.Marshal(msgs)
		if err != nil {
			return nil, fmt.Errorf("patch request messages: %w", err)
		}
		top["messages"] = raw
	}
	return json.Marshal(top)
}

func patchCalls(m map[string]json.RawMessage, extras map[string]json.RawMessage) error {
	raw, ok := m["tool_calls"]
	if !ok {
		return nil
	}
	var calls []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &calls); err != nil {
		return fmt.Errorf("patch tool calls: %w", err)
	}
	for _, c := range calls {
		var id string
		json.Unmarshal(c["id"], &id)
		if x, ok := extras[id]; ok {
			c["extra_content"] = x
		}
	}
	out, err := json.Marshal(calls)
	if err != nil {
		return fmt.Errorf("patch tool calls: %w", err)
	}
	m["tool_calls"] = out
	return nil
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
func (p *Provider) buildRequest(req loop.Request) (openai.ChatCompletionRequest, bodyPatch, error) {
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
				return out, patch, fmt.Errorf("tool %q: input schema is not valid JSON", t.Name)
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

	all, _ := historyIDs(req.Messages)
	sent := make(map[string]bool, len(all)) // wire ids given out so far
	pending := make(map[string][]string)    // loop id → wire ids awaiting a tool message
	next := 1
	out.Messages = make([]openai.ChatCompletionMessage, 0, len(req.Messages))
	for i, m := range req.Messages {
		om := openai.ChatCompletionMessage{Role: string(m.Role), Content: m.Content}
		switch m.Role {
		case loop.RoleAssistant:
			if len(m.ToolCalls) > 0 {
				// DeepSeek's thinking mode needs the reasoning of a tool turn
				// back; its older reasoner rejected it anywhere else.
				om.ReasoningContent = m.Reasoning
			}
			for _, c := range m.ToolCalls {
				wire := c.ID
				if !saneID(wire) || sent[wire] {
					wire, next = freshID(mergedSet(all, sent), next)
				}
				sent[wire] = true
				pending[c.ID] = append(pending[c.ID], wire)
				args := c.Arguments
				if strings.TrimSpace(args) == "" {
					args = "{}"
				}
				om.ToolCalls = append(om.ToolCalls, openai.ToolCall{
					ID:       wire,
					Type:     openai.ToolTypeFunction,
					Function: openai.FunctionCall{Name: c.Name, Arguments: args},
				})
				if len(c.Extra) > 0 && json.Valid(c.Extra) {
					if patch.extras == nil {
						patch.extras = make(map[string]json.RawMessage)
					}
					patch.extras[wire] = c.Extra
				}
			}
		case loop.RoleTool:
			if q := pending[m.ToolCallID]; len(q) > 0 {
				om.ToolCallID = q[0]
				pending[m.ToolCallID] = q[1:]
			} else {
				om.ToolCallID = m.ToolCallID // answers nothing we know: leave it to the server
			}
		}
		if om.Content == "" && len(om.ToolCalls) == 0 {
			patch.emptyContent = append(patch.emptyContent, i)
		}
		out.Messages = append(out.Messages, om)
	}
	return out, patch, nil
}

// mergedSet is a view of two sets as one, for freshID.
func mergedSet(a, b map[string]bool) map[string]bool {
	m := make(map[string]bool, len(a)+len(b))
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return m
}
