package main

import (
	"fmt"
	"io"

	"github.com/agenthost/agenthost/cmd/agenthost/internal/term"
	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/internal/redact"
)

// writeMCPServers prints a line per mcp_server for validate and tools:
// how it was reached, how many tools it offers, and that it is not
// sandboxed (it runs with the user's rights, outside any plugin limit).
func writeMCPServers(w io.Writer, h *host.Host, e *env) {
	count := map[string]int{}
	for _, t := range h.Tools() {
		if t.Kind == host.KindMCP {
			count[t.Plugin]++
		}
	}
	for _, s := range h.Config.MCPServers {
		how := "url " + redact.URL(s.URL)
		if len(s.Command) > 0 {
			how = "command " + s.Command[0]
		}
		as := s.Prefix() + "TOOL"
		if len(s.Rename) > 0 {
			as += " (some renamed)"
		}
		fmt.Fprintf(w, "  mcp_server %s: %s, %d %s as %s; NOT sandboxed (it runs with your rights, outside every plugin limit)\n",
			s.Name, outText(e, how), count[s.Name], term.Plural(count[s.Name], "tool", "tools"), as)
	}
}
