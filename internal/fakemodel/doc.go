// Package fakemodel is a scripted OpenAI-compatible chat-completions server
// for tests. It listens on 127.0.0.1, answers each POST /v1/chat/completions
// with the next reply of a script as a real server-sent-events stream, and
// records every request body and URL so a test can assert on what the host
// sent.
// GET /v1/models lists one model, "fakemodel", or what Server.SetModels
// says (other ids, or an HTTP error); Server.RequireKey makes every route
// answer 401 to requests without the key.
//
// It sits beside the pipeline, not in it: the script tests of cmd/agenthost
// (the "fakemodel" script command) and "agenthost test" start one per
// scenario and point a provider's base_url at Server.URL.
//
// # Script format
//
// A script is JSON lines: one reply per non-empty line, in the order the
// requests will arrive. Lines whose first non-blank character is # are
// comments. Every field is optional; an empty object {} is an empty answer.
//
//	# a text answer, streamed in a few chunks split on word boundaries
//	{"text": "Hello there."}
//	# one tool call; arguments is a JSON object, or a string sent verbatim
//	{"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]}
//	{"tool_calls": [{"name": "read_file", "arguments": "{\"path\": broken", "id": "call_x"}]}
//	# token accounting and the finish reason
//	{"text": "done", "finish_reason": "length", "usage": {"prompt_tokens": 900, "completion_tokens": 12}}
//	# an HTTP error, with headers and (optionally) a body
//	{"status": 429, "headers": {"Retry-After": "0"}}
//	{"status": 400, "body": {"error": {"message": "bad tool schema", "type": "invalid_request_error"}}}
//	# a raw SSE body, sent verbatim (wire-quirk tests)
//	{"raw": ": keep-alive\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n"}
//	# a stream cut before its finish chunk and [DONE]
//	{"text": "partial answ", "cut": true}
//	# a stream that stalls until the client goes away (abort tests)
//	{"text": "thinking", "hang": true}
//	# a model that trickles: a pause before each chunk
//	{"text": "one two three four five six", "chunk_delay": "100ms"}
//	# a stream that waits for Server.Release (the script's "fakemodel release"), then ends
//	{"text": "done", "hold": true}
//	# the same reply three times
//	{"tool_calls": [{"name": "list_dir", "arguments": {}}], "repeat": 3}
//
// Fields:
//   - text: assistant text. It is split after the whitespace that follows
//     every second word, one chunk per piece.
//   - reasoning: reasoning text, streamed as reasoning_content before text.
//   - tool_calls: calls streamed the way OpenAI does: the first delta of a
//     call carries its index, id, type and name with empty arguments, the
//     following deltas carry argument fragments (about three per call). A
//     call without arguments sends "{}". A call without id gets
//     "call_<reply number>_<call number>", unique within the server.
//   - finish_reason: defaults to "tool_calls" when there are calls, else "stop".
//   - usage: {"prompt_tokens": N, "completion_tokens": N}, sent in a last
//     chunk with "choices": [] (total_tokens is their sum unless given);
//     "cached_tokens": N is sent as prompt_tokens_details.cached_tokens.
//     Without it no usage is sent.
//   - status: an HTTP error status (400–599) answered instead of a stream.
//     body is the JSON error body (a JSON string is sent verbatim, for
//     non-JSON bodies); it defaults to
//     {"error": {"message": "fakemodel: HTTP <status>", "type": <by status>}}.
//   - headers: response headers, for any kind of reply.
//   - raw: a complete SSE body sent verbatim with status 200.
//   - cut: stream the text and tool-call chunks, then drop the connection
//     without a finish chunk, usage or [DONE] (the client sees an unexpected
//     EOF). A clean close without [DONE] is a raw reply.
//   - hang: send the headers, the role chunk and the first text chunk, then
//     block until the client disconnects or the server closes.
//   - chunk_delay: a pause before every chunk of a stream (a Go duration
//     up to 1m, "100ms"), cut short when the client goes away. The headers
//     are sent at once.
//   - hold: send the headers and the role chunk, then wait until
//     Server.Release is called (or the client disconnects, or the server
//     closes), then stream the rest of the reply. Release is once for the
//     server's life: a hold met after it does not wait. Tests use it to
//     keep a run busy for as long as they need, without a sleep.
//   - repeat: serve the reply this many times (default 1).
//
// Every chunk has the OpenAI shape (id, object "chat.completion.chunk",
// created, model echoed from the request, choices) and the stream ends with
// "data: [DONE]". Only streaming requests ("stream": true) are served; any
// other request is answered 400 without using a reply. When the script is
// used up, every further request is answered 500 with the message
// "fakemodel: script exhausted after N replies" (type
// "fakemodel_script_exhausted"); Server.Exhausted counts those requests and
// Server.Format marks them. Server.Remaining tells whether a scenario used
// every reply.
package fakemodel
