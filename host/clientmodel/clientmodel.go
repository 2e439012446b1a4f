// Package clientmodel is the loop.Model of the model blocks with provider
// = "mcp_client": each request of a run goes, as an MCP
// sampling/createMessage request, to the MCP client that called the agent
// (`agenthost mcp serve`), which answers with its own model.
//
// It sits beside host/provider in the pipeline: the host builds one Model
// per such model block; the front end that serves a run to an MCP client
// puts that client in the run's context (WithClient). A run without one
// (agenthost run, chat, a Temporal worker) cannot use the model, and its
// requests fail with an error saying so.
//
// The loop's limits apply as to any model: steps, the tool-call budget,
// tokens and cost (MCP's result reports no usage, so the loop estimates
// it), doom loops and the final request without tools. A client's answer
// is untrusted and bounded (MaxBlocks, MaxBytes); an error of the client
// is not retried (it may be a person declining the request).
package clientmodel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agenthost/agenthost/internal/textcut"
	"github.com/agenthost/agenthost/loop"
)

// Bounds of a client's answer to one request.
const (
	// MaxBlocks is the most content blocks an answer may hold.
	MaxBlocks = 128
	// MaxBytes is the most bytes of text and tool arguments an answer may
	// hold, all blocks together.
	MaxBytes = 4 << 20
)

// DefaultMaxTokens is the maxTokens of a request when the model block sets
// no max_tokens: sampling/createMessage requires one.
const DefaultMaxTokens = 4096

// Client is the MCP client a run's requests go to.
type Client interface {
	// Sampling says whether the client offers sampling, and tools in
	// sampling (the sampling.tools capability).
	Sampling() (sampling, tools bool)
	// CreateMessage sends one sampling/createMessage request and returns
	// the client's answer.
	CreateMessage(ctx context.Context, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error)
}

type clientKey struct{}

// WithClient returns ctx carrying c for the requests of the models of this
// package made with it.
func WithClient(ctx context.Context, c Client) context.Context {
	return context.WithValue(ctx, clientKey{}, c)
}

// ClientFrom returns the Client ctx carries, or nil.
func ClientFrom(ctx context.Context) Client {
	c, _ := ctx.Value(clientKey{}).(Client)
	return c
}

// Options describe one model block.
type Options struct {
	// Model is the block's label; Where its place in agents.hcl
	// ("agents.hcl:12"), for errors.
	Model, Where string
	// ModelID is the block's name attribute, sent as a model hint.
	ModelID string
	// MaxTokens is maxTokens (0: DefaultMaxTokens).
	MaxTokens int
	// Temperature is nil when unset.
	Temperature *float64
}

// Model sends a run's requests to the MCP client in the run's context.
type Model struct{ o Options }

var _ loop.Model = (*Model)(nil)

// New returns the Model of a model block.
func New(o Options) *Model {
	if o.MaxTokens <= 0 {
		o.MaxTokens = DefaultMaxTokens
	}
	return &Model{o: o}
}

// NoClientError is a request made where no MCP client can answer it.
type NoClientError struct {
	Model, Where string
}

func (e *NoClientError) Error() string {
	return fmt.Sprintf("model %q (%s) has provider = %q: its requests go to the MCP client that calls the agent, and there is none here; "+
		"serve the agent with 'agenthost mcp serve --agents' to a client that offers sampling, or give the model an OpenAI-compatible provider block",
		e.Model, e.Where, "mcp_client")
}

// Stream sends req to the client and returns its answer; onText, when set,
// gets the whole text at once (sampling does not stream).
func (m *Model) Stream(ctx context.Context, req loop.Request, onText func(string)) (loop.Response, error) {
	c := ClientFrom(ctx)
	if c == nil {
		return loop.Response{}, &NoClientError{Model: m.o.Model, Where: m.o.Where}
	}
	sampling, tools := c.Sampling()
	switch {
	case !sampling:
		return loop.Response{}, fmt.Errorf("model %q (%s) has provider = \"mcp_client\", and the MCP client does not offer sampling (capability \"sampling\")", m.o.Model, m.o.Where)
	case len(req.Tools) > 0 && !tools:
		return loop.Response{}, fmt.Errorf("model %q (%s) has provider = \"mcp_client\": this request offers tools, and the MCP client does not offer tools in sampling (capability \"sampling.tools\")", m.o.Model, m.o.Where)
	}
	p, err := m.params(req)
	if err != nil {
		return loop.Response{}, err
	}
	res, err := c.CreateMessage(ctx, p)
	if err != nil {
		if ctx.Err() != nil {
			return loop.Response{}, fmt.Errorf("the MCP client: %w", context.Cause(ctx))
		}
		// Not retried: the client may have asked a person, who declined,
		// and a client's model has its own retries.
		return loop.Response{}, &loop.ProviderError{Message: "the MCP client: " + err.Error(), Err: err}
	}
	resp, err := response(res)
	if err != nil {
		return loop.Response{}, &loop.ProviderError{Message: "the MCP client's answer: " + err.Error(), Err: err}
	}
	if onText != nil && resp.Message.Content != "" {
		onText(resp.Message.Content)
	}
	return resp, nil
}

// params is req as a sampling/createMessage request: the leading system
// messages are the system prompt, an assistant's tool calls tool_use
// blocks, and consecutive tool results one user message of tool_result
// blocks.
func (m *Model) params(req loop.Request) (*mcp.CreateMessageWithToolsParams, error) {
	p := &mcp.CreateMessageWithToolsParams{
		MaxTokens:        int64(m.o.MaxTokens),
		ModelPreferences: &mcp.ModelPreferences{Hints: []*mcp.ModelHint{{Name: m.o.ModelID}}},
	}
	if m.o.Temperature != nil {
		p.Temperature = *m.o.Temperature
	}
	msgs := req.Messages
	var system []string
	for len(msgs) > 0 && msgs[0].Role == loop.RoleSystem {
		system = append(system, msgs[0].Content)
		msgs = msgs[1:]
	}
	p.SystemPrompt = strings.Join(system, "\n\n")
	for _, msg := range msgs {
		switch msg.Role {
		case loop.RoleAssistant:
			var content []mcp.Content
			if msg.Content != "" || len(msg.ToolCalls) == 0 {
				content = append(content, &mcp.TextContent{Text: msg.Content})
			}
			for _, tc := range msg.ToolCalls {
				var input map[string]any
				if json.Unmarshal([]byte(tc.Arguments), &input) != nil {
					// Arguments that are not an object never ran; the
					// tool result says so.
					input = map[string]any{}
				}
				content = append(content, &mcp.ToolUseContent{ID: tc.ID, Name: tc.Name, Input: input})
			}
			p.Messages = append(p.Messages, &mcp.SamplingMessageV2{Role: "assistant", Content: content})
		case loop.RoleTool:
			block := &mcp.ToolResultContent{ToolUseID: msg.ToolCallID, Content: []mcp.Content{&mcp.TextContent{Text: msg.Content}}, IsError: msg.IsError}
			if n := len(p.Messages); n > 0 && toolResults(p.Messages[n-1]) {
				p.Messages[n-1].Content = append(p.Messages[n-1].Content, block)
				continue
			}
			p.Messages = append(p.Messages, &mcp.SamplingMessageV2{Role: "user", Content: []mcp.Content{block}})
		default: // user, and a system message past the first ones
			p.Messages = append(p.Messages, &mcp.SamplingMessageV2{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: msg.Content}}})
		}
	}
	if len(p.Messages) == 0 {
		return nil, errors.New("a request to the MCP client needs a message")
	}
	for _, t := range req.Tools {
		p.Tools = append(p.Tools, &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	if len(req.Tools) > 0 && req.ToolChoice == loop.ToolChoiceNone {
		p.ToolChoice = &mcp.ToolChoice{Mode: "none"}
	}
	return p, nil
}

// toolResults reports whether m is a user message of tool results only.
func toolResults(m *mcp.SamplingMessageV2) bool {
	if m.Role != "user" || len(m.Content) == 0 {
		return false
	}
	for _, c := range m.Content {
		if _, ok := c.(*mcp.ToolResultContent); !ok {
			return false
		}
	}
	return true
}

// response is a client's answer as the loop takes it: its text blocks
// joined, its tool_use blocks as tool calls. Other blocks (image, audio)
// are left out: an agent reads text. The answer is bounded (MaxBlocks,
// MaxBytes).
func response(res *mcp.CreateMessageWithToolsResult) (loop.Response, error) {
	if res == nil {
		return loop.Response{}, errors.New("no result")
	}
	if res.Role != "assistant" {
		return loop.Response{}, fmt.Errorf("the message's role is %q, not \"assistant\"", textcut.Clip(string(res.Role), 40))
	}
	if len(res.Content) > MaxBlocks {
		return loop.Response{}, fmt.Errorf("%d content blocks; agenthost takes at most %d", len(res.Content), MaxBlocks)
	}
	var (
		text  strings.Builder
		calls []loop.ToolCall
		size  int
	)
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			size += len(c.Text)
			if size <= MaxBytes {
				text.WriteString(c.Text)
			}
		case *mcp.ToolUseContent:
			args, err := json.Marshal(c.Input)
			if err != nil {
				return loop.Response{}, fmt.Errorf("tool_use %q: its input: %v", textcut.Clip(c.Name, 64), err)
			}
			if c.Input == nil {
				args = []byte("{}")
			}
			size += len(c.Name) + len(c.ID) + len(args)
			if size <= MaxBytes {
				calls = append(calls, loop.ToolCall{ID: c.ID, Name: c.Name, Arguments: string(args)})
			}
		}
		if size > MaxBytes {
			return loop.Response{}, fmt.Errorf("more than %d bytes of text and tool arguments; agenthost takes at most that", MaxBytes)
		}
	}
	resp := loop.Response{Message: loop.Message{Role: loop.RoleAssistant, Content: text.String(), ToolCalls: calls}}
	switch res.StopReason {
	case "maxTokens":
		resp.FinishReason = "length"
		// A cut answer's tool calls may be incomplete: none runs.
		resp.Truncated = len(calls) > 0
	case "toolUse":
		resp.FinishReason = "tool_calls"
	case "endTurn", "stopSequence", "":
		resp.FinishReason = "stop"
	default:
		resp.FinishReason = textcut.Clip(res.StopReason, 40)
	}
	return resp, nil
}
