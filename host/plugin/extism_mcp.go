package plugin

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agenthost/agenthost/host/plugin/internal/extism"
	"github.com/agenthost/agenthost/loop"
)

// MCPExports are the hyper-mcp v2 exports, besides list_tools and
// call_tool, that `mcp serve` offers its clients: resources, resource
// templates, prompts and completions.
var MCPExports = []string{"list_resources", "read_resource", "list_resource_templates", "list_prompts", "get_prompt", "complete"}

// Offers reports whether the plugin is a hyper-mcp v2 plugin exporting fn,
// one of MCPExports, callable as an Extism function.
func (p *Plugin) Offers(fn string) bool {
	if p.kind != KindExtism || p.ext.dialect != DialectHyperMCP2 {
		return false
	}
	return checkExport(p.exports, fn) == nil
}

// MCPRequest calls the hyper-mcp v2 export fn (one of MCPExports) with
// request as its request's parameters (nil for the list exports) and
// returns its output, a JSON object. It runs in a fresh instance with the
// plugin's grants and limits, like a tool call; its progress, logs and
// requests go to ctx's CallClient. The output is bounded by the plugin's
// memory limit; a failure says which export failed and why.
func (p *Plugin) MCPRequest(ctx context.Context, fn string, request any) (json.RawMessage, error) {
	if !p.Offers(fn) {
		return nil, fmt.Errorf("plugin %q does not export %s", p.name, fn)
	}
	var token any
	if cc := loop.CallClientFrom(ctx); cc != nil {
		token = cc.ProgressToken()
	}
	t := &tool{spec: loop.ToolSpec{Name: "(" + fn + ")"}, ext: &extismTool{function: fn, dialect: p.ext.dialect}}
	i := p.newExtismInstance(ctx, ctx, t, p.ext.base)
	i.runCold(ctx, extism.RequestInput(p.ext.reqs.Add(1), token, request), p.limits.Timeout)
	res, err := p.extismResult(ctx, t, i)
	if err != nil {
		return nil, fmt.Errorf("plugin %q: %s failed: %w", p.name, fn, err)
	}
	if res.IsError {
		return nil, fmt.Errorf("plugin %q: %s failed: %s", p.name, fn, res.Content)
	}
	out := i.ext.Output()
	var obj map[string]json.RawMessage
	if json.Unmarshal(out, &obj) != nil {
		return nil, fmt.Errorf("plugin %q: %s did not return a JSON object", p.name, fn)
	}
	return append(json.RawMessage(nil), out...), nil
}

// TakeListsChanged reports whether a call of a hyper-mcp v2 plugin said
// its resources or its prompts changed (notify_resource_list_changed,
// notify_prompt_list_changed) since the last call, and clears the marks:
// `mcp serve` lists them again. Always false for other plugins.
func (p *Plugin) TakeListsChanged() (resources, prompts bool) {
	if p.ext == nil || p.ext.dialect != DialectHyperMCP2 {
		return false, false
	}
	return p.ext.k.TakeListsChanged()
}

// TakeResourceUpdates returns the URIs a hyper-mcp v2 plugin said were
// updated (notify_resource_updated) since the last call, at most 100, and
// forgets them: `mcp serve` tells the clients subscribed to them.
func (p *Plugin) TakeResourceUpdates() []string {
	if p.ext == nil || p.ext.dialect != DialectHyperMCP2 {
		return nil
	}
	return p.ext.k.TakeResourceUpdates()
}
