// Package component runs WASI 0.2 components (the component model) as
// tools, on wazero like every other plugin kind: it parses the component
// binary, compiles its core modules with the caller's runtime, links them
// in wazero, and implements the canonical ABI and the WASI 0.2 host in Go.
// It sits in the host stage beside host/plugin, which gives it a runtime
// and the grants of a plugin block (kind = "component") and turns its
// outcomes into tool results.
//
// # Shape
//
// Load accepts what wit-component makes for the common toolchains (Rust
// wasm32-wasip2 or cargo-component, ComponentizeJS, componentize-py,
// componentize-dotnet): core modules at the top level (the program, the
// WASI adapter, wit-component's shim and fixup modules), core instances
// linked by name or made of inline exports, and nested components only as
// shims that re-export the functions of an exported interface. Everything
// else is refused with an error wrapping ErrShape that says what: core
// modules inside nested components, async functions or built-ins,
// resources the component defines and exports, exported functions whose
// signatures carry handles, streams or futures, component or value
// imports, start functions.
//
// # Linking
//
// Each core module is compiled once (its memory maximum rewritten to
// Options.MemoryLimitPages), so the runtime's compilation cache applies. A
// core instance made of inline exports becomes a small generated module
// that imports the items and exports them under the instance's names;
// canon lower and resource.drop become the functions of one host module.
// A call instantiates them all in order, anonymous, resolving each
// module's imports through wazero's import resolver to the instances of
// that call, so calls share nothing and may run concurrently.
//
// # Canonical ABI
//
// Values cross in both directions with the canonical ABI's rules:
// flattening (at most 16 flat parameters and 1 flat result, otherwise
// through memory and realloc), sizes and alignments, utf8, utf16 and
// latin1+utf16 strings, post-return. Whatever the guest hands over is
// checked (bounds, alignment, UTF-8, discriminants, chars, handles); a
// violation traps the call, never the host.
// Every copy between the guest's memory and the host, and what the host
// keeps for the guest across imports, is charged to the call's budget
// (internal/hostmem, Component.HostBudget: the memory limit) before it is
// made, so values whose elements all name the same bytes cannot make the
// host hold more than the guest may hold itself.
//
// # Imports
//
// WASI 0.2.x (any patch version): cli (environment, arguments, exit,
// stdin/stdout/stderr, terminal-*), io (error, streams, poll), clocks,
// random, filesystem over internal/rootfs mounts, http outgoing-handler
// behind Sandbox.HTTP, and wasi:config/store from Sandbox.Config. A
// function the host does not implement traps when called, naming it;
// Component.Imports lists what is and is not provided. Resources the
// host hands out live in a per-call handle table that checks every
// handle the guest passes (live, of the right type).
//
// # Tools and JSON
//
// Every exported function is a tool (Component.Tools), named and
// described as Wassette's component2json does, with its JSON mapping (see
// json.go): a component behaves the same in both hosts.
package component
