package component

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// Options configure Load.
type Options struct {
	// MemoryLimitPages is the most linear memory, in 64 KiB pages, that
	// each of the component's memories may grow to; the core modules are
	// rewritten to carry it as their maximum before they are compiled. 0
	// means DefaultMemoryLimitPages. A component whose memory starts
	// larger is refused.
	MemoryLimitPages uint32
	// CompileLater leaves the core modules to Compile, which must have
	// returned before a Call: a caller that knows the component loaded
	// before (its checks passed) compiles it in the background, off the
	// start-up. By default Load compiles them.
	CompileLater bool
}

// DefaultMemoryLimitPages is the memory limit of Options: 4096 pages
// (256 MiB).
const DefaultMemoryLimitPages = 4096

// HostBudget is how many bytes the host may hold for one call of k (the
// sandbox's rule, package hostmem): the values it lifts from the guest's
// memory, lowers into it and keeps for it (header fields, HTTP bodies),
// each charged before it is copied. It is the memory limit
// (Options.MemoryLimitPages), so a guest makes the host hold no more than
// it may hold itself. A call past it fails with sandbox.FailureMemory wrapping
// ErrHostBudget.
func (k *Component) HostBudget() uint64 { return uint64(k.memLimit) * 65536 }

// ErrMemoryLimit is wrapped by the load error of a component whose memory
// starts beyond Options.MemoryLimitPages.
var ErrMemoryLimit = errors.New("memory limit")

// Component is a loaded component: parsed, checked against the supported
// shape, its core modules compiled. It is safe for concurrent use; each
// Call runs in fresh instances.
type Component struct {
	rt       wazero.Runtime
	c        *comp
	mods     []*coreModule
	compiled []wazero.CompiledModule
	// bundles are the compiled re-export modules of the core instances
	// made of inline exports, by core instance index.
	bundles map[int]wazero.CompiledModule
	host    wazero.CompiledModule
	// hostIdx maps a core function made by canon lower or resource.drop
	// to its export in the host module.
	hostIdx  map[int]int
	lowered  []*lowering
	funcs    []*Func
	imports  []Import
	docs     packageDocs
	memLimit uint32
	// itemTypes are the types of each core instance's exports.
	itemTypes []map[string]coreItem
}

// Func is an exported function of a component: a tool.
type Func struct {
	// Name is the tool name, as Wassette's component2json makes it: the
	// interface's export name and the function's, lower-cased, with ':',
	// '/', '.', '@' and other characters outside [a-z0-9-] replaced by
	// '_' and joined by '_' ("local:demo/text@0.1.0" and "upper" give
	// "local_demo_text_0_1_0_upper"); a function exported at the top
	// level keeps its own name.
	Name string
	// Interface is the exported interface ("" for a top-level function)
	// and Function the function's name in it.
	Interface, Function string
	Type                *FuncType
	// Doc is the function's documentation from the component's
	// package-docs section, or "".
	Doc  string
	fn   *compFunc
	tool Tool // rendered at load (describe)
}

// Import is an interface or function the component imports.
type Import struct {
	// Name is the import's name, like "wasi:io/streams@0.2.3".
	Name string
	// Provided reports whether agenthost implements it. A function of an
	// import that is not provided traps when called.
	Provided bool
	// Missing lists the functions of a provided interface that agenthost
	// does not implement (they trap when called).
	Missing []string
	// Used counts the functions of the import the component's code can
	// call (those it lowers); 0 for an import it takes only types from,
	// which nothing can trap on, provided or not.
	Used int
}

// Load parses a component, checks that it has the supported shape and
// compiles its core modules with rt (whose compilation cache applies).
// Errors wrapping ErrShape name what is outside the supported shape.
func Load(ctx context.Context, rt wazero.Runtime, wasm []byte, opts Options) (*Component, error) {
	c, err := parseComponent(wasm)
	if err != nil {
		return nil, err
	}
	if len(c.modules) == 0 {
		return nil, shapeError("the component has no core module")
	}
	limit := opts.MemoryLimitPages
	if limit == 0 {
		limit = DefaultMemoryLimitPages
	}
	k := &Component{rt: rt, c: c, bundles: map[int]wazero.CompiledModule{}, hostIdx: map[int]int{}, memLimit: limit}
	k.docs = parseDocs(c.docs)
	err = k.link(ctx)
	if err == nil && !opts.CompileLater {
		err = k.Compile(ctx)
	}
	if err != nil {
		k.Close(ctx)
		return nil, err
	}
	return k, nil
}

// Compile compiles the core modules (through the runtime's compilation
// cache), unless they are compiled already. It is not safe for concurrent
// use: Load calls it, or, with Options.CompileLater, the caller, once,
// before any Call.
func (k *Component) Compile(ctx context.Context) error {
	if len(k.compiled) > 0 {
		return nil
	}
	var compiled []wazero.CompiledModule
	for i, b := range k.c.modules {
		if k.mods[i].hasMemory {
			var err error
			if b, err = limitMemory(b, k.memLimit); err != nil {
				return err
			}
		}
		cm, err := k.rt.CompileModule(ctx, b)
		if err != nil {
			for _, m := range compiled {
				m.Close(ctx)
			}
			return fmt.Errorf("compiling core module %d: %w", i, err)
		}
		compiled = append(compiled, cm)
	}
	k.compiled = compiled
	return nil
}

// Close releases the compiled modules.
func (k *Component) Close(ctx context.Context) error {
	for _, m := range k.compiled {
		if m != nil {
			m.Close(ctx)
		}
	}
	for _, m := range k.bundles {
		m.Close(ctx)
	}
	if k.host != nil {
		k.host.Close(ctx)
	}
	return nil
}

// Funcs returns the exported functions, in export order.
func (k *Component) Funcs() []*Func { return k.funcs }

// Imports returns what the component imports and whether each is
// provided.
func (k *Component) Imports() []Import { return k.imports }

// RunFunc returns the command entry of a command component, its
// wasi:cli/run export (any 0.2.x version) run: func() -> result, or nil
// when it has none. It is called with Sandbox.Command set, the command
// line in Sandbox.Args and its stdin in Sandbox.Stdin.
func (k *Component) RunFunc() *Func {
	for _, f := range k.funcs {
		iface, ver := splitVersion(f.Interface)
		if iface == "wasi:cli/run" && supportedVersion(iface, ver) && f.Function == "run" && len(f.Type.Params) == 0 {
			return f
		}
	}
	return nil
}

// Func returns the exported function with the given tool name, or nil.
func (k *Component) Func(name string) *Func {
	for _, f := range k.funcs {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func (k *Component) link(ctx context.Context) error {
	c := k.c
	// Core modules.
	for i, b := range c.modules {
		m, err := parseCoreModule(b, 0)
		if err != nil {
			return fmt.Errorf("core module %d: %w", i, err)
		}
		if c.modules[i], m.emptyName, err = renameEmptyModule(b, m); err != nil {
			return fmt.Errorf("core module %d: %w", i, err)
		}
		k.mods = append(k.mods, m)
	}
	// The types of every core instance's exports, checking each
	// instantiation's imports on the way.
	for i, ci := range c.coreInsts {
		items := map[string]coreItem{}
		if ci.module >= 0 {
			m := k.mods[ci.module]
			args := map[string]int{}
			for _, a := range ci.args {
				if a.name == "" {
					args[m.emptyName] = a.inst
				} else {
					args[a.name] = a.inst
				}
			}
			for _, im := range m.imports {
				src, ok := args[im.module]
				if !ok {
					return fmt.Errorf("core instance %d: core module %d imports from %q, which its instantiation does not supply", i, ci.module, im.module)
				}
				have, ok := k.itemTypes[src][im.name]
				if !ok || have.sort != im.item.sort {
					return fmt.Errorf("core instance %d: core module %d imports %s.%s, which core instance %d does not export", i, ci.module, im.module, im.name, src)
				}
				if im.item.sort == coreSortFunc && (string(have.fn.params) != string(im.item.fn.params) || string(have.fn.results) != string(im.item.fn.results)) {
					return fmt.Errorf("core instance %d: core module %d imports %s.%s as %s, but it is %s", i, ci.module, im.module, im.name, im.item.fn, have.fn)
				}
			}
			items = m.exports
		} else {
			var imports []bundleImport
			for _, it := range ci.items {
				bi, err := k.bundleSource(it)
				if err != nil {
					return fmt.Errorf("core instance %d: %w", i, err)
				}
				items[it.name] = bi.item
				imports = append(imports, bi)
			}
			cm, err := k.rt.CompileModule(ctx, bundleModule(imports))
			if err != nil {
				return fmt.Errorf("core instance %d: linking its exports: %w", i, err)
			}
			k.bundles[i] = cm
		}
		k.itemTypes = append(k.itemTypes, items)
	}
	if err := k.buildHost(ctx); err != nil {
		return err
	}
	if err := k.collectExports(); err != nil {
		return err
	}
	if err := k.describe(); err != nil {
		return err
	}
	k.collectImports()
	return nil // compiling, not cheap, is Compile's
}

// bundleSource says where an inline export of a core instance comes from
// and what its type is.
func (k *Component) bundleSource(it bundleItem) (bundleImport, error) {
	c := k.c
	var ref coreRef
	switch it.sort {
	case coreSortFunc:
		f := c.coreFuncs[it.idx]
		if f.kind != cfExport {
			sig, err := k.coreFuncSig(it.idx)
			if err != nil {
				return bundleImport{}, err
			}
			return bundleImport{module: "host", field: "h" + strconv.Itoa(it.idx), export: it.name,
				item: coreItem{sort: coreSortFunc, fn: sig}}, nil
		}
		ref = f.ref
	case coreSortMemory:
		ref = c.coreMems[it.idx]
	case coreSortTable:
		ref = c.coreTables[it.idx]
	case coreSortGlobal:
		ref = c.coreGlobal[it.idx]
	}
	item, ok := k.itemTypes[ref.inst][ref.name]
	if !ok || item.sort != it.sort {
		return bundleImport{}, fmt.Errorf("core instance %d exports nothing named %q of that kind", ref.inst, ref.name)
	}
	if item.shared {
		return bundleImport{}, shapeError("shared memories (threads) are not supported")
	}
	return bundleImport{module: "i" + strconv.Itoa(ref.inst), field: ref.name, export: it.name, item: item}, nil
}

// coreFuncSig is the core signature of core function i.
func (k *Component) coreFuncSig(i int) (coreSig, error) {
	f := k.c.coreFuncs[i]
	switch f.kind {
	case cfExport:
		item, ok := k.itemTypes[f.ref.inst][f.ref.name]
		if !ok || item.sort != coreSortFunc {
			return coreSig{}, fmt.Errorf("core instance %d exports no function %q", f.ref.inst, f.ref.name)
		}
		return item.fn, nil
	case cfDrop:
		return coreSig{params: []byte{byte(i32)}}, nil
	}
	ft := k.c.funcs[f.fn].ft
	params, _ := flattenParams(ft)
	results, spilled := flattenResults(ft)
	var sig coreSig
	for _, p := range params {
		sig.params = append(sig.params, byte(p))
	}
	if spilled {
		sig.params = append(sig.params, byte(i32))
	} else {
		for _, r := range results {
			sig.results = append(sig.results, byte(r))
		}
	}
	return sig, nil
}

// lowering is a component function lowered into a core function: an
// import the host implements (or not).
type lowering struct {
	core  int // core function index
	fn    *compFunc
	opts  canonOpts
	drop  *Resource // for resource.drop
	impl  hostFunc  // nil: not provided
	label string    // "wasi:io/streams@0.2.3#[method]output-stream.write"
	sig   coreSig
}

// buildHost compiles the host module: one function per canon lower and
// resource.drop, each finding its call's state through the context.
func (k *Component) buildHost(ctx context.Context) error {
	b := k.rt.NewHostModuleBuilder("agenthost:component")
	for i, f := range k.c.coreFuncs {
		if f.kind == cfExport {
			continue
		}
		sig, err := k.coreFuncSig(i)
		if err != nil {
			return err
		}
		lw := &lowering{core: i, opts: f.opts, sig: sig}
		if f.kind == cfDrop {
			lw.drop = f.res
			lw.label = "resource.drop " + f.res.Key
		} else {
			lw.fn = k.c.funcs[f.fn]
			if lw.fn.kind != fnImport {
				return shapeError("a lifted function is lowered again inside the component (component-internal calls are not supported)")
			}
			iface, ver := splitVersion(lw.fn.iface)
			lw.label = lw.fn.iface + "#" + lw.fn.name
			if lw.fn.iface == "" {
				lw.label = lw.fn.name
			}
			if supportedVersion(iface, ver) {
				lw.impl = hostFuncs[iface+"#"+lw.fn.name]
			}
			if err := checkLowerOpts(lw); err != nil {
				return err
			}
		}
		k.hostIdx[i] = len(k.lowered)
		k.lowered = append(k.lowered, lw)
		params := make([]api.ValueType, len(sig.params))
		for j, p := range sig.params {
			params[j] = api.ValueType(p)
		}
		results := make([]api.ValueType, len(sig.results))
		for j, r := range sig.results {
			results[j] = api.ValueType(r)
		}
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, _ api.Module, stack []uint64) {
			callFrom(ctx).invokeHost(lw, stack)
		}), params, results).WithName(lw.label).Export("h" + strconv.Itoa(i))
	}
	cm, err := b.Compile(ctx)
	if err != nil {
		return fmt.Errorf("building the host functions: %w", err)
	}
	k.host = cm
	return nil
}

// checkLowerOpts checks that a lowering that moves strings or lists has
// the memory (and, for results, the realloc) the canonical ABI needs.
func checkLowerOpts(lw *lowering) error {
	ft := lw.fn.ft
	_, ps := flattenParams(ft)
	_, rs := flattenResults(ft)
	needMem := ps || rs
	needRealloc := false
	for _, p := range ft.Params {
		needMem = needMem || hasBulk(p.Type)
	}
	if ft.Result != nil && hasBulk(ft.Result) {
		needMem, needRealloc = true, true
	}
	if needMem && lw.opts.memory < 0 {
		return fmt.Errorf("import %s is lowered without the memory option its signature needs", lw.label)
	}
	if needRealloc && lw.opts.realloc < 0 {
		return fmt.Errorf("import %s is lowered without the realloc option its result needs", lw.label)
	}
	return nil
}

// hasBulk reports whether values of t live in memory (strings, lists).
func hasBulk(t *Type) bool { return t.bulk }

// supportedVersion reports whether an import's version is one agenthost
// implements: any WASI 0.2.x release or prerelease.
func supportedVersion(iface, ver string) bool {
	return ver == "0.2" || strings.HasPrefix(ver, "0.2.")
}

// maxTools bounds the functions a component exports: each is a tool
// whose description is sent to the model with every request. (An instance
// of many functions exported many times over would make many more tools
// than the binary has bytes.)
const maxTools = 1000

func (k *Component) collectExports() error {
	c := k.c
	byName := map[string]*Func{}
	add := func(iface, name string, f *compFunc) error {
		if f.kind != fnLift {
			return shapeError("export %q re-exports an import; only functions the component implements can be tools", name)
		}
		if f.ft.Async || f.opts.async {
			return shapeError("export %q is an async function: only synchronous exports are supported", joinName(iface, name))
		}
		for _, p := range f.ft.Params {
			if u := p.Type.unsupported(); u != "" {
				return shapeError("export %q: parameter %q is %s, which a tool cannot take", joinName(iface, name), p.Name, u)
			}
		}
		if f.ft.Result != nil {
			if u := f.ft.Result.unsupported(); u != "" {
				return shapeError("export %q: its result is %s, which a tool cannot return", joinName(iface, name), u)
			}
		}
		if c.coreFuncs[f.core].kind != cfExport {
			return shapeError("export %q lifts a host function", joinName(iface, name))
		}
		if err := checkLiftOpts(f); err != nil {
			return fmt.Errorf("export %q: %w", joinName(iface, name), err)
		}
		fn := &Func{Name: toolName(iface, name), Interface: iface, Function: name, Type: f.ft, fn: f}
		fn.Doc = k.docs.lookup(iface, name)
		if o, ok := byName[fn.Name]; ok {
			return fmt.Errorf("exports %q and %q both make the tool name %q", joinName(o.Interface, o.Function), joinName(iface, name), fn.Name)
		}
		if len(fn.Name) > 128 {
			return fmt.Errorf("export %q makes a tool name longer than 128 characters", joinName(iface, name))
		}
		if len(k.funcs) >= maxTools {
			return fmt.Errorf("the component exports more than %d functions, agenthost's limit on a component's tools", maxTools)
		}
		byName[fn.Name] = fn
		k.funcs = append(k.funcs, fn)
		return nil
	}
	for _, e := range c.exports {
		switch e.sort {
		case sortFunc:
			if err := add("", e.name, c.funcs[e.idx]); err != nil {
				return err
			}
		case sortInstance:
			inst := c.insts[e.idx]
			if inst.itype != nil {
				return shapeError("export %q re-exports an imported instance", e.name)
			}
			for _, n := range inst.names {
				if err := add(e.name, n, c.funcs[inst.funcs[n]]); err != nil {
					return err
				}
			}
		case sortType:
		default:
			return shapeError("the component exports %s (%q)", aSort(e.sort), e.name)
		}
	}
	return nil
}

func checkLiftOpts(f *compFunc) error {
	ft := f.ft
	_, ps := flattenParams(ft)
	_, rs := flattenResults(ft)
	needMem, needRealloc := ps || rs, ps
	for _, p := range ft.Params {
		if hasBulk(p.Type) {
			needMem, needRealloc = true, true
		}
	}
	if ft.Result != nil && hasBulk(ft.Result) {
		needMem = true
	}
	if needMem && f.opts.memory < 0 {
		return errors.New("lifted without the memory option its signature needs")
	}
	if needRealloc && f.opts.realloc < 0 {
		return errors.New("lifted without the realloc option its parameters need")
	}
	return nil
}

func joinName(iface, name string) string {
	if iface == "" {
		return name
	}
	return iface + "#" + name
}

func (k *Component) collectImports() {
	seen := map[string]int{}
	for _, name := range k.c.imports {
		if _, ok := seen[name]; ok {
			continue
		}
		iface, ver := splitVersion(name)
		im := Import{Name: name, Provided: supportedVersion(iface, ver) && providedInterfaces[iface]}
		seen[name] = len(k.imports)
		k.imports = append(k.imports, im)
	}
	for _, lw := range k.lowered {
		if lw.fn == nil {
			continue
		}
		i, ok := seen[lw.fn.iface]
		if !ok {
			continue
		}
		k.imports[i].Used++
		if lw.impl == nil && k.imports[i].Provided {
			k.imports[i].Missing = append(k.imports[i].Missing, lw.fn.name)
		}
	}
}

// toolName makes a tool name as Wassette's component2json does.
func toolName(iface, name string) string {
	norm := func(s string) string {
		var b strings.Builder
		for _, r := range strings.ToLower(s) {
			if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' {
				b.WriteRune(r)
			} else {
				b.WriteByte('_')
			}
		}
		return b.String()
	}
	if iface == "" {
		return norm(name)
	}
	return norm(iface) + "_" + norm(name)
}
