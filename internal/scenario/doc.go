// Package scenario runs scenarios: txtar files that hold an agent's
// config, a fake model's scripted answers and the commands to run with
// their expected output (docs/testing.md). It is the engine of
// 'agenthost test', kept apart from the command line as go-internal keeps
// its testscript library apart from cmd/testscript, and the project's own
// script tests use its Params.
//
// A scenario runs the agenthost executable as a separate process, in its
// own working directory and HOME, against the fake model server of
// internal/fakemodel on loopback. It never imports the host: the
// compilation cache it is handed is resolved by the caller.
package scenario
