package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/internal/callview"
	"github.com/agenthost/agenthost/internal/textcut"
	"github.com/agenthost/agenthost/loop"
)

// ElicitTimeout bounds the wait for the client's answer to one question:
// past it the call is refused (the run goes on, or stops for a doom loop).
const ElicitTimeout = 15 * time.Minute

// maxReason is the most of a client's reason kept, in bytes.
const maxReason = 4 << 10

// elicitSchema is the form a client fills in for a question: the decision
// and, for a denial, a reason for the model.
var elicitSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"decision":{"type":"string","enum":["allow","always","deny"],"description":"allow runs this call; always runs it and every later call of the tool in this run; deny refuses it"},` +
	`"reason":{"type":"string","description":"why, when denying: the agent's model reads it"}},` +
	`"required":["decision"]}`)

// elicitApprover asks the MCP client that called a served agent, through
// elicitation (a form with the decision and a reason): during the call,
// or as an input-required result (agentrun.go). A client that did not
// declare the elicitation capability cannot be asked: the call is
// refused.
type elicitApprover struct {
	run *servedRun
	// change is what a call would do to a file (host.FileChange), shown
	// as a diff; nil shows the arguments.
	change func(loop.ToolCall) (callview.Change, bool)
}

func (a elicitApprover) Decide(ctx context.Context, q loop.Question) loop.Decision {
	ip := a.run.session.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return loop.Decision{Verdict: loop.Deny, By: loop.ByNone,
			Reason: "the MCP client cannot be asked (it does not support elicitation); run the agent where a person can approve it, or remove the tool from approve in agents.hcl"}
	}
	res, err := a.run.elicit(ctx, elicitParams(q, a.change))
	switch {
	case ctx.Err() != nil:
		return loop.Decision{Verdict: loop.Deny, By: loop.ByMCPClient, Reason: "aborted"}
	case errors.Is(err, errNoAnswer):
		return loop.Decision{Verdict: loop.Deny, By: loop.ByNone, Reason: err.Error()}
	case err != nil:
		zerolog.Ctx(ctx).Warn().Err(err).Str("tool", q.Call.Name).Msg("elicitation failed: call refused")
		return loop.Decision{Verdict: loop.Deny, By: loop.ByNone, Reason: "asking the MCP client failed: " + textcut.Clip(err.Error(), 500)}
	}
	return elicitDecision(res)
}

// elicitParams is the elicitation that puts q to the client. The
// arguments are shown as a terminal's question shows them
// (internal/callview: each on lines of its own, escaped, folded), a
// write_file or edit as a diff when change knows it.
func elicitParams(q loop.Question, change func(loop.ToolCall) (callview.Change, bool)) *mcp.ElicitParams {
	var msg string
	if q.Kind == loop.AskDoomLoop {
		msg = fmt.Sprintf("Agent %s is repeating itself: %s with the same arguments %d times in a row. allow: once; always: stop detecting; deny: stop the run.\nArguments:\n%s",
			q.Agent, q.Call.Name, q.Count, callview.Arguments(q.Call.Arguments, 0))
	} else {
		view := callview.Arguments(q.Call.Arguments, 0)
		if change != nil {
			if ch, ok := change(q.Call); ok {
				view = callview.Call(q.Call.Arguments, 0, &ch)
			}
		}
		msg = fmt.Sprintf("Agent %s wants to run tool %s (approve %q).\nArguments:\n%s", q.Agent, q.Call.Name, q.Pattern, view)
	}
	return &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: elicitSchema}
}

// elicitDecision is the decision a client's answer gives: accept with
// decision allow or always, else a denial (decline and cancel included),
// with the reason the form carries.
func elicitDecision(res *mcp.ElicitResult) loop.Decision {
	reason, _ := res.Content["reason"].(string)
	reason = textcut.Clip(strings.TrimSpace(reason), maxReason)
	if res.Action != "accept" {
		return loop.Decision{Verdict: loop.Deny, By: loop.ByMCPClient, Reason: reason}
	}
	switch d, _ := res.Content["decision"].(string); d {
	case "allow":
		return loop.Decision{Verdict: loop.Allow, By: loop.ByMCPClient, Reason: reason}
	case "always":
		return loop.Decision{Verdict: loop.AllowAlways, By: loop.ByMCPClient, Reason: reason}
	}
	return loop.Decision{Verdict: loop.Deny, By: loop.ByMCPClient, Reason: reason}
}
