package host

import (
	"context"
	"fmt"

	"github.com/agenthost/agenthost/loop"
)

// CallTool runs one call of the plugin tool name outside any agent run, the
// way `agenthost mcp serve --tools` offers it: the same sandbox, grants and
// limits as a call from an agent, a fresh instance per call. Arguments that
// are not JSON or fail the tool's schema give an error result without
// running the plugin; a plugin that breaks (trap, timeout, crash) gives an
// error, never a panic. The call takes one of the host's slots (Slots)
// first, as an agent's calls do, waiting for one while ctx lasts.
func (h *Host) CallTool(ctx context.Context, name, arguments, callID string) (loop.ToolResult, error) {
	ref, msg := h.all.lookup(name)
	if msg != "" {
		return loop.ToolResult{Content: msg, IsError: true}, nil
	}
	if err := h.slots.Acquire(ctx); err != nil {
		return loop.ToolResult{}, fmt.Errorf("tool %q: cancelled while waiting for one of the %d tool slots (host.max_parallel_tools): %w", name, h.slots.Size(), err)
	}
	defer h.slots.Release()
	call := loop.ToolCall{ID: callID, Name: name, Arguments: arguments}
	if ref.mcp != nil {
		return ref.callMCP(ctx, call) // an mcp_server's tool, passed through
	}
	call.Name = ref.own               // the plugin's own name, before tool_prefix and rename
	return ref.plugin.Call(ctx, call) // decodes and validates the arguments once, then runs them
}
