// Package cassette records model requests and responses to a file and
// replays them without a network, at the loop.Model seam (docs/testing.md).
// The host wraps every agent's model with a Recorder for "run --record FILE"
// and serves them from a Player for "run --replay FILE";
// nothing in the loop knows about it.
//
// A cassette is a JSON-lines file, one entry per successful model request:
//
//	{"key": "<hex sha256>", "request": {canonical request}, "response": {loop.Response}}
//
// The canonical request holds the model id, the messages, the tools and the
// tool choice, with the volatile parts left out: tool call ids are replaced
// by their ordinal in the request ("call_1", "call_2", ... in order of first
// appearance) and provider extras (ToolCall.Extra) are dropped; tool input
// schemas are re-encoded with sorted keys. The key is the SHA-256 of the
// canonical request's JSON, recomputed on load, so a hand-edited request
// keeps matching what it says. Failed requests are not recorded: a replay
// serves the eventual answer at once.
//
// On replay, a request whose key appears several times gets the recorded
// responses in order, then the last one again (its tool call ids suffixed
// "_r1", "_r2", ... so they stay unique within the run). Responses are
// otherwise returned exactly as recorded. A request the cassette does not
// hold fails with a non-retryable *loop.ProviderError (Code "cassette_miss",
// wrapping ErrMiss) whose message names the cassette and shows how the
// request differs from the nearest recorded one.
package cassette
