package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agenthost/agenthost/cmd/agenthost/internal/complete"
	"github.com/agenthost/agenthost/host"
)

// newPluginCmd is `agenthost plugin`: the commands about one plugin.
func newPluginCmd(c *cli) *cobra.Command {
	return group("plugin", "Inspect plugins and call their tools", newPluginInspectCmd(c), newPluginCallCmd(c))
}

// newPluginInspectCmd is `agenthost plugin inspect FILE.wasm|builtin:NAME`:
// what host.Inspect reports, as text or JSON. Its errors are for the user
// to fix (no such plugin, not a usable module, a compilation cache that is
// not private): exit 2, as for run.
func newPluginInspectCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:               "inspect FILE.wasm | builtin:NAME | oci://HOST/REPO:TAG",
		Short:             "Show what a plugin is: its kind, imports, tools and the grants it asks for",
		Example:           "  agenthost plugin inspect plugins/echo.wasm\n  agenthost plugin inspect --json builtin:fs",
		ValidArgsFunction: complete.WasmFiles,
	}
	asJSON := jsonFlag(cmd.Flags(), "print JSON")
	return c.action(cmd, func(ctx context.Context, pos []string, e *env) int {
		if len(pos) != 1 {
			return usageErr(e, "usage: agenthost plugin inspect [--json] FILE.wasm|builtin:NAME|oci://HOST/REPO:TAG")
		}
		info, err := host.Inspect(ctx, pos[0], hostOptions(e))
		if err != nil {
			return usageErr(e, "plugin inspect: %v", err)
		}
		if *asJSON {
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false) // WIT signatures are full of < and >
			_ = enc.Encode(info)
			return exitOK
		}
		fmt.Fprint(e.stdout, outText(e, info.String())) // the manifest is the plugin's
		return exitOK
	})
}
