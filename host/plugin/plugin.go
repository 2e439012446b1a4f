package plugin

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/tetratelabs/wazero"

	"github.com/agenthost/agenthost/host/plugin/internal/extism"
	"github.com/agenthost/agenthost/internal/rootfs"
	"github.com/agenthost/agenthost/internal/toolname"
	"github.com/agenthost/agenthost/loop"
)

// Plugin is a loaded plugin: a compiled module, its tools with compiled
// schemas, and its sandbox. It is safe for concurrent use; every call runs
// in its own module instance, or, for a plugin whose manifest declares
// "reuse", in an instance that serves the calls of one agent of one run
// (see Scope).
type Plugin struct {
	r    *Runtime
	name string
	kind Kind
	// mod is the compiled module, or the compilation under way (module.go).
	mod *module
	// exports are the module's exported functions.
	exports  map[string]exportSig
	manifest *Manifest
	// manifestSource says where the manifest came from: "custom section" or
	// "describe"; "" without a manifest.
	manifestSource string
	grants         Grants
	limits         Limits
	mounts         []mountPoint
	tools          []loop.ToolSpec
	byName         map[string]*tool
	prestart       atomic.Bool
	// ext and dialect are set for Extism plugins (extism.go).
	ext     *extism.Plugin
	dialect Dialect
	// extReuse: an Extism plugin's instances serve many calls of a run
	// (extism_reuse.go), of any of its tools; extKey names them in a
	// Scope.
	extReuse bool
	extKey   *tool
	// reuse: the manifest says one instance serves many calls (reuse.go).
	// Such an instance serves every tool of the plugin: shared holds its
	// module config (no AGENTHOST_TOOL; each request names its tool) and
	// its pre-started instance.
	reuse  bool
	shared *tool
}

// mountPoint is a mount of the plugin: the FS shared by its instances,
// each of which mounts its own view at guest (see instance.fsConfig).
type mountPoint struct {
	fs    *rootfs.FS
	guest string
}

// tool is one tool of a plugin, with everything its calls need prepared at
// load time.
type tool struct {
	spec   loop.ToolSpec
	schema *jsonschema.Schema
	// cli is the tool of a wasi_cli plugin; nil for agenthost.
	cli *CLITool
	// cfg is the module config of a call: the plugin's grants plus, for
	// agenthost, AGENTHOST_MODE=call and AGENTHOST_TOOL.
	cfg wazero.ModuleConfig

	// warm holds at most one pre-started instance waiting for its call.
	warm chan *instance
	fill sync.Mutex
	// noWarm is set when a pre-started instance ended before its call: the
	// plugin does not wait on stdin, so pre-starting cannot help.
	noWarm atomic.Bool
	// ext says how to call the tool of an Extism plugin; nil otherwise.
	ext *extismTool
}

// Name is the plugin's name (Spec.Name).
func (p *Plugin) Name() string { return p.name }

// Kind is KindAgenthost, KindWASICLI or KindExtism.
func (p *Plugin) Kind() Kind { return p.kind }

// Manifest is the plugin's manifest; nil for wasi_cli and extism.
func (p *Plugin) Manifest() *Manifest { return p.manifest }

// Grants are the capabilities the plugin runs with.
func (p *Plugin) Grants() Grants { return p.grants }

// Limits are the plugin's limits, defaults applied.
func (p *Plugin) Limits() Limits { return p.limits }

// Dialect is the dialect of an Extism plugin; "" for other kinds.
func (p *Plugin) Dialect() Dialect { return p.dialect }

// Tools lists the plugin's tools in manifest (or tool block) order. The
// slice is shared; do not modify it.
func (p *Plugin) Tools() []loop.ToolSpec { return p.tools }

// SetPrestart turns pre-started instances on or off. When on (the default
// for agenthost and extism plugins; an Extism instance waits for its input
// after its language runtime is initialised), after each call of a tool the next instance of
// that tool is instantiated and started in the background, where it waits
// for its request on stdin; the next call then only pays for its own work.
// Each such instance serves exactly one call (a reuse plugin's pre-started
// instance serves calls made without a Scope, see reuse.go). wasi_cli plugins take their
// argv at start, so they are never pre-started. Safe for concurrent use.
func (p *Plugin) SetPrestart(on bool) {
	if p.kind != KindAgenthost && p.kind != KindExtism {
		return
	}
	p.prestart.Store(on)
	if !on {
		all := p.byName
		if p.shared != nil {
			all = map[string]*tool{"": p.shared}
		}
		for _, t := range all {
			select {
			case i := <-t.warm:
				i.cancel(errClosed)
			default:
			}
		}
	}
}

func (r *Runtime) load(ctx context.Context, spec Spec) (*Plugin, error) {
	switch spec.Kind {
	case "", KindAgenthost, KindWASICLI:
	case KindExtism:
	default:
		return nil, fmt.Errorf("unknown kind %q; want %q, %q or %q", spec.Kind, KindAgenthost, KindWASICLI, KindExtism)
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
	facts := r.readFacts(key, src.sum, pages, spec.Name, spec.Kind)
	var mod *module
	var cm wazero.CompiledModule
	if facts != nil {
		mod = r.compileLater(ctx, spec.Name, src, pages, key)
	} else {
		// A full load hashes what it compiles: a remembered sum that is
		// wrong is corrected here.
		wasm, err := r.rehash(src)
		if err != nil {
			return nil, err
		}
		if spec.SHA256 != "" && src.sum != spec.SHA256 {
			return nil, fmt.Errorf("sha256 of %s is %s, but the config pins %s; update sha256 if the new file is trusted", sourceName(spec), src.sum, spec.SHA256)
		}
		key = factsKey(src.sum, pages, spec.Name, spec.Kind)
		bin, err := parseBinary(wasm)
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
			r.writeFacts(facts)
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
		r.writeFacts(facts)
	}
	ok = true
	return p, nil
}

// baseConfig builds the module config every call of the plugin starts from:
// granted environment and clock. It opens the mounts, which every instance
// mounts through views of its own (see instance.fsConfig). Stdio,
// randomness, the sleep function and the mounts are set per instance.
func (p *Plugin) baseConfig() (wazero.ModuleConfig, error) {
	cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions()
	keys := make([]string, 0, len(p.grants.Env))
	for k := range p.grants.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if strings.HasPrefix(k, "AGENTHOST_") {
			continue // the host sets these
		}
		cfg = cfg.WithEnv(k, p.grants.Env[k])
	}
	protected := p.r.protectedPaths()
	for _, m := range p.grants.Mounts {
		fs, err := rootfs.New(m.Host, m.ReadOnly(), protected)
		if err != nil {
			return nil, fmt.Errorf("mount %q: %w", m.Name, err)
		}
		p.mounts = append(p.mounts, mountPoint{fs: fs, guest: path.Clean(m.Guest)})
	}
	if p.grants.Clock {
		cfg = cfg.WithSysWalltime().WithSysNanotime()
	}
	if p.grants.Random {
		cfg = cfg.WithRandSource(rand.Reader)
	}
	return cfg, nil
}

func (p *Plugin) addTool(name, desc string, schema []byte, cli *CLITool, base wazero.ModuleConfig) error {
	if !toolname.Valid(name) {
		return fmt.Errorf("tool name %q must match %s", name, toolname.Pattern)
	}
	if _, dup := p.byName[name]; dup {
		return fmt.Errorf("tool %q is declared twice", name)
	}
	if len(strings.TrimSpace(string(schema))) == 0 {
		schema = defaultSchema
	}
	sch, err := compileSchema(schema)
	if err != nil {
		return fmt.Errorf("tool %q: %w", name, err)
	}
	t := &tool{
		spec:   loop.ToolSpec{Name: name, Description: desc, InputSchema: append([]byte(nil), schema...)},
		schema: sch,
		cli:    cli,
		cfg:    base,
		warm:   make(chan *instance, 1),
	}
	if cli == nil {
		t.cfg = base.WithArgs(p.name).WithEnv("AGENTHOST_MODE", "call").WithEnv("AGENTHOST_TOOL", name)
	}
	p.byName[name] = t
	p.tools = append(p.tools, t.spec)
	return nil
}

func (p *Plugin) closeMounts() {
	for _, m := range p.mounts {
		m.fs.Close()
	}
	p.mounts = nil
}
