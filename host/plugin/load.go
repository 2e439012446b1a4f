package plugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/rs/zerolog"
	"github.com/tetratelabs/wazero"

	"github.com/agenthost/agenthost/host/plugin/internal/extism"
	"github.com/agenthost/agenthost/internal/defaults"
	"github.com/agenthost/agenthost/internal/sandbox"
	"github.com/agenthost/agenthost/loop"
)

// Loading plugins: a Spec becomes a Plugin. A module whose load facts are
// cached (facts.go) loads from them and compiles later; any other is
// checked in full, compiled and, without a manifest section, described.

// LoadAll loads every spec concurrently (each compiled once; see Load) and
// returns the plugins in the order of specs. errs[i] is the error of
// specs[i], naming the plugin, and nil when it loaded; out[i] is nil when it
// did not.
func (r *Runtime) LoadAll(ctx context.Context, specs []Spec) (out []*Plugin, errs []error) {
	out = make([]*Plugin, len(specs))
	errs = make([]error, len(specs))
	var wg sync.WaitGroup
	for i := range specs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = r.Load(ctx, specs[i])
		}()
	}
	wg.Wait()
	return out, errs
}

// Load reads, checks and compiles one plugin, detects its kind, reads its
// manifest (running describe mode if needed), compiles its tool schemas and
// prepares its sandbox. The error names the plugin and what to do.
func (r *Runtime) Load(ctx context.Context, spec Spec) (*Plugin, error) {
	zerolog.Ctx(ctx).Debug().Str("plugin", spec.Name).Str("cache", r.cacheDir).Msg("loading plugin (compiling it unless cached)")
	p, err := r.load(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("plugin %q: %w", spec.Name, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		p.closeMounts()
		return nil, fmt.Errorf("plugin %q: runtime is closed", spec.Name)
	}
	r.plugins = append(r.plugins, p)
	for _, d := range p.grants.Denied {
		zerolog.Ctx(ctx).Info().Str("plugin", spec.Name).Msg(d)
	}
	return p, nil
}

// load builds the Plugin of spec; Load names it in errors and registers it.
//
// The kinds are told apart here for loading: a new kind is a Kind
// (spec.go), its case below and in the dispatch after the module is
// compiled, building the Plugin's tools with addTool and giving each the
// call function of the kind (tool.call); Plugin.Call checks the arguments
// and hands every call to it. They are told apart again in inspect.go
// (plugin inspect) and in host/config/plugin.go (validation), which a new
// kind also changes.
func (r *Runtime) load(ctx context.Context, spec Spec) (*Plugin, error) {
	switch spec.Kind {
	case "", KindAgenthost, KindWASICLI:
	case KindExtism:
	case KindComponent:
		return r.loadComponent(ctx, spec)
	default:
		return nil, fmt.Errorf("unknown kind %q; want %s", spec.Kind, kindList())
	}
	for _, ct := range spec.Tools {
		if ct.Command == nil {
			return nil, fmt.Errorf("tool %q has no command line (CLITool.Command)", ct.Name)
		}
	}
	src, err := r.source(spec)
	if err != nil {
		return nil, err
	}
	limits := withDefaults(spec.Limits)
	pages := memoryPages(limits.Memory)
	key := factsKey(src.sum, pages, spec.Name, spec.Kind)
	// facts are what an earlier load of this module found (facts.go); with
	// them the module compiles later, else now, in full.
	facts := r.facts.readFacts(key, src.sum, pages, spec.Name, spec.Kind)
	var mod *module
	var cm wazero.CompiledModule
	if facts != nil {
		mod = r.compileLater(ctx, spec.Name, src, pages, key)
	} else {
		wasm, err := r.pinnedBytes(spec, src)
		if err != nil {
			return nil, err
		}
		key = factsKey(src.sum, pages, spec.Name, spec.Kind)
		bin, err := parseBinary(wasm)
		if errors.Is(err, ErrComponent) {
			if spec.Kind == "" {
				return r.loadComponent(ctx, spec)
			}
			return nil, fmt.Errorf("%s is a WASI 0.2 component, not a core module of kind %q; set kind = \"component\" (or remove kind)", sourceName(spec), spec.Kind)
		}
		if err != nil {
			return nil, err
		}
		if cm, err = r.compilePatched(ctx, wasm, bin, pages, src.sum); err != nil {
			return nil, err
		}
		mod = readyModule(cm)
		facts = &loadFacts{Format: factsFormat, Key: key, Module: src.sum, Pages: pages, Name: spec.Name, Kind: spec.Kind,
			Extism: importsExtism(cm), Environ: readsEnv(cm), Exports: exportsOf(cm), Section: string(bin.Custom)}
	}
	var section []byte
	if facts.Section != "" {
		section = []byte(facts.Section)
	}
	p := &Plugin{r: r, name: spec.Name, mod: mod, exports: facts.Exports, limits: limits, byName: map[string]*tool{}}
	ok := false
	defer func() {
		if !ok {
			p.closeMounts()
			mod.drop(ctx)
		}
	}()
	// fresh: the facts were found now, not read: they are stored once the
	// load succeeds.
	fresh := cm != nil
	if facts.Extism && spec.Kind != "" && spec.Kind != KindExtism {
		return nil, fmt.Errorf("the module imports %s: it is an Extism plugin; set kind = \"extism\"", extism.ModuleName)
	}
	if spec.Kind == KindExtism || facts.Extism {
		p.kind = KindExtism
		if err := p.loadExtism(ctx, spec); err != nil {
			return nil, err
		}
		p.prestart.Store(true)
		if fresh {
			r.facts.writeFacts(facts)
		}
		ok = true
		return p, nil
	}
	if _, has := facts.Exports["_start"]; !has {
		if note := reactorNote(facts.Exports); note != "" {
			return nil, errors.New(note)
		}
		return nil, errors.New("module exports no _start function; agenthost runs WASI preview1 commands (build a command, not a library or reactor)")
	}

	p.kind = spec.Kind
	if p.kind == "" {
		switch {
		case section != nil:
			p.kind = KindAgenthost
		case len(spec.Tools) > 0:
			p.kind = KindWASICLI
		default:
			p.kind = KindAgenthost // confirmed by describe below
		}
	}

	switch p.kind {
	case KindAgenthost:
		if len(spec.Tools) > 0 {
			return nil, errors.New("tool blocks are for kind \"wasi_cli\"; an agenthost plugin declares its tools in its manifest")
		}
		if section != nil {
			m, err := ParseManifest(section)
			if err != nil {
				return nil, fmt.Errorf("%s custom section: %w", ManifestSection, err)
			}
			p.manifest, p.manifestSource = m, "custom section"
		} else if facts.Manifest != "" {
			m, err := ParseManifest([]byte(facts.Manifest))
			if err != nil {
				return nil, fmt.Errorf("cached describe output: %w", err)
			}
			p.manifest, p.manifestSource = m, "describe"
		} else {
			dl := limits
			if spec.Kind == "" {
				if !facts.Environ {
					return nil, fmt.Errorf("cannot detect the plugin kind: %w. A plain WASI command needs kind = \"wasi_cli\" and tool blocks", errNoEnv)
				}
				dl = detectLimits(limits)
			}
			m, out, err := r.describeRaw(ctx, mod, spec.Name, dl)
			if err != nil {
				if spec.Kind == "" {
					return nil, detectError(err, dl.Timeout)
				}
				return nil, err
			}
			p.manifest, p.manifestSource = m, "describe"
			facts.Manifest = string(out)
			fresh = true
		}
		p.grants = grant(p.manifest, spec)
		p.reuse = p.manifest.Reuse
	case KindWASICLI:
		if len(spec.Tools) == 0 {
			return nil, errors.New("a wasi_cli plugin needs at least one tool block describing its tool")
		}
		p.grants = grant(nil, spec)
	}

	base, err := p.baseConfig()
	if err != nil {
		return nil, err
	}
	if p.manifest != nil {
		for _, mt := range p.manifest.Tools {
			if err := p.addTool(mt.Name, mt.Description, mt.InputSchema, nil, base); err != nil {
				return nil, err
			}
			p.setToolMeta(mt)
		}
	} else {
		for _, ct := range spec.Tools {
			if err := p.addTool(ct.Name, ct.Description, ct.InputSchema, &ct, base); err != nil {
				return nil, err
			}
		}
	}
	if p.reuse {
		p.shared = &tool{
			spec: loop.ToolSpec{Name: "(any tool)"},
			cfg:  base.WithArgs(p.name).WithEnv("AGENTHOST_MODE", "call").WithEnv("AGENTHOST_REUSE", "1"),
			warm: make(chan *instance, 1),
		}
	}
	p.prestart.Store(p.kind == KindAgenthost)
	if fresh {
		r.facts.writeFacts(facts)
	}
	ok = true
	return p, nil
}

// source finds a plugin's module and its sha256, and checks its pinned
// digest. The bytes of a file or builtin whose sum is remembered (see
// moduleSource) are read only when needed.
func (r *Runtime) source(s Spec) (*moduleSource, error) {
	var src *moduleSource
	switch {
	case s.Builtin != "":
		if _, ok := r.builtin(s.Builtin); !ok {
			return nil, fmt.Errorf("no builtin plugin %q in this build", s.Builtin)
		}
		name := s.Builtin
		src = &moduleSource{name: sourceName(s), read: func() ([]byte, error) {
			b, _ := r.builtin(name)
			return b, nil
		}}
		if exe, err := os.Executable(); err == nil {
			src.statKey = statKey("builtin "+name, exe)
		}
	case s.Path != "":
		path := s.Path
		src = &moduleSource{name: path, statKey: statKey("file", path), read: func() ([]byte, error) {
			b, err := os.ReadFile(path)
			if err != nil {
				return nil, fmt.Errorf("read plugin file: %w", err)
			}
			return b, nil
		}}
	case s.Wasm != nil:
		wasm := s.Wasm
		src = &moduleSource{name: sourceName(s), read: func() ([]byte, error) { return wasm, nil }}
	default:
		return nil, errors.New("plugin has no source")
	}
	if err := r.facts.sumSource(src); err != nil {
		return nil, err
	}
	if err := sandbox.CheckPin(sourceName(s), src.sum, s.SHA256); err != nil {
		return nil, err
	}
	return src, nil
}

// pinnedBytes reads the module of src in full for a full load, which
// hashes what it compiles: a remembered sum that is wrong is corrected
// (rehash) and the pin checked again against it.
func (r *Runtime) pinnedBytes(spec Spec, src *moduleSource) ([]byte, error) {
	wasm, err := r.facts.rehash(src)
	if err != nil {
		return nil, err
	}
	if err := sandbox.CheckPin(sourceName(spec), src.sum, spec.SHA256); err != nil {
		return nil, err
	}
	return wasm, nil
}

func sourceName(s Spec) string {
	switch {
	case s.Builtin != "":
		return "builtin:" + s.Builtin
	case s.Path != "":
		return s.Path
	}
	return "the module"
}

// withDefaults returns l with each zero (or negative) limit replaced by the
// default of the plugin block's limits in agents.hcl.
func withDefaults(l Limits) Limits {
	if l.Memory == 0 {
		l.Memory = defaults.Memory
	}
	if l.Timeout <= 0 {
		l.Timeout = defaults.Timeout
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = defaults.MaxOutput
	}
	if l.MaxWrite <= 0 {
		l.MaxWrite = defaults.MaxWrite
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = defaults.MaxFiles
	}
	return l
}

// compileLater returns the module of wasm (checked in full by an earlier
// load with the same bytes and limit: its load facts say so), to be
// compiled by CompileLoaded or by its first call, whichever comes first.
func (r *Runtime) compileLater(ctx context.Context, name string, src *moduleSource, pages uint32, key string) *module {
	return r.later(ctx, name, src, key, func(bctx context.Context) (wazero.CompiledModule, error) {
		wasm, err := src.bytes()
		// This closure stays with the module (module.compile) for the
		// plugin's lifetime, and src with it: the bytes a load read to
		// hash them must not stay too (megabytes for a Go guest).
		src.wasm = nil
		if err != nil {
			return nil, err
		}
		bin, err := parseBinary(wasm)
		if err != nil {
			return nil, err
		}
		return r.compilePatched(bctx, wasm, bin, pages, src.sum)
	})
}

// later returns a module that build compiles once, in the background
// (CompileLoaded) or at the first call, whichever comes first; build
// returns the compiled module, or nil for a plugin that keeps its own
// (a component). Runtime.Close does not wait for a compilation under way:
// the runtime is released when the last one ends. A build that fails
// drops the facts stored under key, which said it would not.
func (r *Runtime) later(ctx context.Context, name string, src *moduleSource, key string, build func(context.Context) (wazero.CompiledModule, error)) *module {
	m := &module{done: make(chan struct{})}
	log := *zerolog.Ctx(ctx)
	bctx := context.WithoutCancel(ctx)
	m.compile = func() {
		defer close(m.done)
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			m.err = errClosed
			return
		}
		r.compiling++
		r.mu.Unlock()
		cm, err := build(bctx)
		if err != nil {
			// The facts said this module compiles: they are wrong (or the
			// module cache was lost and compiling failed now). Drop them,
			// so the next load checks the module in full before it runs.
			r.facts.dropFacts(key)
			r.facts.forgetSum(src)
			log.Warn().Err(err).Str("plugin", name).Msg("plugin failed to compile; its cached load facts are removed")
		}
		if cm != nil && (r.isClosed() || m.dropped.Load()) {
			cm.Close(bctx)
			cm, err = nil, errClosed
		}
		m.cm, m.err = cm, err
		r.mu.Lock()
		r.compiling--
		release := r.releaseLater && r.compiling == 0
		r.mu.Unlock()
		if release {
			r.release(bctx)
		}
	}
	r.mu.Lock()
	r.pending = append(r.pending, m)
	r.mu.Unlock()
	return m
}

// CompileLoaded compiles, one after the other in the background, the
// modules of plugins loaded from their cached load facts and not compiled
// yet (a call of one compiles its module at once). Front ends call it
// when a run starts, so the compilation overlaps the first model request;
// a run that ends without calling a tool does not wait for it.
func (r *Runtime) CompileLoaded() {
	r.mu.Lock()
	pending := r.pending
	r.pending = nil
	r.mu.Unlock()
	if len(pending) == 0 {
		return
	}
	go func() {
		for _, m := range pending {
			m.begin()
		}
	}()
}
