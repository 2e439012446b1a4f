package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/internal/textcut"
	"github.com/agenthost/agenthost/loop"
)

// MaxElicitAnswer bounds, in bytes of JSON, a client's answer to a
// server's question that ClientElicitor passes back to the server.
const MaxElicitAnswer = 64 << 10

// ClientElicitor passes an MCP server's question (elicitation/create) on to
// the MCP client whose served call the server is serving: the
// loop.CallClient the call's context carries (`mcp serve` gives one to each
// call it serves, and to the tool calls of a served agent's runs). A
// question outside such a call (a server asking on its own, or one whose
// protocol version does not tie its question to the call), or one the
// client cannot be asked (no elicitation capability), is declined; a
// client that fails to answer cancels it. The client's answer is untrusted:
// it must be an action of the specification with, for accept only, content
// of at most MaxElicitAnswer bytes whose values are strings, numbers,
// booleans or lists of strings; any other answer is declined.
type ClientElicitor struct {
	// Log receives why a question was declined or cancelled.
	Log zerolog.Logger
}

func (e ClientElicitor) Elicit(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	log := e.Log.With().Str("mcp_server", server).Logger()
	cc := loop.CallClientFrom(ctx)
	if cc == nil {
		log.Info().Msg("MCP server's question (elicitation) declined: it is not asked during a served call, so no MCP client can answer it")
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	params, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	raw, err := cc.Elicit(ctx, params)
	switch {
	case errors.Is(err, loop.ErrNotOffered):
		log.Info().Str("why", err.Error()).Msg("MCP server's question (elicitation) declined: the MCP client cannot be asked")
		return &mcp.ElicitResult{Action: "decline"}, nil
	case err != nil:
		log.Warn().Err(err).Msg("MCP server's question (elicitation) cancelled: the MCP client gave no answer")
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
	res, err := checkElicitAnswer(raw)
	if err != nil {
		log.Warn().Str("why", err.Error()).Msg("MCP server's question (elicitation) declined: the MCP client's answer is not one to pass on")
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	return res, nil
}

// checkElicitAnswer reads a client's answer to a question and checks it is
// one a server may be given (see ClientElicitor).
func checkElicitAnswer(raw json.RawMessage) (*mcp.ElicitResult, error) {
	if len(raw) > MaxElicitAnswer {
		return nil, fmt.Errorf("%d bytes, more than %d", len(raw), MaxElicitAnswer)
	}
	var a struct {
		Action  string                     `json:"action"`
		Content map[string]json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("not an elicitation result: %v", err)
	}
	switch a.Action {
	case "decline", "cancel":
		return &mcp.ElicitResult{Action: a.Action}, nil
	case "accept":
	default:
		return nil, fmt.Errorf("action %q is not accept, decline or cancel", textcut.Clip(a.Action, 40))
	}
	var content map[string]any
	if len(a.Content) > 0 {
		content = make(map[string]any, len(a.Content))
	}
	for k, v := range a.Content {
		var val any
		if err := json.Unmarshal(v, &val); err != nil {
			return nil, fmt.Errorf("field %q: %v", textcut.Clip(k, 100), err)
		}
		if !elicitValue(val) {
			return nil, fmt.Errorf("field %q is not a string, number, boolean or list of strings", textcut.Clip(k, 100))
		}
		content[k] = val
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}

// elicitValue reports whether v is a value an elicitation form may hold.
func elicitValue(v any) bool {
	switch v := v.(type) {
	case string, float64, bool:
		return true
	case []any:
		for _, e := range v {
			if _, ok := e.(string); !ok {
				return false
			}
		}
		return true
	}
	return false
}
