// Package host builds everything a run needs from a valid config: the one
// wazero runtime with its compilation cache, the loaded plugins, the
// provider adapters (optionally wrapped by cassettes), and the immutable tree
// of loop.Agents. It is the second stage of the pipeline
// (config → host → loop → cmd).
//
// Host.Run is the one way a front end runs an agent: it selects the agent,
// creates or continues its session, runs the loop with every event
// recorded in the session and handed to the front end, and closes the
// session. The front end renders events and results; a request it cannot
// serve comes back as a *UsageError.
package host
