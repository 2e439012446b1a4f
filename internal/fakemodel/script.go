package fakemodel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Reply is one scripted answer. See the package documentation for the
// meaning of each field; the zero value is an empty text answer.
type Reply struct {
	Text         string            `json:"text,omitempty"`
	Reasoning    string            `json:"reasoning,omitempty"`
	ToolCalls    []ToolCall        `json:"tool_calls,omitempty"`
	FinishReason string            `json:"finish_reason,omitempty"`
	Usage        *Usage            `json:"usage,omitempty"`
	Status       int               `json:"status,omitempty"`
	Headers      map[string]string `json:"headers,omitempty"`
	Body         json.RawMessage   `json:"body,omitempty"`
	Raw          string            `json:"raw,omitempty"`
	Cut          bool              `json:"cut,omitempty"`
	Hang         bool              `json:"hang,omitempty"`
	Hold         bool              `json:"hold,omitempty"`
	// ChunkDelay is a pause before each streamed chunk, as a Go duration
	// ("100ms"): a slow or trickling model.
	ChunkDelay string `json:"chunk_delay,omitempty"`
	// Repeat serves the reply this many times; 0 and 1 both mean once.
	Repeat int `json:"repeat,omitempty"`
	// Line is the script line the reply came from (0 when built in Go).
	Line int `json:"-"`
}

// ToolCall is one scripted tool call.
type ToolCall struct {
	// ID is the call id sent to the client; empty means generated.
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Arguments is a JSON object (sent as its compact text) or a JSON string
	// (sent verbatim, so broken arguments can be scripted); empty means "{}".
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Usage is scripted token accounting.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// TotalTokens defaults to the sum of the other two.
	TotalTokens int `json:"total_tokens,omitempty"`
	// CachedTokens, when set, is sent as
	// prompt_tokens_details.cached_tokens.
	CachedTokens int `json:"cached_tokens,omitempty"`
}

// ParseScript parses a script: JSON lines, one reply per non-empty line,
// # comments. Unknown fields and contradictory replies are errors that name
// the line.
func ParseScript(data []byte) ([]Reply, error) {
	var replies []Reply
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		var r Reply
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("fakemodel script line %d: %w", n, err)
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("fakemodel script line %d: more than one JSON value on the line", n)
		}
		r.Line = n
		if err := r.validate(); err != nil {
			return nil, fmt.Errorf("fakemodel script line %d: %w", n, err)
		}
		replies = append(replies, r)
	}
	return replies, nil
}

// validate rejects replies whose fields contradict each other.
func (r *Reply) validate() error {
	streamed := r.Text != "" || r.Reasoning != "" || len(r.ToolCalls) > 0 || r.FinishReason != "" || r.Usage != nil
	switch {
	case r.Repeat < 0:
		return fmt.Errorf("repeat %d is negative", r.Repeat)
	case r.Status != 0 && (r.Status < 400 || r.Status > 599):
		return fmt.Errorf("status %d is not an HTTP error status (400-599)", r.Status)
	case r.Status != 0 && (streamed || r.Raw != "" || r.Cut || r.Hang || r.Hold):
		return fmt.Errorf("status %d answers with an error: it cannot be combined with a stream (text, tool_calls, raw, cut, hang, hold)", r.Status)
	case len(r.Body) > 0 && r.Status == 0:
		return errors.New("body needs a status")
	case r.Raw != "" && (streamed || r.Cut || r.Hang || r.Hold):
		return errors.New("raw is sent verbatim: it cannot be combined with text, tool_calls, finish_reason, usage, cut, hang or hold")
	case r.Cut && r.Hang:
		return errors.New("cut and hang cannot be combined")
	case r.ChunkDelay != "" && (r.Status != 0 || r.Raw != ""):
		return errors.New("chunk_delay paces a stream: it cannot be combined with status or raw")
	case r.Hold && r.Hang:
		return errors.New("hold and hang cannot be combined: hang never ends, hold ends at Release")
	}
	if r.ChunkDelay != "" {
		if d, err := time.ParseDuration(r.ChunkDelay); err != nil || d < 0 || d > time.Minute {
			return fmt.Errorf("chunk_delay %q: want a duration from 0 to 1m, like \"100ms\"", r.ChunkDelay)
		}
	}
	if len(r.Body) > 0 && !json.Valid(r.Body) {
		return errors.New("body is not valid JSON")
	}
	for i, c := range r.ToolCalls {
		if c.Name == "" {
			return fmt.Errorf("tool_calls[%d] has no name", i)
		}
		if _, err := c.argumentText(); err != nil {
			return fmt.Errorf("tool_calls[%d] (%s): %w", i, c.Name, err)
		}
	}
	return nil
}

// argumentText is the arguments string sent on the wire.
func (c ToolCall) argumentText() (string, error) {
	a := bytes.TrimSpace(c.Arguments)
	if len(a) == 0 || string(a) == "null" {
		return "{}", nil
	}
	if a[0] == '"' {
		var s string
		if err := json.Unmarshal(a, &s); err != nil {
			return "", fmt.Errorf("arguments %s: %w", a, err)
		}
		return s, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, a); err != nil {
		return "", fmt.Errorf("arguments %s: %w", a, err)
	}
	return buf.String(), nil
}

// chunkDelay is the parsed ChunkDelay (validated by validate).
func (r *Reply) chunkDelay() time.Duration {
	d, _ := time.ParseDuration(r.ChunkDelay)
	return d
}

// times is how often the reply is served.
func (r *Reply) times() int {
	if r.Repeat < 1 {
		return 1
	}
	return r.Repeat
}
