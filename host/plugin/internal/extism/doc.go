// Package extism is the Extism kernel of the sandbox, written in Go: the
// host module "extism:host/env" that Extism plugins import (memory blocks,
// input, output, error, config, vars, logs and HTTP), with the semantics of
// Extism's own runtime, and the dialects in which Extism plugins describe
// and call their tools (mcp.run and hyper-mcp). host/plugin instantiates
// the host module once per wazero runtime (Instantiate), makes a Plugin for
// each Extism plugin it loads and a Call for each instance, and runs the
// guest through Call.Init and Call.Invoke.
//
// Extism memory is not the guest's linear memory: blocks live in an arena
// owned by the host (as in Extism, where the kernel is a second module with
// its own memory), addressed by u64 offsets; offset 0 is "none". The arena
// is capped at the plugin's memory limit, separately from the guest's
// memory. A refusal of the host (an allocation past the limit, a request
// outside the HTTP allowlist, vars past their cap) stops the guest with a
// trap; Call.HostError says why.
package extism
