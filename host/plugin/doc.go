// Package plugin runs agenthost's tool plugins: WebAssembly modules executed
// by wazero in a sandbox that grants nothing its Spec does not grant. It
// sits inside the host stage of the pipeline (config → host → loop → cmd)
// and knows nothing of agents.hcl: a Spec (module, kind, Limits, Mounts,
// env, clock, random, CLITools) says what to load, and the host builds one
// from each plugin block, loads them all with Runtime.LoadAll and hands the
// loop a loop.Toolset whose calls end in Plugin.Call.
//
// # Runtime and compilation
//
// A process has one Runtime: one wazero runtime, one compilation cache (on
// disk in the directory given to NewRuntime, the host's per-user cache, so
// a second run skips compilation; in memory with ""), and the WASI preview1
// host module. LoadAll loads every Spec concurrently, each compiled once,
// and reports an error per Spec. Each call then runs in a fresh module
// instance, so no state leaks between calls or agents; a plugin whose
// manifest declares "reuse" serves the calls of one agent of one run (a
// Scope) from one instance, recycled after reuseCalls calls or any
// trouble (reuse.go), and never shared between agents or runs.
//
// # Kinds
//
//   - agenthost: a WASI preview1 command speaking agenthost/1
//     (docs/plugin-protocol.md). Its manifest comes from the custom section
//     "agenthost.manifest" or, when absent, from stdout of a run with
//     AGENTHOST_MODE=describe in a sandbox with nothing granted. A call runs
//     with AGENTHOST_MODE=call and AGENTHOST_TOOL=<name>, reads
//     {"tool","arguments","call_id"} on stdin and prints a CallToolResult or
//     plain text. Exit 0 is a result, exit 1 an error result shown to the
//     model; anything else is a *sandbox.Failure.
//   - wasi_cli: any WASI command, described by CLITools (the tool blocks
//     of agents.hcl). CLITool.Command builds argv (the guest's whole argv,
//     argv[0] included) and stdin per call; exit 0 gives stdout as the
//     result, any other exit code an
//     error result carrying the code, stderr and stdout. Traps, timeouts and
//     floods are failures as for agenthost.
//   - extism: an Extism plugin (declared, or importing extism:host/env),
//     run on the Go kernel of internal/extism. Its dialect comes from its
//     exports: describe/call (mcp.run, hyper-mcp v1) and list_tools/call_tool
//     (hyper-mcp v2) describe their tools; any other plugin is "plain" and
//     its tools are CLITools naming the export (CLITool.Function) and
//     building its input. Spec.Config is its config, Spec.HTTPAllow the
//     origins its http_request may reach; grants apply as for wasi_cli.
//
// When kind is omitted it is detected: an Extism import means extism; a
// manifest section means agenthost; tool blocks mean wasi_cli; otherwise
// describe mode must produce a valid manifest. A WASI 0.2 component is
// recognised from its header and loads as kind "component" (host/component
// runs it, every export a tool, Spec.Config its wasi:config/store and
// Spec.HTTPAllow its wasi:http grant).
//
// Each kind is one file implementing the kind interface (kind.go):
// kind_agenthost.go, kind_wasicli.go, kind_extism.go (with extism_mcp.go
// and extism_reuse.go), kind_component.go. Load and Inspect walk one table
// of them, kinds, which has a row per row of internal/pluginkind, the
// table host/config validates plugin blocks by. Core modules importing anything but WASI preview1 (and
// Extism's host module) are refused (the error names the import).
//
// # Capability grants
//
// For an agenthost plugin a capability is granted only when the manifest
// requests it AND the Spec (the plugin block) grants it:
//   - a mount is made only at a guest path that both a manifest fs request
//     and a Spec mount name; its mode is the stricter of the two (an ro
//     request of an rw mount is ro). A request without a mount, and a mount
//     the plugin did not request, are not mounted and are logged.
//   - an environment variable is set only if the manifest requests its key
//     and Spec.Env grants it; the value comes from the Spec. AGENTHOST_*
//     variables are always the host's.
//   - the real clock and crypto randomness only if both ask for them.
//
// A wasi_cli plugin has no manifest, so its Spec applies as written: every
// mount, env entry, clock and random it lists is granted.
//
// # Sandbox
//
// Without a grant there is no file system at all (no preopens), no
// environment beyond AGENTHOST_*, a fake clock (wazero's fixed walltime and
// nanotime; sleeps return at once) and a deterministic random stream (the
// same ChaCha8 seed for every instance). Mounts go through internal/rootfs,
// an os.Root-backed file system that ".." and symlinks cannot leave.
//
// No mount reaches agenthost's own files: Runtime.SetProtected (the host
// passes the data directory, the compilation cache, the config file and
// the files it reads, the prompts directory, the plugin files, the
// cassettes and the executable) makes rootfs refuse, by file identity,
// every path that passes through or ends on one of them, and pin the
// directories on the way to them. A mount inside a protected directory is
// refused at load.
//
// Limits are always applied (a zero one takes its agents.hcl default,
// internal/defaults): limits.memory becomes the maximum of the
// module's memory (the module's memory section is rewritten before
// compiling, since wazero's WithMemoryLimitPages is per runtime and plugins
// have their own limits; a module whose initial memory exceeds the limit is
// refused at load). limits.timeout bounds each call; the runtime closes a
// module when its context is done, which stops even a spinning guest.
// stdout and stderr each keep the first limits.max_output bytes: a result
// cut there ends with a "[output truncated: ...]" marker, and a guest that
// writes more than twice max_output is stopped as an output flood.
// An agenthost plugin's stderr is read in lines as it is written: its
// notification lines ({"agenthost":"progress"|"log",...}, at most 16 KiB)
// are routed to the call's loop.CallReport and loop.CallClient like an
// Extism plugin's notify_progress and notify_logging_message
// (internal/notify, notes.go) and left out of the stderr kept, though they
// count toward the flood.
// limits.max_write and limits.max_files bound what one call writes to and
// creates in the plugin's read-write mounts: each instance mounts views of
// the shared file systems that charge a quota of its own; past it, writes
// and creates fail with EIO and the call ends in a quota failure.
//
// # Failures
//
// Call returns an error result (loop.ToolResult with IsError) for a tool
// that ran and failed, and for arguments that are not JSON or do not match
// the tool's schema (the plugin is not run). It returns a *sandbox.Failure
// (internal/sandbox, one type for every kind) when the plugin broke: Kind is trap, timeout, exit (code other than 0 or 1;
// a Go panic exits 2), memory (failed with its memory at the limit),
// output (flood), quota (max_write or max_files exceeded, whatever the
// guest did next), canceled (the call's context was cancelled; wraps
// context.Canceled) or start (could not instantiate). Its Stderr holds
// the start and end of the guest's stderr.
//
// # Pre-started instances
//
// Starting a Go-built guest costs milliseconds (instantiation and the Go
// runtime's initialisation). For agenthost plugins, after a tool's call the
// next instance of that tool is instantiated and started in the background,
// where it blocks reading stdin; the next call writes its request and only
// waits for the guest's own work. Each instance still serves exactly one
// call, with the same sandbox, so isolation is unchanged; the cost is one
// idle instance (its memory) per tool that has been called. Until it reads
// stdin, a pre-started instance is bounded by limits.timeout; a guest that
// exits without reading its request turns pre-starting off for that tool.
// Plugin.SetPrestart(false) disables it. wasi_cli plugins receive argv at
// start and are never pre-started.
//
// # Start-up and memory
//
// What keeps a run's start-up short and its resident set small stays
// inside the sandbox's job and uses wazero's public API only:
//   - load facts and remembered module sums in the private cache
//     (internal/loadcache), so a start-up neither hashes, compiles nor runs a
//     module it has loaded before; the module compiles in the background
//     when a run starts (Runtime.CompileLoaded) or at its first call;
//   - guest memories outside the Go heap (internal/guestmem, through
//     experimental.MemoryAllocator), reserved at their limit so growing
//     never copies, and kept zeroed for the next instance;
//   - data segments written by the host (loadcache.GuestData): a module's data is
//     kept in the cache, not decoded on the heap for the module's life.
//
// Process-wide choices (GOMAXPROCS, collections, the executable's pages)
// are the command's (cmd/agenthost/process.go); this package makes none.
//
// # Layout
//
// runtime.go and load.go hold the Runtime (compiling, instantiating,
// loading); kind.go and kind_*.go the kinds; plugin.go builds a Plugin,
// call.go runs its calls; instance.go runs one module instance, reuse.go
// keeps reused ones in a Scope; grants.go, notes.go and spec.go are the
// sandbox's policy. Nested here: internal/loadcache (load facts, module
// sums and data in the private cache), internal/guestmem (guest memories),
// internal/extism (the Extism kernel: the host module and the dialects)
// and internal/notify (a call's notifications).
// internal/wasmbin (module level, shared with host/component) rewrites
// module bytes (memory limit, data segments).
package plugin
