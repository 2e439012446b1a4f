package cassette

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/agenthost/agenthost/internal/jsonscan"
	"github.com/agenthost/agenthost/loop"
)

// Request is the canonical form of a model request, as stored in a cassette
// and hashed into its key.
type Request struct {
	Model      string          `json:"model"`
	Messages   []loop.Message  `json:"messages"`
	Tools      []loop.ToolSpec `json:"tools,omitempty"`
	ToolChoice string          `json:"tool_choice,omitempty"`
	// ResponseFormat is the request's, its schema canonical.
	ResponseFormat *loop.ResponseFormat `json:"response_format,omitempty"`
}

// Entry is one recorded request and its response.
type Entry struct {
	Key      string        `json:"key"`
	Request  Request       `json:"request"`
	Response loop.Response `json:"response"`

	line int // line in the cassette file, 1-based; 0 when not loaded
}

// Canonical returns the canonical form of req sent to the model modelID: tool
// call ids replaced by their ordinal, extras dropped, schemas with sorted
// keys. It does not modify req.
func Canonical(modelID string, req loop.Request) Request {
	ids := map[string]string{}
	ordinal := func(id string) string {
		if id == "" {
			return ""
		}
		if o, ok := ids[id]; ok {
			return o
		}
		o := fmt.Sprintf("call_%d", len(ids)+1)
		ids[id] = o
		return o
	}
	c := Request{Model: modelID, ToolChoice: req.ToolChoice}
	c.Messages = make([]loop.Message, len(req.Messages))
	for i, m := range req.Messages {
		if m.ToolCalls != nil {
			calls := make([]loop.ToolCall, len(m.ToolCalls))
			for j, tc := range m.ToolCalls {
				calls[j] = loop.ToolCall{ID: ordinal(tc.ID), Name: tc.Name, Arguments: tc.Arguments}
			}
			m.ToolCalls = calls
		}
		m.ToolCallID = ordinal(m.ToolCallID)
		c.Messages[i] = m
	}
	if len(req.Tools) > 0 {
		c.Tools = make([]loop.ToolSpec, len(req.Tools))
		for i, t := range req.Tools {
			t.InputSchema = canonicalJSON(t.InputSchema)
			c.Tools[i] = t
		}
	}
	c.ResponseFormat = canonicalFormat(req.ResponseFormat)
	return c
}

// canonicalFormat copies f with its schema canonical.
func canonicalFormat(f *loop.ResponseFormat) *loop.ResponseFormat {
	if f == nil {
		return nil
	}
	c := *f
	c.Schema = canonicalJSON(f.Schema)
	return &c
}

// canonicalJSON re-encodes raw with sorted keys and no spaces; text that is
// not JSON is kept as a JSON string so the request still encodes.
func canonicalJSON(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	if v, err := jsonscan.DecodeOne(bytes.NewReader(raw)); err == nil {
		if b, err := json.Marshal(v); err == nil {
			return b
		}
	}
	b, _ := json.Marshal(string(raw)) // a string always encodes
	return b
}

// Key is the hex SHA-256 of the canonical request's JSON.
func (r Request) Key() string {
	sum := sha256.Sum256(r.encode())
	return hex.EncodeToString(sum[:])
}

// encode is the JSON of r. Raw JSON fields (schemas, extras) are
// re-canonicalised first, so encoding cannot fail even for a Request built
// by hand with broken raw values.
func (r Request) encode() []byte {
	c := r
	c.Messages = make([]loop.Message, len(r.Messages))
	for i, m := range r.Messages {
		if m.ToolCalls != nil {
			calls := make([]loop.ToolCall, len(m.ToolCalls))
			for j, tc := range m.ToolCalls {
				tc.Extra = nil
				calls[j] = tc
			}
			m.ToolCalls = calls
		}
		c.Messages[i] = m
	}
	if r.Tools != nil {
		c.Tools = make([]loop.ToolSpec, len(r.Tools))
		for i, t := range r.Tools {
			t.InputSchema = canonicalJSON(t.InputSchema)
			c.Tools[i] = t
		}
	}
	c.ResponseFormat = canonicalFormat(r.ResponseFormat)
	b, err := json.Marshal(c)
	if err != nil {
		panic(fmt.Sprintf("cassette: encode canonical request: %v", err)) // unreachable: no raw value left unchecked
	}
	return b
}
