package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agenthost/agenthost/host"
)

// cmdPlugin handles `agenthost plugin inspect FILE.wasm|builtin:NAME`: what
// host.Inspect reports, as text or JSON. Its errors are for the user to fix
// (no such plugin, not a usable module, a compilation cache that is not
// private): exit 2, as for run.
func cmdPlugin(ctx context.Context, args []string, e *env) int {
	if len(args) == 0 || args[0] != "inspect" {
		return usageErr(e, "usage: agenthost plugin inspect [--json] FILE.wasm|builtin:NAME")
	}
	fs := newFlags("plugin inspect", e)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return flagExit(err)
	}
	if len(pos) != 1 {
		return usageErr(e, "usage: agenthost plugin inspect [--json] FILE.wasm|builtin:NAME")
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
}
