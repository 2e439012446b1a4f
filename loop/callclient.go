package loop

import (
	"context"
	"encoding/json"
	"errors"
)

// ErrNotOffered is the error (wrapped) of a CallClient's CreateMessage or
// Elicit when the client cannot be asked: it did not declare the
// capability, or its protocol version forbids the request where it would
// be made.
var ErrNotOffered = errors.New("the MCP client does not offer it")

// CallClient is what the front end that asked for a tool call offers the
// tool while it runs: somewhere to report progress and log messages, and
// the client's model (sampling) and user (elicitation). `mcp serve` gives
// one to each call it serves, backed by the calling MCP client; other
// front ends give none. Requests and results are JSON in the shapes of
// MCP's sampling/createMessage and elicitation/create.
//
// It travels in the call's context (WithCallClient) so that no Toolset
// signature changes for it.
type CallClient interface {
	// Progress reports progress of the call (total 0 when unknown).
	Progress(progress, total float64, message string)
	// Log sends a log message at an MCP level (debug … emergency).
	Log(level, logger string, data json.RawMessage)
	// CreateMessage asks the client's model (sampling/createMessage).
	CreateMessage(ctx context.Context, params json.RawMessage) (json.RawMessage, error)
	// Elicit asks the client's user (elicitation/create).
	Elicit(ctx context.Context, params json.RawMessage) (json.RawMessage, error)
	// ProgressToken is the token the client gave for the call's
	// progress, nil when it gave none.
	ProgressToken() any
}

type callClientKey struct{}

// WithCallClient returns ctx carrying c for the tool calls made with it.
func WithCallClient(ctx context.Context, c CallClient) context.Context {
	return context.WithValue(ctx, callClientKey{}, c)
}

// CallClientFrom returns the CallClient ctx carries, or nil.
func CallClientFrom(ctx context.Context) CallClient {
	c, _ := ctx.Value(callClientKey{}).(CallClient)
	return c
}
