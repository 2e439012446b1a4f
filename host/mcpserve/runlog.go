package mcpserve

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/loop"
)

// A served agent's run tells the call serving it of its events as
// notifications/message, one per event, with the event (as `agenthost run
// --json` writes it, its long fields cut) as data and the agent's name as
// logger. The level says how much it matters: errors (a run ended by an
// error) are "error"; a failed tool call, a dropped call, a retry, a doom
// loop, an exhausted budget are "warning"; the run's, steps' and calls'
// starts and ends are "info"; the rest (messages, step ends) "debug".
// Messages go only to a client that set a level (logging/setLevel, or a
// request's level in newer protocol versions), at or above it: the SDK
// sends none before.

// maxLogField bounds each free-text field of an event sent as a log
// message; maxLogData bounds the whole event.
const (
	maxLogField = 1 << 10
	maxLogData  = 4 << 10
)

// logLevel is the MCP log level of an event.
func logLevel(ev loop.Event) mcp.LoggingLevel {
	switch ev.Type {
	case loop.EventRunEnd, loop.EventSubagentEnd:
		if ev.Result != nil && !limitOrDone(ev.Result.StopReason) {
			return "error"
		}
		if ev.IsError != nil && *ev.IsError {
			return "warning"
		}
		return "info"
	case loop.EventToolEnd:
		if ev.IsError != nil && *ev.IsError {
			return "warning"
		}
		return "info"
	case loop.EventToolDropped, loop.EventRetry, loop.EventDoomLoop, loop.EventBudgetExhausted:
		return "warning"
	case loop.EventRunStart, loop.EventStepStart, loop.EventToolStart, loop.EventSubagentStart,
		loop.EventApprovalRequest, loop.EventApprovalDecision, loop.EventCompaction:
		return "info"
	}
	return "debug"
}

// logData is ev as a log message's data: its JSON with the free-text
// fields cut to maxLogField bytes, the appended message and the run's
// result left out (the call's result carries the answer), and, past
// maxLogData bytes, only the event's type, agent, step and tool.
func logData(ev loop.Event) json.RawMessage {
	ev.Arguments = cut(ev.Arguments, maxLogField)
	ev.Message = cut(ev.Message, maxLogField)
	ev.Msg = nil
	if ev.Result != nil {
		ev.Message = cut(string(ev.Result.StopReason), maxLogField)
		ev.Result = nil
	}
	b, err := json.Marshal(ev)
	if err != nil || len(b) > maxLogData {
		b, _ = json.Marshal(map[string]any{"type": ev.Type, "agent": ev.Agent, "depth": ev.Depth, "step": ev.Step, "tool": ev.Tool})
	}
	return b
}

// cut is s cut to at most max bytes, on a rune boundary, with "…" when cut.
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max] + "…"
}

// log sends ev to the call serving the run, when there is one, as a log
// message.
func (r *servedRun) log(ev loop.Event) {
	r.mu.Lock()
	req, ctx := r.req, r.reqCtx
	r.mu.Unlock()
	if req == nil || req.Session == nil || ctx == nil {
		return
	}
	err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: logLevel(ev), Logger: ev.Agent, Data: logData(ev)})
	if err != nil {
		zerolog.Ctx(ctx).Debug().Err(err).Msg("log notification not sent")
	}
}
