package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agenthost/agenthost/host"
	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/loop"
)

// newPluginCallCmd is `agenthost plugin call FILE.wasm|NAME TOOL [ARGS]`: one
// call of one plugin tool, without a model, to develop and debug a plugin.
// NAME is a plugin block of the config, called with its grants, mounts and
// limits; FILE.wasm (or builtin:NAME) a module called with the grants of a
// plugin block that grants nothing. Exit 0 for a result, 1 for an error
// result (the tool's, or a trap, timeout or crash), 2 for a usage, config
// or load error, 130 when interrupted.
func newPluginCallCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "call FILE.wasm|NAME TOOL [ARGS-JSON]",
		Short: "Call one tool of a plugin, without a model",
		Long: `Call one tool of a plugin with the given arguments (a JSON object, default {}) and print
its result, without a model: to develop and debug a plugin. NAME is a plugin block of the
config, run with the block's grants and mounts; FILE.wasm is a module run with the default
grants (no network, no clock, random or environment) and the directories --mount grants:
--mount HOST:GUEST[:ro|rw] (repeatable; read-only unless :rw, as a mount block). The result
is printed as the model would read it; --json prints {"content": ..., "is_error": ...}.

Exit codes: 0 the tool returned a result, 1 the tool returned an error or trapped, 2 usage,
config or load error (a plugin or tool that does not exist, arguments that are not a JSON
object).`,
		Example: `  agenthost plugin call echo echo '{"text": "hi"}'
  agenthost plugin call ./build/mytool.wasm count '{"path": "/workspace/notes.md"}' --mount .:/workspace --json`,
		ValidArgsFunction: c.complete().PluginCall,
	}
	fs := cmd.Flags()
	cfgFlag := configFlag(fs)
	asJSON := toolResultJSONFlag(fs)
	mountFlags := fs.StringArray("mount", nil, "grant a FILE.wasm module a directory: HOST:GUEST[:ro|rw] (repeatable; default ro)")
	return c.action(cmd, func(ctx context.Context, pos []string, e *env) int {
		const usage = "usage: agenthost plugin call [-c FILE] [--json] [--mount HOST:GUEST[:ro|rw]]... FILE.wasm|NAME TOOL [ARGS-JSON]"
		if len(pos) < 2 || len(pos) > 3 {
			return usageErr(e, usage)
		}
		arguments, ok := toolArguments(pos)
		if !ok {
			return usageErr(e, "plugin call: ARGS-JSON must be a JSON object, like '{\"path\": \"README.md\"}'")
		}
		target, tool := pos[0], pos[1]
		var h *host.Host
		var code int
		block := target
		if isPluginFile(target) {
			var mounts []config.Mount
			for _, f := range *mountFlags {
				m, err := config.ParseMountFlag(f)
				if err != nil {
					return usageErr(e, "plugin call: --mount %q: %v", f, err)
				}
				mounts = append(mounts, m)
			}
			h, block, code = loadPluginFile(ctx, target, mounts, e)
		} else if len(*mountFlags) > 0 {
			return usageErr(e, "plugin call: --mount is for a FILE.wasm module; plugin %q has the mounts of its mount blocks in %s", target, configPath(*cfgFlag, e))
		} else {
			h, code = loadHost(ctx, configPath(*cfgFlag, e), hostOptions(e), e)
		}
		if code != exitOK {
			return code
		}
		defer h.Close(context.WithoutCancel(ctx))
		if h.Config.Plugin(block) == nil {
			var names []string
			for _, p := range h.Config.Plugins {
				names = append(names, p.Name)
			}
			return usageErr(e, "plugin call: no plugin block %q in %s; plugins: %s (or give a .wasm file)", block, h.Config.File, orNone(names))
		}
		name, names := "", []string(nil)
		for _, t := range h.Tools() {
			if t.Plugin != block {
				continue
			}
			names = append(names, t.Name)
			if t.Name == tool || t.PluginTool == tool {
				name = t.Name
			}
		}
		if name == "" {
			return usageErr(e, "plugin call: plugin %q has no tool %q; its tools: %s", block, tool, orNone(names))
		}
		res, err := h.CallTool(ctx, name, arguments, "plugin-call")
		if err != nil {
			if ctx.Err() != nil {
				fmt.Fprintf(e.stderr, "agenthost: %v\n", err)
				return exitAborted
			}
			// A trap, timeout or crash: what the model would read of it.
			res = loop.ToolResult{Content: "plugin failure: " + err.Error(), IsError: true}
		}
		printToolResult(e, res, *asJSON)
		if res.IsError {
			if !*asJSON {
				fmt.Fprintf(e.stderr, "agenthost: plugin call: %s returned an error result\n", tool)
			}
			return exitError
		}
		return exitOK
	})
}

// isPluginFile tells a module (a path or builtin:NAME) from a block name.
func isPluginFile(s string) bool {
	return strings.HasSuffix(s, ".wasm") || strings.HasPrefix(s, "builtin:") || strings.ContainsRune(s, filepath.Separator) || strings.ContainsRune(s, '/')
}

// loadPluginFile builds a host with one plugin block for the module src
// and nothing granted but mounts (config.ForModule).
func loadPluginFile(ctx context.Context, src string, mounts []config.Mount, e *env) (*host.Host, string, int) {
	if !strings.HasPrefix(src, "builtin:") {
		abs, err := filepath.Abs(src)
		if err != nil {
			return nil, "", usageErr(e, "plugin call: %v", err)
		}
		src = abs
	}
	cfg, err := config.ForModule(src, mounts, config.Options{LookupEnv: e.lookupEnv})
	if err != nil {
		return nil, "", usageErr(e, "plugin call: %s: %s", src, err)
	}
	if ctx.Err() != nil {
		return nil, "", loadInterrupted(e)
	}
	h, diags, err := host.New(ctx, cfg, hostOptions(e))
	if err == nil && diags.HasErrors() {
		err = diags
	}
	if err != nil {
		if h != nil {
			h.Close(context.WithoutCancel(ctx))
		}
		return nil, "", usageErr(e, "plugin call: %s: %v", src, err)
	}
	for _, d := range diags {
		fmt.Fprintf(e.stderr, "agenthost: warning: %s: %s\n", d.Summary, d.Detail)
	}
	return h, config.ModulePlugin, exitOK
}

// toolResultJSONFlag is --json of plugin call and mcp call.
func toolResultJSONFlag(fs *pflag.FlagSet) *bool {
	return jsonFlag(fs, "print the result as JSON: {\"content\": ..., \"is_error\": ...}")
}

// toolArguments is the ARGS-JSON of plugin call and mcp call, pos[2]
// ({} without one); ok is false when it is not a JSON object.
func toolArguments(pos []string) (args string, ok bool) {
	if len(pos) < 3 {
		return "{}", true
	}
	var obj map[string]any
	return pos[2], json.Unmarshal([]byte(pos[2]), &obj) == nil
}

// printToolResult prints the result of plugin call and mcp call: as JSON,
// or its content (the tool's text: escaped on a terminal).
func printToolResult(e *env, res loop.ToolResult, asJSON bool) {
	if asJSON {
		_ = json.NewEncoder(e.stdout).Encode(map[string]any{"content": res.Content, "is_error": res.IsError})
	} else {
		fmt.Fprintln(e.stdout, outText(e, res.Content))
	}
}

// orNone joins names, or says none.
func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
