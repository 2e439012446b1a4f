// Package temporal runs agents as durable workflows on a Temporal server
// (docs/scale-out.md): one run is one workflow (RunWorkflow), each model
// request and tool call one activity (Activities), each subagent call a
// child workflow (SubagentWorkflow).
//
// The workflows run package loop's rules unchanged, through loop.Runner's
// seams: workflow.Now for event times, workflow.Sleep for retry delays, a
// generator seeded from the workflow's run id for jitter, and child
// workflows for subagents (loop.Runner.Subagent, loop.Runner.RunSubagent).
// Workflow code does no I/O and reads no clock: the agent's description
// comes from a local activity recorded in the history, so every replay, on
// any worker, sees the same agent.
//
// Model and plugin failures come back from their activities as data, so
// the loop's retry policy decides about them; Temporal retries an activity
// only when its worker died or it panicked. The workflow keeps its events
// and answers QueryEvents; Follow reads them (a running subagent's from its
// own workflow) and hands them to the caller in order, each once.
//
// This package and cmd/agenthost/temporal.go are the only ones that link
// the Temporal SDK; package loop must not (loop/deps_test.go), nor package
// host (cmd/agenthost/deps_test.go).
package temporal
