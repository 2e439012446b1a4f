package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/sashabaranov/go-openai"

	"github.com/agenthost/agenthost/internal/defaults"
	"github.com/agenthost/agenthost/internal/redact"
	"github.com/agenthost/agenthost/loop"
)

// Options configure a Provider. The zero value of each field means the
// documented default; the timeouts' are those of the provider block in
// agents.hcl (package internal/defaults).
type Options struct {
	// BaseURL is the API root, up to and including "/v1"
	// ("http://127.0.0.1:11434/v1"); requests go to BaseURL+"/chat/completions".
	// A query ("?api-version=2024-06-01") stays the query of every request,
	// after that path. Credentials in it (userinfo, query values) are
	// redacted from every error message. Empty means https://api.openai.com/v1.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>"; empty sends none.
	APIKey string
	// Headers are extra headers on every request; they override the
	// defaults (use {"api-key": ...} for Azure keys).
	Headers map[string]string
	// ModelID is the provider-side model id, sent as "model".
	ModelID string
	// Temperature is sent when not nil; 0 really is sent as 0.
	Temperature *float64
	// MaxTokens caps the completion; 0 leaves it unset. It is sent as
	// max_completion_tokens for o1/o3/o4/gpt-5 models, max_tokens otherwise.
	MaxTokens int
	// IdleTimeout is the longest silence of a request: waiting for the
	// response headers, or between two bytes of the stream (keep-alive
	// comments count as bytes). Past it the request is abandoned as a
	// network error, retryable unless tool calls have streamed. Zero (or
	// negative) means defaults.IdleTimeout.
	IdleTimeout time.Duration
	// RequestTimeout bounds a whole request, from sending it to the end of
	// its stream, however steadily bytes arrive; when it passes, the request
	// is abandoned as a retryable network error (not retried once tool calls
	// have streamed). Zero (or negative) means defaults.RequestTimeout.
	RequestTimeout time.Duration
	// HTTPClient sends the requests; nil means a client with dial and TLS
	// timeouts and no overall timeout of its own (IdleTimeout and
	// RequestTimeout bound each request).
	HTTPClient *http.Client
}

// Provider streams chat completions from one OpenAI-compatible endpoint.
// It is safe for concurrent use and never retries: the loop does.
type Provider struct {
	cfg         openai.ClientConfig // HTTPClient is set per call
	http        *http.Client
	headers     map[string]string
	modelID     string
	temperature *float64
	maxTokens   int
	idle        time.Duration
	deadline    time.Duration    // RequestTimeout
	query       string           // base URL's raw query, added to every request
	shown       string           // the endpoint as printed: credentials redacted
	secrets     *redact.Replacer // scrubs credentials from error messages
	now         func() time.Time // for Retry-After dates; tests replace it
	prefixes    prefixCache      // encoded history prefixes (prefix.go)
}

var _ loop.Model = (*Provider)(nil)

// New returns a Provider for o.
func New(o Options) *Provider {
	cfg := openai.DefaultConfig(o.APIKey)
	if o.BaseURL != "" {
		cfg.BaseURL = o.BaseURL
	}
	// go-openai appends the path to BaseURL as text: a query must be taken
	// off here and put back on each request (exchange.Do), or the path
	// would land inside it.
	var query string
	if u, err := url.Parse(cfg.BaseURL); err == nil && (u.RawQuery != "" || u.ForceQuery || u.Fragment != "") {
		query = u.RawQuery
		u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
		cfg.BaseURL = u.String()
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	shown := redact.URL(cfg.BaseURL) + "/chat/completions"
	if query != "" {
		shown += "?" + redact.Query(query)
	}
	// We drop blank and comment lines before go-openai sees them; this only
	// keeps its counter from ever ending a healthy stream.
	cfg.EmptyMessagesLimit = math.MaxUint32
	p := &Provider{
		cfg:       cfg,
		http:      o.HTTPClient,
		headers:   maps.Clone(o.Headers),
		modelID:   o.ModelID,
		maxTokens: o.MaxTokens,
		idle:      o.IdleTimeout,
		deadline:  o.RequestTimeout,
		query:     query,
		shown:     shown,
		secrets:   redact.NewReplacer(secrets(o)...),
		now:       time.Now,
	}
	if o.Temperature != nil {
		t := *o.Temperature
		p.temperature = &t
	}
	if p.http == nil {
		p.http = defaultHTTPClient()
	}
	p.idle = defaults.Or(p.idle, defaults.IdleTimeout)
	p.deadline = defaults.Or(p.deadline, defaults.RequestTimeout)
	return p
}

// secrets are the values scrubbed from error messages: the base URL's
// credentials, the API key, and the values of headers whose name says they
// carry one (api-key, Authorization, x-...-token, ...).
func secrets(o Options) []string {
	s := redact.Secrets(o.BaseURL)
	s = append(s, o.APIKey)
	return append(s, redact.HeaderSecrets(o.Headers)...)
}

func defaultHTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		// Headers and a request body up to this size leave in one write
		// (with net/http's default of 4 KiB most bodies would take several).
		WriteBufferSize: 64 << 10,
	}}
}

// endpoint is the request URL as printed: credentials redacted.
func (p *Provider) endpoint() string { return p.shown }

// Stream sends req and accumulates the streamed answer. onText, when not
// nil, receives text fragments as they arrive. Failures are
// *loop.ProviderError, classified for the loop's retries; when ctx ends the
// error wraps ctx.Err() instead (errors.Is(err, context.Canceled)). On error
// the Response is zero. No error message carries the base URL's
// credentials, the API key or a credential header's value.
func (p *Provider) Stream(ctx context.Context, req loop.Request, onText func(string)) (loop.Response, error) {
	resp, err := p.stream(ctx, req, onText)
	if err != nil {
		return loop.Response{}, p.redactError(err)
	}
	return resp, nil
}

// redactError scrubs credentials from err's message: a ProviderError's
// Message in place, any other error by a wrapper that keeps errors.Is and
// errors.As working.
func (p *Provider) redactError(err error) error {
	if pe, ok := err.(*loop.ProviderError); ok {
		pe.Message = p.secrets.Replace(pe.Message)
		return pe
	}
	if msg := p.secrets.Replace(err.Error()); msg != err.Error() {
		return &redactedError{msg: msg, err: err}
	}
	return err
}

// redactedError is an error whose message had credentials scrubbed.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

func (p *Provider) stream(ctx context.Context, req loop.Request, onText func(string)) (loop.Response, error) {
	oreq, patch, used, n, err := p.buildRequest(req)
	if err != nil {
		return loop.Response{}, &loop.ProviderError{Code: "invalid_request", Message: err.Error(), Err: err}
	}
	x := &exchange{
		client:  p.http,
		headers: p.headers,
		query:   p.query,
		patch:   patch,
	}
	x.trace.WroteRequest = x.wrote
	// The messages were copied into the body by the time stream returns;
	// the body's buffer goes back with them only once net/http is done
	// with it.
	defer func() {
		if e := patch.prefix; e != nil && !x.bodyDone() {
			e.body = nil
		}
		p.prefixes.put(patch.prefix)
	}()
	sctx, cancel := context.WithCancelCause(httptrace.WithClientTrace(ctx, &x.trace))
	defer cancel(nil)
	timer := time.AfterFunc(p.idle, func() { cancel(errIdle) })
	defer timer.Stop()
	x.onByte = func() { timer.Reset(p.idle) }
	// The idle timer restarts with every byte; this one does not, so a
	// server trickling bytes forever still ends.
	deadline := time.AfterFunc(p.deadline, func() { cancel(errRequestTimeout) })
	defer deadline.Stop()

	cfg := p.cfg
	cfg.HTTPClient = x
	stream, err := openai.NewClientWithConfig(cfg).CreateChatCompletionStream(sctx, oreq)
	if err != nil {
		return loop.Response{}, p.requestError(ctx, sctx, x, err)
	}
	defer stream.Close()
	if x.status != 0 { // a 1xx/3xx go-openai took for a stream
		return loop.Response{}, httpError(fmt.Errorf("unexpected status %d", x.status), x, p.now())
	}

	acc := newAccumulator()
	for {
		raw, err := stream.RecvRaw()
		// io.EOF is [DONE] or the body's clean end (cancellation and the
		// idle timer surface as read errors); which one is decided below.
		if errors.Is(err, io.EOF) && ctx.Err() == nil {
			break
		}
		if err != nil {
			return loop.Response{}, p.streamReadError(ctx, sctx, x, acc, err)
		}
		var c chunk
		if err := decodeChunk(raw, &c); err != nil {
			acc.badChunks++
			zerolog.Ctx(ctx).Warn().Err(err).Str("chunk", p.secrets.Replace(bodyText(raw))).Msg("provider: unreadable stream chunk skipped")
			continue
		}
		if info, isErr := acc.add(&c, onText); isErr {
			return loop.Response{}, streamError(info, acc.toolDeltas)
		}
	}

	switch {
	case acc.finish == "error":
		// OpenRouter ends a failed upstream with finish_reason "error";
		// without an error object it is a broken stream.
		pe := &loop.ProviderError{Code: "error", Message: "stream ended with finish_reason \"error\"", Retryable: true}
		notReplayed(pe, acc.toolDeltas)
		return loop.Response{}, pe
	case acc.finish == "insufficient_system_resource":
		// DeepSeek: the inference system ran out of resources mid-answer.
		pe := &loop.ProviderError{Code: acc.finish, Message: "stream interrupted by the server: insufficient system resource", Retryable: true}
		notReplayed(pe, acc.toolDeltas)
		return loop.Response{}, pe
	case acc.finish == "" && !x.sse.Done():
		// Neither a finish reason nor [DONE]: the stream was cut.
		pe := &loop.ProviderError{
			Message:   fmt.Sprintf("stream from %s ended after %d bytes without a finish reason or [DONE]", p.endpoint(), x.sse.Bytes()),
			Retryable: true,
			Err:       io.ErrUnexpectedEOF,
		}
		notReplayed(pe, acc.toolDeltas)
		return loop.Response{}, pe
	}
	return acc.response(&idSet{base: used}, n+1), nil
}

// requestError classifies a failure before any stream was read.
func (p *Provider) requestError(ctx, sctx context.Context, x *exchange, err error) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("provider: request to %s aborted: %w", p.endpoint(), ctx.Err())
	case x.status != 0:
		return httpError(err, x, p.now())
	case x.preSendErr != nil || !x.sent:
		// go-openai refused the request before sending it (its reasoning
		// model validator, a disabled model name) or it could not be built:
		// a configuration problem, not worth a retry.
		return &loop.ProviderError{
			Code:    "invalid_request",
			Message: fmt.Sprintf("request for model %q not sent: %v", p.modelID, err),
			Err:     err,
		}
	case context.Cause(sctx) == errIdle:
		return &loop.ProviderError{
			Message:   fmt.Sprintf("no response from %s within %s", p.endpoint(), p.idle),
			Retryable: true,
			Err:       errIdle,
		}
	case context.Cause(sctx) == errRequestTimeout:
		return &loop.ProviderError{
			Message:   fmt.Sprintf("no response from %s within request_timeout %s", p.endpoint(), p.deadline),
			Retryable: true,
			Err:       errRequestTimeout,
		}
	}
	return networkError(err, p.endpoint())
}

// streamReadError classifies a failure while reading the stream. A cut
// stream is retryable unless tool calls had already streamed.
func (p *Provider) streamReadError(ctx, sctx context.Context, x *exchange, acc *accumulator, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("provider: stream from %s aborted: %w", p.endpoint(), ctx.Err())
	}
	var bytes int64
	if x.sse != nil {
		bytes = x.sse.Bytes()
	}
	pe := &loop.ProviderError{Retryable: true, Err: err}
	switch {
	case context.Cause(sctx) == errIdle:
		pe.Message = fmt.Sprintf("stream from %s idle for %s after %d bytes", p.endpoint(), p.idle, bytes)
		pe.Err = errIdle
	case context.Cause(sctx) == errRequestTimeout:
		pe.Message = fmt.Sprintf("stream from %s abandoned after %d bytes: request_timeout %s passed", p.endpoint(), bytes, p.deadline)
		pe.Err = errRequestTimeout
	case errors.Is(err, errLineTooLong):
		pe.Message = fmt.Sprintf("stream from %s: %v (limit %d bytes)", p.endpoint(), err, maxLine)
		pe.Retryable = false
	case errors.Is(err, errBodyTooLarge):
		pe.Message = fmt.Sprintf("stream from %s: %v (limit %d bytes)", p.endpoint(), err, maxBody)
		pe.Retryable = false
	default:
		pe.Message = fmt.Sprintf("stream from %s cut after %d bytes: %v", p.endpoint(), bytes, unwrapURL(err))
	}
	notReplayed(pe, acc.toolDeltas)
	return pe
}
