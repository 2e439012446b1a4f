// Package loop runs one agent: steps, the text-only final step, the tool-call
// budget, doom-loop detection, retries, compaction, subagents and events.
//
// It sits after host in the pipeline (config → host → loop → cmd) and depends
// only on small interfaces (Model, Toolset, Sink): never on wazero, go-openai,
// HCL or the host. Unit tests drive it with in-memory fakes.
package loop
