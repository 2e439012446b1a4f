// Package defaults holds the value each agents.hcl setting takes when it is
// left out. It is the one copy: host/config fills decoded blocks from it,
// and the packages that apply a setting (loop, host/plugin, host/provider)
// use it for their zero values, so a value built without a config behaves
// as the same setting left out of agents.hcl. The configuration table of
// docs/configuration.md and the starter agents.hcl show these values; a
// test in host/config checks that they agree.
//
// One rule holds in every package: a zero value means the default. Where
// a setting's own zero means something else (max_depth = 0 allows no
// subagents), the package names that meaning with a value of its own
// (loop.NoSubagents) and the host translates it.
//
// It is a leaf: it imports only the standard library, so config, which may
// not import the loop or the sandbox, and loop, which may not import config,
// can both use it.
package defaults

import (
	"cmp"
	"time"
)

// The host block.
const (
	// MaxSteps is host.max_steps, the ceiling of every agent's step cap.
	MaxSteps = 200
	// MaxDepth is host.max_depth, the subagent nesting limit.
	MaxDepth = 3
	// DataDir is host.data_dir, relative to the config file's directory.
	DataDir = ".agenthost"
	// MaxParallelTools is host.max_parallel_tools: the tool calls that run
	// at once, in one run and across all the runs of one process.
	MaxParallelTools = 8
	// MaxCallsPerStep is host.max_calls_per_step: the tool calls taken
	// from one model response; the calls past it get an error result.
	MaxCallsPerStep = 64
)

// The provider block.
const (
	// RetryAttempts is retry.attempts: tries of a model request, the first
	// included.
	RetryAttempts = 5
	// RetryInitial is retry.initial: the first backoff delay.
	RetryInitial = time.Second
	// RetryMaxDelay is retry.max_delay: the cap of one delay.
	RetryMaxDelay = 60 * time.Second
	// IdleTimeout is idle_timeout: the longest silence of a request.
	IdleTimeout = 120 * time.Second
	// RequestTimeout is request_timeout: the longest whole request.
	RequestTimeout = 10 * time.Minute
	// FinalStepTools is final_step_tools: the final request carries no tools.
	FinalStepTools = "omit"
	// StructuredOutput is structured_output: how requests ask for an
	// agent's output_schema, as response_format json_schema.
	StructuredOutput = "json_schema"
)

// The plugin block: limits, per call, and mounts.
const (
	// Memory is limits.memory, in bytes.
	Memory = 256 << 20
	// Timeout is limits.timeout.
	Timeout = 30 * time.Second
	// MaxOutput is limits.max_output: bytes kept of stdout, and of stderr.
	MaxOutput = 1 << 20
	// MaxWrite is limits.max_write: bytes a call may write to the plugin's
	// read-write mounts, all together.
	MaxWrite = 64 << 20
	// MaxFiles is limits.max_files: files, directories and links a call may
	// create in the plugin's read-write mounts, all together.
	MaxFiles = 10000
	// MountMode is mount.mode: read-only.
	MountMode = "ro"
	// HTTPBody bounds a plugin's HTTP bodies, in bytes: the response body
	// an Extism http_request returns, and each request and response body
	// of a component's wasi:http.
	HTTPBody = 4 << 20
)

// The mcp_server block.
const (
	// MCPMaxOutput is max_output: bytes of a tool result's text kept, per
	// call (the rest is cut with a note, as a plugin's output is).
	MCPMaxOutput = 1 << 20
)

// The agent block.
const (
	// DoomThreshold is doom_loop.threshold: identical consecutive tool calls
	// that make a doom loop.
	DoomThreshold = 3
	// DoomAction is doom_loop.action.
	DoomAction = "warn"
)

// Or applies the rule above to a setting held as a number: v, or d when v
// is zero (or negative, which no setting means).
func Or[T cmp.Ordered](v, d T) T {
	var zero T
	if v <= zero {
		return d
	}
	return v
}
