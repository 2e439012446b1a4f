package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agenthost/agenthost/internal/bytesize"
	"github.com/agenthost/agenthost/internal/sandbox"
	"net/url"
	"sort"
	"strings"

	"github.com/rs/zerolog"
	"github.com/tetratelabs/wazero"

	"github.com/agenthost/agenthost/host/component"
	"github.com/agenthost/agenthost/host/plugin/internal/loadcache"
	"github.com/agenthost/agenthost/internal/hostmem"
	"github.com/agenthost/agenthost/internal/rootfs"
	"github.com/agenthost/agenthost/internal/wasmbin"
	"github.com/agenthost/agenthost/loop"
)

// WASI 0.2 components (kind "component"): host/component parses, links
// and runs them; this file gives them a plugin block's grants and limits
// and turns their outcomes into tool results and Failures.

// componentPlugin is the component state of a Plugin.
type componentPlugin struct {
	k *component.Component
	// env is the granted environment as NAME=value, sorted.
	env    []string
	config map[string]string
	// http is the wasi:http grant; nil when the block allows no origin.
	http *component.HTTPGrant
	// run is a command component's wasi:cli/run, which its tool blocks
	// call; nil when the tools are its exported functions.
	run *component.Func
}

// The component kind: a WASI 0.2 component, told by its binary header.
type componentKind struct{}

func (componentKind) name() Kind      { return KindComponent }
func (componentKind) component() bool { return true }
func (componentKind) prestart() bool  { return false }

// detect claims no core module: a component is told by its header.
func (componentKind) detect(*loadcache.Facts, *Spec) bool { return false }

// load loads a component: its core modules compiled (through the
// runtime's compilation cache), its exported functions its tools. A
// component outside the supported shape (async exports, exported
// resources, nested components with core modules, ...) is refused here.
func (componentKind) load(ctx context.Context, l *loading) error {
	p, err := newComponentPlugin(ctx, l.r, l.spec, l.limits, l.src)
	l.p = p
	return err
}

func newComponentPlugin(ctx context.Context, r *Runtime, spec Spec, limits Limits, src *loadcache.Source) (*Plugin, error) {
	if spec.Reuse {
		return nil, errors.New("reuse is for Extism plugins; a component runs every call in fresh instances")
	}
	if src == nil {
		var err error
		if src, err = r.source(ctx, spec); err != nil {
			return nil, err
		}
	}
	wasm, err := r.pinnedBytes(spec, src)
	if err != nil {
		return nil, err
	}
	if err := wasmbin.CheckHeader(wasm); !errors.Is(err, ErrComponent) {
		if err == nil {
			return nil, fmt.Errorf("%s is a core WebAssembly module, not a WASI 0.2 component; remove kind = \"component\" (or set the kind it is)", sourceName(spec))
		}
		return nil, err
	}
	var allow func(*url.URL) bool
	if len(spec.HTTPAllow) > 0 {
		list, err := sandbox.ParseAllowlist(spec.HTTPAllow)
		if err != nil {
			return nil, err
		}
		allow = list.Allows
	}
	pages := memoryPages(limits.Memory)
	// A component loaded before with these bytes and limit (its load
	// facts say so) is parsed and linked now, which is cheap, and its core
	// modules compiled in the background (internal/loadcache).
	key := loadcache.Key(src.Sum, pages, spec.Name, string(KindComponent))
	later := r.facts.ReadFacts(key, src.Sum, pages, spec.Name, string(KindComponent)) != nil
	k, err := component.Load(ctx, r.rt, wasm, component.Options{MemoryLimitPages: pages, CompileLater: later})
	if err != nil {
		return nil, fmt.Errorf("component %s: %w", sourceName(spec), err)
	}
	p := &Plugin{r: r, name: spec.Name, kind: KindComponent, limits: limits, byName: map[string]*tool{}}
	if later {
		p.mod = r.later(ctx, spec.Name, src, key, func(bctx context.Context) (wazero.CompiledModule, error) {
			return nil, k.Compile(bctx)
		})
	} else {
		p.mod = readyModule(nil)
	}
	ok := false
	defer func() {
		if !ok {
			p.closeMounts()
			p.mod.drop(ctx)
			k.Close(context.WithoutCancel(ctx))
		}
	}()
	p.grants = grant(nil, spec)
	p.grants.HTTPAllow = append([]string(nil), spec.HTTPAllow...)
	base, err := p.baseConfig()
	if err != nil {
		return nil, err
	}
	cp := &componentPlugin{k: k, config: spec.Config}
	for name, v := range p.grants.Env {
		if !strings.HasPrefix(name, "AGENTHOST_") {
			cp.env = append(cp.env, name+"="+v)
		}
	}
	sort.Strings(cp.env)
	if allow != nil {
		cp.http = &component.HTTPGrant{Allow: allow}
	}
	p.comp = cp
	if len(spec.Tools) > 0 {
		// A command component: its tools are the tool blocks, each a
		// run of wasi:cli/run with the command line and stdin it builds.
		if cp.run = k.RunFunc(); cp.run == nil {
			return nil, fmt.Errorf("tool blocks are for command components, which export wasi:cli/run; %s does not: every function it exports is a tool, described by its WIT types and docs, so remove the tool blocks (tool_prefix and rename change the names)", sourceName(spec))
		}
		for _, ct := range spec.Tools {
			if err := p.addTool(ct.Name, ct.Description, ct.InputSchema, &ct, base); err != nil {
				return nil, err
			}
			p.byName[ct.Name].call = p.callComponent
		}
	} else {
		for _, ct := range k.Tools() {
			if err := p.addTool(ct.Name, ct.Description, ct.InputSchema, nil, base); err != nil {
				return nil, err
			}
			t := p.byName[ct.Name]
			t.comp = ct.Name
			t.call = p.callComponent
		}
	}
	if !later {
		r.facts.WriteFacts(&loadcache.Facts{Format: loadcache.Format, Key: key, Module: src.Sum, Pages: pages, Name: spec.Name, Kind: string(KindComponent),
			Exports: map[string]exportSig{}})
	}
	ok = true
	return p, nil
}

// sandbox is what one call of the component may reach: the plugin's
// grants, with a fresh write quota over its read-write mounts.
func (p *Plugin) sandbox() *component.Sandbox {
	cp := p.comp
	sb := &component.Sandbox{
		Env:        cp.env,
		RealClock:  p.grants.Clock,
		RealRandom: p.grants.Random,
		MaxOutput:  int(min(p.limits.MaxOutput, 1<<30)),
		MaxResult:  int(min(p.limits.MaxOutput, 1<<30)),
		HTTP:       cp.http,
		Config:     cp.config,
	}
	for _, m := range p.mounts {
		if !m.fs.ReadOnly() {
			sb.Quota = rootfs.NewQuota(p.limits.MaxWrite, p.limits.MaxFiles)
			break
		}
	}
	for _, m := range p.mounts {
		fs := m.fs
		if !fs.ReadOnly() {
			fs = fs.WithQuota(sb.Quota)
		}
		sb.Mounts = append(sb.Mounts, component.Mount{GuestPath: m.guest, FS: fs, ReadOnly: fs.ReadOnly()})
	}
	return sb
}

// callComponent runs one call of a component's function in fresh
// instances, within limits.timeout. A result::err is an error result; a
// call that does not run to its end is a *sandbox.Failure.
func (p *Plugin) callComponent(ctx context.Context, t *tool, _ loop.ToolCall, args json.RawMessage) (loop.ToolResult, error) {
	cctx, cancel := context.WithTimeout(ctx, p.limits.Timeout)
	defer cancel()
	if _, err := p.mod.wait(cctx); err != nil {
		// Compiled in the background (a cached load): waited for within
		// the call's time.
		kind := sandbox.FailureStart
		switch {
		case ctx.Err() != nil:
			kind = sandbox.FailureCanceled
		case errors.Is(err, context.DeadlineExceeded):
			kind = sandbox.FailureTimeout
		}
		return loop.ToolResult{}, &sandbox.Failure{Plugin: p.name, Tool: t.spec.Name, Kind: kind, Err: err}
	}
	sb, fn := p.sandbox(), t.comp
	if t.cli != nil {
		argv, stdin, err := t.cli.command(args)
		if err != nil {
			return errResult("cannot build the command line of tool %q: %v", t.spec.Name, err), nil
		}
		sb.Args, sb.Stdin, sb.Command, fn, args = argv, stdin, true, p.comp.run.Name, json.RawMessage("{}")
	}
	out, err := p.comp.k.Call(cctx, fn, args, sb)
	if err != nil {
		var ae *component.ArgumentError
		if errors.As(err, &ae) {
			return errResult("invalid arguments for tool %q: %v", t.spec.Name, ae.Err), nil
		}
		return loop.ToolResult{}, p.componentFailure(ctx, t, err)
	}
	res := loop.ToolResult{Content: string(out.JSON), IsError: out.IsError}
	switch {
	case t.cli != nil:
		res = cliResult(out.ExitCode, out.StdoutText, out.StderrText)
	case res.IsError && len(out.Stderr) > 0:
		res.Content += "\nstderr:\n" + sandbox.ValidUTF8(out.Stderr)
	}
	res.Content += p.refusedNote(ctx, t, out)
	return res, nil
}

// refusedNote logs each HTTP request the grant refused, as Extism's are,
// and returns the lines that tell the model: the component got only
// HTTP-request-denied, which it may have swallowed or reworded ("An error
// occurred while using the host API"), and only the host knows the origin
// to allow. Empty when nothing was refused.
func (p *Plugin) refusedNote(ctx context.Context, t *tool, out *component.Outcome) string {
	var b strings.Builder
	for _, r := range out.HTTPRefused {
		zerolog.Ctx(ctx).Warn().Str("plugin", p.name).Str("tool", t.spec.Name).Str("url", r.URL).Str("origin", r.Origin).
			Msg("HTTP request refused: not in the http allow list")
		b.WriteString("\nhost: " + r.Error())
	}
	if more := out.HTTPRefusedAll - len(out.HTTPRefused); more > 0 {
		fmt.Fprintf(&b, "\nhost: %d more HTTP requests refused", more)
	}
	return b.String()
}

// componentFailure names the plugin and the tool in a component's
// *sandbox.Failure and words its error in the plugin block's terms.
func (p *Plugin) componentFailure(ctx context.Context, t *tool, err error) error {
	var f *sandbox.Failure
	if !errors.As(err, &f) {
		return &sandbox.Failure{Plugin: p.name, Tool: t.spec.Name, Kind: sandbox.FailureTrap, Err: err}
	}
	f.Plugin, f.Tool = p.name, t.spec.Name
	cause := f.Err
	f.Err = trimStack(cause)
	if f.Stderr != "" {
		f.Stderr = lastBytes(strings.ToValidUTF8(f.Stderr, "\uFFFD"), 2048)
	}
	switch f.Kind {
	case sandbox.FailureTimeout:
		if ctx.Err() == nil {
			f.Err = fmt.Errorf("no result within %s (limits.timeout): %w", p.limits.Timeout, context.DeadlineExceeded)
		}
	case sandbox.FailureCanceled:
		f.Err = context.Cause(ctx)
	case sandbox.FailureMemory:
		if he := (*hostmem.Error)(nil); errors.As(cause, &he) {
			f.Err = fmt.Errorf("%s would make the host hold more than limits.memory (%s) for the call (the host holds no more for a plugin than the plugin may hold itself; raise limits.memory if values this large are expected)", he.What, bytesize.Exact(p.limits.Memory))
			break
		}
		if inner := errors.Unwrap(cause); inner != nil {
			cause = inner // without the component's own words for the limit
		}
		f.Err = fmt.Errorf("failed with its memory at limits.memory (%s): %w", bytesize.Exact(p.limits.Memory), trimStack(cause))
	case sandbox.FailureOutput:
		f.Err = fmt.Errorf("wrote more than twice limits.max_output (%s) to stdout or stderr and was stopped", bytesize.Exact(uint64(p.limits.MaxOutput)))
	case sandbox.FailureResult:
		f.Kind = sandbox.FailureOutput
		f.Err = fmt.Errorf("its result is larger than limits.max_output (%s)", bytesize.Exact(uint64(p.limits.MaxOutput)))
	case sandbox.FailureQuota:
		f.Err = fmt.Errorf("the call wrote more than limits.max_write (%s) or created more than limits.max_files (%d) entries in its mounts; the excess was refused (raise limits in the plugin block if this is expected)", bytesize.Exact(uint64(p.limits.MaxWrite)), p.limits.MaxFiles)
	}
	return f
}

// lastBytes keeps the end of s, at most n bytes, cut at a rune boundary.
func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	for i := 0; i < len(s) && i < 4; i++ {
		if s[i]&0xc0 != 0x80 {
			return s[i:]
		}
	}
	return s
}

// World is what `plugin inspect` shows of a component: its exported
// functions with their WIT signatures, and its imports with whether
// agenthost provides them.
type World struct {
	Exports []WorldExport `json:"exports"`
	Imports []WorldImport `json:"imports"`
}

// WorldExport is an exported function: a tool.
type WorldExport struct {
	// Tool is the tool name (before tool_prefix and rename).
	Tool string `json:"tool"`
	// Interface is the exported interface ("" for a top-level function),
	// Function the function's name in it.
	Interface string `json:"interface,omitempty"`
	Function  string `json:"function"`
	// Signature is the function's type in WIT syntax.
	Signature string `json:"signature"`
}

// WorldImport is an imported interface (or function).
type WorldImport struct {
	Name string `json:"name"`
	// Provided reports whether agenthost implements it; the functions of
	// one it does not provide trap when called.
	Provided bool `json:"provided"`
	// Missing are the functions of a provided interface agenthost does
	// not implement (they trap when called).
	Missing []string `json:"missing,omitempty"`
	// Used counts the functions of it the component can call; 0: it
	// takes only types from it, and nothing of it can trap.
	Used int `json:"used"`
}

// inspect fills in the report on a component by loading it (its core
// modules compiled, nothing run): its world and tools, or, for a component
// outside the supported shape, why it cannot run here. A malformed
// component is an error.
func (componentKind) inspect(ctx context.Context, i *inspecting, info *Info) error {
	info.Kind = KindComponent
	k, err := component.Load(ctx, i.r.rt, i.wasm, component.Options{MemoryLimitPages: memoryPages(i.limits.Memory)})
	if errors.Is(err, component.ErrShape) {
		info.Kind = ""
		info.Problems = append(info.Problems, err.Error())
		return nil
	}
	if err != nil {
		return fmt.Errorf("WASI 0.2 component: %w", err)
	}
	defer k.Close(ctx)
	w := &World{Exports: []WorldExport{}, Imports: []WorldImport{}}
	for _, f := range k.Funcs() {
		w.Exports = append(w.Exports, WorldExport{Tool: f.Name, Interface: f.Interface, Function: f.Function, Signature: f.Type.String()})
		info.Exports = append(info.Exports, f.Name)
	}
	for _, im := range k.Imports() {
		w.Imports = append(w.Imports, WorldImport{Name: im.Name, Provided: im.Provided, Missing: im.Missing, Used: im.Used})
		info.Imports = append(info.Imports, im.Name)
	}
	info.World = w
	for _, t := range k.Tools() {
		info.Tools = append(info.Tools, loop.ToolSpec{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	return nil
}

// write renders a component's world for a terminal.
func (w *World) write(b *strings.Builder) {
	b.WriteString("world:\n")
	for _, e := range w.Exports {
		name := e.Function
		if e.Interface != "" {
			name = e.Interface + "#" + e.Function
		}
		fmt.Fprintf(b, "  export %s: %s\n", name, e.Signature)
	}
	for _, im := range w.Imports {
		switch {
		case !im.Provided && im.Used == 0:
			fmt.Fprintf(b, "  import %s: not provided, not needed (none of its functions is called: types only)\n", im.Name)
		case !im.Provided:
			fmt.Fprintf(b, "  import %s: NOT PROVIDED (its functions trap when called)\n", im.Name)
		case len(im.Missing) > 0:
			fmt.Fprintf(b, "  import %s: provided, except %s (they trap when called)\n", im.Name, strings.Join(im.Missing, ", "))
		default:
			fmt.Fprintf(b, "  import %s: provided\n", im.Name)
		}
	}
}
