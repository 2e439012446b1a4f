package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/agenthost/agenthost/loop"
)

// Dialect is how the tools of an Extism plugin are found and called.
type Dialect string

const (
	// DialectPlain: any Extism plugin; the Spec's CLITools name the exports
	// to call (CLITool.Function) and build their input.
	DialectPlain Dialect = "plain"
	// DialectMCPRun: mcp.run servlets and hyper-mcp v1 plugins, exporting
	// describe and call.
	DialectMCPRun Dialect = "mcp.run"
	// DialectHyperMCP2: hyper-mcp v2 plugins, exporting list_tools and
	// call_tool.
	DialectHyperMCP2 Dialect = "hyper-mcp-v2"
)

// dialectOf detects the dialect from a module's exports.
func dialectOf(exports map[string]exportSig) Dialect {
	has := func(n string) bool { _, ok := exports[n]; return ok }
	switch {
	case has("list_tools") && has("call_tool"):
		return DialectHyperMCP2
	case has("describe") && has("call"):
		return DialectMCPRun
	}
	return DialectPlain
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
		if mod, _, _ := f.Import(); mod == extismModule {
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
	allow, err := parseAllow(spec.HTTPAllow)
	if err != nil {
		return err
	}
	p.ext = &extismPlugin{name: spec.Name, config: maps.Clone(spec.Config), http: allow, vars: map[string][]byte{}, reuse: spec.Reuse, key: &tool{}}
	if p.ext.config == nil {
		p.ext.config = map[string]string{}
	}
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
	listFn, callFn := "describe", "call"
	if p.dialect == DialectHyperMCP2 {
		listFn, callFn = "list_tools", "call_tool"
	}
	for _, fn := range []string{listFn, callFn} {
		if err := checkExport(exports, fn); err != nil {
			return err
		}
	}
	tools, err := p.listTools(ctx, listFn, base)
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

// mcpTool is a tool as describe and list_tools return it.
type mcpTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// listTools runs describe or list_tools in a fresh instance with the
// plugin's grants and reads {"tools":[...]}.
func (p *Plugin) listTools(ctx context.Context, fn string, cfg wazero.ModuleConfig) ([]mcpTool, error) {
	input := []byte("{}")
	if fn == "list_tools" {
		input = []byte(`{"context":{},"request":{}}`)
	}
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
	var doc struct {
		Tools *[]mcpTool `json:"tools"`
	}
	if err := json.Unmarshal(i.ext.output, &doc); err != nil || doc.Tools == nil {
		return nil, fmt.Errorf("%s did not return {\"tools\":[...]}: %s", fn, shorten(string(i.ext.output), 200))
	}
	return *doc.Tools, nil
}

// newExtismInstance makes an instance that calls t's export; parent is the
// context the instance lives in, logCtx carries the logger.
func (p *Plugin) newExtismInstance(parent, logCtx context.Context, t *tool, cfg wazero.ModuleConfig) *instance {
	i := newInstance(parent, p.r, p.mod, cfg, p.limits, p.grants, p.mounts)
	c := newExtismCall(p.ext, p.limits, *zerolog.Ctx(logCtx))
	c.ctx = i.ctx
	i.ext = c
	i.extFn = t.ext.function
	return i
}

// execExtism instantiates an Extism plugin, initialises its language
// runtime, waits for its input (a pre-started instance waits here) and
// calls its export.
func (i *instance) execExtism(cfg wazero.ModuleConfig) api.Module {
	ctx := context.WithValue(i.ctx, extismKey{}, i.ext)
	cm, err := i.mod.wait(ctx)
	if err != nil {
		i.err = err
		return nil
	}
	i.r.started.Add(1)
	ctx, mem := withInstanceMemory(ctx)
	i.mem = mem
	mod, err := i.r.instantiate(ctx, cm, cfg)
	if err != nil {
		i.err = err
		return nil
	}
	i.instantiated = true
	defer func() { i.memBytes = memorySize(mod) }()
	// As Extism: a WASI reactor is initialised by _initialize, a command
	// by __wasm_call_ctors; Haskell needs hs_init too.
	init := mod.ExportedFunction("_initialize")
	if init == nil {
		init = mod.ExportedFunction("__wasm_call_ctors")
	}
	if init != nil && i.extFn != "_start" && i.extFn != "_initialize" {
		if _, err := init.Call(ctx); err != nil {
			i.err = err
			return mod
		}
	}
	if hs := mod.ExportedFunction("hs_init"); hs != nil && len(hs.Definition().ParamTypes()) == 2 {
		if _, err := hs.Call(ctx, 0, 0); err != nil {
			i.err = err
			return mod
		}
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
	i.ext.setInput(input)
	res, err := fn.Call(ctx)
	i.err = err
	if err == nil {
		i.ext.returned = true
		if len(res) > 0 {
			i.ext.rc = uint32(res[0])
		}
	}
	return mod
}

// callExtism runs one call of an Extism plugin's tool: in its pre-started
// instance when there is one, else in a fresh one.
func (p *Plugin) callExtism(ctx context.Context, t *tool, call loop.ToolCall, args json.RawMessage) (loop.ToolResult, error) {
	var input []byte
	switch t.ext.dialect {
	case DialectPlain:
		_, in, err := t.cli.command(args)
		if err != nil {
			return errResult("cannot build the input of tool %q: %v", t.spec.Name, err), nil
		}
		input = in
	case DialectMCPRun:
		input, _ = json.Marshal(map[string]any{"params": map[string]any{"name": t.ext.name, "arguments": args}})
	case DialectHyperMCP2:
		input, _ = json.Marshal(map[string]any{
			"context": map[string]any{},
			"request": map[string]any{"name": t.ext.name, "arguments": args},
		})
	}
	if p.ext.reuse {
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
	if c.hostErr != nil && i.ctx.Err() == nil {
		if errors.Is(c.hostErr, errExtismMemory) {
			return loop.ToolResult{}, &Failure{Plugin: p.name, Tool: t.spec.Name, Kind: FailureMemory, Err: c.hostErr, Stderr: i.stderr.summary()}
		}
		return loop.ToolResult{Content: c.hostErr.Error(), IsError: true}, nil
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
		code = c.rc
	}
	if code != 0 || c.errMsg != nil {
		var b strings.Builder
		if c.errMsg != nil && *c.errMsg != "" {
			b.WriteString(*c.errMsg)
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
		res.Content = validUTF8(c.output)
	} else {
		res = mcpResult(c.output)
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

// mcpContent is one item of an MCP CallToolResult.
type mcpContent struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
	Resource *struct {
		URI      string `json:"uri"`
		MimeType string `json:"mimeType"`
		Text     string `json:"text"`
		Blob     string `json:"blob"`
	} `json:"resource"`
}

// mcpResult reads an MCP CallToolResult: text items joined, other items as
// a short note naming their type and size (never their data).
func mcpResult(out []byte) loop.ToolResult {
	var cr struct {
		Content *[]mcpContent `json:"content"`
		IsError bool          `json:"isError"`
	}
	trimmed := bytes.TrimSpace(out)
	if err := json.Unmarshal(trimmed, &cr); err != nil || cr.Content == nil {
		return loop.ToolResult{Content: validUTF8(out)}
	}
	parts := make([]string, 0, len(*cr.Content))
	for _, c := range *cr.Content {
		switch {
		case c.Type == "text":
			parts = append(parts, c.Text)
		case c.Type == "resource" && c.Resource != nil:
			r := c.Resource
			n := len(r.Text) + len(r.Blob)
			parts = append(parts, fmt.Sprintf("[resource %s (%s, %s) omitted]", r.URI, orUnknown(r.MimeType), sizeString(uint64(n))))
		default:
			parts = append(parts, fmt.Sprintf("[%s content (%s, %s of base64) omitted]", c.Type, orUnknown(c.MimeType), sizeString(uint64(len(c.Data)))))
		}
	}
	return loop.ToolResult{Content: validUTF8([]byte(strings.Join(parts, "\n"))), IsError: cr.IsError}
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
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
