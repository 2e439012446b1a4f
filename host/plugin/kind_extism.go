package plugin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/tetratelabs/wazero"

	"github.com/agenthost/agenthost/host/plugin/internal/extism"
	"github.com/agenthost/agenthost/host/plugin/internal/loadcache"
	"github.com/agenthost/agenthost/loop"
)

// The extism kind: an Extism plugin (declared, or importing
// extism:host/env), run on the Go kernel of internal/extism. Its dialect,
// from its exports, says how its tools are found: described by the plugin
// (describe/call, list_tools/call_tool), or named by tool blocks (plain).
type extismKind struct{}

// extismPlugin is the Extism state of a Plugin.
type extismPlugin struct {
	k       *extism.Plugin
	dialect Dialect
	// base is the plugin's base module config (baseConfig), for the
	// instances made after load: list_tools again and the MCP requests.
	base wazero.ModuleConfig
	// reuse: the plugin's instances serve many calls of a run
	// (extism_reuse.go), of any of its tools; key names them in a Scope.
	reuse bool
	key   *tool
	// reqs numbers the requests to a hyper-mcp v2 plugin (the id of its
	// request context).
	reqs atomic.Int64
}

func (extismKind) name() Kind      { return KindExtism }
func (extismKind) component() bool { return false }

// prestart: an Extism instance waits for its input after its language
// runtime is initialised.
func (extismKind) prestart() bool { return true }

// detect claims a module importing the Extism host module.
func (extismKind) detect(f *loadcache.Facts, _ *Spec) bool { return f.Extism }

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

// inspect fills in the report on an Extism plugin: its dialect and, for
// the mcp dialects, the tools it describes (found by loading it with
// nothing granted).
func (extismKind) inspect(ctx context.Context, i *inspecting, info *Info) error {
	info.Kind = KindExtism
	info.Dialect = dialectOf(i.facts.Exports)
	if info.Dialect == DialectPlain {
		info.Problems = append(info.Problems, "plain Extism plugin: no tool discovery; declare its tools with tool blocks naming the export to call (function = \"...\")")
		return nil
	}
	p, err := i.r.load(ctx, Spec{Name: "inspect", Wasm: i.wasm, Kind: KindExtism})
	if err != nil {
		info.Problems = append(info.Problems, err.Error())
		return nil
	}
	defer p.mod.drop(ctx)
	defer p.closeMounts()
	info.Tools = append(info.Tools, p.tools...)
	return nil
}

// load finishes loading an Extism plugin: its grants, dialect and tools.
func (extismKind) load(ctx context.Context, l *loading) error {
	p, spec := l.p, l.spec
	k, err := extism.NewPlugin(spec.Name, spec.Config, spec.HTTPAllow)
	if err != nil {
		return err
	}
	ext := &extismPlugin{k: k, reuse: spec.Reuse, key: &tool{}}
	p.ext = ext
	p.grants = grant(nil, spec)
	p.grants.HTTPAllow = append([]string(nil), spec.HTTPAllow...)
	base, err := p.baseConfig()
	if err != nil {
		return err
	}
	ext.base = base
	exports := p.exports
	ext.dialect = dialectOf(exports)
	if len(spec.Tools) > 0 {
		// Tool blocks choose the exports, whatever the dialect.
		ext.dialect = DialectPlain
		for _, ct := range spec.Tools {
			fn := ct.Function
			if fn == "" {
				fn = ct.Name
			}
			if err := checkExport(exports, fn); err != nil {
				return fmt.Errorf("tool %q: %w", ct.Name, err)
			}
			if err := p.addTool(ct.Name, ct.Description, ct.InputSchema, &ct, base); err != nil {
				return err
			}
			p.byName[ct.Name].ext = &extismTool{function: fn, dialect: DialectPlain}
			p.byName[ct.Name].call = p.callExtism
		}
		return nil
	}
	if ext.dialect == DialectPlain {
		return errors.New("this Extism plugin exports neither describe/call (mcp.run, hyper-mcp v1) nor list_tools/call_tool (hyper-mcp v2), so it cannot describe its tools; declare them with tool blocks naming the export to call (function = \"...\")")
	}
	listFn, callFn := ext.dialect.Functions()
	for _, fn := range []string{listFn, callFn} {
		if err := checkExport(exports, fn); err != nil {
			return err
		}
	}
	tools, err := p.listTools(ctx, listFn, ext.dialect.ListInput(ext.reqs.Add(1)), base)
	if err != nil {
		return err
	}
	dummy := &CLITool{}
	for _, mt := range tools {
		if err := p.addTool(mt.Name, mt.Description, mt.InputSchema, dummy, base); err != nil {
			return fmt.Errorf("%s: %w", listFn, err)
		}
		p.byName[mt.Name].ext = &extismTool{function: callFn, name: mt.Name, dialect: ext.dialect}
		p.byName[mt.Name].call = p.callExtism
	}
	if len(p.tools) == 0 {
		return fmt.Errorf("%s returned no tools", listFn)
	}
	return nil
}

// listTools runs describe or list_tools in a fresh instance with the
// plugin's grants and reads {"tools":[...]}.
func (p *Plugin) listTools(ctx context.Context, fn string, input []byte, cfg wazero.ModuleConfig) ([]extism.Tool, error) {
	t := &tool{spec: loop.ToolSpec{Name: "(" + fn + ")"}, ext: &extismTool{function: fn}}
	i := p.newExtismInstance(ctx, ctx, t, cfg)
	i.runCold(ctx, input, p.limits.Timeout)
	res, err := p.extismResult(ctx, t, i)
	if err != nil {
		return nil, fmt.Errorf("%s failed: %w", fn, err)
	}
	if res.IsError {
		return nil, fmt.Errorf("%s failed: %s", fn, res.Content)
	}
	tools, err := extism.ParseTools(i.ext.Output())
	if err != nil {
		return nil, fmt.Errorf("%s %w", fn, err)
	}
	return tools, nil
}
