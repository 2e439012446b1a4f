package config

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// The raw* types are the shape of agents.hcl as gohcl decodes it. Sizes and
// durations are strings, parsed later so that errors point at the value;
// *int tells "unset" from 0; *_range fields keep positions for diagnostics.

type rawFile struct {
	Host       *rawHost        `hcl:"host,block"`
	Providers  []*rawProvider  `hcl:"provider,block"`
	Models     []*rawModel     `hcl:"model,block"`
	Plugins    []*rawPlugin    `hcl:"plugin,block"`
	MCPServers []*rawMCPServer `hcl:"mcp_server,block"`
	Agents     []*rawAgent     `hcl:"agent,block"`
	Temporal   *rawTemporal    `hcl:"temporal,block"`
}

type rawHost struct {
	MaxSteps      *int      `hcl:"max_steps,optional"`
	MaxStepsRange hcl.Range `hcl:"max_steps,attr_value_range"`
	DataDir       string    `hcl:"data_dir,optional"`
	DataDirRange  hcl.Range `hcl:"data_dir,attr_value_range"`
	MaxDepth      *int      `hcl:"max_depth,optional"`
	MaxDepthRange hcl.Range `hcl:"max_depth,attr_value_range"`
	MaxCost       *float64  `hcl:"max_cost,optional"`
	MaxCostRange  hcl.Range `hcl:"max_cost,attr_value_range"`
	// MaxParallelTools and MaxCallsPerStep bound the tool calls of one
	// response: how many run at once, how many are taken at all.
	MaxParallelTools      *int      `hcl:"max_parallel_tools,optional"`
	MaxParallelToolsRange hcl.Range `hcl:"max_parallel_tools,attr_value_range"`
	MaxCallsPerStep       *int      `hcl:"max_calls_per_step,optional"`
	MaxCallsPerStepRange  hcl.Range `hcl:"max_calls_per_step,attr_value_range"`
	// Otel is decoded as any value so that a wrong type gets our own
	// message (gohcl would turn "true" into true silently).
	Otel      cty.Value `hcl:"otel,optional"`
	OtelRange hcl.Range `hcl:"otel,attr_value_range"`
}

type rawProvider struct {
	Name                string            `hcl:"name,label"`
	NameRange           hcl.Range         `hcl:"name,label_range"`
	BaseURL             string            `hcl:"base_url,optional"`
	BaseURLRange        hcl.Range         `hcl:"base_url,attr_value_range"`
	APIKey              string            `hcl:"api_key,optional"`
	Headers             map[string]string `hcl:"headers,optional"`
	Retry               *rawRetry         `hcl:"retry,block"`
	FinalStepTools      string            `hcl:"final_step_tools,optional"`
	FinalStepToolsRange hcl.Range         `hcl:"final_step_tools,attr_value_range"`
	IdleTimeout         string            `hcl:"idle_timeout,optional"`
	IdleTimeoutRange    hcl.Range         `hcl:"idle_timeout,attr_value_range"`
	RequestTimeout      string            `hcl:"request_timeout,optional"`
	RequestTimeoutRange hcl.Range         `hcl:"request_timeout,attr_value_range"`
	// StructuredOutput is how requests ask for an agent's output_schema.
	StructuredOutput      string    `hcl:"structured_output,optional"`
	StructuredOutputRange hcl.Range `hcl:"structured_output,attr_value_range"`
	DefRange              hcl.Range `hcl:",def_range"`
}

type rawRetry struct {
	Attempts      *int      `hcl:"attempts,optional"`
	AttemptsRange hcl.Range `hcl:"attempts,attr_value_range"`
	Initial       string    `hcl:"initial,optional"`
	InitialRange  hcl.Range `hcl:"initial,attr_value_range"`
	MaxDelay      string    `hcl:"max_delay,optional"`
	MaxDelayRange hcl.Range `hcl:"max_delay,attr_value_range"`
}

type rawModel struct {
	Name               string    `hcl:"name,label"`
	NameRange          hcl.Range `hcl:"name,label_range"`
	Provider           string    `hcl:"provider,optional"`
	ProviderRange      hcl.Range `hcl:"provider,attr_value_range"`
	ID                 string    `hcl:"name,optional"`
	IDRange            hcl.Range `hcl:"name,attr_value_range"`
	ContextWindow      *int      `hcl:"context_window,optional"`
	ContextWindowRange hcl.Range `hcl:"context_window,attr_value_range"`
	Temperature        *float64  `hcl:"temperature,optional"`
	TemperatureRange   hcl.Range `hcl:"temperature,attr_value_range"`
	MaxTokens          *int      `hcl:"max_tokens,optional"`
	MaxTokensRange     hcl.Range `hcl:"max_tokens,attr_value_range"`
	Price              *rawPrice `hcl:"price,block"`
	DefRange           hcl.Range `hcl:",def_range"`
}

type rawPrice struct {
	Input            *float64  `hcl:"input,optional"`
	InputRange       hcl.Range `hcl:"input,attr_value_range"`
	Output           *float64  `hcl:"output,optional"`
	OutputRange      hcl.Range `hcl:"output,attr_value_range"`
	CachedInput      *float64  `hcl:"cached_input,optional"`
	CachedInputRange hcl.Range `hcl:"cached_input,attr_value_range"`
	DefRange         hcl.Range `hcl:",def_range"`
}

type rawPlugin struct {
	Name        string            `hcl:"name,label"`
	NameRange   hcl.Range         `hcl:"name,label_range"`
	Source      string            `hcl:"source"`
	SourceRange hcl.Range         `hcl:"source,attr_value_range"`
	SHA256      string            `hcl:"sha256,optional"`
	SHA256Range hcl.Range         `hcl:"sha256,attr_value_range"`
	Kind        string            `hcl:"kind,optional"`
	KindRange   hcl.Range         `hcl:"kind,attr_value_range"`
	Limits      *rawLimits        `hcl:"limits,block"`
	Mounts      []*rawMount       `hcl:"mount,block"`
	Env         map[string]string `hcl:"env,optional"`
	Clock       bool              `hcl:"clock,optional"`
	Random      bool              `hcl:"random,optional"`
	Tools       []*rawTool        `hcl:"tool,block"`
	// Config and HTTP are for Extism plugins (extism.go).
	Config      map[string]string `hcl:"config,optional"`
	ConfigRange hcl.Range         `hcl:"config,attr_value_range"`
	HTTP        *rawHTTP          `hcl:"http,block"`
	Reuse       bool              `hcl:"reuse,optional"`
	ReuseRange  hcl.Range         `hcl:"reuse,attr_value_range"`
	// ToolPrefix and Rename change the names the model sees (names.go).
	ToolPrefix      string            `hcl:"tool_prefix,optional"`
	ToolPrefixRange hcl.Range         `hcl:"tool_prefix,attr_value_range"`
	Rename          map[string]string `hcl:"rename,optional"`
	RenameRange     hcl.Range         `hcl:"rename,attr_value_range"`
	// Insecure allows plain HTTP to a registry off this machine
	// (source = "oci+http://...", internal/ociref).
	Insecure      bool      `hcl:"insecure,optional"`
	InsecureRange hcl.Range `hcl:"insecure,attr_value_range"`
	DefRange      hcl.Range `hcl:",def_range"`
}

type rawHTTP struct {
	Allow      []string  `hcl:"allow"`
	AllowRange hcl.Range `hcl:"allow,attr_value_range"`
	DefRange   hcl.Range `hcl:",def_range"`
}

type rawLimits struct {
	Memory         string    `hcl:"memory,optional"`
	MemoryRange    hcl.Range `hcl:"memory,attr_value_range"`
	Timeout        string    `hcl:"timeout,optional"`
	TimeoutRange   hcl.Range `hcl:"timeout,attr_value_range"`
	MaxOutput      string    `hcl:"max_output,optional"`
	MaxOutputRange hcl.Range `hcl:"max_output,attr_value_range"`
	MaxWrite       string    `hcl:"max_write,optional"`
	MaxWriteRange  hcl.Range `hcl:"max_write,attr_value_range"`
	MaxFiles       *int64    `hcl:"max_files,optional"`
	MaxFilesRange  hcl.Range `hcl:"max_files,attr_value_range"`
}

type rawMount struct {
	Name       string    `hcl:"name,label"`
	NameRange  hcl.Range `hcl:"name,label_range"`
	Host       string    `hcl:"host"`
	HostRange  hcl.Range `hcl:"host,attr_value_range"`
	Guest      string    `hcl:"guest"`
	GuestRange hcl.Range `hcl:"guest,attr_value_range"`
	Mode       string    `hcl:"mode,optional"`
	ModeRange  hcl.Range `hcl:"mode,attr_value_range"`
	DefRange   hcl.Range `hcl:",def_range"`
}

type rawTool struct {
	Name             string         `hcl:"name,label"`
	NameRange        hcl.Range      `hcl:"name,label_range"`
	Description      string         `hcl:"description,optional"`
	InputSchema      hcl.Expression `hcl:"input_schema,optional"`
	InputSchemaRange hcl.Range      `hcl:"input_schema,attr_value_range"`
	Argv             hcl.Expression `hcl:"argv,optional"`
	ArgvRange        hcl.Range      `hcl:"argv,attr_value_range"`
	Stdin            hcl.Expression `hcl:"stdin,optional"`
	StdinRange       hcl.Range      `hcl:"stdin,attr_value_range"`
	Function         string         `hcl:"function,optional"`
	FunctionRange    hcl.Range      `hcl:"function,attr_value_range"`
	Input            hcl.Expression `hcl:"input,optional"`
	InputRange       hcl.Range      `hcl:"input,attr_value_range"`
	DefRange         hcl.Range      `hcl:",def_range"`
}

type rawAgent struct {
	Name           string         `hcl:"name,label"`
	NameRange      hcl.Range      `hcl:"name,label_range"`
	Description    string         `hcl:"description,optional"`
	Model          string         `hcl:"model,optional"`
	ModelRange     hcl.Range      `hcl:"model,attr_value_range"`
	Prompt         string         `hcl:"prompt,optional"`
	Steps          *int           `hcl:"steps,optional"`
	StepsRange     hcl.Range      `hcl:"steps,attr_value_range"`
	Budget         *int           `hcl:"budget,optional"`
	BudgetRange    hcl.Range      `hcl:"budget,attr_value_range"`
	Tokens         *int           `hcl:"tokens,optional"`
	TokensRange    hcl.Range      `hcl:"tokens,attr_value_range"`
	Cost           *float64       `hcl:"cost,optional"`
	CostRange      hcl.Range      `hcl:"cost,attr_value_range"`
	Tools          hcl.Expression `hcl:"tools,optional"`
	ToolsRange     hcl.Range      `hcl:"tools,attr_value_range"`
	Subagents      hcl.Expression `hcl:"subagents,optional"`
	SubagentsRange hcl.Range      `hcl:"subagents,attr_value_range"`
	Default        bool           `hcl:"default,optional"`
	DefaultRange   hcl.Range      `hcl:"default,attr_value_range"`
	MaxStepsPrompt string         `hcl:"max_steps_prompt,optional"`
	BudgetPrompt   string         `hcl:"budget_prompt,optional"`
	TokensPrompt   string         `hcl:"tokens_prompt,optional"`
	CostPrompt     string         `hcl:"cost_prompt,optional"`
	DoomLoopPrompt string         `hcl:"doom_loop_prompt,optional"`
	DoomLoop       *rawDoomLoop   `hcl:"doom_loop,block"`
	// Approve lists tool names and patterns whose calls wait for a person.
	Approve      hcl.Expression `hcl:"approve,optional"`
	ApproveRange hcl.Range      `hcl:"approve,attr_value_range"`
	// OutputSchema is a JSON Schema as text (file("x.json")) or an object.
	OutputSchema      cty.Value `hcl:"output_schema,optional"`
	OutputSchemaRange hcl.Range `hcl:"output_schema,attr_value_range"`
	DefRange          hcl.Range `hcl:",def_range"`
}

type rawDoomLoop struct {
	Threshold      *int      `hcl:"threshold,optional"`
	ThresholdRange hcl.Range `hcl:"threshold,attr_value_range"`
	Action         string    `hcl:"action,optional"`
	ActionRange    hcl.Range `hcl:"action,attr_value_range"`
}
