package provider

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/agenthost/agenthost/loop"
)

// fixedNow is the clock for Retry-After dates.
var fixedNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// want is the expected classification of a failure.
type want struct {
	status     int
	code       string
	message    string // exact when set
	contains   string // substring of the message when set
	retryable  bool
	retryAfter time.Duration
}

func checkError(t *testing.T, err error, w want) {
	t.Helper()
	if errors.Is(err, context.Canceled) {
		t.Fatalf("error %v says canceled; want a provider error", err)
	}
	pe := providerError(t, err)
	if pe.Status != w.status {
		t.Errorf("Status = %d, want %d", pe.Status, w.status)
	}
	if pe.Code != w.code {
		t.Errorf("Code = %q, want %q", pe.Code, w.code)
	}
	if w.message != "" && pe.Message != w.message {
		t.Errorf("Message = %q, want %q", pe.Message, w.message)
	}
	if w.contains != "" && !strings.Contains(pe.Message, w.contains) {
		t.Errorf("Message = %q, want it to contain %q", pe.Message, w.contains)
	}
	if pe.Retryable != w.retryable {
		t.Errorf("Retryable = %v, want %v (message %q)", pe.Retryable, w.retryable, pe.Message)
	}
	if pe.RetryAfter != w.retryAfter {
		t.Errorf("RetryAfter = %v, want %v", pe.RetryAfter, w.retryAfter)
	}
}

func TestHTTPErrors(t *testing.T) {
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    want
	}{
		{
			name: "429 with Retry-After seconds",
			handler: status(429, `{"error":{"message":"Rate limit reached for gpt-4o","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
				"Retry-After", "2"),
			want: want{status: 429, code: "rate_limit_exceeded", message: "Rate limit reached for gpt-4o", retryable: true, retryAfter: 2 * time.Second},
		},
		{
			name:    "429 with fractional Retry-After",
			handler: status(429, `{"error":{"message":"slow down","type":"rate_limit_error"}}`, "Retry-After", "1.5"),
			want:    want{status: 429, code: "rate_limit_error", message: "slow down", retryable: true, retryAfter: 1500 * time.Millisecond},
		},
		{
			name: "429 with Retry-After HTTP date",
			handler: status(429, `{"error":{"message":"slow down","type":"rate_limit_error"}}`,
				"Retry-After", fixedNow.Add(30*time.Second).Format(http.TimeFormat)),
			want: want{status: 429, code: "rate_limit_error", message: "slow down", retryable: true, retryAfter: 30 * time.Second},
		},
		{
			name: "429 with retry-after-ms wins over Retry-After",
			handler: status(429, `{"error":{"message":"slow down","type":"tokens","code":"rate_limit_exceeded"}}`,
				"retry-after-ms", "250", "Retry-After", "1"),
			want: want{status: 429, code: "rate_limit_exceeded", message: "slow down", retryable: true, retryAfter: 250 * time.Millisecond},
		},
		{
			name:    "429 insufficient_quota is billing, not throttling",
			handler: status(429, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`),
			want:    want{status: 429, code: "insufficient_quota", message: "You exceeded your current quota, please check your plan and billing details.", retryable: false},
		},
		{
			name:    "429 gemini list body with RetryInfo",
			handler: status(429, `[{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"20s"}]}}]`),
			want:    want{status: 429, code: "RESOURCE_EXHAUSTED", message: "Resource has been exhausted (e.g. check quota).", retryable: true, retryAfter: 20 * time.Second},
		},
		{
			name:    "503 with a plain-text proxy body",
			handler: status(503, "upstream connect error or disconnect/reset before headers. reset reason: overflow"),
			want:    want{status: 503, message: "upstream connect error or disconnect/reset before headers. reset reason: overflow", retryable: true},
		},
		{
			name:    "529 anthropic overloaded",
			handler: status(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
			want:    want{status: 529, code: "overloaded_error", message: "Overloaded", retryable: true},
		},
		{
			name:    "500 with an empty body",
			handler: status(500, ""),
			want:    want{status: 500, message: "Internal Server Error", retryable: true},
		},
		{
			name:    "408 and 409 are retried",
			handler: status(409, `{"error":{"message":"conflict","type":"conflict"}}`),
			want:    want{status: 409, code: "conflict", message: "conflict", retryable: true},
		},
		{
			name:    "400 with the provider's message",
			handler: status(400, `{"error":{"message":"Invalid schema for function 'read_file': None is not of type 'object'.","type":"invalid_request_error","param":"tools[0].function.parameters","code":"invalid_function_parameters"}}`),
			want:    want{status: 400, code: "invalid_function_parameters", message: "Invalid schema for function 'read_file': None is not of type 'object'.", retryable: false},
		},
		{
			name:    "400 context_length_exceeded",
			handler: status(400, `{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`),
			want:    want{status: 400, code: "context_length_exceeded", message: "This model's maximum context length is 128000 tokens.", retryable: false},
		},
		{
			name:    "400 llama.cpp exceed_context_size_error with int code",
			handler: status(400, `{"error":{"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}`),
			want:    want{status: 400, code: "exceed_context_size_error", message: "the request exceeds the available context size", retryable: false},
		},
		{
			name:    "401 invalid key",
			handler: status(401, `{"error":{"message":"Incorrect API key provided: sk-abc. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`),
			want:    want{status: 401, code: "invalid_api_key", contains: "Incorrect API key provided", retryable: false},
		},
		{
			name:    "404 ollama string error",
			handler: status(404, `{"error":"model \"qwen9:1b\" not found, try pulling it first"}`),
			want:    want{status: 404, message: `model "qwen9:1b" not found, try pulling it first`, retryable: false},
		},
		{
			name:    "x-should-retry false overrides a 500",
			handler: status(500, `{"error":{"message":"boom","type":"server_error"}}`, "x-should-retry", "false"),
			want:    want{status: 500, code: "server_error", message: "boom", retryable: false},
		},
		{
			name:    "x-should-retry true overrides a 400",
			handler: status(400, `{"error":{"message":"try again","type":"invalid_request_error"}}`, "x-should-retry", "true"),
			want:    want{status: 400, code: "invalid_request_error", message: "try again", retryable: true},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.handler)
			p := s.provider(Options{})
			p.now = func() time.Time { return fixedNow }
			_, err := p.Stream(context.Background(), ask("hi"), nil)
			checkError(t, err, tc.want)
			if n := s.count(); n != 1 {
				t.Errorf("server saw %d requests, want 1 (the adapter must not retry)", n)
			}
		})
	}
}

func TestInStreamErrors(t *testing.T) {
	cases := []struct {
		name string
		sse  string
		want want
	}{
		{
			name: "openai data error object",
			sse: `data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}

data: {"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}

`,
			want: want{code: "server_error", message: "The server had an error while processing your request. Sorry about that!", retryable: true},
		},
		{
			name: "vllm data error with int code then [DONE]",
			sse: `data: {"error": {"object": "error", "message": "This model's maximum context length is 4096 tokens.", "type": "BadRequestError", "param": null, "code": 400}}

data: [DONE]

`,
			want: want{code: "BadRequestError", message: "This model's maximum context length is 4096 tokens.", retryable: false},
		},
		{
			name: "event: error followed by data",
			sse: `data: {"choices":[{"index":0,"delta":{"content":"a"}}]}

event: error
data: {"error":{"type":"overloaded_error","message":"Overloaded"}}

`,
			want: want{code: "overloaded_error", message: "Overloaded", retryable: true},
		},
		{
			name: "event: error with a bare error object",
			sse: `event: error
data: {"message":"Rate limit exceeded","code":"rate_limit_exceeded"}

`,
			want: want{code: "rate_limit_exceeded", message: "Rate limit exceeded", retryable: true},
		},
		{
			name: "llama.cpp legacy error line",
			sse: `data: {"choices":[{"index":0,"delta":{"content":"a"}}]}

error: {"code":500,"message":"slot unavailable","type":"server_error"}

`,
			want: want{code: "server_error", message: "slot unavailable", retryable: true},
		},
		{
			name: "openrouter error chunk with finish_reason error",
			sse: `: OPENROUTER PROCESSING

data: {"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"x/y","provider":"Z","error":{"code":502,"message":"Provider returned error","metadata":{"raw":"upstream timeout"}},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}

`,
			want: want{code: "502", message: "Provider returned error", retryable: true},
		},
		{
			name: "error as a plain string",
			sse: `data: {"error":"model runner has unexpectedly stopped"}

`,
			want: want{message: "model runner has unexpectedly stopped", retryable: false},
		},
		{
			name: "server error after tool-call deltas is not replayed",
			sse: `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"pa"}}]}}]}

data: {"error":{"message":"internal error","type":"server_error"}}

`,
			want: want{code: "server_error", contains: "not replayed", retryable: false},
		},
		{
			name: "finish_reason error without an error object",
			sse: `data: {"choices":[{"index":0,"delta":{"content":"par"},"finish_reason":"error"}]}

data: [DONE]

`,
			want: want{code: "error", contains: "finish_reason", retryable: true},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, sse(tc.sse))
			_, err := s.provider(Options{}).Stream(context.Background(), ask("hi"), nil)
			checkError(t, err, tc.want)
		})
	}
}

func TestBrokenConnections(t *testing.T) {
	const head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
	textChunk := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"partial\"}}]}\n\n"
	toolChunk := "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":\"{\\\"pa\"}}]}}]}\n\n"
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    want
	}{
		{
			name:    "connection closed before any byte",
			handler: hijack(""),
			want:    want{contains: "EOF", retryable: true},
		},
		{
			name:    "chunked stream cut before tool deltas",
			handler: hijack(head + chunked(textChunk)),
			want:    want{contains: "cut after", retryable: true},
		},
		{
			name:    "chunked stream cut after tool deltas",
			handler: hijack(head + chunked(textChunk) + chunked(toolChunk)),
			want:    want{contains: "not replayed", retryable: false},
		},
		{
			name:    "clean close without finish reason or [DONE]",
			handler: sse(textChunk),
			want:    want{contains: "without a finish reason or [DONE]", retryable: true},
		},
		{
			name:    "clean close without finish after tool deltas",
			handler: sse(toolChunk),
			want:    want{contains: "not replayed", retryable: false},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.handler)
			_, err := s.provider(Options{}).Stream(context.Background(), ask("hi"), nil)
			checkError(t, err, tc.want)
		})
	}
}

// TestConnectionRefused: a port of this machine where nothing listens
// fails at once, not retried, and says so.
func TestConnectionRefused(t *testing.T) {
	p := New(Options{BaseURL: refusedURL(t), ModelID: "m"})
	_, err := p.Stream(context.Background(), ask("hi"), nil)
	checkError(t, err, want{contains: "connection refused; nothing listens there on this machine: not retried", retryable: false})
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("error %v does not wrap ECONNREFUSED", err)
	}
}

// TestConnectionRefusedElsewhere: a refusal by another machine (a server
// restarting behind a load balancer) is retried like other dial errors;
// one from a loopback address, IPv6 included, is not.
func TestConnectionRefusedElsewhere(t *testing.T) {
	refused := func(ip string) error {
		return &url.Error{Op: "Post", URL: "http://x/v1/chat/completions", Err: &net.OpError{
			Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.ParseIP(ip), Port: 8000},
			Err: os.NewSyscallError("connect", syscall.ECONNREFUSED),
		}}
	}
	for ip, retryable := range map[string]bool{"10.1.2.3": true, "2001:db8::1": true, "127.0.0.1": false, "127.1.2.3": false, "::1": false} {
		pe := networkError(refused(ip), "http://x/v1/chat/completions")
		if pe.Retryable != retryable {
			t.Errorf("refused by %s: Retryable = %v, want %v (%s)", ip, pe.Retryable, retryable, pe.Message)
		}
		if here := strings.Contains(pe.Message, "this machine"); here == retryable {
			t.Errorf("refused by %s: message %q", ip, pe.Message)
		}
	}
}

func TestUntrustedCertificateIsNotRetried(t *testing.T) {
	s := httptest.NewUnstartedServer(sse("data: [DONE]\n\n"))
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake failure is the point
	s.StartTLS()
	defer s.Close()
	p := New(Options{BaseURL: s.URL + "/v1", ModelID: "m"}) // the default client does not trust the test CA
	_, err := p.Stream(context.Background(), ask("hi"), nil)
	checkError(t, err, want{contains: "certificate", retryable: false})
}

// waitForClient streams head, then holds the connection open until the
// client goes away.
func waitForClient(head string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if head != "" {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, head)
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done()
	}
}

func TestIdleTimeout(t *testing.T) {
	cases := []struct {
		name string
		head string
		want want
	}{
		{name: "no response headers", want: want{contains: "no response", retryable: true}},
		{name: "silence mid-stream", head: ": keep-alive\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n",
			want: want{contains: "idle for 50ms", retryable: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, waitForClient(tc.head))
			start := time.Now()
			_, err := s.provider(Options{IdleTimeout: 50 * time.Millisecond}).Stream(context.Background(), ask("hi"), nil)
			checkError(t, err, tc.want)
			if !errors.Is(err, errIdle) {
				t.Errorf("error %v does not wrap errIdle", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("idle timeout of 50ms took %v", d)
			}
		})
	}
}

// TestKeepAliveResetsIdleTimer: comments arriving more often than the idle
// timeout keep a stream alive far longer than the timeout.
func TestKeepAliveResetsIdleTimer(t *testing.T) {
	// Gaps of 10ms against a 600ms timeout leave a wide margin for a
	// loaded machine; the whole stream lasts 800ms, longer than the timeout.
	const idle = 600 * time.Millisecond
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		for range 80 {
			io.WriteString(w, ": keep-alive\n\n")
			fl.Flush()
			time.Sleep(10 * time.Millisecond) // pacing, as a server does
		}
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	})
	start := time.Now()
	resp, err := s.provider(Options{IdleTimeout: idle}).Stream(context.Background(), ask("hi"), nil)
	if err != nil {
		t.Fatalf("Stream: %v", err)
	}
	if resp.Message.Content != "ok" {
		t.Errorf("content = %q, want ok", resp.Message.Content)
	}
	if d := time.Since(start); d < idle {
		t.Errorf("stream took %v, less than the idle timeout %v: the test proves nothing", d, idle)
	}
}

func TestCancelIsNotAProviderError(t *testing.T) {
	t.Run("mid-stream", func(t *testing.T) {
		s := newServer(t, waitForClient("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		_, err := s.provider(Options{}).Stream(ctx, ask("hi"), func(string) { cancel() })
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v does not satisfy errors.Is(err, context.Canceled)", err)
		}
		var pe *loop.ProviderError
		if errors.As(err, &pe) {
			t.Errorf("cancellation returned a ProviderError: %v", pe)
		}
	})
	t.Run("before response headers", func(t *testing.T) {
		started := make(chan struct{})
		s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			close(started)
			<-r.Context().Done()
		})
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-started; cancel() }()
		_, err := s.provider(Options{}).Stream(ctx, ask("hi"), nil)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v does not satisfy errors.Is(err, context.Canceled)", err)
		}
	})
}

// TestRefusedBeforeSending: go-openai's validator refuses some requests
// for reasoning models before sending; that is a configuration error.
func TestRefusedBeforeSending(t *testing.T) {
	s := newServer(t, sse("data: [DONE]\n\n"))
	p := s.provider(Options{ModelID: openai.GPT6Sol})
	_, err := p.Stream(context.Background(), loop.Request{Messages: ask("hi").Messages, Tools: []loop.ToolSpec{readFile}}, nil)
	checkError(t, err, want{code: "invalid_request", contains: "not sent", retryable: false})
	if n := s.count(); n != 0 {
		t.Errorf("server saw %d requests, want 0", n)
	}
}

func TestRetryAfterParsing(t *testing.T) {
	cases := []struct {
		name   string
		header http.Header
		info   errInfo
		want   time.Duration
	}{
		{"none", http.Header{}, errInfo{}, 0},
		{"seconds", http.Header{"Retry-After": {"7"}}, errInfo{}, 7 * time.Second},
		{"past date", http.Header{"Retry-After": {fixedNow.Add(-time.Minute).Format(http.TimeFormat)}}, errInfo{}, 0},
		{"garbage", http.Header{"Retry-After": {"soon"}}, errInfo{}, 0},
		{"negative", http.Header{"Retry-After": {"-3"}}, errInfo{}, 0},
		{"huge is capped", http.Header{"Retry-After": {"1e300"}}, errInfo{}, maxRetryAfter},
		{"ms garbage falls through", http.Header{"Retry-After-Ms": {"x"}, "Retry-After": {"3"}}, errInfo{}, 3 * time.Second},
		{"body retry delay", http.Header{}, errInfo{RetryDelay: 4 * time.Second}, 4 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := retryAfter(tc.header, tc.info, fixedNow); got != tc.want {
				t.Errorf("retryAfter = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestOversizedStreams: a server that sends an endless line or an endless
// stream is cut off with a final error, not buffered without bound.
func TestOversizedStreams(t *testing.T) {
	oldLine, oldBody := maxLine, maxBody
	maxLine, maxBody = 1<<10, 64<<10
	t.Cleanup(func() { maxLine, maxBody = oldLine, oldBody })

	t.Run("line", func(t *testing.T) {
		s := newServer(t, sse("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\""+strings.Repeat("a", 100<<10)+"\"}}]}\n\n"))
		_, err := s.provider(Options{}).Stream(context.Background(), ask("hi"), nil)
		checkError(t, err, want{contains: "line too long (limit 1024 bytes)", retryable: false})
	})
	t.Run("body", func(t *testing.T) {
		chunk := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"aaaaaaaa\"}}]}\n\n"
		s := newServer(t, sse(strings.Repeat(chunk, (128<<10)/len(chunk))))
		_, err := s.provider(Options{}).Stream(context.Background(), ask("hi"), nil)
		checkError(t, err, want{contains: "response too large (limit 65536 bytes)", retryable: false})
	})
}
