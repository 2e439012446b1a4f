package config

import (
	"encoding/json"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/agenthost/agenthost/internal/ociref"
)

// Config is a decoded and validated agents.hcl. All paths in it are absolute,
// and every setting the file leaves out holds its default (package
// internal/defaults, named below). It is read-only once Load returns.
type Config struct {
	// File is the absolute path of the config file; Dir its directory, the
	// base for every relative path in it.
	File string
	Dir  string

	Host      Host
	Providers []*Provider
	Models    []*Model
	Plugins   []*Plugin
	// MCPServers are the mcp_server blocks (mcpserver.go).
	MCPServers []*MCPServer
	Agents     []*Agent
	// Temporal is the temporal block (temporal.go); nil without one.
	Temporal *Temporal

	// Files holds the source of every file parsed (config and file()
	// targets are not included), for printing diagnostics with snippets.
	Files map[string]*hcl.File
	// Inputs are the absolute paths of the files read with file(),
	// sorted, for the host to protect from plugins.
	Inputs []string
}

// Host is the host block.
type Host struct {
	// MaxSteps is the hard step ceiling for every agent (default
	// defaults.MaxSteps).
	MaxSteps int
	// DataDir holds sessions and cassettes (default defaults.DataDir,
	// absolute after loading). The compilation cache is not here: see
	// host.DefaultCacheDir.
	DataDir string
	// MaxDepth is the subagent nesting limit (default defaults.MaxDepth).
	MaxDepth int
	// MaxParallelTools is how many tool calls run at once, in one run and
	// across all the runs of the process (default
	// defaults.MaxParallelTools).
	MaxParallelTools int
	// MaxCallsPerStep is how many tool calls of one model response run;
	// the calls past it get an error result (default
	// defaults.MaxCallsPerStep).
	MaxCallsPerStep int
	// MaxCost is the cost ceiling in USD for every agent's run; 0 when
	// unset (no ceiling). Config.CostMax is an agent's limit in effect.
	MaxCost      float64
	MaxCostRange hcl.Range
	// Otel turns on OpenTelemetry traces even without an
	// OTEL_EXPORTER_OTLP_ENDPOINT in the environment (see package
	// host/tracing).
	Otel bool
}

// Provider is a provider block: an OpenAI-compatible endpoint.
type Provider struct {
	Name    string
	BaseURL string
	APIKey  string
	// APIKeyEnv are the environment variables api_key reads with env(), in
	// order: what a message about a missing or refused key names.
	APIKeyEnv []string
	// Headers are extra HTTP headers sent with every request.
	Headers map[string]string
	Retry   Retry
	// FinalStepTools is what the final request offers (default
	// defaults.FinalStepTools).
	FinalStepTools FinalTools
	// IdleTimeout is the longest silence of a request: waiting for the
	// response headers, or between two bytes of the stream (keep-alive
	// comments count as bytes). Past it the request fails like a network
	// error, retryable unless tool calls have streamed (default
	// defaults.IdleTimeout).
	IdleTimeout time.Duration
	// RequestTimeout bounds a whole request, headers to the stream's end,
	// however steadily bytes arrive: past it the request fails like a
	// network error, retryable unless tool calls have streamed (default
	// defaults.RequestTimeout).
	RequestTimeout time.Duration
	// StructuredOutput is how requests ask for an agent's output schema:
	// StructuredJSONSchema, StructuredJSONObject or StructuredPrompt
	// (default defaults.StructuredOutput).
	StructuredOutput StructuredOutput
	DefRange         hcl.Range
}

// StructuredOutput is the structured_output attribute of a provider block
// (see loop.OutputMode).
type StructuredOutput string

// Ways to ask for an output schema.
const (
	// StructuredJSONSchema sends response_format json_schema with the schema.
	StructuredJSONSchema StructuredOutput = "json_schema"
	// StructuredJSONObject sends response_format json_object (the schema
	// is in the prompt).
	StructuredJSONObject StructuredOutput = "json_object"
	// StructuredPrompt sends no response_format (the schema is in the
	// prompt).
	StructuredPrompt StructuredOutput = "prompt"
)

// Retry is the retry block of a provider (defaults defaults.RetryAttempts,
// defaults.RetryInitial and defaults.RetryMaxDelay).
type Retry struct {
	Attempts int
	Initial  time.Duration
	MaxDelay time.Duration
}

// ProviderMCPClient is the provider of a model block whose requests go to
// the MCP client that called the agent (`agenthost mcp serve`), as
// sampling/createMessage requests. No provider block has this name.
const ProviderMCPClient = "mcp_client"

// Model is a model block.
type Model struct {
	Name string // block label
	// Provider is the provider block's name, or ProviderMCPClient.
	Provider string
	// ID is the model name sent to the provider (the "name" attribute).
	ID string
	// IDEnv are the environment variables the name attribute reads with
	// env(), in order: what a message about the model's name names.
	IDEnv         []string
	ContextWindow int // 0 = unknown, compaction off
	// Temperature is nil when unset (the server default applies).
	Temperature *float64
	// MaxTokens caps completion tokens; 0 = unset.
	MaxTokens int
	// Price is the price block; nil when unset (costs are unknown).
	Price    *Price
	DefRange hcl.Range
}

// Price is the price block of a model: USD per million tokens.
// CachedInput is Input when the block leaves it out.
type Price struct {
	Input       float64
	Output      float64
	CachedInput float64
}

// PluginKind is the kind attribute of a plugin block: one of the names of
// internal/pluginkind (pluginkind.Agenthost, ...), the one list of kinds.
type PluginKind string

// Plugin is a plugin block.
type Plugin struct {
	Name string
	// Source is the source attribute as written.
	Source string
	// Builtin is the builtin name ("core") when Source is "builtin:NAME";
	// OCI the registry reference when Source is oci://... or
	// oci+http://... (internal/ociref: checked, never contacted, here);
	// otherwise Path is the absolute path of the .wasm file.
	Builtin string
	OCI     *ociref.Ref
	Path    string
	// Insecure is insecure = true: plain HTTP to a registry off this
	// machine is allowed (only with an oci+http:// source).
	Insecure bool
	// SHA256 is the expected lowercase hex digest of the file, or "".
	SHA256 string
	// Kind is the declared kind, or "" to detect it.
	Kind   PluginKind
	Limits Limits
	Mounts []Mount
	// Env is the set of environment variables granted.
	Env map[string]string
	// Clock and Random grant the real wall clock and crypto randomness.
	Clock  bool
	Random bool
	// Tools are the tool blocks (wasi_cli plugins, and Extism plugins
	// without tool discovery, declare their tools here).
	Tools []*CLITool
	// Config is the Extism plugin config, or a component's
	// wasi:config/store; HTTPAllow the origins an Extism plugin or a
	// component may reach (the http block). Extism plugins and components
	// only.
	Config    map[string]string
	HTTPAllow []string
	// Reuse lets one instance of an Extism plugin serve many calls of a
	// run's agent (reuse = true). Extism plugins only.
	Reuse bool
	// ToolNames (tool_prefix, rename) give the plugin's tools other names
	// in the agent's world; see ToolName.
	ToolNames
	// Bare is set on ForModule's block: a module called by file
	// (`plugin call FILE.wasm`), its mounts given with --mount.
	Bare     bool
	DefRange hcl.Range
}

// Limits are a plugin's resource limits, per call (defaults
// defaults.Memory, defaults.Timeout, defaults.MaxOutput, defaults.MaxWrite
// and defaults.MaxFiles).
type Limits struct {
	Memory    uint64 // bytes
	Timeout   time.Duration
	MaxOutput int64 // bytes of stdout, and separately of stderr
	// MaxWrite is the bytes a call may write to the plugin's read-write
	// mounts, all together.
	MaxWrite int64
	// MaxFiles is the files, directories and links a call may create in
	// the plugin's read-write mounts, all together.
	MaxFiles int64
}

// Mount grants a plugin access to a host directory.
type Mount struct {
	Name  string // block label
	Host  string // absolute host path; exists and is a directory
	Guest string // absolute guest path
	// Mode is MountRO or MountRW (default defaults.MountMode).
	Mode     MountMode
	DefRange hcl.Range
}

// MountMode is the mode attribute of a mount block.
type MountMode string

// Mount modes.
const (
	MountRO MountMode = "ro" // the plugin cannot write
	MountRW MountMode = "rw" // the plugin can write, within its quotas
)

// ReadOnly reports whether the mount refuses writes.
func (m Mount) ReadOnly() bool { return m.Mode != MountRW }

// CLITool is a tool block of a wasi_cli plugin.
type CLITool struct {
	Name        string
	Description string
	// InputSchema is the JSON Schema of the arguments, as JSON.
	InputSchema json.RawMessage
	// Argv and Stdin are evaluated per call with "args" bound to the call's
	// arguments; use Eval. Stdin may be nil.
	Argv  hcl.Expression
	Stdin hcl.Expression
	// Function is the export an Extism tool calls (its name when ""), and
	// Input the bytes given to it (nil: jsonencode(args)); use EvalInput.
	Function string
	Input    hcl.Expression
	DefRange hcl.Range
}

// Agent is an agent block.
type Agent struct {
	Name        string
	Description string
	Model       string
	// Prompt is the system prompt text.
	Prompt string
	// Steps is the steps attribute, the step cap as written; nil when
	// unset (host.max_steps applies). Config.StepsMax is the cap in effect.
	Steps *int
	// Budget is the tool-call budget; nil when unset (unlimited).
	Budget *int
	// Tokens is the token limit of a run (subagents included); nil when
	// unset (unlimited).
	Tokens *int
	// Cost is the cost limit in USD of a run as written; nil when unset.
	// Config.CostMax is the limit in effect (host.max_cost applies).
	Cost *float64
	// Tools and Subagents are the referenced names; ToolRanges[i] is the
	// source range of Tools[i], for diagnostics raised after plugins load.
	Tools      []string
	ToolRanges []hcl.Range
	Subagents  []string
	// Default marks the agent run when -a is not given.
	Default bool
	// Prompt overrides; "" keeps the host default.
	MaxStepsPrompt string
	BudgetPrompt   string
	TokensPrompt   string
	CostPrompt     string
	DoomLoopPrompt string
	DoomLoop       DoomLoop
	// Approve are the tool names and patterns (path.Match: *, ?, [...])
	// whose calls wait for a person's decision before they run.
	Approve []string
	// OutputSchema is the JSON Schema the final answer must satisfy
	// (compact JSON); nil when unset. It is a valid schema (checked at
	// load).
	OutputSchema []byte
	DefRange     hcl.Range
}

// DoomLoop is the doom_loop block of an agent (defaults
// defaults.DoomThreshold and defaults.DoomAction).
type DoomLoop struct {
	Threshold int
	Action    DoomAction
}

// DoomAction is the action attribute of a doom_loop block: what the loop
// does about a doom loop (see loop.DoomAction).
type DoomAction string

// Doom-loop actions.
const (
	DoomWarn DoomAction = "warn"
	DoomStop DoomAction = "stop"
	DoomAsk  DoomAction = "ask"
)

// FinalTools is the final_step_tools attribute of a provider block: what a
// final request offers (see loop.FinalTools).
type FinalTools string

// Final-step tool modes.
const (
	FinalToolsOmit FinalTools = "omit" // the final request carries no tools
	FinalToolsNone FinalTools = "none" // tools listed with tool_choice "none"
)

// StepsMax is the agent's step cap: min(steps ?? max_steps, max_steps).
func (c *Config) StepsMax(a *Agent) int {
	if a.Steps == nil || *a.Steps > c.Host.MaxSteps {
		return c.Host.MaxSteps
	}
	return *a.Steps
}
