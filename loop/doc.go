// Package loop runs one agent: steps, the text-only final step, the tool-call
// budget, token and cost limits, doom-loop detection, retries, compaction,
// subagents and events.
//
// It sits after host in the pipeline (config → host → loop → cmd) and depends
// only on small interfaces (Model, Toolset, Sink, Approver), on zerolog, and on
// seven leaves of the module for its default texts, values and rules: prompts,
// internal/defaults, internal/toolname, internal/jsonenc, internal/jsonscan,
// internal/textcut and internal/argcount; never on wazero, go-openai, HCL or the host (deps_test.go
// enforces this). Unit tests drive
// it with in-memory fakes. Agent.Prompts holds an agent's own prompts; a
// blank one is the default text of package prompts.
//
// One file per behaviour: run.go (the run and its steps), final.go (the
// final step and its prompt), tools.go (executing tool calls), args.go
// (reading a call's arguments once), slots.go
// (the bound on the calls that run at once), budget.go, stops.go (the stop
// reasons),
// spend.go (tokens, cost, prices and the usage estimate), doom.go, retry.go,
// compaction.go, subagent.go, approve.go (asking an Approver), output.go
// (the output schema and its repair), sample.go (a tool's own request to
// the run's model), callclient.go (what the front end that asked for a
// call offers the tool), report.go (a call's progress and logs as
// events); agent.go, types.go and event.go hold the types, wire.go the
// events' JSON form. docs/decisions.md lists the choices made where a
// model misbehaves.
//
// # Policy and stop reasons
//
// An Agent is behaviour (its Model, Tools, Subagents and output validator)
// around a Policy: the prompt, the limits, the approval rules and the output
// schema, as plain JSON-tagged data, which host/temporal ships whole to the
// workflows that rebuild the agent (TestPolicyJSON fails on a field that
// does not survive JSON). The stop reasons are described once, in the stops
// table (stops.go): for each, its exit class (completed, limit, aborted,
// failed), whether it broke the run off, and, for a limit, the check made
// before each step (the spend limits, the step cap), the prompt of its
// final step and the sentinel written when the model gives no summary.
// final.go and output.go read the table, and front ends ask StopReason
// (IsLimit, ExitClass, EndsWithAnswer, Broken) instead of listing reasons.
// A new limit is a Policy field, a row of the table and its prompt in
// package prompts.
//
// # History and events
//
// The history is [system (omitted when Agent.System is empty)] + Input.History
// + user(Input.Prompt). Every message the run appends, the system message and
// the prompt included, is also emitted as an EventMessage; the messages of
// Input.History are not re-emitted (the session already holds them). Message
// events of subagents carry their own agent name and depth, so a session
// writer keeps depth 0 only. Result.Messages is the live history, as the
// next request would see it (after compaction, see below).
//
// # Steps
//
// Step n is one Model.Stream call plus the execution of its tool calls. The
// step cap, StepsMax, is Agent.StepsMax (its default when 0). Steps 1 … StepsMax−1 offer
// the agent's tools and one tool per subagent (no tools field at all when
// there are none). Step StepsMax is the final step: no tools (or all of them
// with ToolChoice "none" when FinalStepTools is "none") and a trailing user
// message, Prompts.MaxSteps. A budget or doom-loop stop makes the next
// request the final step early, with Prompts.Budget or Prompts.DoomLoop, and
// that limit is the stop reason. The injected message is part of the
// history. The Offered field of step.start lists the tools the model may
// call: empty on a final step, even in "none" mode. With StepsMax 1 the
// agent is text-only: no tools, no injected message, stop reason completed.
//
// A response without tool calls ends the run (completed). On a final step the
// run ends whatever the model answers: its tool calls are dropped (one
// EventToolDropped each, the assistant message is stored without them, so no
// tool message is owed), and an empty text is replaced by a host sentinel
// ("[agenthost] stopped: step limit reached (25 of 25 steps); the model
// returned no summary. Dropped tool calls: read_file, list_dir."). A
// text-only agent (StepsMax 1) that returns tool calls stops with max_steps.
//
// Decisions for misbehaving models:
//   - An empty response (no text, no reasoning, no calls) is never appended;
//     on a non-final step it ends the run as completed. Retrying it would
//     hide a provider problem and cost a request; the user sees the empty
//     output and the finish reason in step.end.
//   - A truncated response (Response.Truncated) with tool calls is appended,
//     and every call is answered with an error result saying it was cut off;
//     none is executed, and the run goes on so the model can send it again.
//     A truncated response without calls ends the run as completed with the
//     partial text (a trailing assistant message cannot be continued without
//     prefill, which several providers reject).
//   - Missing or repeated call ids are replaced by fresh 9-character ids
//     ("ah0000001"); a tool name that matches exactly one tool when case is
//     ignored is repaired; empty arguments become "{}". These repairs are
//     made in the stored assistant message too, so the transcript the
//     provider sees next is consistent.
//
// Output is the last non-empty assistant text of the run, whatever the stop
// reason ("" when there was none).
//
// # Tool calls
//
// Each call of one response gets exactly one tool message, in the order of
// the calls. First, the calls past the first Agent.MaxCallsPerStep
// (host.max_calls_per_step, default 64) are answered with an error naming
// that limit; they run nothing, emit no tool event and do not count toward
// the budget. Then, for each remaining call in order: an aborted run answers
// AbortedAnswer; after a budget or doom-loop stop in the same response, the
// rest are answered with that error; a used-up budget answers "tool budget
// exhausted"; the doom-loop check; then the name (exact, case-insensitive
// repair, else an error naming the tool likely meant and listing the tools)
// and the arguments (must be a JSON object; the Toolset's ArgumentChecker
// checks the schema). The arguments are decoded once, for the doom-loop
// check, the object check and ArgumentChecker.Check alike. The calls that
// pass then run: the Toolset's calls concurrently (the model sent them
// together, so they are taken as independent; Toolset.Call, or
// ArgumentChecker.CallChecked with what Check returned, must be safe for
// concurrent use), then the
// subagent calls one after another. Only calls that reach the Toolset (or a
// subagent) count toward the budget and Result.ToolCalls. A Toolset error
// becomes the error result "plugin failure: …", is logged and listed in
// Result.Errors; the run goes on. Executed plugin calls are framed by
// tool.start (as each starts) and tool.end (as each ends); subagent calls by
// subagent.start and subagent.end instead. Between a call's tool.start and
// tool.end come the tool.progress and tool.log events of what its Toolset
// reports while it runs (CallReport, report.go). An abort answers the calls that
// were running without a result with AbortedAnswer, and the calls not
// started yet too, without starting them; those that ended keep their
// results.
//
// Concurrency is bounded: a Toolset call starts only once it holds one of
// the Runner's Slots (host.max_parallel_tools, default 8; without Slots,
// each run has 8 of its own), so at most that many run at once
// whatever the number of calls, and a process whose runs share one Slots
// (agenthost mcp serve, worker) runs at most that many across all of them.
// The calls take the slots in call order; the others wait, and their
// tool.start comes when they start. A subagent call holds no slot (its own
// calls take them) and subagents run one at a time, after the response's
// Toolset calls have ended, so a run and its subagents never hold more
// than the slots between them.
//
// Budget: when the budget is reached (exactly, or with calls refused),
// budget.exhausted is emitted once and the next request is the final step.
// When a doom-loop stop and the budget end the same response, the first one
// hit is the stop reason.
//
// Tokens and cost: Agent.Tokens and Agent.Cost limit the run's usage and
// cost (USD, from Agent.Price), subagents' requests included: every request
// is charged, as it returns, to its run and every run above it. Before each
// step the loop projects the request (the run's last step prompt tokens, or
// before the first step bytes/4 of the history and tools): when it would take
// this run or a run above it past a limit, the step is the final step, with
// Prompts.Tokens or Prompts.Cost, and the stop reason token_limit or
// cost_limit. The final step's own tokens may pass the limit. A response
// without usage is estimated (EstimateUsage) and marked Usage.Estimated.
// step.end carries the step's Usage and Cost and the run's RunUsage and
// RunCost; Result.Cost is nil when a request was made without a price.
//
// Doom loop: the signature of a call is its name plus its arguments
// re-marshalled with sorted keys (raw text when not JSON); the count of
// identical consecutive calls runs across steps. The threshold-th identical
// call (Agent.DoomThreshold) is not executed under DoomWarn (answered with
// Prompts.DoomWarn; a second doom loop in the run acts as DoomStop) and
// DoomStop (answered with an error; the next request is the final step).
// Under DoomAsk, Runner.Approver decides (an AskDoomLoop question, with
// approval.request and approval.decision around it): Allow runs the call,
// AllowAlways runs it and turns detection off for the run, Deny stops;
// without an Approver, DoomAsk acts as DoomStop. Every verdict emits
// doom_loop.
//
// # Approval
//
// The calls of the tools Agent.Approve names wait for Runner.Approver
// (approve.go). The question is put once every other check passed (the
// abort, the budget, the doom loop, the tool's existence and arguments),
// so the calls of one response are asked one after the other, in call
// order, before any of them runs. A denied call gets an error result and,
// like every refused call, emits no tool event and does not count toward
// the budget; the run goes on. "Always" holds for the tool for the rest of
// the agent's run (a subagent's run asks on its own).
//
// # Structured output
//
// Policy.OutputSchema is a JSON Schema the final answer must satisfy, checked
// by Agent.ValidateOutput (output.go):
// the schema in the system message, response_format on the requests that
// offer no tools, one repair request for an invalid answer, then
// StopInvalidOutput.
//
// # Retries
//
// A Model error satisfying errors.Is(err, context.Canceled), or any error
// once ctx is done, aborts the run. A *ProviderError with Retryable is
// retried up to Retry.Attempts tries in all: the delay is RetryAfter when
// the server sent one (a RetryAfter above MaxDelay stops the run with
// provider_error at once), else Initial doubled per try, times a jitter
// factor in [0.8, 1.2), capped at MaxDelay. A zero field of Retry, and a
// zero DoomThreshold or DoomAction, take the agents.hcl default (package
// internal/defaults). A retry event (attempt = the failed try, delay_ms, status, message)
// precedes each wait. A non-retryable ProviderError or the last failed try
// stops the run with provider_error; any other error stops it with error.
// Retries never consume steps.
//
// # Compaction
//
// When ContextWindow > 0 and a response's prompt tokens exceed 85 % of it,
// the history is summarised before the next request by one request without
// tools: the system message, the older messages and a user message
// Prompts.Compaction. The four most recent messages are kept, extended back
// so that an assistant message is never separated from its tool results;
// fewer than two older messages skips compaction. The older messages are
// replaced by one user message "Summary of earlier conversation: …". The
// compaction event carries the summary message (Msg), the number of messages
// it replaced (Replaced) and the number of recent messages kept (Kept); no
// message event is emitted for it, because it replaces messages rather than
// following them: ApplyCompaction rebuilds the compacted history from those
// fields, for the run and for a session being continued alike.
// A failed or empty summary leaves the history as it was (a failure is listed
// in Result.Errors). Compaction is not a step and is not streamed to OnText.
// A run's first request larger than ContextWindow by the usage estimate
// (EstimateUsage) is logged as a warning before it is sent (checkWindow).
//
// # Subagents
//
// A subagent tool takes {"prompt": string}. When depth+1 exceeds the
// parent's MaxDepth the call is refused ("subagent nesting deeper than
// max_depth N refused"). Otherwise a nested run starts (same Runner, Sink and
// ctx, so aborting the parent aborts the child) with the child's own step
// cap, budget and counters; its events carry its name and depth+1. The parent's
// tool result is SubagentContent: the child's output, a blank line, and a
// last line holding {"stop_reason":…,"steps":…,"steps_max":…}. It is an
// error result when the child stopped with provider_error, error or aborted.
// The parent's Usage (and Cost) includes the child's, charged as the child's
// requests return; the child's errors are listed in
// the parent's Errors prefixed "subagent NAME: "; the call counts one toward
// the parent's budget and ToolCalls.
//
// # Running elsewhere
//
// The loop's own code reads no clock, draws no random number, starts no
// goroutine and iterates no map where order matters: time, sleeping,
// jitter and subagents go through Runner's function fields. A durable
// workflow (package host/temporal) sets them to deterministic versions and
// runs the same rules; Runner.Subagent with RunSubagent runs a subagent
// elsewhere (a child workflow) with the spend and limits of the runs above
// it passed along (Ancestor), and the parent charges the child's usage and
// cost when it returns. TestSubagentElsewhere checks that both ways send
// the same requests and give the same events and result.
//
// # Abort
//
// When ctx is cancelled the in-flight request or tool call returns; a call
// that was running is answered AbortedAnswer unless it returned a result,
// calls not yet run are answered AbortedAnswer too, and the run stops with
// aborted after emitting run.end. Result.Usage sums every request of the run: steps,
// compaction and subagents.
package loop
