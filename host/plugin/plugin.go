package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/agenthost/agenthost/internal/sandbox"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/tetratelabs/wazero"

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
	exports map[string]exportSig
	grants  Grants
	limits  Limits
	mounts  []mountPoint
	// tools and byName are the tools listed at load; relisted replaces
	// them once a hyper-mcp v2 plugin said its tools changed (relist.go).
	// Read them through table.
	tools    []loop.ToolSpec
	byName   map[string]*tool
	relisted atomic.Pointer[toolTable]
	relistMu sync.Mutex
	toolsVer atomic.Uint64
	prestart atomic.Bool
	// The state of the plugin's kind: ah for agenthost plugins
	// (kind_agenthost.go), ext for Extism plugins (kind_extism.go), comp
	// for components (kind_component.go); nil for the others.
	ah   *agenthostPlugin
	ext  *extismPlugin
	comp *componentPlugin
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
	// gone is set (under fill) once a Relist dropped the tool: no
	// instance is pre-started for it any more.
	gone bool
	// noWarm is set when a pre-started instance ended before its call: the
	// plugin does not wait on stdin, so pre-starting cannot help.
	noWarm atomic.Bool
	// ext says how to call the tool of an Extism plugin; nil otherwise.
	ext *extismTool
	// comp is the function a component's tool calls (its tool name).
	comp string
	// call runs a call whose arguments passed the schema: the way of the
	// plugin's kind (callAgenthost, callCLI, callExtism).
	call func(ctx context.Context, t *tool, call loop.ToolCall, args json.RawMessage) (loop.ToolResult, error)
}

// Name is the plugin's name (Spec.Name).
func (p *Plugin) Name() string { return p.name }

// Kind is KindAgenthost, KindWASICLI, KindExtism or KindComponent.
func (p *Plugin) Kind() Kind { return p.kind }

// Manifest is the plugin's manifest; nil for kinds other than agenthost.
func (p *Plugin) Manifest() *Manifest {
	if p.ah == nil {
		return nil
	}
	return p.ah.manifest
}

// Grants are the capabilities the plugin runs with.
func (p *Plugin) Grants() Grants { return p.grants }

// Limits are the plugin's limits, defaults applied.
func (p *Plugin) Limits() Limits { return p.limits }

// Dialect is the dialect of an Extism plugin; "" for other kinds.
func (p *Plugin) Dialect() Dialect {
	if p.ext == nil {
		return ""
	}
	return p.ext.dialect
}

// Tools lists the plugin's tools in manifest (or tool block) order: those
// listed at load, or, once a hyper-mcp v2 plugin said they changed and
// Relist listed them again, those. The slice is shared; do not modify it.
func (p *Plugin) Tools() []loop.ToolSpec { return p.table().specs }

// SetPrestart turns pre-started instances on or off. When on (the default
// for agenthost and extism plugins; an Extism instance waits for its input
// after its language runtime is initialised), after each call of a tool the next instance of
// that tool is instantiated and started in the background, where it waits
// for its request on stdin; the next call then only pays for its own work.
// Each such instance serves exactly one call (a reuse plugin's pre-started
// instance serves calls made without a Scope, see reuse.go). wasi_cli plugins take their
// argv at start, so they are never pre-started. Safe for concurrent use.
func (p *Plugin) SetPrestart(on bool) {
	if !prestartable(p.kind) {
		return
	}
	p.prestart.Store(on)
	if !on {
		all := p.table().byName
		if p.ah != nil && p.ah.shared != nil {
			all = map[string]*tool{"": p.ah.shared}
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
		cfg = cfg.WithRandSource(sandbox.Random(true))
	}
	return cfg, nil
}

func (p *Plugin) addTool(name, desc string, schema []byte, cli *CLITool, base wazero.ModuleConfig) error {
	t, err := p.newTool(name, desc, schema, cli, base, p.byName)
	if err != nil {
		return err
	}
	p.byName[name] = t
	p.tools = append(p.tools, t.spec)
	return nil
}

// newTool prepares the tool name, to be added to byName (which must not
// have it yet).
func (p *Plugin) newTool(name, desc string, schema []byte, cli *CLITool, base wazero.ModuleConfig, byName map[string]*tool) (*tool, error) {
	if !toolname.Valid(name) {
		return nil, fmt.Errorf("tool name %q must match %s", name, toolname.Pattern)
	}
	if _, dup := byName[name]; dup {
		return nil, fmt.Errorf("tool %q is declared twice", name)
	}
	if len(strings.TrimSpace(string(schema))) == 0 {
		schema = defaultSchema
	}
	sch, err := compileSchema(schema)
	if err != nil {
		return nil, fmt.Errorf("tool %q: %w", name, err)
	}
	t := &tool{
		spec:   loop.ToolSpec{Name: name, Description: desc, InputSchema: append([]byte(nil), schema...)},
		schema: sch,
		cli:    cli,
		cfg:    base,
		warm:   make(chan *instance, 1),
	}
	t.call = p.callCLI
	if cli == nil {
		t.cfg = base.WithArgs(p.name).WithEnv("AGENTHOST_MODE", "call").WithEnv("AGENTHOST_TOOL", name)
		t.call = p.callAgenthost
	}
	return t, nil
}

// setToolMeta gives the tool just added for mt (addTool) the annotations
// and output schema its manifest declares.
func (p *Plugin) setToolMeta(mt ManifestTool) {
	t := p.byName[mt.Name]
	t.spec.Annotations, t.spec.OutputSchema = mt.Annotations, mt.OutputSchema
	p.tools[len(p.tools)-1] = t.spec
}

func (p *Plugin) closeMounts() {
	for _, m := range p.mounts {
		m.fs.Close()
	}
	p.mounts = nil
}
