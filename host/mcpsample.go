package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agenthost/agenthost/loop"
)

// maxSampleMessages bounds the messages of one sampling request of an MCP
// server.
const maxSampleMessages = 100

// mcpSampler serves the sampling requests of the mcp_servers that allow
// them (sampling = true) with the model of the agent whose tool call the
// server is serving (loop.Sample): its tokens and cost count in that run's
// limits, and a request that could pass them is refused. Only text is
// sampled; a request outside a tool call of a run (a server that asks on
// its own, or during `mcp call`) is refused.
type mcpSampler struct{}

func (mcpSampler) Sample(ctx context.Context, server string, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	if p == nil || len(p.Messages) == 0 {
		return nil, errors.New("a sampling request needs messages")
	}
	if len(p.Messages) > maxSampleMessages {
		return nil, fmt.Errorf("a sampling request has %d messages; agenthost serves at most %d", len(p.Messages), maxSampleMessages)
	}
	var req loop.Request
	if p.SystemPrompt != "" {
		req.Messages = append(req.Messages, loop.Message{Role: loop.RoleSystem, Content: p.SystemPrompt})
	}
	for i, m := range p.Messages {
		t, ok := m.Content.(*mcp.TextContent)
		if !ok {
			return nil, fmt.Errorf("message %d of the sampling request is not text: agenthost samples text only", i+1)
		}
		role := loop.RoleUser
		if m.Role == "assistant" {
			role = loop.RoleAssistant
		}
		req.Messages = append(req.Messages, loop.Message{Role: role, Content: t.Text})
	}
	resp, model, err := loop.Sample(ctx, req)
	if errors.Is(err, loop.ErrNoRun) {
		return nil, errors.New("sampling is served during a tool call of an agent's run only: it uses that agent's model, and counts in that run's limits")
	}
	if err != nil {
		return nil, fmt.Errorf("sampling refused: %w", err)
	}
	return &mcp.CreateMessageResult{Role: "assistant", Content: &mcp.TextContent{Text: resp.Message.Content}, Model: model, StopReason: "endTurn"}, nil
}
