package mcpserve

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/agenthost/agenthost/host"
)

// servedTools keeps the plugin and MCP server tools served in step with the
// host's tools: when a plugin or a used MCP server says its tools changed
// (host.Host.RefreshTools), the tools added are served, those gone are
// removed and those changed are served anew; the SDK then tells every
// client with notifications/tools/list_changed.
type servedTools struct {
	h   *host.Host
	srv *Server
	log zerolog.Logger
	// want narrows the tools to one agent's (--agent); nil serves all.
	want map[string]bool
	// agents are the names of the served agents, which a tool may not
	// take.
	agents map[string]bool
	seq    atomic.Int64 // call ids of served tool calls

	mu      sync.Mutex
	version uint64
	served  map[string]host.Tool // by name, as served
}

// sync serves the host's tools as they are now. The first sync (at New)
// serves them all; later ones change only what changed, and cost nothing
// when the host's tools did not change.
func (st *servedTools) sync() {
	st.mu.Lock()
	defer st.mu.Unlock()
	tools, version := st.h.ToolsVersion()
	if st.served != nil && version == st.version {
		return
	}
	st.version = version
	var gone []string
	now := map[string]host.Tool{}
	for _, t := range tools {
		if st.want != nil && !st.want[t.Name] {
			continue
		}
		if st.agents[t.Name] {
			st.log.Warn().Str("tool", t.Name).Str("plugin", t.Plugin).Msg("not served over MCP: an agent served has its name")
			continue
		}
		if !objectSchema(t.InputSchema) {
			// MCP requires an object schema; a plugin tool whose
			// schema is not one cannot be offered as it is.
			st.log.Warn().Str("tool", t.Name).Str("plugin", t.Plugin).Msg("not served over MCP: its input schema is not of type \"object\"")
			continue
		}
		now[t.Name] = t
		if prev, ok := st.served[t.Name]; ok && sameTool(prev, t) {
			continue
		}
		st.add(t)
	}
	for name := range st.served {
		if _, ok := now[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		st.srv.RemoveTools(gone...)
	}
	st.served = now
}

// add serves tool t (replacing a tool of its name).
func (st *servedTools) add(t host.Tool) {
	name := t.Name
	tool := &mcp.Tool{Name: name, Description: t.Description, InputSchema: t.InputSchema}
	if t.Annotations != nil {
		var a mcp.ToolAnnotations
		if json.Unmarshal(t.Annotations, &a) == nil {
			tool.Annotations = &a
		}
	}
	structured := false
	if objectSchema(t.OutputSchema) {
		// MCP requires an output schema of type object too.
		tool.OutputSchema, structured = t.OutputSchema, true
	}
	st.srv.AddTool(tool, st.srv.track(func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return st.srv.serveTool(ctx, st.h, name, req, fmt.Sprintf("mcp-%d", st.seq.Add(1)), structured), nil
	}))
}

// sameTool reports whether two listings of a tool serve it the same way.
func sameTool(a, b host.Tool) bool {
	return a.Name == b.Name && a.Description == b.Description && string(a.InputSchema) == string(b.InputSchema) &&
		string(a.OutputSchema) == string(b.OutputSchema) && string(a.Annotations) == string(b.Annotations)
}
