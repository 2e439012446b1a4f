package plugin

import (
	"context"
	"errors"
	"fmt"
	"github.com/agenthost/agenthost/internal/bytesize"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/agenthost/agenthost/host/plugin/internal/extism"
	"github.com/agenthost/agenthost/host/plugin/internal/loadcache"
	"github.com/agenthost/agenthost/host/plugin/internal/ociget"
	"github.com/agenthost/agenthost/internal/rootfs"
	"github.com/agenthost/agenthost/internal/wasmbin"
	"github.com/agenthost/agenthost/plugins"
)

// Runtime is the one wazero runtime of the process. Plugins loaded from it
// share its compilation cache. It is safe for concurrent use.
type Runtime struct {
	rt    wazero.Runtime
	cache wazero.CompilationCache
	// compileLocks holds a mutex per module being compiled (compileLock).
	compileLocks sync.Map
	// cacheDir is the on-disk compilation cache ("" = in memory only).
	cacheDir string
	// facts holds the load facts, module sums and module data in cacheDir
	// (internal/loadcache).
	facts loadcache.Cache
	// oci fetches the modules of oci:// sources, keeping them in
	// cacheDir's agenthost-oci (internal/ociget).
	oci *ociget.Fetcher
	// wasi holds the functions the WASI preview1 host module exports, to
	// check a module's imports before running it.
	wasi map[string]api.FunctionDefinition
	// extism holds the functions of the Extism host module (internal/extism).
	extism map[string]api.FunctionDefinition
	// extUser are the hyper-mcp v2 host functions (extism:host/user).
	extUser map[string]api.FunctionDefinition

	// ctx lives as long as the runtime; pre-started instances derive from it.
	ctx    context.Context
	cancel context.CancelFunc
	bg     sync.WaitGroup

	// started counts instances started, for tests and metrics.
	started atomic.Int64

	mu      sync.Mutex
	closed  bool
	plugins []*Plugin
	// compiling counts background compilations (compileLater); when
	// Close finds some, it sets releaseLater and the last to end releases
	// the runtime.
	compiling    int
	releaseLater bool
	// pending are modules to compile when a run starts (CompileLoaded).
	pending []*module

	// builtin returns the bytes of a builtin plugin ("core"), shared: not
	// to be modified (wasmbin copies before it patches).
	builtin func(name string) ([]byte, bool)

	// protected are the host's own files, which no mount may reach.
	protected []rootfs.Protected
}

// SetProtected sets the host paths no plugin may reach through a mount:
// agenthost's own files and directories (see rootfs.New). It applies to
// the plugins loaded afterwards.
func (r *Runtime) SetProtected(ps []rootfs.Protected) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.protected = append([]rootfs.Protected(nil), ps...)
}

func (r *Runtime) protectedPaths() []rootfs.Protected {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.protected
}

// OCIDir is the directory of the registry cache (internal/ociget) in the
// compilation cache: content-addressed, every read verified.
const OCIDir = "agenthost-oci"

// ociCacheDir is the registry cache of the compilation cache cacheDir:
// none when the compilation cache is in memory only.
func ociCacheDir(cacheDir string) string {
	if cacheDir == "" {
		return ""
	}
	return filepath.Join(cacheDir, OCIDir)
}

// NewRuntime makes the one wazero runtime of the process, with a compilation
// cache on disk in cacheDir ("" = in-memory only). Close releases it.
func NewRuntime(ctx context.Context, cacheDir string) (*Runtime, error) {
	var cache wazero.CompilationCache
	if cacheDir != "" {
		c, err := wazero.NewCompilationCacheWithDir(cacheDir)
		if err != nil {
			return nil, fmt.Errorf("compilation cache %q: %w", cacheDir, err)
		}
		cache = c
	} else {
		cache = wazero.NewCompilationCache()
	}
	cfg := wazero.NewRuntimeConfig().
		WithCompilationCache(cache).
		WithCloseOnContextDone(true)
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	_, err := wasi_snapshot_preview1.Instantiate(ctx, rt)
	if err != nil {
		rt.Close(ctx)
		cache.Close(ctx)
		return nil, fmt.Errorf("instantiate WASI preview1: %w", err)
	}
	ext, err := extism.Instantiate(ctx, rt)
	if err != nil {
		rt.Close(ctx)
		cache.Close(ctx)
		return nil, fmt.Errorf("instantiate the Extism host module: %w", err)
	}
	extUser, err := extism.InstantiateUser(ctx, rt)
	if err != nil {
		rt.Close(ctx)
		cache.Close(ctx)
		return nil, fmt.Errorf("instantiate the hyper-mcp host module: %w", err)
	}
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return &Runtime{
		rt:       rt,
		cache:    cache,
		cacheDir: cacheDir,
		facts:    loadcache.New(cacheDir),
		oci:      ociget.New(ociCacheDir(cacheDir)),
		wasi:     rt.Module(wasi_snapshot_preview1.ModuleName).ExportedFunctionDefinitions(),
		extism:   ext,
		extUser:  extUser,
		ctx:      bctx,
		cancel:   cancel,
		builtin:  plugins.BuiltinShared,
	}, nil
}

// Close stops pre-started instances, then releases the runtime, the
// compilation cache and every mount.
func (r *Runtime) Close(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	plugins := r.plugins
	r.mu.Unlock()

	r.cancel()
	r.bg.Wait()
	var errs []error
	r.mu.Lock()
	// A background compilation cannot be stopped, and wazero must not be
	// closed under it: the last one to end releases the runtime. Close
	// does not wait for them, so a short run does not wait for the
	// compilation of a plugin it never called.
	if r.compiling == 0 {
		errs = append(errs, r.release(ctx))
	} else {
		r.releaseLater = true
	}
	r.mu.Unlock()
	for _, p := range plugins {
		for _, m := range p.mounts {
			errs = append(errs, m.fs.Close())
		}
		if p.ext != nil {
			p.ext.k.Close()
		}
	}
	return errors.Join(errs...)
}

// release closes wazero's runtime and the compilation cache.
func (r *Runtime) release(ctx context.Context) error {
	return errors.Join(r.rt.Close(ctx), r.cache.Close(ctx))
}

func (r *Runtime) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// ManifestSection is the name of the custom section that carries an
// agenthost/1 manifest.
const ManifestSection = "agenthost.manifest"

// ErrComponent is returned for a WASI 0.2 (component model) binary.
var ErrComponent = wasmbin.ErrComponent

// ErrNotWasm is returned for bytes that are not a WebAssembly binary.
var ErrNotWasm = wasmbin.ErrNotWasm

// binary is what the sandbox reads from a module's bytes before compiling
// it; Custom is its manifest section.
type binary = wasmbin.Module

// parseBinary reads the section headers of a core module and its manifest
// section.
func parseBinary(b []byte) (*binary, error) { return wasmbin.Parse(b, ManifestSection) }

// memoryPages is a memory limit in bytes as whole pages, at least one and
// at most the 32-bit limit.
func memoryPages(bytes uint64) uint32 {
	return uint32(min(max(bytes/wasmbin.PageSize, 1), wasmbin.MaxPages))
}

// compile checks a module's header, applies the memory limit, compiles it
// and checks its imports against the WASI preview1 and Extism host modules.
func (r *Runtime) compile(ctx context.Context, wasm []byte, memLimit uint64) (wazero.CompiledModule, *binary, error) {
	bin, err := parseBinary(wasm)
	if err != nil {
		return nil, nil, err
	}
	cm, err := r.compilePatched(ctx, wasm, bin, memoryPages(memLimit), "")
	return cm, bin, err
}

// compilePatched is compile of a module parsed already, with a memory
// limit of pages pages. sum is the module's sha256 ("" if not known): the
// name of its data in the cache (loadcache.GuestData). wasm is not used after
// the patch, so a file plugin's bytes can be collected during the compile.
func (r *Runtime) compilePatched(ctx context.Context, wasm []byte, bin *binary, pages uint32, sum string) (wazero.CompiledModule, error) {
	patched, data, err := r.patchModule(wasm, bin, pages, sum)
	if err != nil {
		return nil, err
	}
	unlock := r.compileLock(sum, pages)
	cm, err := r.rt.CompileModule(ctx, patched)
	if err != nil && r.dropBadCache(ctx, err) {
		cm, err = r.rt.CompileModule(ctx, patched)
	}
	unlock()
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	if err := r.checkImports(cm); err != nil {
		cm.Close(ctx)
		return nil, err
	}
	if data != nil {
		cm = &compiledModule{CompiledModule: cm, data: data}
	}
	return cm, nil
}

// compileLock takes the lock of one module's compilations: the module of
// sum patched for pages memory pages, the same bytes for every plugin
// that loads it. wazero compiles a module once and shares the code among
// its compiled modules; two compilations of the same module at once (two
// plugin blocks of one .wasm, loaded together from the compilation
// cache) could leave a call running code that is gone: a host panic in
// the call, seen under load in plugin_tool_prefix_run. One at a time,
// the second finds the first's code. It returns the unlock.
func (r *Runtime) compileLock(sum string, pages uint32) func() {
	v, _ := r.compileLocks.LoadOrStore(fmt.Sprintf("%s/%d", sum, pages), new(sync.Mutex))
	mu := v.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// patchModule lowers the module's memory maximum to pages and takes its
// data out when it can (wasmbin.SplitData), storing the data under sum;
// a module whose data cannot be stored keeps it (wasmbin.LimitMemory).
func (r *Runtime) patchModule(wasm []byte, bin *binary, pages uint32, sum string) ([]byte, *loadcache.GuestData, error) {
	patched, split, err := wasmbin.SplitData(wasm, bin, pages)
	if err != nil || split == nil {
		return patched, nil, err
	}
	if data := r.facts.GuestData(split, sum); data != nil {
		return patched, data, nil
	}
	patched, err = wasmbin.LimitMemory(wasm, bin, pages)
	return patched, nil, err
}

// dropBadCache handles a compile error caused by an unreadable entry of
// the on-disk cache (a truncated or overwritten file: wazero reports it as
// an error instead of recompiling). It deletes the cached entries so the
// next compile starts afresh, and says whether a retry makes sense. Only
// files are removed: a concurrent compile that has one open still reads it,
// and one that misses recompiles and writes a new entry.
func (r *Runtime) dropBadCache(ctx context.Context, err error) bool {
	if r.cacheDir == "" || !strings.Contains(err.Error(), "compilationcache:") {
		return false
	}
	dirs, _ := filepath.Glob(filepath.Join(r.cacheDir, "wazero-*"))
	removed := 0
	for _, d := range dirs {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if e.Type().IsRegular() && !strings.HasSuffix(e.Name(), ".tmp") && os.Remove(filepath.Join(d, e.Name())) == nil {
				removed++
			}
		}
	}
	zerolog.Ctx(ctx).Warn().Err(err).Str("cache", r.cacheDir).Int("removed", removed).Msg("compilation cache unreadable; cleared it and compiling afresh")
	return removed > 0
}

// checkImports refuses modules whose imports agenthost cannot satisfy.
func (r *Runtime) checkImports(cm wazero.CompiledModule) error {
	var errs []error
	var missing missingImports
	for _, f := range cm.ImportedFunctions() {
		mod, name, _ := f.Import()
		host, what := r.wasi, "WASI preview1's"
		switch mod {
		case extism.ModuleName:
			host, what = r.extism, "Extism's"
		case extism.UserModuleName:
			host, what = r.extUser, "hyper-mcp's"
			if _, ok := host[name]; !ok {
				errs = append(errs, errors.New(extism.UserRefused(name)))
				continue
			}
		}
		def, ok := host[name]
		if (mod != wasi_snapshot_preview1.ModuleName && mod != extism.ModuleName && mod != extism.UserModuleName) || !ok {
			missing.add(mod, name)
			continue
		}
		if !sameTypes(def.ParamTypes(), f.ParamTypes()) || !sameTypes(def.ResultTypes(), f.ResultTypes()) {
			errs = append(errs, fmt.Errorf("imports %s.%s with a signature that differs from %s", mod, name, what))
		}
	}
	for _, m := range cm.ImportedMemories() {
		mod, name, _ := m.Import()
		errs = append(errs, fmt.Errorf("imports memory %s.%s which agenthost does not provide", mod, name))
	}
	if len(errs) > 0 || len(missing.mods) > 0 {
		errs = append(missing.errors(), errs...)
		if note := reactorNote(exportsOf(cm)); note != "" {
			errs = append(errs, errors.New(note))
		}
	}
	return errors.Join(errs...)
}

func sameTypes(a, b []api.ValueType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// compiledModule is a module compiled without its data section and the
// data, for instantiate. Everything else is the CompiledModule's.
type compiledModule struct {
	wazero.CompiledModule
	data *loadcache.GuestData
}

// instantiate is the runtime's InstantiateModule for a module of
// compilePatched: it writes the module's data, if the host keeps it, into
// the new instance's memory. No start function runs inside it: callers
// call the guest's entry points afterwards.
func (r *Runtime) instantiate(ctx context.Context, cm wazero.CompiledModule, cfg wazero.ModuleConfig) (api.Module, error) {
	c, ok := cm.(*compiledModule)
	if !ok {
		return r.rt.InstantiateModule(ctx, cm, cfg.WithStartFunctions())
	}
	mod, err := r.rt.InstantiateModule(ctx, c.CompiledModule, cfg.WithStartFunctions())
	if err != nil {
		return nil, err
	}
	if err := c.data.Write(mod); err != nil {
		mod.Close(ctx)
		return nil, err
	}
	return mod, nil
}

// describe runs the module with AGENTHOST_MODE=describe in a sandbox with
// nothing granted and reads its manifest from stdout.
func (r *Runtime) describe(ctx context.Context, mod *module, name string, limits Limits) (*Manifest, error) {
	m, _, err := r.describeRaw(ctx, mod, name, limits)
	return m, err
}

// describeRaw is describe, also returning the output it parsed.
func (r *Runtime) describeRaw(ctx context.Context, mod *module, name string, limits Limits) (*Manifest, []byte, error) {
	cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions().WithArgs(name).WithEnv("AGENTHOST_MODE", "describe")
	// Its notification lines go to the host's log: no call is running.
	i := newInstance(ctx, r, mod, cfg, limits, Grants{}, nil).takeNotes(context.Background(), name, *zerolog.Ctx(ctx))
	i.runCold(ctx, nil, limits.Timeout)
	code, f := i.exitCode(ctx, false)
	if f != nil {
		f.Plugin, f.Tool = name, "(describe)"
		return nil, nil, fmt.Errorf("describe run failed: %w", f)
	}
	if code != 0 {
		msg := fmt.Sprintf("describe run exited with code %d", code)
		if s := i.stderr.Tail(); s != "" {
			msg += "; stderr: " + s
		}
		return nil, nil, errors.New(msg)
	}
	if i.stdout.Truncated() {
		return nil, nil, fmt.Errorf("describe output exceeds max_output (%s)", bytesize.Exact(uint64(limits.MaxOutput)))
	}
	m, err := ParseManifest(i.stdout.Head())
	if err != nil {
		return nil, nil, fmt.Errorf("describe output: %w", err)
	}
	return m, i.stdout.Head(), nil
}
