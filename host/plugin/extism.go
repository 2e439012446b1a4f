package plugin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tetratelabs/wazero"

	"github.com/agenthost/agenthost/host/plugin/internal/extism"
)

// Dialect is how the tools of an Extism plugin are found and called.
type Dialect = extism.Dialect

const (
	// DialectPlain: any Extism plugin; the Spec's CLITools name the exports
	// to call (CLITool.Function) and build their input.
	DialectPlain = extism.DialectPlain
	// DialectMCPRun: mcp.run servlets and hyper-mcp v1 plugins, exporting
	// describe and call.
	DialectMCPRun = extism.DialectMCPRun
	// DialectHyperMCP2: hyper-mcp v2 plugins, exporting list_tools and
	// call_tool.
	DialectHyperMCP2 = extism.DialectHyperMCP2
)

// dialectOf detects the dialect from a module's exports.
func dialectOf(exports map[string]exportSig) Dialect {
	return extism.DialectOf(func(name string) bool { _, ok := exports[name]; return ok })
}

// extismTool is how a tool of an Extism plugin is called.
type extismTool struct {
	// function is the export called.
	function string
	// name is the tool's name as the plugin knows it (mcp dialects).
	name    string
	dialect Dialect
}

// importsExtism reports whether a module imports the Extism host module.
func importsExtism(cm wazero.CompiledModule) bool {
	for _, f := range cm.ImportedFunctions() {
		if mod, _, _ := f.Import(); mod == extism.ModuleName {
			return true
		}
	}
	return false
}

// checkExport checks that name is an export an Extism host can call: no
// parameters, at most one result.
func checkExport(exports map[string]exportSig, name string) error {
	def, ok := exports[name]
	if !ok {
		names := make([]string, 0, len(exports))
		for n := range exports {
			names = append(names, n)
		}
		return fmt.Errorf("the module exports no function %q; its exports are: %s", name, listOrNone(slices.Sorted(slices.Values(names))))
	}
	if def.Params != 0 || def.Results > 1 {
		return fmt.Errorf("export %q takes %d parameters and returns %d results; an Extism function takes none and returns at most one (i32)", name, def.Params, def.Results)
	}
	return nil
}

// capText keeps the first max bytes of s (cut at a rune boundary) with a
// note of what was dropped.
func capText(s string, max int64) string {
	if int64(len(s)) <= max {
		return s
	}
	n := int(max)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("\n[output truncated: %d of %d bytes shown]", n, len(s))
}

// trimStack drops the wasm stack trace wazero appends to a trap.
func trimStack(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if i := strings.Index(msg, "\nwasm stack trace:"); i >= 0 {
		return errors.New(strings.TrimSpace(msg[:i]))
	}
	return err
}

// inspectExtism fills in the report on an Extism plugin: its dialect and,
// for the mcp dialects, the tools it describes (found by loading it with
// nothing granted).
func inspectExtism(ctx context.Context, r *Runtime, wasm []byte, cm wazero.CompiledModule, info *Info) {
	info.Kind = KindExtism
	info.Dialect = dialectOf(exportsOf(cm))
	if info.Dialect == DialectPlain {
		info.Problems = append(info.Problems, "plain Extism plugin: no tool discovery; declare its tools with tool blocks naming the export to call (function = \"...\")")
		return
	}
	p, err := r.load(ctx, Spec{Name: "inspect", Wasm: wasm, Kind: KindExtism})
	if err != nil {
		info.Problems = append(info.Problems, err.Error())
		return
	}
	defer p.mod.drop(ctx)
	defer p.closeMounts()
	info.Tools = append(info.Tools, p.tools...)
}
