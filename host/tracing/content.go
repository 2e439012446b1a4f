package tracing

import (
	"encoding/json"

	"go.opentelemetry.io/otel/attribute"

	"github.com/agenthost/agenthost/loop"
)

// The conversation as the GenAI conventions record it when content is
// captured: gen_ai.system_instructions, gen_ai.input.messages and
// gen_ai.output.messages, JSON strings of messages made of typed parts.

type chatMessage struct {
	Role         string `json:"role"`
	Parts        []part `json:"parts"`
	FinishReason string `json:"finish_reason,omitempty"`
}

type part struct {
	Type      string `json:"type"`
	Content   string `json:"content,omitempty"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments any    `json:"arguments,omitempty"`
	Response  any    `json:"response,omitempty"`
}

// inputMessages are the attributes of the messages a request sent: the
// system message as gen_ai.system_instructions, the others as
// gen_ai.input.messages.
func inputMessages(history []loop.Message) []attribute.KeyValue {
	var attrs []attribute.KeyValue
	msgs := make([]chatMessage, 0, len(history))
	for _, m := range history {
		if m.Role == loop.RoleSystem {
			attrs = append(attrs, attribute.String(keySystemInstr, marshal([]part{{Type: "text", Content: m.Content}})))
			continue
		}
		msgs = append(msgs, toChatMessage(m))
	}
	return append(attrs, attribute.String(keyInputMessages, marshal(msgs)))
}

// outputMessages is gen_ai.output.messages for one response.
func outputMessages(m loop.Message, finish string) string {
	cm := toChatMessage(m)
	cm.FinishReason = finish
	return marshal([]chatMessage{cm})
}

func toChatMessage(m loop.Message) chatMessage {
	cm := chatMessage{Role: string(m.Role), Parts: []part{}}
	if m.Role == loop.RoleTool {
		cm.Parts = append(cm.Parts, part{Type: "tool_call_response", ID: m.ToolCallID, Response: m.Content})
		return cm
	}
	if m.Reasoning != "" {
		cm.Parts = append(cm.Parts, part{Type: "reasoning", Content: m.Reasoning})
	}
	if m.Content != "" {
		cm.Parts = append(cm.Parts, part{Type: "text", Content: m.Content})
	}
	for _, c := range m.ToolCalls {
		cm.Parts = append(cm.Parts, part{Type: "tool_call", ID: c.ID, Name: c.Name, Arguments: arguments(c.Arguments)})
	}
	return cm
}

// arguments is a call's arguments as an object when they are JSON, else as
// the text the model sent.
func arguments(s string) any {
	var v any
	if json.Unmarshal([]byte(s), &v) == nil {
		return json.RawMessage(s)
	}
	return s
}

func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
