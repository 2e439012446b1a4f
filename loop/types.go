package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Role is the author of a message, as in the OpenAI chat API.
type Role string

const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one provider-neutral chat message.
type Message struct {
	Role Role `json:"role"`
	// Content is the text of the message; empty for an assistant message that
	// only carries tool calls.
	Content string `json:"content,omitempty"`
	// Reasoning is reasoning text the provider returned separately from the
	// content (reasoning_content / reasoning); kept so it can be echoed back
	// to providers that require it.
	Reasoning string `json:"reasoning,omitempty"`
	// ToolCalls are the calls an assistant message asks for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID links a tool message to the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Name is the tool name on a tool message.
	Name string `json:"name,omitempty"`
	// IsError marks a tool message that reports a failure. It is not sent to
	// providers (the text says it); it is kept for the transcript.
	IsError bool `json:"is_error,omitempty"`
}

// ToolCall is one tool invocation requested by the model.
type ToolCall struct {
	// ID is the call id as the loop knows it; unique within a run.
	ID string `json:"id"`
	// Name is the tool name as the model sent it.
	Name string `json:"name"`
	// Arguments is the raw argument text as the model sent it; normally a
	// JSON object, but hostile or broken models may send anything.
	Arguments string `json:"arguments"`
	// Extra holds provider-specific data that must be echoed back with the
	// call (for example Gemini's thought signature). Opaque to the loop.
	Extra json.RawMessage `json:"extra,omitempty"`
}

// ToolSpec describes one tool offered to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	// Annotations (MCP ToolAnnotations) and OutputSchema (a JSON Schema
	// of the structured result) are what the tool's source declares, for
	// front ends that offer the tool on (mcp serve); the model is not
	// sent them. nil when not declared.
	Annotations  json.RawMessage `json:"-"`
	OutputSchema json.RawMessage `json:"-"`
}

// ToolChoice values for Request.ToolChoice.
const (
	ToolChoiceAuto = ""     // provider default
	ToolChoiceNone = "none" // tools listed but the model must not call them
)

// Request is one chat-completion request as the loop builds it.
type Request struct {
	Messages   []Message  `json:"messages"`
	Tools      []ToolSpec `json:"tools,omitempty"`
	ToolChoice string     `json:"tool_choice,omitempty"`
	// ResponseFormat, when set, asks for JSON (Policy.OutputSchema); only on
	// requests that offer no tools.
	ResponseFormat *ResponseFormat `json:"response_format,omitempty"`
}

// Usage is token accounting as reported by the provider (0 when not
// reported). When a server reports none the loop estimates it (see
// EstimateUsage) and sets Estimated; a sum is estimated when any part is.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// CachedTokens is the part of PromptTokens the provider served from its
	// prompt cache (priced as cached input); omitted when 0.
	CachedTokens int `json:"cached_tokens,omitempty"`
	// Estimated marks counts the loop estimated; omitted when false.
	Estimated bool `json:"estimated,omitempty"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		PromptTokens:     u.PromptTokens + o.PromptTokens,
		CompletionTokens: u.CompletionTokens + o.CompletionTokens,
		TotalTokens:      u.TotalTokens + o.TotalTokens,
		CachedTokens:     u.CachedTokens + o.CachedTokens,
		Estimated:        u.Estimated || o.Estimated,
	}
}

// Zero reports whether u carries no counts (the server sent no usage).
func (u Usage) Zero() bool {
	return u.PromptTokens == 0 && u.CompletionTokens == 0 && u.TotalTokens == 0
}

// Response is the complete result of one streamed request.
type Response struct {
	// Message is the assistant message (role assistant), with text, reasoning
	// and tool calls accumulated from the stream.
	Message Message `json:"message"`
	// FinishReason is the provider's finish reason, untrusted and informative.
	FinishReason string `json:"finish_reason,omitempty"`
	Usage        Usage  `json:"usage"`
	// Truncated is true when the stream ended in a way that makes the tool
	// calls unsafe to execute (for example a length finish, or arguments
	// that do not parse); the loop then runs none of them.
	Truncated bool `json:"truncated,omitempty"`
}

// Model streams one chat-completion request. onText, when not nil, receives
// assistant text fragments as they arrive. Implementations must return a
// *ProviderError for failures the loop may want to retry; any error for
// which errors.Is(err, context.Canceled) holds means the run was aborted.
type Model interface {
	Stream(ctx context.Context, req Request, onText func(string)) (Response, error)
}

// ProviderError is a failed model request, classified by the adapter.
type ProviderError struct {
	// Status is the HTTP status; 0 for network errors and broken streams.
	Status int
	// Code is the provider's error code or type, when it sent one.
	Code string
	// Message is the provider's own message, or a description of the failure.
	Message string
	// Retryable says whether the same request may be sent again.
	Retryable bool
	// RetryAfter is the delay the server asked for (retry-after-ms,
	// Retry-After); 0 when it did not ask.
	RetryAfter time.Duration
	// Err is the underlying error, if any.
	Err error
}

func (e *ProviderError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("provider: HTTP %d: %s", e.Status, e.Message)
	}
	return "provider: " + e.Message
}

func (e *ProviderError) Unwrap() error { return e.Err }

// ToolResult is the outcome of a tool call as shown to the model.
type ToolResult struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error"`
	// MCP is the result's MCP content, a JSON array of content items
	// (text, image, audio, resource, resource_link) as the tool gave
	// them, when it gave any but text; nil otherwise. Front ends that can
	// show them (mcp serve) pass them on; the model reads Content, where
	// each such item is a short note. Not recorded in sessions.
	MCP json.RawMessage `json:"-"`
	// Structured is the result's structured content (a JSON value) when
	// the tool gave one, for front ends that pass it on (mcp serve, when
	// the tool declares an output schema); nil otherwise. The model reads
	// Content. Not recorded in sessions.
	Structured json.RawMessage `json:"-"`
}

// Toolset is the set of tools an agent may call. Implementations validate the
// arguments against the tool's schema and return an error *result* (IsError)
// for invalid arguments or a tool that failed; a non-nil error means the
// tool's plugin broke (trap, timeout, crash); the loop turns that into an
// error result too, and goes on. Call must be safe for concurrent use: the
// calls of one response run at the same time.
//
// The loop decides "unknown tool" itself, from Tools and the subagents
// (UnknownTool): it hands a Toolset only calls of the tools Tools lists.
type Toolset interface {
	Tools() []ToolSpec
	Call(ctx context.Context, call ToolCall) (ToolResult, error)
}

// RefreshingToolset is an optional extension of Toolset whose tools can
// change while a run uses it: a plugin or an MCP server said its list of
// tools changed. The loop calls Refresh when a run starts and before each
// step after the first that offers tools; Refresh brings the set up to
// date (listing the tools again where a source said they changed, which
// may take the source's time) and returns its version, which changes
// whenever Tools would return another list. The loop reads Tools again
// when the version changed. Refresh must be cheap when nothing changed,
// and safe for concurrent use.
type RefreshingToolset interface {
	Toolset
	Refresh(ctx context.Context) uint64
}

// ArgumentChecker is an optional extension of Toolset that splits Call in
// two, so that a call's arguments are decoded once and validated once:
//
//   - Check decides, without running anything, whether call may run: args
//     is call.Arguments as the loop decoded it (ParseArguments: a JSON
//     object, numbers as json.Number), which Check validates against the
//     tool's schema without decoding the text again. It returns the
//     checked call and "", or the reason the call is refused (the text of
//     its error result).
//   - CallChecked runs a call Check returned, without decoding or
//     validating its arguments again. It must be safe for concurrent use.
//
// The loop checks every call before it counts it: a refused call gets an
// error result, emits no tool events and does not count toward the budget,
// like arguments that are not a JSON object. The calls admitted then run
// with CallChecked, never with Call; Call stays for callers that hold a
// call nobody checked, and gives the outcome Check then CallChecked would.
//
// A CheckedCall does not outlive the process that made it: a durable run
// (host/temporal) checks a call in one activity and runs it in another,
// possibly on another worker, which checks it again where it runs.
type ArgumentChecker interface {
	Check(call ToolCall, args map[string]any) (CheckedCall, string)
	CallChecked(ctx context.Context, call CheckedCall) (ToolResult, error)
}

// CheckedCall is a call an ArgumentChecker admitted: the call, and what
// the check made of it.
type CheckedCall struct {
	ToolCall
	// Checked is the toolset's own result of the check (for a plugin's
	// tool: the tool and its validated arguments). It is opaque to the
	// loop and means something only to the toolset that made it.
	Checked any
}
