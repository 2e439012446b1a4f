package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/agenthost/agenthost/host/plugin/internal/extism"
	"github.com/agenthost/agenthost/loop"
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

// loadExtism finishes loading an Extism plugin: its grants, dialect and
// tools.
func (p *Plugin) loadExtism(ctx context.Context, spec Spec) error {
	ext, err := extism.NewPlugin(spec.Name, spec.Config, spec.HTTPAllow)
	if err != nil {
		return err
	}
	p.ext, p.extReuse, p.extKey = ext, spec.Reuse, &tool{}
	p.grants = grant(nil, spec)
	p.grants.HTTPAllow = append([]string(nil), spec.HTTPAllow...)
	base, err := p.baseConfig()
	if err != nil {
		return err
	}
	exports := p.exports
	p.dialect = dialectOf(exports)
	if len(spec.Tools) > 0 {
		// Tool blocks choose the exports, whatever the dialect.
		p.dialect = DialectPlain
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
		}
		return nil
	}
	if p.dialect == DialectPlain {
		return errors.New("this Extism plugin exports neither describe/call (mcp.run, hyper-mcp v1) nor list_tools/call_tool (hyper-mcp v2), so it cannot describe its tools; declare them with tool blocks naming the export to call (function = \"...\")")
	}
	listFn, callFn := p.dialect.Functions()
	for _, fn := range []string{listFn, callFn} {
		if err := checkExport(exports, fn); err != nil {
			return err
		}
	}
	tools, err := p.listTools(ctx, listFn, p.dialect.ListInput(), base)
	if err != nil {
		return err
	}
	dummy := &CLITool{}
	for _, mt := range tools {
		if err := p.addTool(mt.Name, mt.Description, mt.InputSchema, dummy, base); err != nil {
			return fmt.Errorf("%s: %w", listFn, err)
		}
		p.byName[mt.Name].ext = &extismTool{function: callFn, name: mt.Name, dialect: p.dialect}
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

// newExtismInstance makes an instance that calls t's export; parent is the
// context the instance lives in, logCtx carries the logger.
func (p *Plugin) newExtismInstance(parent, logCtx context.Context, t *tool, cfg wazero.ModuleConfig) *instance {
	i := newInstance(parent, p.r, p.mod, cfg, p.limits, p.grants, p.mounts)
	i.ext = extism.NewCall(i.ctx, p.ext, p.limits.Memory, *zerolog.Ctx(logCtx))
	i.extFn = t.ext.function
	return i
}

// execExtism instantiates an Extism plugin, initialises its language
// runtime, waits for its input (a pre-started instance waits here) and
// calls its export.
func (i *instance) execExtism(cfg wazero.ModuleConfig) api.Module {
	cm, err := i.mod.wait(i.ctx)
	if err != nil {
		i.err = err
		return nil
	}
	i.r.started.Add(1)
	ctx, mem := withInstanceMemory(i.ctx)
	i.mem = mem
	mod, err := i.r.instantiate(ctx, cm, cfg)
	if err != nil {
		i.err = err
		return nil
	}
	i.instantiated = true
	defer func() { i.memBytes = memorySize(mod) }()
	if err := i.ext.Init(ctx, mod, i.extFn); err != nil {
		i.err = err
		return mod
	}
	if i.held != nil {
		return mod // kept to serve calls (extism_reuse.go)
	}
	fn := mod.ExportedFunction(i.extFn)
	if fn == nil {
		i.err = fmt.Errorf("module exports no function %q", i.extFn)
		return mod
	}
	input, err := io.ReadAll(i.stdin)
	if err != nil {
		i.err = err
		return mod
	}
	i.err = i.ext.Invoke(ctx, fn, input)
	return mod
}

// callExtism runs one call of an Extism plugin's tool: in its pre-started
// instance when there is one, else in a fresh one.
func (p *Plugin) callExtism(ctx context.Context, t *tool, call loop.ToolCall, args json.RawMessage) (loop.ToolResult, error) {
	var input []byte
	if t.ext.dialect == DialectPlain {
		_, in, err := t.cli.command(args)
		if err != nil {
			return errResult("cannot build the input of tool %q: %v", t.spec.Name, err), nil
		}
		input = in
	} else {
		input = t.ext.dialect.CallInput(t.ext.name, args)
	}
	if p.extReuse {
		if ref, scoped := scopeOf(ctx); scoped {
			return p.callExtismHeld(ctx, t, ref, input)
		}
	}
	start := time.Now()
	i := p.takeWarm(ctx, t)
	if i != nil {
		i.serve(ctx, input, p.limits.Timeout)
	} else {
		i = p.newExtismInstance(ctx, ctx, t, t.cfg)
		i.runCold(ctx, input, p.limits.Timeout)
	}
	p.refill(t)
	res, err := p.extismResult(ctx, t, i)
	p.logCall(ctx, t, start, res, err)
	return res, err
}

// extismResult turns an ended Extism instance into the call's outcome: the
// output on success (a CallToolResult in the mcp dialects); an error
// result for a non-zero return, an error_set message, a non-zero exit or a
// refusal of the host (http, memory, vars); a *Failure for a trap, a
// timeout or a flood.
func (p *Plugin) extismResult(ctx context.Context, t *tool, i *instance) (loop.ToolResult, error) {
	c := i.ext
	if herr := c.HostError(); herr != nil && i.ctx.Err() == nil {
		if errors.Is(herr, extism.ErrMemory) {
			return loop.ToolResult{}, &Failure{Plugin: p.name, Tool: t.spec.Name, Kind: FailureMemory, Err: herr, Stderr: i.stderr.summary()}
		}
		return loop.ToolResult{Content: herr.Error(), IsError: true}, nil
	}
	code, f := i.exitCode(ctx, true)
	if qf := i.quotaFailure(); qf != nil && (f == nil || f.Kind != FailureCanceled) {
		f = qf
	}
	if f != nil {
		f.Plugin, f.Tool = p.name, t.spec.Name
		f.Err = trimStack(f.Err)
		return loop.ToolResult{}, f
	}
	exited := i.err != nil // a proc_exit: exitCode took it as an exit code
	if !exited {
		code = c.Returned()
	}
	msg, msgSet := c.ErrorMessage()
	if code != 0 || msgSet {
		var b strings.Builder
		if msg != "" {
			b.WriteString(msg)
		} else if exited {
			fmt.Fprintf(&b, "%s exited with code %d", t.ext.function, code)
		} else {
			fmt.Fprintf(&b, "%s returned %d", t.ext.function, int32(code))
		}
		if s := i.stderr.tail(); s != "" {
			fmt.Fprintf(&b, "\nstderr:\n%s", s)
		}
		return loop.ToolResult{Content: b.String(), IsError: true}, nil
	}
	var res loop.ToolResult
	if t.ext.dialect == DialectPlain {
		res.Content = validUTF8(c.Output())
	} else {
		res.Content, res.IsError = extism.Result(c.Output())
	}
	res.Content = capText(res.Content, p.limits.MaxOutput)
	return res, nil
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
