package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/agenthost/agenthost/cmd/agenthost/internal/term"
	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/internal/textcut"
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
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TOOL\tPLUGIN\tKIND\tDESCRIPTION")
		room := descRoom(e, tools)
		for _, t := range tools {
			// Names and descriptions come from plugins: escaped on a terminal.
			desc := outText(e, firstLine(t.Description))
			if room > 0 {
				desc = textcut.Runes(desc, room)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", outText(e, t.Name), t.Plugin, t.Kind, desc)
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

// descRoom is the runes a description may take so that a row of the tools
// table fits the terminal's width, as gh cuts a table's last column; 0
// (no cut) when stdout is not a terminal, its width is unknown, or the
// other columns leave less than descMin.
func descRoom(e *env, tools []host.Tool) int {
	const descMin = 20
	if !e.stdoutTTY {
		return 0
	}
	cols := term.ColumnsOf(e.stdout)
	name, plugin, kind := len("TOOL"), len("PLUGIN"), len("KIND")
	for _, t := range tools {
		name = max(name, utf8.RuneCountInString(outText(e, t.Name)))
		plugin = max(plugin, utf8.RuneCountInString(t.Plugin))
		kind = max(kind, utf8.RuneCountInString(string(t.Kind)))
	}
	room := cols - (name + 2) - (plugin + 2) - (kind + 2)
	if cols == 0 || room < descMin {
		return 0
	}
	return room
}
