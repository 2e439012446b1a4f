package plugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/rs/zerolog"
	"github.com/tetratelabs/wazero"

	"github.com/agenthost/agenthost/host/plugin/internal/loadcache"
	"github.com/agenthost/agenthost/internal/defaults"
	"github.com/agenthost/agenthost/internal/ociref"
	"github.com/agenthost/agenthost/internal/sandbox"
)

// Loading plugins: a Spec becomes a Plugin. A module whose load facts are
// cached (internal/loadcache) loads from them and compiles later; any other is
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
// The kinds table (kind.go) decides how: a declared kind loads as that
// kind; with none, a WASI 0.2 component (told by its header) loads as the
// component kind, and a core module as the kind that claims its load
// facts (kind.detect). A core module's facts, read from the cache or
// found now by compiling it, come first; the kind then builds the
// Plugin's tools.
func (r *Runtime) load(ctx context.Context, spec Spec) (*Plugin, error) {
	k, err := declaredKind(spec.Kind)
	if err != nil {
		return nil, err
	}
	if k != nil && k.component() {
		return r.loadComponent(ctx, k, spec, nil)
	}
	for _, ct := range spec.Tools {
		if ct.Command == nil {
			return nil, fmt.Errorf("tool %q has no command line (CLITool.Command)", ct.Name)
		}
	}
	src, err := r.source(ctx, spec)
	if err != nil {
		return nil, err
	}
	limits := withDefaults(spec.Limits)
	pages := memoryPages(limits.Memory)
	key := loadcache.Key(src.Sum, pages, spec.Name, string(spec.Kind))
	// facts are what an earlier load of this module found
	// (internal/loadcache); with them the module compiles later, else
	// now, in full.
	facts := r.facts.ReadFacts(key, src.Sum, pages, spec.Name, string(spec.Kind))
	var mod *module
	var cm wazero.CompiledModule
	if facts != nil {
		mod = r.compileLater(ctx, spec.Name, src, pages, key)
	} else {
		wasm, err := r.pinnedBytes(spec, src)
		if err != nil {
			return nil, err
		}
		key = loadcache.Key(src.Sum, pages, spec.Name, string(spec.Kind))
		bin, err := parseBinary(wasm)
		if errors.Is(err, ErrComponent) {
			if k == nil {
				return r.loadComponent(ctx, componentKindOf(), spec, src)
			}
			return nil, fmt.Errorf("%s is a WASI 0.2 component, not a core module of kind %q; set kind = \"component\" (or remove kind)", sourceName(spec), spec.Kind)
		}
		if err != nil {
			return nil, err
		}
		if cm, err = r.compilePatched(ctx, wasm, bin, pages, src.Sum); err != nil {
			return nil, err
		}
		mod = readyModule(cm)
		facts = coreFacts(cm, bin)
		facts.Format, facts.Key, facts.Module, facts.Pages, facts.Name, facts.Kind = loadcache.Format, key, src.Sum, pages, spec.Name, string(spec.Kind)
	}
	if k == nil {
		k = detectKind(facts, &spec)
	}
	p := &Plugin{r: r, name: spec.Name, kind: k.name(), mod: mod, exports: facts.Exports, limits: limits, byName: map[string]*tool{}}
	ok := false
	defer func() {
		if !ok {
			p.closeMounts()
			mod.drop(ctx)
		}
	}()
	// fresh: the facts were found now, not read: they are stored once the
	// load succeeds.
	l := &loading{r: r, spec: spec, limits: limits, facts: facts, fresh: cm != nil, p: p}
	if err := k.load(ctx, l); err != nil {
		return nil, err
	}
	p.prestart.Store(k.prestart())
	if l.fresh {
		r.facts.WriteFacts(facts)
	}
	ok = true
	return p, nil
}

// loadComponent loads spec with the component kind k, which reads and
// checks the binary itself (it has no core-module load facts). src is
// the module when the caller read it already (a load that found a
// component by its header hands on what it read, so that a module from a
// registry is fetched once), else nil.
func (r *Runtime) loadComponent(ctx context.Context, k kind, spec Spec, src *loadcache.Source) (*Plugin, error) {
	l := &loading{r: r, spec: spec, limits: withDefaults(spec.Limits), src: src}
	if err := k.load(ctx, l); err != nil {
		return nil, err
	}
	l.p.prestart.Store(k.prestart())
	return l.p, nil
}

// source finds a plugin's module and its sha256, and checks its pinned
// digest. The bytes of a file or builtin whose sum is remembered (see
// loadcache.Source) are read only when needed.
func (r *Runtime) source(ctx context.Context, s Spec) (*loadcache.Source, error) {
	var src *loadcache.Source
	switch {
	case s.OCI != nil:
		wasm, err := r.fetch(ctx, s)
		if err != nil {
			return nil, err
		}
		src = &loadcache.Source{Name: sourceName(s), Read: func() ([]byte, error) { return wasm, nil }}
	case s.Builtin != "":
		if _, ok := r.builtin(s.Builtin); !ok {
			return nil, fmt.Errorf("no builtin plugin %q in this build", s.Builtin)
		}
		name := s.Builtin
		src = &loadcache.Source{Name: sourceName(s), Read: func() ([]byte, error) {
			b, _ := r.builtin(name)
			return b, nil
		}}
		if exe, err := os.Executable(); err == nil {
			src.StatKey = loadcache.StatKey("builtin "+name, exe)
		}
	case s.Path != "":
		path := s.Path
		src = &loadcache.Source{Name: path, StatKey: loadcache.StatKey("file", path), Read: func() ([]byte, error) {
			b, err := os.ReadFile(path)
			if err != nil {
				return nil, fmt.Errorf("read plugin file: %w", err)
			}
			return b, nil
		}}
	case s.Wasm != nil:
		wasm := s.Wasm
		src = &loadcache.Source{Name: sourceName(s), Read: func() ([]byte, error) { return wasm, nil }}
	default:
		return nil, errors.New("plugin has no source")
	}
	if err := r.facts.SumSource(src); err != nil {
		return nil, err
	}
	if err := sandbox.CheckPin(sourceName(s), src.Sum, s.SHA256); err != nil {
		return nil, err
	}
	return src, nil
}

// pinnedBytes reads the module of src in full for a full load, which
// hashes what it compiles: a remembered sum that is wrong is corrected
// (rehash) and the pin checked again against it.
func (r *Runtime) pinnedBytes(spec Spec, src *loadcache.Source) ([]byte, error) {
	wasm, err := r.facts.Rehash(src)
	if err != nil {
		return nil, err
	}
	if err := sandbox.CheckPin(sourceName(spec), src.Sum, spec.SHA256); err != nil {
		return nil, err
	}
	return wasm, nil
}

// fetch returns the module of an oci:// source (see Fetch).
func (r *Runtime) fetch(ctx context.Context, s Spec) ([]byte, error) {
	wasm, _, err := r.Fetch(ctx, s.Name, *s.OCI, s.Insecure)
	return wasm, err
}

// Fetched says where a module fetched from a registry came from: what a
// lock file pins (the manifest digest) and, for messages, its layout.
type Fetched struct {
	Source   string `json:"source"`
	Manifest string `json:"manifest"`
	Layout   string `json:"layout"`
}

// Fetch returns the module of ref (internal/ociget: the transport rule
// first, then the registry or its cache, every digest verified), logging
// a warning for plugin name when a tag was taken to its last digest
// because the registry could not be reached.
func (r *Runtime) Fetch(ctx context.Context, name string, ref ociref.Ref, insecure bool) ([]byte, *Fetched, error) {
	a, err := r.oci.Fetch(ctx, ref, insecure)
	if err != nil {
		return nil, nil, err
	}
	log := zerolog.Ctx(ctx)
	if a.Stale {
		log.Warn().Str("plugin", name).Str("source", ref.String()).Str("digest", string(a.Manifest)).
			Msg("the registry could not be reached; running the digest this tag last resolved to, from the cache (the tag may have moved since)")
	}
	log.Debug().Str("plugin", name).Str("source", ref.String()).Str("manifest", string(a.Manifest)).Str("layout", a.Layout).Msg("plugin from a registry")
	return a.Wasm, &Fetched{Source: ref.String(), Manifest: string(a.Manifest), Layout: a.Layout}, nil
}

func sourceName(s Spec) string {
	switch {
	case s.Builtin != "":
		return "builtin:" + s.Builtin
	case s.OCI != nil:
		return s.OCI.String()
	case s.Path != "":
		return s.Path
	}
	return "the module"
}

// withDefaults returns l with each zero (or negative) limit replaced by the
// default of the plugin block's limits in agents.hcl.
func withDefaults(l Limits) Limits {
	l.Memory = defaults.Or(l.Memory, defaults.Memory)
	l.Timeout = defaults.Or(l.Timeout, defaults.Timeout)
	l.MaxOutput = defaults.Or(l.MaxOutput, defaults.MaxOutput)
	l.MaxWrite = defaults.Or(l.MaxWrite, defaults.MaxWrite)
	l.MaxFiles = defaults.Or(l.MaxFiles, defaults.MaxFiles)
	return l
}

// compileLater returns the module of wasm (checked in full by an earlier
// load with the same bytes and limit: its load facts say so), to be
// compiled by CompileLoaded or by its first call, whichever comes first.
func (r *Runtime) compileLater(ctx context.Context, name string, src *loadcache.Source, pages uint32, key string) *module {
	return r.later(ctx, name, src, key, func(bctx context.Context) (wazero.CompiledModule, error) {
		wasm, err := src.Bytes()
		// This closure stays with the module (module.compile) for the
		// plugin's lifetime, and src with it: the bytes a load read to
		// hash them must not stay too (megabytes for a Go guest).
		src.Wasm = nil
		if err != nil {
			return nil, err
		}
		bin, err := parseBinary(wasm)
		if err != nil {
			return nil, err
		}
		return r.compilePatched(bctx, wasm, bin, pages, src.Sum)
	})
}

// later returns a module that build compiles once, in the background
// (CompileLoaded) or at the first call, whichever comes first; build
// returns the compiled module, or nil for a plugin that keeps its own
// (a component). Runtime.Close does not wait for a compilation under way:
// the runtime is released when the last one ends. A build that fails
// drops the facts stored under key, which said it would not.
func (r *Runtime) later(ctx context.Context, name string, src *loadcache.Source, key string, build func(context.Context) (wazero.CompiledModule, error)) *module {
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
			r.facts.DropFacts(key)
			r.facts.ForgetSum(src)
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
