package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/agenthost/agenthost/host"
)

func cmdTools(ctx context.Context, args []string, e *env) int {
	fs := newFlags("tools", e)
	cfgFlag := fs.String("c", "", "config `file`")
	agentFlag := fs.String("a", "", "list only the tools of this `agent`")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return flagExit(err)
	}
	if len(pos) > 0 {
		return usageErr(e, "tools takes no arguments (got %q)", pos)
	}
	h, code := loadHost(ctx, configPath(*cfgFlag, e), hostOptions(e), e)
	if code != exitOK {
		return code
	}
	defer h.Close(ctx)
	tools := h.Tools()
	if *agentFlag != "" {
		a := h.Config.Agent(*agentFlag)
		if a == nil {
			return usageErr(e, "no agent %q; agents: %s", *agentFlag, agentNames(h.Config))
		}
		want := map[string]bool{}
		for _, t := range a.Tools {
			want[t] = true
		}
		var sel []host.Tool
		for _, t := range tools {
			if want[t.Name] {
				sel = append(sel, t)
			}
		}
		tools = sel
	}
	if *asJSON {
		if tools == nil {
			tools = []host.Tool{}
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(tools)
		return exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tPLUGIN\tKIND\tDESCRIPTION")
	for _, t := range tools {
		// Names and descriptions come from plugins: escaped on a terminal.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", outText(e, t.Name), t.Plugin, t.Kind, outText(e, firstLine(t.Description)))
	}
	tw.Flush()
	if len(h.Config.MCPServers) > 0 {
		fmt.Fprintln(e.stdout, "MCP servers (tools of kind mcp):")
		writeMCPServers(e.stdout, h, e)
	}
	return exitOK
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
