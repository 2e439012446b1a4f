package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agenthost/agenthost/cmd/agenthost/internal/term"
	"github.com/agenthost/agenthost/host"
)

// newToolsCmd is `agenthost tools`: the tools of the config's plugins, all
// or one agent's.
func newToolsCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "tools",
		Short:   "List the tools the plugins give (all, or one agent's)",
		Example: "  agenthost tools\n  agenthost tools -a main --json",
	}
	fs := cmd.Flags()
	cfgFlag := configFlag(fs)
	agentFlag := agentFlag(fs, "list only the tools of this `agent`")
	asJSON := jsonFlag(fs, "print JSON")
	return c.noArgs(cmd, func(ctx context.Context, e *env) int {
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
			return writeJSON(e, tools)
		}
		// Names and descriptions come from plugins: escaped on a terminal.
		rows := [][]string{{"TOOL", "PLUGIN", "KIND", "DESCRIPTION"}}
		for _, t := range tools {
			rows = append(rows, []string{outText(e, t.Name), t.Plugin, string(t.Kind), outText(e, firstLine(t.Description))})
		}
		if e.stdoutTTY {
			term.FitLastColumn(rows, term.ColumnsOf(e.stdout))
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		for _, r := range rows {
			fmt.Fprintln(tw, strings.Join(r, "\t"))
		}
		tw.Flush()
		if len(h.Config.MCPServers) > 0 {
			fmt.Fprintln(e.stdout, "MCP servers (tools of kind mcp):")
			writeMCPServers(e.stdout, h, e)
		}
		return exitOK
	})
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
