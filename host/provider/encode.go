package provider

import (
	"bytes"
	"encoding/json"

	"github.com/agenthost/agenthost/internal/jsonenc"
)

// This file encodes the request's messages straight to JSON. go-openai's
// marshallers go through reflection and a MarshalJSON per message, and the
// fields they cannot say (bodyPatch) would need the body decoded and
// encoded again: together the largest CPU cost of a step, growing with the
// history. The messages are the bulk of every body, so they are written
// here, once, and spliced into the small body go-openai makes of the rest
// (exchange.Do); everything else (model, tools, limits) stays go-openai's.

// wireMessage is one message as sent.
type wireMessage struct {
	role       string
	content    string
	reasoning  string // sent when not empty
	toolCalls  []wireCall
	toolCallID string // sent when not empty
}

type wireCall struct {
	id, name, args string
	extra          json.RawMessage // extra_content, valid JSON; nil: none
}

// appendMessages appends msgs as a JSON array.
func appendMessages(b []byte, msgs []wireMessage) []byte {
	b = append(b, '[')
	for i := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendMessage(b, &msgs[i])
	}
	return append(b, ']')
}

// appendMessage appends one message as a JSON object. A message has
// "content" when its text is not empty or it has no tool calls (some
// servers require the key, even empty, on a tool result).
func appendMessage(b []byte, m *wireMessage) []byte {
	b = append(b, `{"role":`...)
	b = jsonenc.AppendString(b, m.role)
	if m.content != "" || len(m.toolCalls) == 0 {
		b = append(b, `,"content":`...)
		b = jsonenc.AppendString(b, m.content)
	}
	if m.reasoning != "" {
		b = append(b, `,"reasoning_content":`...)
		b = jsonenc.AppendString(b, m.reasoning)
	}
	if len(m.toolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for j := range m.toolCalls {
			c := &m.toolCalls[j]
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = jsonenc.AppendString(b, c.id)
			b = append(b, `,"type":"function","function":{"name":`...)
			b = jsonenc.AppendString(b, c.name)
			b = append(b, `,"arguments":`...)
			b = jsonenc.AppendString(b, c.args)
			b = append(b, '}')
			if c.extra != nil {
				b = append(b, `,"extra_content":`...)
				b = appendCompact(b, c.extra)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if m.toolCallID != "" {
		b = append(b, `,"tool_call_id":`...)
		b = jsonenc.AppendString(b, m.toolCallID)
	}
	return append(b, '}')
}

// appendCompact appends valid JSON raw without insignificant space.
func appendCompact(b []byte, raw json.RawMessage) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return append(b, "null"...) // unreachable: callers pass json.Valid text
	}
	return append(b, buf.Bytes()...)
}

// spliceMessages puts msgs (a JSON array) in place of the "messages":null
// that go-openai wrote for a request without messages. The key cannot be
// mistaken for text inside a string: there a quote is always escaped. The
// body is returned in three parts (before, msgs, after), joined into the
// body that is sent (exchange.joinBody).
func spliceMessages(body, msgs []byte) ([][]byte, bool) {
	const key = `"messages":null`
	i := bytes.Index(body, []byte(key))
	if i < 0 {
		return nil, false
	}
	return [][]byte{body[:i+len(key)-len("null")], msgs, body[i+len(key):]}, true
}
