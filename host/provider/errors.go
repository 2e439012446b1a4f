package provider

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sashabaranov/go-openai"

	"github.com/agenthost/agenthost/loop"
)

// errIdle is the cancellation cause when no byte arrived for IdleTimeout.
var errIdle = errors.New("idle timeout")

// errRequestTimeout is the cancellation cause when a request outlived
// RequestTimeout.
var errRequestTimeout = errors.New("request timeout")

// errInfo is what we could read from a provider's error object, whatever
// its dialect: OpenAI {"error":{"message","type","code","param"}}, vLLM (int
// code, Python exception names as type), Ollama {"error":"text"}, Gemini
// [{"error":{"code","message","status","details":[RetryInfo]}}], FastAPI
// {"detail": ...}, Anthropic {"type":"error","error":{"type","message"}}.
type errInfo struct {
	Message    string
	Code       string        // code when the provider sent a string
	Num        int           // code when the provider sent a number
	Type       string        // type
	Status     string        // Gemini's status (RESOURCE_EXHAUSTED, ...)
	RetryDelay time.Duration // Gemini's RetryInfo.retryDelay
}

// code is the most specific identifier the provider gave.
func (e errInfo) code() string {
	switch {
	case e.Code != "":
		return e.Code
	case e.Type != "":
		return e.Type
	case e.Status != "":
		return e.Status
	case e.Num != 0:
		return strconv.Itoa(e.Num)
	}
	return ""
}

func (e errInfo) empty() bool { return e == errInfo{} }

// parseErrorBody reads an error object in any of the dialects errInfo
// lists. ok is false when nothing was recognised.
func parseErrorBody(b []byte) (info errInfo, ok bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return info, false
	}
	if b[0] == '[' {
		var list []json.RawMessage
		if json.Unmarshal(b, &list) != nil || len(list) == 0 {
			return info, false
		}
		b = list[0]
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(b, &top) != nil {
		var s string
		if json.Unmarshal(b, &s) == nil && s != "" {
			return errInfo{Message: s}, true
		}
		return info, false
	}
	if inner, found := top["error"]; found && !isNull(inner) {
		return parseErrorValue(inner, 2)
	}
	info = parseErrorFields(top)
	return info, !info.empty()
}

// parseErrorValue reads the value of an "error" key: a string or an
// object, which may itself wrap another "error" (depth bounds that).
func parseErrorValue(v json.RawMessage, depth int) (errInfo, bool) {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return errInfo{Message: s}, s != ""
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(v, &obj) != nil {
		return errInfo{Message: strings.TrimSpace(string(v))}, true
	}
	if inner, found := obj["error"]; found && depth > 0 && !isNull(inner) {
		if info, ok := parseErrorValue(inner, depth-1); ok {
			return info, true
		}
	}
	info := parseErrorFields(obj)
	return info, !info.empty()
}

func parseErrorFields(obj map[string]json.RawMessage) errInfo {
	var info errInfo
	info.Message = messageText(obj["message"])
	if info.Message == "" {
		info.Message = messageText(obj["detail"])
	}
	json.Unmarshal(obj["type"], &info.Type)
	json.Unmarshal(obj["status"], &info.Status)
	if c, found := obj["code"]; found {
		var f float64
		if json.Unmarshal(c, &f) == nil {
			info.Num = int(f)
		} else {
			json.Unmarshal(c, &info.Code)
		}
	}
	var details []struct {
		Type       string `json:"@type"`
		RetryDelay string `json:"retryDelay"`
	}
	if json.Unmarshal(obj["details"], &details) == nil {
		for _, d := range details {
			if d.RetryDelay == "" {
				continue
			}
			if dur, err := time.ParseDuration(d.RetryDelay); err == nil && dur > 0 {
				info.RetryDelay = dur
			}
		}
	}
	return info
}

// messageText reads a message that is a string, a list of strings (go-openai
// issue 381) or anything else (kept as JSON text).
func messageText(v json.RawMessage) string {
	if len(v) == 0 || isNull(v) {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(v, &list) == nil {
		return strings.Join(list, ", ")
	}
	return strings.TrimSpace(string(v))
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// normWord lowercases s and drops everything but letters, so that
// "rate_limit_exceeded", "RateLimitError" and "rate limit" compare alike.
func normWord(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// neverRetry are codes that no retry can fix: billing, and a prompt that is
// too long (compaction's job).
var neverRetry = []string{"insufficientquota", "contextlengthexceeded", "exceedcontextsizeerror"}

// retryWords in a code, type or status mark a transient server condition.
var retryWords = []string{"servererror", "internal", "overloaded", "ratelimit", "unavailable", "exhausted", "apierror", "timeout", "deadlineexceeded"}

func (e errInfo) words() [3]string {
	return [3]string{normWord(e.Code), normWord(e.Type), normWord(e.Status)}
}

func (e errInfo) neverRetry() bool {
	for _, w := range e.words() {
		for _, n := range neverRetry {
			if w != "" && strings.Contains(w, n) {
				return true
			}
		}
	}
	return false
}

func retryableStatus(status int) bool {
	switch {
	case status == http.StatusRequestTimeout, status == http.StatusConflict, status == http.StatusTooManyRequests:
		return true
	case status >= 500:
		return true
	}
	return false
}

// retryableInStream classifies an error that arrived inside a 200 stream by
// its code or type.
func (e errInfo) retryableInStream() bool {
	if e.neverRetry() {
		return false
	}
	if e.Num >= 400 && e.Num < 600 && retryableStatus(e.Num) {
		return true
	}
	for _, w := range e.words() {
		for _, r := range retryWords {
			if w != "" && strings.Contains(w, r) {
				return true
			}
		}
	}
	return false
}

// retryableHTTP classifies a failed HTTP response. x-should-retry, when the
// server sends it, decides.
func retryableHTTP(status int, h http.Header, info errInfo) bool {
	switch strings.ToLower(strings.TrimSpace(h.Get("x-should-retry"))) {
	case "true":
		return true
	case "false":
		return false
	}
	if info.neverRetry() {
		return false
	}
	return retryableStatus(status)
}

// maxRetryAfter bounds a server's wait request so that arithmetic on it
// cannot overflow; the loop refuses waits above its max_delay anyway.
const maxRetryAfter = 24 * time.Hour

// retryAfter reads the wait a server asked for: retry-after-ms, Retry-After
// in (fractional) seconds, Retry-After as an HTTP date, then Gemini's
// RetryInfo in the body. 0 when none.
func retryAfter(h http.Header, info errInfo, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && !math.IsNaN(ms) {
			return clampWait(ms * float64(time.Millisecond))
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 && !math.IsNaN(s) {
			return clampWait(s * float64(time.Second))
		}
		if t, err := http.ParseTime(v); err == nil {
			if d := t.Sub(now); d > 0 {
				return min(d, maxRetryAfter)
			}
			return 0
		}
	}
	return min(info.RetryDelay, maxRetryAfter)
}

func clampWait(ns float64) time.Duration {
	if ns >= float64(maxRetryAfter) {
		return maxRetryAfter
	}
	return time.Duration(ns)
}

// httpError builds the ProviderError for a failed HTTP response. It reads
// go-openai's error first (RequestError before APIError: with a body that is
// not an OpenAI error object both match and the APIError is empty), then
// fills what go-openai dropped from the body and headers the exchange kept.
func httpError(err error, x *exchange, now time.Time) *loop.ProviderError {
	status := x.status
	var info errInfo
	var reqErr *openai.RequestError
	var apiErr *openai.APIError
	switch {
	case errors.As(err, &reqErr):
		if reqErr.HTTPStatusCode != 0 {
			status = reqErr.HTTPStatusCode
		}
		info, _ = parseErrorBody(reqErr.Body)
	case errors.As(err, &apiErr):
		if apiErr.HTTPStatusCode != 0 {
			status = apiErr.HTTPStatusCode
		}
		info = errInfo{Message: apiErr.Message, Type: apiErr.Type}
		switch c := apiErr.Code.(type) {
		case string:
			info.Code = c
		case int:
			info.Num = c
		case float64:
			info.Num = int(c)
		}
	}
	// The kept body has what go-openai's types have no room for (Gemini's
	// status and RetryInfo), and a message when go-openai found none.
	if own, ok := parseErrorBody(x.body); ok {
		info.RetryDelay = own.RetryDelay
		if info.Status == "" {
			info.Status = own.Status
		}
		if info.Message == "" {
			info.Message = own.Message
		}
		if info.code() == "" {
			info.Code, info.Num, info.Type = own.Code, own.Num, own.Type
		}
	}
	if info.Message == "" {
		info.Message = bodyText(x.body)
	}
	if info.Message == "" {
		info.Message = http.StatusText(status)
	}
	return &loop.ProviderError{
		Status:     status,
		Code:       info.code(),
		Message:    info.Message,
		Retryable:  retryableHTTP(status, x.header, info),
		RetryAfter: retryAfter(x.header, info, now),
		Err:        err,
	}
}

// bodyText is a failed response's body as a one-line message (an HTML
// error page from a proxy, a plain-text error), at most 300 bytes.
func bodyText(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 300 {
		cut := 300
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// streamError builds the ProviderError for an error object inside a 200
// stream. After tool-call deltas the response is not replayed.
func streamError(info errInfo, toolDeltas bool) *loop.ProviderError {
	msg := info.Message
	if msg == "" {
		msg = "error in stream"
		if c := info.code(); c != "" {
			msg += " (" + c + ")"
		}
	}
	pe := &loop.ProviderError{
		Code:       info.code(),
		Message:    msg,
		Retryable:  info.retryableInStream(),
		RetryAfter: min(info.RetryDelay, maxRetryAfter),
	}
	notReplayed(pe, toolDeltas)
	return pe
}

// notReplayed makes pe final when tool calls had already streamed.
func notReplayed(pe *loop.ProviderError, toolDeltas bool) {
	if toolDeltas && pe.Retryable {
		pe.Retryable = false
		pe.Message += " (tool calls had already streamed: not replayed)"
	}
}

// networkRetryable says whether a failure to get a response at all is
// worth another try: dial errors, resets, EOF before any byte and timeouts
// are; certificate problems, unknown hosts and malformed URLs are not.
func networkRetryable(err error) bool {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalid          x509.CertificateInvalidError
		verify           *tls.CertificateVerificationError
		dns              *net.DNSError
		netErr           net.Error
	)
	switch {
	case errors.As(err, &unknownAuthority), errors.As(err, &hostname),
		errors.As(err, &invalid), errors.As(err, &verify):
		return false
	case errors.As(err, &dns):
		return !dns.IsNotFound
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE):
		return true
	case errors.As(err, &netErr):
		return true
	}
	return false
}

func networkError(err error, endpoint string) *loop.ProviderError {
	pe := &loop.ProviderError{
		Message:   fmt.Sprintf("request to %s failed: %v", endpoint, unwrapURL(err)),
		Retryable: networkRetryable(err),
		Err:       err,
	}
	if refusedHere(err) {
		pe.Retryable = false
		pe.Message += "; nothing listens there on this machine: not retried"
	}
	return pe
}

// refusedHere reports whether err is a connection refused by a loopback
// address: nothing listens on that port of this machine. Such a failure is
// not retried: a local server that is not running does not start during a
// backoff, and the retries would only make the user wait to be told.
// Refused elsewhere (a server restarting behind a load balancer) is
// retried like any dial error.
func refusedHere(err error) bool {
	var op *net.OpError
	if !errors.Is(err, syscall.ECONNREFUSED) || !errors.As(err, &op) || op.Op != "dial" {
		return false
	}
	a, ok := op.Addr.(*net.TCPAddr)
	return ok && a.IP.IsLoopback()
}

// unwrapURL drops *url.Error's "Post URL:" prefix (we name the endpoint).
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
