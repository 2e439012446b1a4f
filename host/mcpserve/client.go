package mcpserve

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agenthost/agenthost/loop"
)

// callClient is the loop.CallClient of a request served to an MCP client:
// progress goes to it as notifications/progress (when it gave a progress
// token), log messages as notifications/message (at or above the level it
// set with logging/setLevel; none before it sets one), and sampling and
// elicitation requests to it as sampling/createMessage and
// elicitation/create, when it declared the capability. Everything is sent
// with the request's context, so that over HTTP it goes on the request's
// own event stream, and ends with the request.
type callClient struct {
	ctx   context.Context
	ss    *mcp.ServerSession
	token any
}

// withClient returns ctx carrying the callClient of a request of ss with
// progress token token (nil: none).
func withClient(ctx context.Context, ss *mcp.ServerSession, token any) context.Context {
	if ss == nil {
		return ctx
	}
	return loop.WithCallClient(ctx, &callClient{ctx: ctx, ss: ss, token: token})
}

func (c *callClient) ProgressToken() any { return c.token }

func (c *callClient) Progress(progress, total float64, message string) {
	if c.token == nil {
		return
	}
	c.ss.NotifyProgress(c.ctx, &mcp.ProgressNotificationParams{ProgressToken: c.token, Progress: progress, Total: total, Message: message})
}

func (c *callClient) Log(level, logger string, data json.RawMessage) {
	var d any = data
	if data == nil {
		d = nil
	}
	c.ss.Log(c.ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(level), Logger: logger, Data: d})
}

// capabilities are what the client declared when it initialised.
func (c *callClient) capabilities() *mcp.ClientCapabilities {
	if ip := c.ss.InitializeParams(); ip != nil && ip.Capabilities != nil {
		return ip.Capabilities
	}
	return &mcp.ClientCapabilities{}
}

func (c *callClient) CreateMessage(_ context.Context, params json.RawMessage) (json.RawMessage, error) {
	if c.capabilities().Sampling == nil {
		return nil, notOffered("the MCP client does not offer sampling")
	}
	return forward(c.ctx, params, "a sampling/createMessage request", c.ss.CreateMessage)
}

// forward makes a request of the MCP client with ask: params decoded as
// its parameters (P; when they are not, the error says they are not
// what), the client's answer encoded.
func forward[P, R any](ctx context.Context, params json.RawMessage, what string, ask func(context.Context, *P) (R, error)) (json.RawMessage, error) {
	var p P
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, fmt.Errorf("not %s: %v", what, err)
	}
	res, err := ask(ctx, &p)
	if err != nil {
		return nil, fmt.Errorf("the MCP client: %w", err)
	}
	return json.Marshal(res)
}

// notOfferedError is a loop.ErrNotOffered saying what is not offered.
type notOfferedError string

func (e notOfferedError) Error() string { return string(e) }
func (e notOfferedError) Unwrap() error { return loop.ErrNotOffered }

func notOffered(msg string) error { return notOfferedError(msg) }

func (c *callClient) Elicit(_ context.Context, params json.RawMessage) (json.RawMessage, error) {
	if c.capabilities().Elicitation == nil {
		return nil, notOffered("the MCP client does not offer elicitation")
	}
	if ip := c.ss.InitializeParams(); ip != nil && ip.ProtocolVersion >= mrtrVersion {
		// SEP-2322 forbids a request of the server during a call of
		// this version; the call would have to end with an
		// input-required result instead, which a tool call does not.
		return nil, notOffered("the MCP client's protocol version " + ip.ProtocolVersion + " takes no elicitation/create during a tool call")
	}
	return forward(c.ctx, params, "an elicitation/create request", c.ss.Elicit)
}
