package mcpserve

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agenthost/agenthost/host"
)

// sampleClient is the clientmodel.Client of a served agent's run: the model
// requests of a model with provider = "mcp_client" go to the MCP client
// that called the agent, as sampling/createMessage requests during the
// call, or, from protocol 2026-07-28 on, as input requests of the call's
// result (agentrun.go). The client's answer is awaited at most
// ElicitTimeout, as an approval is: it may ask a person.
type sampleClient struct{ run *servedRun }

// samplingCaps are the sampling capabilities client ss declared; nil
// when it declared none.
func samplingCaps(ss *mcp.ServerSession) *mcp.SamplingCapabilities {
	if ss == nil {
		return nil
	}
	if ip := ss.InitializeParams(); ip != nil && ip.Capabilities != nil {
		return ip.Capabilities.Sampling
	}
	return nil
}

func (c sampleClient) Sampling() (sampling, tools bool) {
	caps := samplingCaps(c.run.session)
	return caps != nil, caps != nil && caps.Tools != nil
}

func (c sampleClient) CreateMessage(ctx context.Context, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	res, err := c.run.request(ctx, sampleKey, p, func(sctx context.Context) (mcp.InputResponse, error) {
		return c.run.session.CreateMessageWithTools(sctx, p)
	})
	if err != nil {
		return nil, err
	}
	out, ok := res.(*mcp.CreateMessageWithToolsResult)
	if !ok {
		return nil, errors.New("the call was retried without an answer to the sampling request")
	}
	return out, nil
}

// samplingRefused says why a run with the needs need cannot be served to
// client ss, or "" when it can: the client must offer sampling, and tools
// in sampling when the run's model may be offered tools.
func samplingRefused(ss *mcp.ServerSession, need host.ClientNeeds) string {
	caps := samplingCaps(ss)
	switch {
	case caps == nil:
		return fmt.Sprintf("it runs on model %q (%s), whose provider = \"mcp_client\" sends each model request to this MCP client as sampling/createMessage, "+
			"and the client does not declare the \"sampling\" capability; call the agent from a client that offers sampling, or give model %q an OpenAI-compatible provider block",
			need.Model.Name, host.ModelWhere(need.Model), need.Model.Name)
	case need.Tools && caps.Tools == nil:
		return fmt.Sprintf("agent %q has tools, and its model has provider = \"mcp_client\": the client must offer tools in sampling (the \"sampling.tools\" capability), which it does not declare; "+
			"call the agent from a client that does, or make the agent text-only (steps = 1, or no tools)",
			need.ToolsAgent)
	}
	return ""
}
