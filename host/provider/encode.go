package provider

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// This file encodes the request's messages straight to JSON. go-openai's
// marshallers go through reflection and a MarshalJSON per message, and the
// fields they cannot say (bodyPatch) needed the body decoded and encoded
// again: together ~0.25 ms of CPU per step at 400 messages, growing with
// the history. The messages are the bulk of every body, so they are written
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
	b = appendString(b, m.role)
	if m.content != "" || len(m.toolCalls) == 0 {
		b = append(b, `,"content":`...)
		b = appendString(b, m.content)
	}
	if m.reasoning != "" {
		b = append(b, `,"reasoning_content":`...)
		b = appendString(b, m.reasoning)
	}
	if len(m.toolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for j := range m.toolCalls {
			c := &m.toolCalls[j]
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = appendString(b, c.id)
			b = append(b, `,"type":"function","function":{"name":`...)
			b = appendString(b, c.name)
			b = append(b, `,"arguments":`...)
			b = appendString(b, c.args)
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
		b = appendString(b, m.toolCallID)
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

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, escaped as encoding/json does:
// control characters, quote and backslash, <, > and & (HTML-safe), U+2028
// and U+2029; invalid UTF-8 becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, `\u202`...)
			b = append(b, hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
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
