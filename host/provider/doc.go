// Package provider adapts OpenAI-compatible chat-completion endpoints
// (OpenAI, Azure, Ollama, vLLM, llama.cpp, LM Studio, OpenRouter, Groq,
// DeepSeek, Gemini's and Anthropic's compatibility layers, ...) to the
// loop's Model interface.
//
// It sits inside host in the pipeline (config → host → loop → cmd): the host
// builds one Provider per configured provider/model and hands it to the
// loop as a loop.Model. Nothing outside this package sees go-openai.
//
// # How go-openai is used, and why not more
//
// github.com/sashabaranov/go-openai is our client (the design card fixes
// it). It builds the request from its ChatCompletionRequest type, sends it,
// turns failed responses into *openai.APIError / *openai.RequestError, and
// splits the stream into data lines with RecvRaw. Three things stop us from
// using it alone, and each is fixed at one seam, the HTTPDoer we give it
// (transport.go), rather than by forking it or parsing beside it:
//
//   - Its request types cannot say some things we must send: a temperature
//     of 0 (dropped by omitempty), extra_content on a tool call (Gemini's
//     thought signature), an empty tool result ("content" dropped). And
//     encoding the whole history by reflection, every step, would be the
//     largest CPU cost of a step. So the messages are encoded by us (encode.go, with
//     extra_content and empty content) and the doer splices them, and a
//     temperature of 0, into the small body go-openai produced for the rest
//     (bodyPatch); model, tools and limits stay go-openai's.
//   - It returns a nil stream for a failed request, so the status headers
//     (Retry-After, retry-after-ms, x-should-retry) and a non-OpenAI error
//     body are lost, and it never closes that body. The doer keeps them.
//   - Its stream reader knows one error pattern, counts comment lines as
//     "empty messages" until it gives up, drops a last line without a
//     newline, and cannot tell [DONE] from a cut connection. The doer wraps
//     the body in a normaliser (sseBody) that hands go-openai only clean
//     "data:" lines and remembers [DONE]; the data are decoded into our own
//     tolerant chunk type (chunk.go), never go-openai's, because its types
//     lose a missing index, object arguments, "reasoning", extra_content,
//     vendor usage and top-level errors. The usual chunks are decoded by a
//     fast path that gives up to encoding/json on anything else
//     (fastchunk.go); the result is encoding/json's either way.
//
// Parsing the event stream ourselves would have saved little code;
// keeping go-openai in the path means request building, authentication
// headers and error types stay those of the library the rest of the project
// (and its users) know, and the wire patches stay small and visible.
//
// # Behaviour
//
// Accumulation follows the rule in docs/providers.md (chunk.go). A response
// with any accumulated tool call is a tool step whatever finish_reason
// says; a "length" finish or arguments that are not JSON set
// Response.Truncated. An empty response (no text, calls or reasoning) is
// returned as is: the loop decides what to do with it.
//
// Reasoning the provider returned is echoed back as reasoning_content on
// assistant messages with tool calls (DeepSeek's thinking mode requires it
// there), and extra_content on the calls that carried it (Gemini).
//
// Tool-call ids: a provider's id is kept when it is sane (printable ASCII,
// at most 128 bytes) and not already used in the run's history; otherwise
// the call gets "call<n>" with at least five digits ("call00003" is 9
// alphanumerics, the only form Mistral accepts). Ids derive from the request
// alone, so a replayed cassette yields the same ids. On the way out, ids go
// to the wire as the loop knows them unless they are not sane or repeat
// within the request; then the call gets a fresh wire id, and so does the
// tool message that answers it.
//
// Errors are *loop.ProviderError, classified as docs/providers.md
// ("Retries") says; the adapter itself never retries (nor does go-openai, nor
// net/http for a POST unless an Idempotency-Key header is configured).
// Cancelling ctx returns an error wrapping ctx.Err(). An idle timer per
// request (IdleTimeout, reset by every byte, keep-alive comments included)
// turns a silent server into a retryable error; a deadline per request
// (RequestTimeout, never reset) does the same for a server
// that trickles bytes forever. Either is not retried once tool calls have
// streamed. A line above 32 MiB or a response above 128 MiB ends the request
// with a final error.
//
// # Credentials
//
// go-openai appends "/chat/completions" to the base URL as text, so a query
// in the base URL ("?api-version=...", "?api-key=...") is taken off once in
// New and put back on every request by the transport. Every error message
// names the endpoint with its userinfo and query values redacted
// (internal/redact), net/http's *url.Error has its URL redacted, and the
// credential values (the base URL's, the API key, credential headers) are
// scrubbed from whatever a server or library wrote into a message.
package provider
