package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/hcl/v2"

	"github.com/agenthost/agenthost/host/clientmodel"
	"github.com/agenthost/agenthost/host/config"
	"github.com/agenthost/agenthost/host/mcpuse"
	"github.com/agenthost/agenthost/host/plugin"
	"github.com/agenthost/agenthost/host/provider"
	"github.com/agenthost/agenthost/host/tracing"
	"github.com/agenthost/agenthost/internal/cassette"
	"github.com/agenthost/agenthost/internal/rootfs"
	"github.com/agenthost/agenthost/loop"
)

// Options tune how a Host is built.
type Options struct {
	// Record, when set, appends every model request/response to this cassette.
	Record string
	// Replay, when set, serves model responses from this cassette; no
	// network is used.
	Replay string
	// NoCache disables the on-disk compilation cache.
	NoCache bool
	// CacheDir is where compiled modules are cached; "" means
	// DefaultCacheDir(). It must be private to the user (ResolveCacheDir
	// checks it). Compiled code is keyed by the module's bytes and the
	// wazero version, so one directory can serve many configs.
	CacheDir string
	// Getenv reads the environment for traces (OTEL_* variables, see
	// package tracing); nil reads the process's.
	Getenv func(string) string
	// Version is agenthost's version, recorded in traces.
	Version string
	// MCPLoginDir keeps the OAuth logins of url mcp_servers; "" means
	// mcpuse.DefaultTokenDir.
	MCPLoginDir string
	// MCPLogin shows a person the login URL of an MCP server that asks
	// for one; nil when nobody can log in (a server that asks then fails,
	// saying to run `agenthost mcp login NAME`).
	MCPLogin mcpuse.LoginUser
	// MCPElicit answers MCP servers' questions to the user
	// (elicitation); nil declines them.
	MCPElicit mcpuse.Elicitor
}

// Host is the runtime built from a config. Close it when done.
type Host struct {
	Config  *config.Config
	Plugins []*plugin.Plugin

	runtime *plugin.Runtime
	tools   map[string]toolRef
	agents  map[string]*loop.Agent
	// lms are the models of the model blocks, by block name, as the
	// loop calls them (a run's RunRequest.Model picks one).
	lms map[string]loop.Model
	// needs is what a run of each agent needs of an MCP client that
	// calls it (ClientNeeds), worked out once at load.
	needs    map[string]ClientNeeds
	recorder *cassette.Recorder
	player   *cassette.Player
	cacheDir string
	// mcpServers are the mcp_server blocks' servers; mcpTools their tools
	// (mcptools.go).
	mcpServers []*mcpuse.Server
	mcpTools   []Tool
	mcpOpts    Options
	// all holds every tool of the host, for CallTool.
	all *toolset
	// tab is the host's tools now; tabMu makes one refresh at a time
	// (tooltab.go). onToolsChanged is told of each new tab.
	tab            atomic.Pointer[toolTab]
	tabMu          sync.Mutex
	onToolsChanged func()
	// slots bound the tool calls that run at once in this process, across
	// all its runs and CallTool (host.max_parallel_tools).
	slots *loop.Slots

	// Traces (tracing.go): wanted by the config or the environment; the
	// tracer is made by the first run.
	tracingWanted bool
	getenv        func(string) string
	version       string
	tracerOnce    sync.Once
	tracer        *tracing.Tracer
}

type toolRef struct {
	plugin *plugin.Plugin
	// spec is the tool as the agent knows it (its name after tool_prefix
	// and rename); own is the name the plugin knows it by.
	spec loop.ToolSpec
	own  string
	mcp  *mcpTool // set for an MCP server's tool; plugin is nil then
}

// New loads every plugin (compiling each once, concurrently), checks that
// every tool an agent names exists, and builds the agents. Problems located
// in the config are returned as diagnostics; other failures (a compilation
// cache that is not private among them) as an error.
func New(ctx context.Context, cfg *config.Config, opts Options) (*Host, hcl.Diagnostics, error) {
	h, diags, cleanup, err := openTools(ctx, cfg, opts)
	if err != nil || diags.HasErrors() {
		return nil, diags, err
	}
	ok := false
	defer func() {
		if !ok {
			h.Close(ctx)
			cleanup()
		}
	}()

	h.tab.Store(h.firstTab())
	h.all = allTools(h)

	h.lms, err = h.models(opts)
	if err != nil {
		return nil, nil, err
	}
	for _, a := range cfg.Agents {
		h.build(a)
	}
	h.needs = map[string]ClientNeeds{}
	for _, a := range cfg.Agents {
		h.needs[a.Name] = h.clientNeeds(a.Name, nil)
	}
	ok = true
	return h, diags, nil
}

// openTools is the first half of New: the runtime, the plugins and the MCP
// servers loaded, and the agents' tool names checked against what they
// offer. With an error or error diagnostics it returns no Host, and has
// released what it opened; otherwise the caller owns h and cleanup.
func openTools(ctx context.Context, cfg *config.Config, opts Options) (h *Host, diags hcl.Diagnostics, cleanup func(), err error) {
	cache, err := opts.cacheDir()
	if err != nil {
		return nil, nil, nil, err
	}
	cleanup, err = prepareProtected(cfg, cache, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	rt, err := plugin.NewRuntime(ctx, cache)
	if err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	rt.SetProtected(Protected(cfg, cache, opts))
	h = &Host{Config: cfg, runtime: rt, tools: map[string]toolRef{}, agents: map[string]*loop.Agent{}, cacheDir: cache,
		getenv: opts.Getenv, version: opts.Version, slots: loop.NewSlots(cfg.Host.MaxParallelTools), mcpOpts: opts}
	if h.getenv == nil {
		h.getenv = os.Getenv
	}
	h.tracingWanted = tracing.Wanted(cfg.Host.Otel, h.getenv)

	specs := make([]plugin.Spec, len(cfg.Plugins))
	for i, p := range cfg.Plugins {
		specs[i] = pluginSpec(p)
	}
	plugins, errs := rt.LoadAll(ctx, specs)
	for i, err := range errs {
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Plugin failed to load",
				Detail:   err.Error(), // Load's error names the plugin
				Subject:  cfg.Plugins[i].DefRange.Ptr(),
			})
		}
	}
	taken := map[string]toolBlock{}
	for i, p := range plugins {
		if p == nil {
			continue
		}
		h.Plugins = append(h.Plugins, p)
		diags = append(diags, h.addTools(cfg.Plugins[i], p, taken)...)
		diags = append(diags, grantWarnings(cfg.Plugins[i], p.Grants())...)
	}
	diags = append(diags, h.loadMCPServers(ctx, cfg, taken)...)
	// A plugin that failed to load is reported once; the tools it would
	// have offered are not reported again as unknown.
	if !diags.HasErrors() {
		available := make([]string, 0, len(h.tools))
		for n := range h.tools {
			available = append(available, n)
		}
		sort.Strings(available)
		unknown := cfg.CheckTools(available)
		h.hintRenamed(unknown)
		diags = append(diags, unknown...)
	}
	if diags.HasErrors() {
		h.Close(ctx)
		cleanup()
		return nil, diags, nil, nil
	}
	return h, diags, cleanup, nil
}

// CheckTools loads the plugins and MCP servers of cfg and checks the
// agents' tool names against what they offer, as New does, and closes
// them again: for validate, on a partial config (config.Options.Partial)
// whose errors leave the tools checkable. It returns New's diagnostics
// of that stage, and an error New would return.
func CheckTools(ctx context.Context, cfg *config.Config, opts Options) (hcl.Diagnostics, error) {
	h, diags, cleanup, err := openTools(ctx, cfg, opts)
	if h != nil {
		h.Close(ctx)
		cleanup()
	}
	return diags, err
}

// Protected lists agenthost's own files and directories for this config,
// which no plugin may reach through a mount (see rootfs.New): the data
// directory (sessions, cassettes), the compilation cache, the config file,
// the files it reads with file(), the prompts directory next to it, every
// plugin file, the cassettes of --record and --replay, and the running
// executable.
func Protected(cfg *config.Config, cacheDir string, opts Options) []rootfs.Protected {
	ps := []rootfs.Protected{
		{Path: cfg.Host.DataDir, What: "the data directory (data_dir)"},
		{Path: cfg.File, What: "the config file"},
		{Path: filepath.Join(cfg.Dir, "prompts"), What: "the prompts directory next to the config file"},
	}
	if cacheDir != "" {
		ps = append(ps, rootfs.Protected{Path: cacheDir, What: "the compilation cache"})
	}
	for _, in := range cfg.Inputs {
		ps = append(ps, rootfs.Protected{Path: in, What: "a file the config reads with file()"})
	}
	for _, p := range cfg.Plugins {
		if p.Path != "" {
			ps = append(ps, rootfs.Protected{Path: p.Path, What: fmt.Sprintf("the file of plugin %q", p.Name)})
		}
	}
	if store, err := MCPLoginStore(opts); err == nil {
		ps = append(ps, rootfs.Protected{Path: store.Dir, What: "the MCP servers' logins (OAuth tokens)"})
	}
	if opts.Record != "" {
		ps = append(ps, rootfs.Protected{Path: opts.Record, What: "the cassette being recorded"})
	}
	if opts.Replay != "" {
		ps = append(ps, rootfs.Protected{Path: opts.Replay, What: "the cassette being replayed"})
	}
	if exe, err := os.Executable(); err == nil {
		ps = append(ps, rootfs.Protected{Path: exe, What: "the agenthost executable"})
	}
	for i := range ps {
		if abs, err := filepath.Abs(ps[i].Path); err == nil {
			ps[i].Path = abs
		}
	}
	return ps
}

// prepareProtected makes the protected paths that a run creates exist
// before any plugin is mounted, so that their identity can be recorded: the
// data directory and the compilation cache (when a plugin has a mount) and
// the cassette being recorded, private to the user like everything a run
// writes (directories 0700, the cassette 0600). cleanup removes what it
// made for the cassette, for when the host fails to start.
func prepareProtected(cfg *config.Config, cacheDir string, opts Options) (cleanup func(), err error) {
	cleanup = func() {}
	mounts := false
	for _, p := range cfg.Plugins {
		mounts = mounts || len(p.Mounts) > 0
	}
	if mounts {
		for _, d := range []string{cfg.Host.DataDir, cacheDir} {
			if d == "" {
				continue
			}
			if err := os.MkdirAll(d, 0o700); err != nil {
				return cleanup, fmt.Errorf("create %s before mounting plugins: %w", d, err)
			}
		}
	}
	if opts.Record != "" {
		if err := os.MkdirAll(filepath.Dir(opts.Record), 0o700); err != nil {
			return cleanup, fmt.Errorf("cassette: create directory for %s: %w", opts.Record, err)
		}
		f, err := os.OpenFile(opts.Record, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		switch {
		case err == nil:
			f.Close()
			cleanup = func() { os.Remove(opts.Record) }
		case !errors.Is(err, os.ErrExist):
			return cleanup, fmt.Errorf("cassette: create %s: %w", opts.Record, err)
		}
	}
	return cleanup, nil
}

// models builds one loop.Model per model block, wrapped by cassettes.
func (h *Host) models(opts Options) (map[string]loop.Model, error) {
	if opts.Replay != "" {
		p, err := cassette.Load(opts.Replay)
		if err != nil {
			return nil, err
		}
		h.player = p
	}
	if opts.Record != "" {
		r, err := cassette.NewRecorder(opts.Record)
		if err != nil {
			return nil, err
		}
		h.recorder = r
	}
	out := map[string]loop.Model{}
	for _, m := range h.Config.Models {
		out[m.Name] = h.loopModel(m)
	}
	return out, nil
}

// loopModel is model block m as the loop calls it: its provider's client
// (or the MCP client's sampling), wrapped by the cassette.
func (h *Host) loopModel(m *config.Model) loop.Model {
	if h.player != nil {
		return h.player.Wrap(m.ID)
	}
	var lm loop.Model
	if m.Provider == config.ProviderMCPClient {
		lm = clientmodel.New(clientmodel.Options{
			Model: m.Name, Where: ModelWhere(m),
			ModelID: m.ID, MaxTokens: m.MaxTokens, Temperature: m.Temperature,
		})
	} else {
		p := h.Config.Provider(m.Provider)
		lm = provider.New(provider.Options{
			BaseURL:        p.BaseURL,
			APIKey:         p.APIKey,
			Headers:        p.Headers,
			ModelID:        m.ID,
			Temperature:    m.Temperature,
			MaxTokens:      m.MaxTokens,
			IdleTimeout:    p.IdleTimeout,
			RequestTimeout: p.RequestTimeout,
		})
	}
	if h.recorder != nil {
		lm = h.recorder.Wrap(m.ID, lm)
	}
	return lm
}

// build makes the loop.Agent for a (and, recursively, its subagents).
// Subagent cycles are rejected by config, so this terminates.
func (h *Host) build(a *config.Agent) *loop.Agent {
	if la, ok := h.agents[a.Name]; ok {
		return la
	}
	model := h.Config.Model(a.Model)
	la := h.newAgent(a, model, h.lms[model.Name])
	h.agents[a.Name] = la
	for _, s := range a.Subagents {
		la.Subagents = append(la.Subagents, h.build(h.Config.Agent(s)))
	}
	return la
}

// newAgent is the loop.Agent of a with model (lm as the loop calls it),
// without its subagents.
func (h *Host) newAgent(a *config.Agent, model *config.Model, lm loop.Model) *loop.Agent {
	cfg := h.Config
	prov := cfg.Provider(model.Provider)
	if prov == nil {
		// provider = "mcp_client": the client's errors are not retried
		// (clientmodel), its final request carries no tools, and an
		// output schema is asked for in the prompt (sampling has no
		// response format).
		prov = &config.Provider{Retry: config.Retry{Attempts: 1}, FinalStepTools: config.FinalToolsOmit, StructuredOutput: config.StructuredPrompt}
	}
	ts := agentTools(h, a.Tools)
	la := &loop.Agent{
		Name:           a.Name,
		Description:    a.Description,
		ModelID:        model.ID,
		Model:          lm,
		Tools:          ts,
		ValidateOutput: outputValidator(a.OutputSchema),
		Policy: loop.Policy{
			ContextWindow:  model.ContextWindow,
			System:         a.Prompt,
			StepsMax:       cfg.StepsMax(a),
			DoomThreshold:  a.DoomLoop.Threshold,
			DoomAction:     loop.DoomAction(a.DoomLoop.Action),
			FinalStepTools: loop.FinalTools(prov.FinalStepTools),
			Retry: loop.RetryPolicy{
				Attempts: prov.Retry.Attempts,
				Initial:  prov.Retry.Initial,
				MaxDelay: prov.Retry.MaxDelay,
			},
			Prompts:         agentPrompts(a),
			MaxDepth:        loopDepth(cfg.Host.MaxDepth),
			MaxCallsPerStep: cfg.Host.MaxCallsPerStep,
			Approve:         a.Approve,
			OutputSchema:    outputSchema(a.OutputSchema),
			OutputMode:      loop.OutputMode(prov.StructuredOutput),
		},
	}
	if a.Budget != nil {
		la.Budget = *a.Budget
	}
	spendLimits(la, cfg, a, model)
	if la.Description == "" {
		la.Description = "Delegate a task to the " + a.Name + " agent."
	}
	return la
}

// loopDepth is host.max_depth as loop.Agent.MaxDepth: 0 there allows no
// subagent, where a zero MaxDepth is the default.
func loopDepth(d int) int {
	if d == 0 {
		return loop.NoSubagents
	}
	return d
}

// agentPrompts are a's own prompts; the loop uses the defaults of package
// prompts for those left blank.
func agentPrompts(a *config.Agent) loop.Prompts {
	return loop.Prompts{MaxSteps: a.MaxStepsPrompt, Budget: a.BudgetPrompt, Tokens: a.TokensPrompt, Cost: a.CostPrompt, DoomLoop: a.DoomLoopPrompt}
}

// Slots bound the tool calls that run at once in this process
// (host.max_parallel_tools): every run of the host and every CallTool
// take one per call. A worker takes one per tool activity.
func (h *Host) Slots() *loop.Slots { return h.slots }

// CacheDir is the compilation cache in use: absolute, checked private; ""
// when Options.NoCache kept it in memory.
func (h *Host) CacheDir() string { return h.cacheDir }

// Agent returns the built agent with this name, or nil.
func (h *Host) Agent(name string) *loop.Agent { return h.agents[name] }

// Tool is one tool as listed by `agenthost tools`.
type Tool struct {
	Name   string `json:"name"`
	Plugin string `json:"plugin"`
	// PluginTool is the plugin's own name for the tool when tool_prefix
	// or rename changed it.
	PluginTool  string          `json:"plugin_tool,omitempty"`
	Kind        plugin.Kind     `json:"kind"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	// Annotations (MCP ToolAnnotations) and OutputSchema, when the tool's
	// source declares them; mcp serve offers them on.
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
}

// Tools lists every tool of every plugin, in config order, then the tools
// of the MCP servers: as loaded, or as last listed again after a plugin or
// a server said they changed (RefreshTools). The slice is shared; do not
// modify it.
func (h *Host) Tools() []Tool { return h.tab.Load().list }

// AgentTools is what agent a offers its model as tools, in order: its
// tools, then its subagents (each a tool of its name), with a
// description of each: the tool's own, or "subagent: " and the agent's
// description.
func (h *Host) AgentTools(a *config.Agent) (names []string, desc map[string]string) {
	desc = map[string]string{}
	for _, t := range h.Tools() {
		desc[t.Name] = t.Description
	}
	names = slices.Clone(a.Tools)
	for _, s := range a.Subagents {
		names = append(names, s)
		desc[s] = "subagent"
		if sub := h.Config.Agent(s); sub != nil && sub.Description != "" {
			desc[s] = "subagent: " + sub.Description
		}
	}
	return names, desc
}

// ToolsVersion is Tools with the version of the host's tools it lists
// (RefreshTools).
func (h *Host) ToolsVersion() ([]Tool, uint64) {
	tab := h.tab.Load()
	return tab.list, tab.version
}

// RefreshTools lists the tools again where a plugin or an MCP server said
// they changed (hyper-mcp v2's notify_tool_list_changed, MCP's
// notifications/tools/list_changed) and returns the version of the host's
// tools, which changes whenever Tools would list other tools. Agents' runs
// call it before each step; it is cheap when nothing changed.
func (h *Host) RefreshTools(ctx context.Context) uint64 { return h.refreshTools(ctx) }

// OnToolsChanged makes f be called each time the host's tools change, on
// the goroutine of the refresh, which holds up every other refresh until f
// returns; set it before the host is used.
func (h *Host) OnToolsChanged(f func()) { h.onToolsChanged = f }

// Close flushes cassettes and traces and releases the runtime. Traces
// that cannot be exported are a warning (on the logger of ctx), not an
// error.
func (h *Host) Close(ctx context.Context) error {
	h.closeTracer(ctx)
	var errs []error
	if h.recorder != nil {
		errs = append(errs, h.recorder.Close())
	}
	if h.runtime != nil {
		errs = append(errs, h.runtime.Close(ctx))
	}
	errs = append(errs, h.closeMCPServers())
	return errors.Join(errs...)
}

// checked is what toolset.Check makes of a call (loop.CheckedCall's
// Checked): the tool's ref and, for a plugin's tool, the plugin's checked
// call.
type checked struct {
	ref  toolRef
	call plugin.Checked
}

// Check implements loop.ArgumentChecker: a plugin tool's arguments are
// validated, once, against its schema. An MCP server's tool is
// admitted as it is: the server checks its own arguments.
func (t *toolset) Check(call loop.ToolCall, args map[string]any) (loop.CheckedCall, string) {
	ref, msg := t.lookup(call.Name)
	if msg != "" {
		return loop.CheckedCall{}, msg
	}
	if ref.mcp != nil {
		return loop.CheckedCall{ToolCall: call, Checked: checked{ref: ref}}, ""
	}
	own := call
	own.Name = ref.own // the plugin's own name, before tool_prefix and rename
	pc, msg := ref.plugin.Check(own, args)
	if msg != "" {
		return loop.CheckedCall{}, msg
	}
	return loop.CheckedCall{ToolCall: call, Checked: checked{ref: ref, call: pc}}, ""
}

// CallChecked implements loop.ArgumentChecker: it runs a call Check
// admitted, without decoding or validating its arguments again. A call
// Check did not make is checked first, as Call does.
func (t *toolset) CallChecked(ctx context.Context, call loop.CheckedCall) (loop.ToolResult, error) {
	c, ok := call.Checked.(checked)
	if !ok {
		return t.Call(ctx, call.ToolCall)
	}
	if c.ref.mcp != nil {
		return c.ref.callMCP(ctx, call.ToolCall)
	}
	// An agent's reused instances are its own (t is one agent's toolset).
	return c.ref.plugin.CallChecked(plugin.WithScopeOwner(ctx, t), c.call)
}

// Call runs a call nobody checked: it decodes the arguments as the loop
// does, then Check and CallChecked.
func (t *toolset) Call(ctx context.Context, call loop.ToolCall) (loop.ToolResult, error) {
	cc, msg := t.check(call)
	if msg != "" {
		return loop.ToolResult{Content: msg, IsError: true}, nil
	}
	return t.CallChecked(ctx, cc)
}

// check decodes call's arguments and checks it.
func (t *toolset) check(call loop.ToolCall) (loop.CheckedCall, string) {
	if _, msg := t.lookup(call.Name); msg != "" {
		return loop.CheckedCall{}, msg
	}
	args, msg := loop.ParseArguments(call)
	if msg != "" {
		return loop.CheckedCall{}, msg
	}
	return t.Check(call, args)
}
